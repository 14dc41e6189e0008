"""How much do validation and measurement cost? The measured loop against a bare loop.

Times, in one process, in alternating batches (so machine noise hits both alike):
  1. a bare Python loop over plain dicts, as the article writes it: no validation,
     no records, no token counting — twice: with canned tool results looked up by
     name (the strictest baseline), and decoding each call's JSON arguments before
     calling the tool, as any loop over real tools must (agentloops decodes them
     once, when the scenario is loaded, and caches the result);
  2. ``agentloops.run`` of the same scenario under the correct criterion, with full
     measurement (records, wasted-call detection, context tokens, billing);
  3. 10,000 runs over randomized scripts and criteria.

Run:  .venv/bin/python benchmarks/bench_loop.py
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Callable
from functools import partial

from agentloops import CRITERION_NAMES, Response, Scenario, load_scenario, run

SCENARIO = load_scenario("normal")
PLAIN = [r.model_dump() for r in SCENARIO.responses]  # the same script as plain dicts
TOOLS = dict(SCENARIO.tools)


def _canned(text: str) -> Callable[..., str]:
    return lambda **_: text


BARE_TOOLS = {name: _canned(text) for name, text in TOOLS.items()}


def bare_loop(script: list[dict], tools: dict[str, Callable[..., str]], max_steps: int = 8,
              decode: bool = True) -> str:
    """The article's correct loop with dicts and nothing else."""
    messages: list[dict] = [{"role": "user", "content": "How many lines does notes.txt have?"}]
    for step in range(max_steps):
        res = script[min(step, len(script) - 1)]
        calls = res["tool_calls"] or []
        if res["finish_reason"] == "length":
            raise RuntimeError("truncated")
        if res["finish_reason"] == "content_filter":
            raise RuntimeError("filtered")
        messages.append(res)
        if not calls:
            return res["content"] or ""
        for call in calls:
            arguments = json.loads(call["arguments"]) if decode else {}
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": tools[call["name"]](**arguments)})
    raise RuntimeError("max steps")


def paired_us(first: Callable[[], object], second: Callable[[], object],
              rounds: int = 21, number: int = 2000) -> tuple[float, float, float]:
    """Time both functions in alternating batches, so neighbours' noise hits both alike.

    Returns:
        The fastest batch of each (µs per call) and the median of the per-pair ratios.
    """
    a_times, b_times = [], []
    for _ in range(rounds):
        for fn, times in ((first, a_times), (second, b_times)):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            times.append((time.perf_counter() - start) / number * 1e6)
    ratios = [b / a for a, b in zip(a_times, b_times, strict=False)]
    return min(a_times), min(b_times), statistics.median(ratios)


def random_scenarios(count: int, seed: int = 7) -> list[Scenario]:
    rng = random.Random(seed)
    finishes = ["stop", "tool_calls", "length", "content_filter"]
    out = []
    for i in range(count):
        responses = []
        for j in range(rng.randint(1, 10)):
            calls = [{"id": f"c{j}{k}", "name": rng.choice(["read_file", "count_lines"]),
                      "arguments": rng.choice(['{"path": "a.txt"}', '{"path": "a'])}
                     for k in range(rng.choice([0, 0, 1, 2]))]
            responses.append(Response.model_validate({"content": rng.choice([None, "", "text"]),
                                                      "tool_calls": calls, "finish_reason": rng.choice(finishes)}))
        out.append(Scenario(name=f"r{i}", title="random", teaches="benchmark", tools=TOOLS, responses=responses))
    return out


def main() -> None:
    assert bare_loop(PLAIN, BARE_TOOLS) == run(SCENARIO, "correct").answer  # same work, same answer
    print("tool → tool → answer, correct criterion (fastest batch of 21, µs per run; ratio = median of paired batches)")
    for label, decode in (("bare loop, canned results", False), ("bare loop, decoding arguments", True)):
        bare, measured, ratio = paired_us(partial(bare_loop, PLAIN, BARE_TOOLS, decode=decode),
                                          partial(run, SCENARIO, "correct"))
        print(f"  {label:32s} {bare:7.2f}   agentloops.run {measured:7.2f}   ratio {ratio:5.1f}×"
              "   (keep ≤ 8×, stretch ≤ 5×)")

    start = time.perf_counter()
    pool = random_scenarios(10_000)
    built = time.perf_counter() - start
    rng = random.Random(11)
    criteria = [rng.choice(CRITERION_NAMES) for _ in pool]
    start = time.perf_counter()
    for scenario, criterion in zip(pool, criteria, strict=False):
        run(scenario, criterion)
    ran = time.perf_counter() - start
    bare_equiv = bare * 10_000 / 1e6
    print(f"10,000 randomized runs (scripts 1–10 rounds, all 4 criteria): {ran:.2f} s "
          f"(target < 2 s); building+validating those scripts: {built:.2f} s")
    print(f"  for scale: 10,000 bare runs (decoding arguments) of the 3-round script take {bare_equiv:.3f} s")


if __name__ == "__main__":
    main()
