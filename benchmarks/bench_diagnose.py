"""Does diagnose read at the speed of parsing? Time and peak memory on a generated log, against parsing its lines.

Two logs of the size asked for, both openai-chat request/response JSON Lines:

``agent``    realistic agent runs (the default): each request carries a system prompt,
             three tool schemas and the whole conversation so far, as SDKs send it; runs of
             10 to 50 calls, tool results of JSON from 40 B to 600 B, every 7th run with a
             planted stop bug (the same file read again and again).
             Each request repeats the previous one's messages: a reader that walks every
             request's whole conversation again per call costs the square of a run's length.
``fixture``  the shipped openai-chat fixture (six short runs of 1 to 4 calls) repeated with
             fresh run ids: many small lines, so per-line costs dominate.

Measured in one process:

  1. time: the baseline (``json.loads`` of every line, nothing else) and
     ``agentloops.diagnose.iter_findings`` over the same file, in alternating
     rounds so machine noise hits both alike; the ratio is diagnose / baseline;
  2. peak memory (``tracemalloc``, Python allocations) of both on a small and a
     large log: if diagnose streams, its peak stays flat as the file grows.

The issue's target: diagnose at most 3x the baseline on the ``agent`` log.

Run:  .venv/bin/python benchmarks/bench_diagnose.py [--mb 100] [--small-mb 10] [--rounds 2] [--shape agent]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from agentloops.diagnose import iter_findings
from agentloops.resources import data_dir

TEMPLATE = data_dir() / "diagnose" / "pairs" / "openai-chat.jsonl"


def make_log(path: Path, megabytes: float) -> int:
    """Write about ``megabytes`` MB of runs to ``path``; return how many copies of the template it holds."""
    rows = [json.loads(line) for line in TEMPLATE.read_text().splitlines()]
    target = int(megabytes * 1_000_000)
    copies = 0
    with path.open("w", encoding="utf-8") as out:
        while out.tell() < target:
            copies += 1
            out.write("".join(json.dumps({**row, "run": f"{copies}.{row['run']}"}) + "\n" for row in rows))
    return copies


SYSTEM = ("You are a careful assistant working in a repository. Use the tools to read files and run commands; "
          "answer only from what the tools return. ") * 12
TOOLS = [{"type": "function", "function": {
    "name": name, "description": f"{name}: " + "reads what the repository holds and returns it as text. " * 4,
    "parameters": {"type": "object", "properties": {
        "path": {"type": "string", "description": "a path relative to the repository root"},
        "limit": {"type": "integer", "description": "the most lines to return", "minimum": 1}},
        "required": ["path"], "additionalProperties": False}}} for name in ("read_file", "grep", "run")]


def _chat_response(n: int, rng: random.Random, message: dict[str, object], finish: str) -> dict[str, object]:
    prompt = 900 + 150 * n
    return {"id": f"chatcmpl-{rng.getrandbits(64):x}", "object": "chat.completion", "created": 1_748_000_000 + n,
            "model": "gpt-4o-2024-08-06", "choices": [{"index": 0, "message": message, "logprobs": None,
                                                        "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": 40, "total_tokens": prompt + 40},
            "system_fingerprint": "fp_a7d06e42a7"}


def agent_runs(rng: random.Random, number: int) -> list[dict[str, object]]:
    """One realistic run as request/response lines (every 7th run re-reads the same file: a planted repeat)."""
    calls = rng.randrange(10, 51)
    repeat = number % 7 == 0
    messages: list[dict[str, object]] = [{"role": "system", "content": SYSTEM},
                                         {"role": "user", "content": f"Task {number}: find where the cap is set."}]
    rows = []
    for n in range(calls):
        request = {"model": "gpt-4o", "messages": list(messages), "tools": TOOLS, "tool_choice": "auto",
                   "temperature": 0}
        if n == calls - 1:
            message = {"role": "assistant", "content": "The cap is set in config.py.", "refusal": None}
            rows.append({"run": f"r{number}", "request": request, "response": _chat_response(n, rng, message, "stop")})
            break
        path = "config.py" if repeat else f"src/module_{n}.py"
        call = {"id": f"call_{number}_{n}", "type": "function",
                "function": {"name": rng.choice(["read_file", "grep"]), "arguments": json.dumps({"path": path})}}
        message = {"role": "assistant", "content": None, "refusal": None, "tool_calls": [call]}
        response = _chat_response(n, rng, message, "tool_calls")
        rows.append({"run": f"r{number}", "request": request, "response": response})
        hits = [{"line": rng.randrange(1, 900), "text": "".join(rng.choice("abcdefgh ") for _ in range(24))}
                for _ in range(rng.randrange(0, 12))]
        result = json.dumps({"path": path, "matches": 0 if repeat else len(hits), "hits": [] if repeat else hits})
        messages += [message, {"role": "tool", "tool_call_id": call["id"], "content": result}]
    return rows


SHAPES = 8
"""Distinct runs the agent log cycles through (with fresh ids): a larger log has more runs, not longer ones, so
its peak memory can be compared with a smaller one's."""


