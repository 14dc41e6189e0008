"""Do long runs cost linear time and memory, and does memory stay put over many runs?

Measured in one process:
  1. a 1,000-step run (a scripted model calls a tool 999 times, then answers) under the
     correct criterion with full measurement, against a bare loop over plain dicts that
     records its requests as lengths of one shared list (the cheapest honest record) —
     time in alternating batches (median of the per-pair ratios) and peak memory
     (tracemalloc) of one run each;
  2. linearity: the same run at 100 and at 1,000 steps, time and peak memory;
  3. memory growth over 4,000 runs whose tool results are distinct 64 KiB texts (ASCII,
     then mixed Chinese and ASCII), as the process's resident size after ``gc.collect()``.

Run:  .venv/bin/python benchmarks/bench_long_run.py
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_loop import paired_us  # the same alternating-batch harness (run from this folder)

from agentloops import Response, RunRecord, ScriptedModel, run_loop

PROMPT = "Read every page of the report."
RESULT_CHARS = 64 * 1024


def script(steps: int) -> list[dict[str, Any]]:
    """``steps - 1`` rounds that each read one more page, then the answer."""
    calls = [{"content": None, "finish_reason": "tool_calls",
              "tool_calls": [{"id": f"c{n}", "name": "read_page", "arguments": json.dumps({"page": n})}]}
             for n in range(1, steps)]
    return [*calls, {"content": f"Read {steps - 1} pages.", "tool_calls": [], "finish_reason": "stop"}]


def read_page(arguments: dict[str, Any]) -> str:
    return f"page {arguments['page']}: nothing unusual"


def measured_run(responses: list[Response]) -> RunRecord:
    return run_loop(ScriptedModel(responses), {"read_page": read_page}, max_steps=len(responses), prompt=PROMPT)


def bare_run(plain: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[int]]:
    """The correct loop over dicts; request ``i`` is ``messages[:requests[i]]`` of the one shared list."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
    requests: list[int] = []
    for res in plain:
        requests.append(len(messages))
        if res["finish_reason"] in ("length", "content_filter"):
            raise RuntimeError(res["finish_reason"])
        messages.append(res)
        if not res["tool_calls"]:
            return messages, requests
        for call in res["tool_calls"]:
            text = read_page(json.loads(call["arguments"]))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
    raise RuntimeError("max steps")


def paired_ms(first: Callable[[], object], second: Callable[[], object]) -> tuple[float, float, float]:
    """Both functions in alternating batches (bench_loop's harness): fastest batch of each in ms, median ratio."""
    a_us, b_us, ratio = paired_us(first, second, rounds=11, number=5)
    return a_us / 1e3, b_us / 1e3, ratio


def peak_kib(fn: Callable[[], object]) -> float:
    """Peak traced memory while ``fn`` runs and its result is alive, in KiB."""
    gc.collect()
    tracemalloc.start()
    kept = fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del kept
    return peak / 1024


def rss_mib() -> float:
    """Resident size of this process, after collecting garbage."""
    gc.collect()
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * 4096 / 2**20


def growth_mib(make_text: Callable[[int], str], runs: int = 4000) -> float:
    """Resident growth over ``runs`` runs, each with one distinct tool result of ``RESULT_CHARS`` characters."""
    call = Response.model_validate({"content": None, "finish_reason": "tool_calls",
                                    "tool_calls": [{"id": "c1", "name": "fetch", "arguments": "{}"}]})
    answer = Response(content="done", finish_reason="stop")
    measured_run([call, answer])  # warm up imports and caches before the first reading
    before = rss_mib()
    for i in range(runs):
        run_loop(ScriptedModel([call, answer]), {"fetch": lambda _args, i=i: make_text(i)}, max_steps=2)
    return rss_mib() - before


def ascii_text(i: int) -> str:
    return f"{i:08d}" + "x" * (RESULT_CHARS - 8)


def mixed_text(i: int) -> str:
    return f"第{i:08d}页 " + "内容 text " * ((RESULT_CHARS - 11) // 8)


def main() -> None:
    plain = {n: script(n) for n in (100, 1000)}
    typed = {n: [Response.model_validate(r) for r in plain[n]] for n in plain}
    record = measured_run(typed[1000])
    assert record.steps == 1000 and record.answer == "Read 999 pages."
    assert bare_run(plain[1000])[1] == list(record.context_messages)

    print("1,000-step run, correct criterion (fastest batch, ms per run; ratio = median of paired batches)")
    bare, ours, ratio = paired_ms(lambda: bare_run(plain[1000]), lambda: measured_run(typed[1000]))
    bare_peak, our_peak = peak_kib(lambda: bare_run(plain[1000])), peak_kib(lambda: measured_run(typed[1000]))
    print(f"  time:   bare loop {bare:7.2f} ms   agentloops {ours:7.2f} ms   ratio {ratio:5.1f}×")
    print(f"  memory: bare loop {bare_peak:7.0f} KiB  agentloops {our_peak:7.0f} KiB"
          f"  ratio {our_peak / bare_peak:5.1f}×")

    print("linearity: 1,000 steps against 100 (10× the steps; quadratic would be ~100×)")
    short, long, step_ratio = paired_ms(lambda: measured_run(typed[100]), lambda: measured_run(typed[1000]))
    short_peak = peak_kib(lambda: measured_run(typed[100]))
    print(f"  time:   {short:6.2f} ms → {long:6.2f} ms   ratio {step_ratio:5.1f}×")
    print(f"  memory: {short_peak:6.0f} KiB → {our_peak:6.0f} KiB  ratio {our_peak / short_peak:5.1f}×")

    print("resident growth over 4,000 runs with distinct 64 KiB tool results (target < 20 MiB)")
    for label, make_text in (("ASCII", ascii_text), ("mixed Chinese and ASCII", mixed_text)):
        print(f"  {label:24s} {growth_mib(make_text):6.1f} MiB")


if __name__ == "__main__":
    main()
