"""Seeded fuzzing of ``agentloops diagnose``: whatever the log holds, the exit status means what it says.

Every shipped diagnose log (``data/diagnose/``) is mutated with the shared
mutations of :mod:`tests.test_fuzz` — byte flips, truncations, type swaps,
nesting a thousand deep, huge numbers, odd strings — and each case goes
through ``agentloops.cli.main(["diagnose", case])``. A case passes when the
command exits 0 (no finding), 1 (findings) or 2 (the log could not be read
to its end: one line naming the file, or a partial report saying where
reading stopped) and writes at most one line, never a traceback, to stderr.
A crash (status 3, or an exception out of ``main``) is what this test hunts.

The six inputs that once crashed the readers have their own test each, so a
regression there names its cause.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentloops.cli import main
from agentloops.resources import data_dir
from tests.test_fuzz import mutate

SEED = 20_261_201
CASES = 2000
"""Cases per run of the fuzz test (about 3 s of work per 100 cases on this machine's share of a core)."""

BUDGET_SECONDS = 240
"""The fuzz test stops starting new cases after this long, so it is bounded in time whatever the machine."""

SEEDS = sorted(p for p in (data_dir() / "diagnose").rglob("*") if p.suffix in (".jsonl", ".json")
               and p.name not in ("expected.json", "VERSIONS.json"))


def run_cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(args)
    return status, out.getvalue(), err.getvalue()


def problem_with(status: int, out: str, err: str, name: str) -> str | None:
    """What is wrong with how ``diagnose`` ended on the file ``name``, if anything."""
    if "Traceback" in err or len(err.splitlines()) > 1:
        return "a traceback or more than one line on stderr"
    if status not in (0, 1, 2):
        return f"status {status}"
    if status == 2 and not (err and name in err) and name not in out:
        return "status 2 without naming the file"
    if status != 2 and err:
        return f"status {status} with an error line"
    return None


_DEEP_TEXT = "[" * 1000 + "1" + "]" * 1000
_VALUES: list[Any] = [True, False, None, 0, -1, 2**70, 1.5, "", "x", "\u2028", [], {}, ["x"], [None], {"x": 1},
                      _DEEP_TEXT, "{\"a\": 1}", "null", "true", "[]"]


def _slots(value: Any, into_text: bool) -> list[tuple[Any, Any]]:
    """Every (container, key) slot of a JSON value; with ``into_text``, also inside strings that hold JSON
    (OTel attributes carry their messages as JSON text), returned as ``(holder, key, parsed)`` triples."""
    found: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        slots = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        for key, child in slots:
            found.append((item, key))
            if isinstance(child, str) and into_text and child[:1] in "[{":
                with contextlib.suppress(ValueError):
                    found.append((item, key, json.loads(child)))
            stack.append(child)
    return found


def mutate_value(data: bytes, rng: random.Random, lines: bool) -> tuple[bytes, str]:
    """Replace one value of one line (or of the JSON text inside one) with a value of another type: the line
    stays valid JSON, so the readers' field checks are what is tested, not the JSON parser."""
    rows = data.decode("utf-8").splitlines() if lines else [data.decode("utf-8")]
    index = rng.randrange(len(rows))
    row = json.loads(rows[index])
    slot = rng.choice(_slots(row, into_text=True))
    new = rng.choice(_VALUES)
    if len(slot) == 3:
        holder, key, inner = slot
        inner_slots = _slots(inner, into_text=False)
        if inner_slots:
            container, inner_key = rng.choice(inner_slots)
            container[inner_key] = new
            holder[key] = json.dumps(inner)
    else:
        container, key = slot
        container[key] = new
    rows[index] = json.dumps(row)
    return ("\n".join(rows) + "\n").encode(), f"line {index + 1}: {type(new).__name__} at {key!r}"


def one_case(seed_file: Path, number: int, folder: Path) -> tuple[str, str] | None:
    rng = random.Random(f"{SEED}/diagnose/{number}")
    seed = rng.choice(SEEDS) if seed_file == Path() else seed_file
    if rng.random() < 0.6:
        data, what = mutate_value(seed.read_bytes(), rng, lines=seed.suffix == ".jsonl")
    else:
        data, what = mutate(seed.read_bytes(), rng, lines=seed.suffix == ".jsonl")
    case = folder / f"case{number}{seed.suffix}"
    case.write_bytes(data)
    label = f"case {number} ({seed.name}, {what})"
    try:
        status, out, err = run_cli(["diagnose", str(case)])
    except BaseException as exc:  # an exception out of main is exactly what is hunted
        return type(exc).__name__, f"{label}: {type(exc).__name__}: {str(exc)[:160]!r}"
    problem = problem_with(status, out, err, case.name)
    return None if problem is None else (problem, f"{label}: status {status}, stderr {err[:200]!r}")


def test_fuzz_diagnose(tmp_path: Path):
    started = time.perf_counter()
    problems, ran = [], 0
    for number in range(CASES):
        if time.perf_counter() - started > BUDGET_SECONDS:
            break
        ran += 1
        found = one_case(Path(), number, tmp_path)
        if found is not None:
            problems.append(found)
    assert ran >= 300, f"only {ran} cases ran in {BUDGET_SECONDS} s"
    if problems:
        causes = Counter(cause for cause, _ in problems)
        summary = "; ".join(f"{count}× {cause}" for cause, count in causes.most_common())
        pytest.fail(f"{len(problems)} of {ran} diagnose cases misbehaved ({summary}); first ones:\n"
                    + "\n".join(line for _, line in problems[:12]), pytrace=False)


@pytest.mark.parametrize(("status", "out", "err", "problem"), [
    (0, "ok", "", None),
    (1, "findings", "", None),
    (2, "", "agentloops: error: case1.jsonl:3: bad\n", None),
    (2, "report\nstopped reading at: case1.jsonl:3: cut off", "", None),
    (2, "", "agentloops: error: something\n", "status 2 without naming the file"),
    (3, "", "agentloops: error: case1.jsonl: internal error\n", "status 3"),
    (1, "", "Traceback (most recent call last):\n  File\n", "a traceback or more than one line on stderr"),
    (0, "", "agentloops: error: case1.jsonl: x\n", "status 0 with an error line"),
])
def test_what_counts_as_a_bad_ending(status: int, out: str, err: str, problem: str | None):
    assert problem_with(status, out, err, "case1.jsonl") == problem


# --- the six inputs that crashed, one each ----------------------------------------------------------------------

def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (data_dir() / "diagnose" / name).read_text().splitlines()]


