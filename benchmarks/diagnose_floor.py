"""How far is diagnose from 3x a JSON parse on the worst log, and what would close the gap? Hypotheticals, measured.

``bench_diagnose.py`` measures diagnose as it is. This script measures what the 3x target would
take on the log it misses most: the shipped Gemini pairs (six runs of 1 to 4 calls, every run a
planted bug) repeated to 10 MB, so per-line and per-run costs dominate. From the third row on, each row
adds one cheaper part that diagnose does not ship, swapped in inside this process only (``unittest.mock.patch``):

``as shipped``          :func:`~agentloops.diagnose.iter_findings`;
``reading only``        :func:`~agentloops.diagnose.iter_runs`, no detector run: the floor if detecting cost nothing;
``unchecked reply``     a Gemini response reader that checks no field (a wrong type raises a bare
                        ``KeyError`` instead of naming the field), in place of the adapter;
``+ echoes skipped``    that, and the model's own turns that each request sends back not converted (the
                        detectors never read them; only the test whether a request continues the last
                        compares them); on a log of another shape, these two Gemini swaps change nothing;
``+ pydantic-core``     those, and each line parsed by ``pydantic_core.from_json`` (about twice as fast
                        as the standard library's parser; it reads ``1.0`` as a float where diagnose reads
                        a whole number, and its errors are worded differently);
``its reading only``    all three swaps, no detector run.

Every row must find the same findings as the first, or the script stops: a hypothetical that reads
the log differently proves nothing. Times are CPU seconds, the fastest of alternating rounds, over the
baseline of ``bench_diagnose.py`` (``json.loads`` of every line).

Run:  .venv/bin/python benchmarks/diagnose_floor.py [--mb 10] [--rounds 5] [--shape gemini]
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pydantic_core
from bench_diagnose import LOG_SHAPES, make_agent_log, make_log, parse_only, seconds

from agentloops.diagnose import iter_findings, iter_runs
from agentloops.diagnose.model import Msg
from agentloops.diagnose.requests import gemini_content
from agentloops.providers import reader
from agentloops.providers._common import json_encoder
from agentloops.providers.reply import Call, Reply
from agentloops.stops import normalise

_DUMPS = json_encoder()
"""What the adapters write a parsed ``args`` object back as (``json.dumps(args, ensure_ascii=False)``)."""


def unchecked_gemini(raw: Any, where: str = "response") -> Reply:
    """A Gemini body read with no field checked: what the adapter costs without its checks."""
    candidates = raw.get("candidates")
    usage = raw.get("usageMetadata")
    counts = (usage.get("promptTokenCount"), usage.get("candidatesTokenCount")) if usage else (None, None)
    if not candidates:
        block = raw["promptFeedback"]["blockReason"]
        return Reply(None, (), normalise("gemini", "promptFeedback.blockReason", block.upper()),
                     f"blockReason:{block}", usage is not None, *counts)
    candidate = candidates[0]
    texts: list[str] = []
    calls: list[Call] = []
    for part in (candidate.get("content") or {}).get("parts") or ():
        call = part.get("functionCall")
        if call is not None:
            calls.append(Call(call.get("id") or f"gemini_call_{len(calls) + 1}", call["name"],
                              _DUMPS(call.get("args") or {})))
        elif "text" in part and not part.get("thought"):
            texts.append(part["text"])
    finish = candidate["finishReason"]
    return Reply("".join(texts) if texts else None, tuple(calls),
                 normalise("gemini", "candidates[0].finishReason", finish.upper()), finish, usage is not None, *counts)


def _unchecked_reader(format: str) -> Callable[[object, str], Reply]:
    return unchecked_gemini if format == "gemini" else reader(format)


def _fast_decode(where: str, raw: bytes, last: bool) -> Any:
    return pydantic_core.from_json(raw, allow_inf_nan=False)


def findings(path: Path) -> list[tuple[str, str, str]]:
    return [(f.kind, f.run, f.calls) for f in iter_findings(path)]


def reading_only(path: Path) -> int:
    return sum(1 for _ in iter_runs(path))


_ECHO = (Msg("assistant"),)


def _echo_skipped(raw: object, at: str) -> tuple[Msg, ...]:
    """Gemini's request entries, the model's own turns (echoed back in every request) left unconverted."""
    if isinstance(raw, dict) and raw.get("role") == "model":
        return _ECHO
    return gemini_content(raw, at)


SWAPS: list[Callable[[], contextlib.AbstractContextManager[Any]]] = [
    lambda: mock.patch("agentloops.diagnose.requests.reader", _unchecked_reader),
    lambda: mock.patch.dict("agentloops.diagnose.requests._SHAPES", {"gemini": ("contents", _echo_skipped)}),
    lambda: mock.patch("agentloops.diagnose.source.decode", _fast_decode),
]
"""The parts swapped, in the order the rows add them."""


@contextlib.contextmanager
def swapped(count: int) -> Iterator[None]:
    """The first ``count`` swaps in place."""
    with contextlib.ExitStack() as stack:
        for swap in SWAPS[:count]:
            stack.enter_context(swap())
        yield


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=10.0, help="size of the log in MB (default 10)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    parser.add_argument("--shape", choices=LOG_SHAPES, default="gemini", help="which log (default gemini)")
    args = parser.parse_args()
    rows: list[tuple[str, int, Callable[[Path], object]]] = [
        ("as shipped", 0, findings),
        ("reading only", 0, reading_only),
        ("unchecked reply", 1, findings),
        ("+ echoes skipped", 2, findings),
        ("+ pydantic-core", 3, findings),
        ("  its reading only", 3, reading_only),
    ]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{args.shape}.jsonl"
        make_agent_log(path, args.mb) if args.shape == "agent" else make_log(path, args.mb, args.shape)
        expected = findings(path)
        for label, swaps, function in rows:
            if function is findings:
                with swapped(swaps):
                    if findings(path) != expected:
                        raise SystemExit(f"{label}: the findings differ from diagnose's; the row would prove nothing")
        base: list[float] = []
        times: dict[str, list[float]] = {label: [] for label, _swaps, _function in rows}
        for _ in range(args.rounds):
            base.append(seconds(parse_only, path))
            for label, swaps, function in rows:
                with swapped(swaps):
                    times[label].append(seconds(function, path))
    baseline = min(base)
    print(f"{args.shape}, {args.mb:g} MB, {len(expected)} findings; baseline (json.loads per line) {baseline:.3f} s")
    for label, _swaps, _function in rows:
        best = min(times[label])
        print(f"  {label:18} {best:7.3f} s  {best / baseline:5.2f}x")


if __name__ == "__main__":
    main()
