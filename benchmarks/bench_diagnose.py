"""Does diagnose read at the speed of parsing? Time and peak memory on generated logs, against parsing their lines.

Every shape diagnose meets in practice, each written to the size asked for:

``agent``             realistic agent runs, openai-chat request/response JSON Lines: each request carries a
                      system prompt, three tool schemas and the whole conversation so far, as SDKs send it;
                      runs of 10 to 50 calls, tool results of JSON from 40 B to 600 B, every 7th run with a
                      planted stop bug (the same file read again and again). Each request repeats the
                      previous one's messages: a reader that walks every request's whole conversation again
                      per call costs the square of a run's length.
``openai-chat``,      the shipped pair fixtures of that provider shape (six short runs of 1 to 4 calls) repeated
``openai-responses``, with fresh run ids: many small lines, so per-line costs dominate.
``anthropic``,
``gemini``, ``ollama``
``tools``             the shipped tool-level fixtures (polling, a retry, repeats, alternation, a failure streak).
``otel``              Pydantic AI's OpenTelemetry spans (one OTLP export per line, the GenAI conventions'
                      messages as JSON text inside attributes), the shipped traces with fresh trace ids.
``openai-sdk``        the OpenAI SDK's HTTP exchanges as its own client logged them (no run ids; one attempt
                      timed out), repeated.

Measured in one process, per shape and size:

  1. time: the baseline (``json.loads`` of every line, nothing else) and
     ``agentloops.diagnose.iter_findings`` over the same file, in alternating
     rounds; each is the CPU time of this process (``time.process_time``: other
     work on the machine adds less to it than to the clock) and the fastest of its
     rounds (noise only ever adds); the ratio is diagnose / baseline;
  2. peak memory (``tracemalloc``, Python allocations) of diagnose on the two
     largest logs: if diagnose streams, its peak stays flat as the file grows (it
     holds one run, so it grows with a run's length, never with the file's). tracemalloc
     counts the tuples CPython keeps for reuse (up to 2,000 freed ones per size, emptied at
     each full collection) as allocated, so a long log's peak can creep up to that bound.

The issue's target: diagnose at most 3x the baseline on every shape and size.

Run:  .venv/bin/python benchmarks/bench_diagnose.py [--mb 0.5 10 100] [--rounds 3] [--shape agent otel ...]
          [--memory-mb 0.5 100 | --no-memory]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from agentloops.diagnose import iter_findings, iter_runs
from agentloops.resources import data_dir

FIXTURES = data_dir() / "diagnose"


def _template(shape: str) -> list[str]:
    """The fixture lines a shape repeats."""
    if shape == "otel":
        files = sorted((FIXTURES / "otel").glob("*.jsonl"))
    elif shape == "openai-sdk":
        files = sorted((FIXTURES / "heldout").glob("openai-sdk-*.jsonl"))
    elif shape == "tools":
        files = sorted((FIXTURES / "pairs").glob("tools-*.jsonl"))
    else:
        files = [FIXTURES / "pairs" / f"{shape}.jsonl"]
    return [line for file in files for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]


def _renamed(shape: str, lines: list[str], copy: int) -> str:
    """One copy of the template with fresh run ids (trace ids for spans), so each copy holds its own runs."""
    if shape == "openai-sdk":
        return "".join(line + "\n" for line in lines)  # no run ids: each copy starts a conversation anew
    if shape == "otel":
        prefix = f"{copy:08x}"
        return "".join(re.sub(r'"traceId": "[0-9a-f]{8}', f'"traceId": "{prefix}', line) + "\n" for line in lines)
    out = []
    for line in lines:
        row = json.loads(line)
        if "run" in row:
            row["run"] = f"{copy}.{row['run']}"
        out.append(json.dumps(row, ensure_ascii=False) + "\n")
    return "".join(out)


def make_log(path: Path, megabytes: float, shape: str) -> int:
    """Write about ``megabytes`` MB of copies of ``shape``'s fixtures to ``path``; return how many copies."""
    lines = _template(shape)
    target = int(megabytes * 1_000_000)
    copies = 0
    with path.open("w", encoding="utf-8") as out:
        while out.tell() < target:
            copies += 1
            out.write(_renamed(shape, lines, copies))
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