def _write(path: Path, rows: list[dict], replace: tuple[str, str] | None = None) -> Path:
    text = "".join(json.dumps(row) + "\n" for row in rows)
    if replace is not None:
        text = text.replace(*replace, 1)
    path.write_text(text)
    return path


def _first(rows: list[dict], test) -> tuple[int, dict]:
    for n, row in enumerate(rows):
        for item in _walk(row):
            if test(item):
                return n, item
    raise AssertionError("no such item in the fixture")


def _walk(value):
    if isinstance(value, dict):
        yield value
        for child in value.values():
            yield from _walk(child)
    elif isinstance(value, list):
        for child in value:
            yield from _walk(child)


def _chat_call_arguments_deep(rows: list[dict]) -> int:
    n, call = _first(rows, lambda d: "function" in d and "arguments" in d.get("function", {})
                     and d is not rows[0].get("response"))
    call["function"]["arguments"] = "[" * 1000 + "1" + "]" * 1000  # the wire form: arguments are JSON text
    return n


def _chat_tool_calls_true(rows: list[dict]) -> int:
    requests = [row["request"] for row in rows]
    n, message = _first(requests, lambda d: d.get("role") == "assistant" and "tool_calls" in d)
    message["tool_calls"] = True
    return n


def _otel_attributes_true(rows: list[dict]) -> int:
    n, span = _first(rows, lambda d: "traceId" in d)
    span["attributes"] = True
    return n


def _anthropic_tool_use_id_list(rows: list[dict]) -> int:
    n, block = _first(rows, lambda d: d.get("type") == "tool_result")
    block["tool_use_id"] = ["toolu_1"]
    return n


def _gemini_name_list(rows: list[dict]) -> int:
    n, part = _first(rows, lambda d: "functionResponse" in d)
    part["functionResponse"]["name"] = ["read_file"]
    return n


def _otel_finish_reason_empty(rows: list[dict]) -> int:
    n, attribute = _first(rows, lambda d: d.get("key") == "gen_ai.response.finish_reasons")
    attribute["value"] = {"arrayValue": {"values": [{"stringValue": ""}]}}
    return n


