"""Does diagnose stream? Time and peak memory on a generated 100 MB log, against just parsing its JSON lines.

The log is the shipped openai-chat request/response fixture (six runs: healthy ones,
a spin to the cap, a premature and a truncated answer) repeated with fresh run ids
until the file reaches the size asked for. Measured in one process:

  1. time: the baseline (``json.loads`` of every line, nothing else) and
     ``agentloops.diagnose.iter_findings`` over the same file, in alternating
     rounds so machine noise hits both alike; the ratio is diagnose / baseline;
  2. peak memory (``tracemalloc``, Python allocations) of both on a small and a
     large log: if diagnose streams, its peak stays flat as the file grows.

Run:  .venv/bin/python benchmarks/bench_diagnose.py [--mb 100] [--small-mb 10] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        small, large = Path(folder) / "small.jsonl", Path(folder) / "large.jsonl"
        copies = {small: make_log(small, args.small_mb), large: make_log(large, args.mb)}
        for path in (small, large):
            size = path.stat().st_size / 1e6
            print(f"{path.name}: {size:.1f} MB, {copies[path] * 6} runs, {sum(1 for _ in path.open('rb'))} lines")

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