def make_agent_log(path: Path, megabytes: float, shape: str = "agent") -> int:
    """Write about ``megabytes`` MB of realistic runs to ``path``; return how many runs it holds."""
    target = int(megabytes * 1_000_000)
    runs = 0
    with path.open("w", encoding="utf-8") as out:
        while out.tell() < target:
            runs += 1
            rng = random.Random(f"26/{runs % SHAPES}")
            out.write("".join(json.dumps(row) + "\n" for row in agent_runs(rng, runs)))
    return runs


LOG_SHAPES = ("agent", "openai-chat", "openai-responses", "anthropic", "gemini", "ollama", "tools", "otel",
              "openai-sdk")


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


def seconds(function: Callable[[Path], object], path: Path) -> float:
    """CPU seconds ``function`` takes on ``path``."""
    start = time.process_time()
    function(path)
    return time.process_time() - start


def peak_mib(function: Callable[[Path], int], path: Path) -> tuple[float, int]:
    tracemalloc.start()
    try:
        result = function(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak / 2**20, result


def runs_per_copy(shape: str, path: Path) -> int:
    """How many runs one copy of ``shape``'s fixtures holds."""
    path.write_text(_renamed(shape, _template(shape), 1), encoding="utf-8")
    return sum(1 for _ in iter_runs(path))


def measure(path: Path, rounds: int) -> tuple[float, float]:
    """The fastest CPU seconds of the baseline and of diagnose on ``path``, in alternating rounds."""
    base, diag = [], []
    for _ in range(rounds):
        base.append(seconds(parse_only, path))
        diag.append(seconds(diagnose_streamed, path))
    return min(base), min(diag)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, nargs="+", default=[0.5, 10.0, 100.0],
                        help="sizes of the logs in MB (default 0.5 10 100); memory compares the first and the last")
    parser.add_argument("--rounds", type=int, default=3, help="alternating timing rounds per log (default 3)")
    parser.add_argument("--shape", choices=LOG_SHAPES, nargs="+", default=list(LOG_SHAPES),
                        help="which logs (default all)")
    parser.add_argument("--memory-mb", type=float, nargs=2, default=None, metavar=("SMALL", "LARGE"),
                        help="the two sizes whose peak memory is compared (default: the two largest; the agent "
                             "log holds all its run shapes, and so its longest run, from a few MB on)")
    parser.add_argument("--no-memory", action="store_true", help="time only")
    args = parser.parse_args()
    print(f"{'shape':17} {'MB':>6} {'lines':>8} {'runs':>7} {'parse s':>8} {'diagnose s':>10} {'MB/s':>6} "
          f"{'ratio':>6}")
    worst = 0.0
    for shape in args.shape:
        with tempfile.TemporaryDirectory() as folder:
            paths = []
            per_copy = runs_per_copy(shape, Path(folder) / "one.jsonl") if shape != "agent" else 1
            for mb in args.mb:
                path = Path(folder) / f"{shape}-{mb:g}.jsonl"
                runs = make_agent_log(path, mb) if shape == "agent" else make_log(path, mb, shape) * per_copy
                base, diag = measure(path, args.rounds)
                size = path.stat().st_size / 1e6
                lines = sum(1 for _ in path.open("rb"))
                worst = max(worst, diag / base)
                print(f"{shape:17} {size:6.1f} {lines:8d} {runs:7d} {base:8.3f} {diag:10.3f} {size / diag:6.1f} "
                      f"{diag / base:5.2f}x", flush=True)
                paths.append(path)
            sizes = args.memory_mb or sorted(args.mb)[-2:]
            if not args.no_memory and len(set(sizes)) == 2 and all(size in args.mb for size in sizes):
                small, large = sizes
                low, _ = peak_mib(diagnose_streamed, paths[args.mb.index(small)])
                high, found = peak_mib(diagnose_streamed, paths[args.mb.index(large)])
                print(f"{'':17} peak Python memory of diagnose: {low:.2f} MiB at {small:g} MB, {high:.2f} MiB at "
                      f"{large:g} MB (growth {high / low:.2f}x, {found} findings)", flush=True)
            for path in paths:
                path.unlink()
    print(f"\nworst ratio: {worst:.2f}x the baseline (target: at most 3x)")


if __name__ == "__main__":
    main()