@pytest.mark.parametrize(("fixture", "damage", "field"), [
    ("pairs/openai-chat.jsonl", _chat_call_arguments_deep, "nested too deeply"),
    ("pairs/openai-chat.jsonl", _chat_tool_calls_true, "tool_calls"),
    ("otel/pydantic-ai-repeated-call.jsonl", _otel_attributes_true, "attributes"),
    ("pairs/anthropic.jsonl", _anthropic_tool_use_id_list, "tool_use_id"),
    ("pairs/gemini.jsonl", _gemini_name_list, "name"),
    ("otel/pydantic-ai-repeated-call.jsonl", _otel_finish_reason_empty, "finish_reasons"),
])
def test_a_crash_kind_is_one_line_naming_the_file_and_line(tmp_path: Path, fixture: str, damage, field: str):
    rows = _rows(fixture)
    line = damage(rows) + 1
    case = _write(tmp_path / "case.jsonl", rows)
    status, out, err = run_cli(["diagnose", str(case)])
    assert status == 2
    said = err if err else out.splitlines()[-1]
    assert f"case.jsonl:{line}" in said and field in said, (out, err)
    assert len(err.splitlines()) <= 1 and "Traceback" not in err


# --- every field of every format, given every wrong type ------------------------------------------------------

_WRONG: dict[str, Any] = {"true": True, "null": None, "number": 7, "text": "x", "list": ["x"], "object": {"x": 1},
                          "deep": "[" * 1200 + "1" + "]" * 1200}
"""One value of each JSON type, and text nested past what a parser walks (where a field holds JSON as text)."""

_SMALL_LOGS: dict[str, int] = {"pairs/tools-polling.jsonl": 5, "heldout/openai-sdk-timeout.jsonl": 4,
                               "pairs/anthropic.jsonl": 3, "pairs/gemini.jsonl": 3, "pairs/ollama.jsonl": 3,
                               "pairs/openai-responses.jsonl": 3, "otel/pydantic-ai-truncated.jsonl": 1,
                               "recordings/runs.jsonl": 2, "recordings/truncated.content.json": 1}
"""A log of each format and how many of its entries to take (the first three lines hold every field a format has)."""


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path inside ``value``, and, after a ``None`` marker, every path inside a string that holds JSON."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield (*path, key)
        if isinstance(child, str) and child[:1] in "[{" and None not in path:
            with contextlib.suppress(ValueError):
                yield from _paths(json.loads(child), (*path, key, None))
        yield from _paths(child, (*path, key))


def _with(entry: Any, path: tuple[Any, ...], new: Any) -> Any:
    """A copy of ``entry`` with the value at ``path`` replaced (inside the JSON text, past a ``None`` marker)."""
    entry = copy.deepcopy(entry)
    if None in path:
        cut = path.index(None)
        holder = entry
        for key in path[:cut - 1]:
            holder = holder[key]
        holder[path[cut - 1]] = json.dumps(_with(json.loads(holder[path[cut - 1]]), path[cut + 1:], new))
        return entry
    holder = entry
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = new
    return entry


def _field_cases(name: str, entries: int) -> Iterator[tuple[str, str]]:
    """Each distinct field (list positions folded) of the first ``entries`` entries, given each wrong value."""
    seed = data_dir() / "diagnose" / name
    lines = seed.suffix == ".jsonl"
    rows = [json.loads(line) for line in seed.read_text().splitlines()[:entries]] if lines else [
        json.loads(seed.read_text())]
    seen: set[tuple[Any, ...]] = set()
    for index, row in enumerate(rows):
        for path in _paths(row):
            folded = tuple("*" if isinstance(key, int) else key for key in path)
            if folded in seen:
                continue
            seen.add(folded)
            for label, value in _WRONG.items():
                changed = [*rows[:index], _with(row, path, value), *rows[index + 1:]]
                text = "".join(json.dumps(r) + "\n" for r in changed) if lines else json.dumps(changed[0], indent=1)
                yield f"{name}:{index + 1} {'.'.join(str(k) for k in folded)} = {label}", text


def test_every_field_of_every_format_given_every_wrong_type(tmp_path: Path):
    """Exhaustive where :func:`test_fuzz_diagnose` samples: each field a format has, in turn, holds each JSON type
    it should not; diagnose reads it, or says in one line which file and line it cannot read, and never crashes."""
    problems, ran = [], 0
    for name, entries in _SMALL_LOGS.items():
        case = tmp_path / f"case{Path(name).suffix}"
        for label, text in _field_cases(name, entries):
            case.write_text(text)
            ran += 1
            try:
                status, out, err = run_cli(["diagnose", str(case)])
            except BaseException as exc:
                problems.append(f"{label}: {type(exc).__name__}: {str(exc)[:160]}")
                continue
            problem = problem_with(status, out, err, case.name)
            if problem is not None:
                problems.append(f"{label}: {problem}: {err[:200]!r}")
    assert ran > 1000, ran
    assert not problems, f"{len(problems)} of {ran} cases misbehaved; first ones:\n" + "\n".join(problems[:12])