def make_agent_log(path: Path, megabytes: float) -> int:
    """Write about ``megabytes`` MB of realistic runs to ``path``; return how many runs it holds."""
    target = int(megabytes * 1_000_000)
    runs = 0
    with path.open("w", encoding="utf-8") as out:
        while out.tell() < target:
            runs += 1
            rng = random.Random(f"26/{runs % SHAPES}")
            out.write("".join(json.dumps(row) + "\n" for row in agent_runs(rng, runs)))
    return runs


def parse_only(path: Path) -> int:
    """The baseline: read and parse every line, keep nothing."""
    count = 0
    with path.open("rb") as handle:
        for line in handle:
            json.loads(line)
            count += 1
    return count


def diagnose_streamed(path: Path) -> int:
    """Every finding, counted as it comes (nothing kept)."""
    return sum(1 for _ in iter_findings(path))


def seconds(function: Callable[[Path], int], path: Path) -> float:
    start = time.perf_counter()
    function(path)
    return time.perf_counter() - start


def peak_mib(function: Callable[[Path], int], path: Path) -> tuple[float, int]:
    tracemalloc.start()
    try:
        result = function(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak / 2**20, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=100.0, help="size of the large log (default 100)")
    parser.add_argument("--small-mb", type=float, default=10.0, help="size of the small log (default 10)")
    parser.add_argument("--rounds", type=int, default=2, help="alternating timing rounds on the large log")
    parser.add_argument("--shape", choices=("agent", "fixture"), default="agent", help="which log (default agent)")
    args = parser.parse_args()
    make = make_agent_log if args.shape == "agent" else lambda p, mb: make_log(p, mb) * 6
    with tempfile.TemporaryDirectory() as folder:
        small, large = Path(folder) / "small.jsonl", Path(folder) / "large.jsonl"
        runs = {small: make(small, args.small_mb), large: make(large, args.mb)}
        for path in (small, large):
            size = path.stat().st_size / 1e6
            print(f"{args.shape} {path.name}: {size:.1f} MB, {runs[path]} runs, "
                  f"{sum(1 for _ in path.open('rb'))} lines")

        base, diag = [], []
        for _ in range(args.rounds):
            base.append(seconds(parse_only, large))
            diag.append(seconds(diagnose_streamed, large))
        b, d = statistics.median(base), statistics.median(diag)
        mb = large.stat().st_size / 1e6
        print(f"\ntime on {mb:.0f} MB (median of {args.rounds} alternating rounds):")
        print(f"  parse JSON lines only   {b:7.2f} s   {mb / b:6.1f} MB/s")
        print(f"  diagnose (streamed)     {d:7.2f} s   {mb / d:6.1f} MB/s   ratio {d / b:.1f}x the baseline")

        print("\npeak Python memory (tracemalloc):")
        for name, function in (("parse JSON lines only", parse_only), ("diagnose (streamed)", diagnose_streamed)):
            low, _ = peak_mib(function, small)
            high, found = peak_mib(function, large)
            extra = f"   {found} findings" if function is diagnose_streamed else ""
            print(f"  {name:22}  {args.small_mb:.0f} MB: {low:6.2f} MiB   {args.mb:.0f} MB: {high:6.2f} MiB   "
                  f"growth {high / low:.2f}x{extra}")


if __name__ == "__main__":
    main()
