"""The package's own recordings as runs: ``agentloops run … --json`` output and provider scenario files.

A run record (:meth:`agentloops.record.RunRecord.to_dict`) says everything:
each round's content, tool names, finish reason, what the call added, and how
the run ended (``outcome``, ``hit_cap``, ``error``). It does not keep tool
arguments or results, so the tool-call detectors have nothing to compare there.

A provider scenario file (what :func:`agentloops.providers.record.record` saves)
keeps every raw response body in order; each round after a tool-call round was
sent that round's results. Tool results are saved once per tool, not per call,
so they are treated as unknown, and how the caller ended is unknown too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, get_args

from agentloops.diagnose.model import Ending, LogError, Msg, Run, Turn, field_path, log_error
from agentloops.errors import ScenarioError
from agentloops.i18n import N_, Phrase
from agentloops.providers import Reply
from agentloops.response import FinishReason, Response, ToolCall, Usage
from agentloops.scenario import scenario_from_dict

_FINISH = get_args(FinishReason)
_NOTHING_NEW = ("", "its own last reply")


def _field(row: dict[str, Any], key: str, where: str, types: tuple[type, ...], expected: str) -> Any:
    """``row[key]`` checked (``where``: ``file:line`` or ``file:line: rounds[2]``; ``expected``: an ``N_()`` text)."""
    path = field_path(where, key)
    if key not in row:
        raise log_error(N_("{where}: missing; expected {expected}"), where=path, expected=Phrase(expected))
    value = row[key]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise log_error(N_("{where}: expected {expected}; got {kind}"), where=path, expected=Phrase(expected),
                        kind=type(value).__name__)
    return value


def _content(shown: str, where: str) -> str | None:
    """Undo :func:`~agentloops.response.show_content`: ``null`` or a JSON string."""
    if shown == "null":
        return None
    try:
        value = json.loads(shown)
    except ValueError:
        value = None
    if not isinstance(value, str):
        raise log_error(N_("{where}.content: expected null or a quoted string, as `agentloops run --json` writes it"),
                        where=where)
    return value


def _response(row: dict[str, Any], where: str) -> Response:
    finish = _field(row, "finish_reason", where, (str,), N_("a finish reason"))
    if finish not in _FINISH:
        raise log_error(N_("{where}.finish_reason: expected one of {names}; got {value}"), where=where,
                        names=", ".join(_FINISH), value=f"{finish!r:.60}")
    names = [n for n in _field(row, "tool_calls", where, (str,), N_("tool names joined by ', '")).split(", ") if n]
    step = row.get("step")
    calls = tuple(ToolCall(id=f"call_{step}_{i}", name=n) for i, n in enumerate(names))
    prompt = _field(row, "context_tokens", where, (int,), N_("a whole number of tokens"))
    return Response(content=_content(_field(row, "content", where, (str,), N_("the shown content")), where),
                    tool_calls=calls, finish_reason=finish,
                    raw_finish_reason="unknown" if finish == "unknown" else None,
                    usage=Usage(prompt_tokens=max(prompt, 0)))


def record_run(where: str, data: dict[str, Any]) -> Run:
    """One :class:`~agentloops.record.RunRecord` dictionary as a run."""
    rows = _field(data, "rounds", where, (list,), N_("the list of rounds (run with --json)"))
    outcome = _field(data, "outcome", where, (str,), N_("the run's outcome"))
    hit_cap = _field(data, "hit_cap", where, (bool,), N_("true or false"))
    turns: list[Turn] = []
    previous_tools: list[str] = []
    for i, row in enumerate(rows):
        at = f"{where}: rounds[{i}]"
        if not isinstance(row, dict):
            raise log_error(N_("{where}: expected an object; got {kind}"), where=at, kind=type(row).__name__)
        added = _field(row, "new_since_last_call", at, (str,), N_("what the call added, in words"))
        response = _response(row, at)
        tools = [n for n in _field(row, "tools_run", at, (str,), N_("tool names joined by ', '")).split(", ") if n]
        results = tuple(Msg("tool", None, name=n) for n in previous_tools)
        # the loop flags a round whose response repeats while nothing new was sent (a repeated tool
        # result is not new); without the flag, judge by what the call added
        fresh = i == 0 or (not row["repeated"] if isinstance(row.get("repeated"), bool) else added not in _NOTHING_NEW)
        turns.append(Turn(i + 1, f"{where}: rounds[{i}]", Reply.of(response), fresh, False, results,
                          response.usage.prompt_tokens if response.usage else None))
        previous_tools = tools
    ending = Ending("raised" if outcome == "raised" else "returned", data.get("error"), hit_cap)
    tail = tuple(Msg("tool", None, name=n) for n in previous_tools)
    name = f"{data.get('scenario', 'run')} × {data.get('criterion', '?')}"
    return Run(name, where, tuple(turns), ending, tail)


def scenario_run(where: str, data: dict[str, Any]) -> Run:
    """A scenario file's responses as the turns of one run whose ending is unknown."""
    try:
        scenario = scenario_from_dict(data, where)
    except ScenarioError as exc:
        raise LogError(exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)) from None
    turns: list[Turn] = []
    previous: Response | None = None
    for i, response in enumerate(scenario.responses):
        results = tuple(Msg("tool", None, call_id=c.id, name=c.name) for c in (previous.tool_calls if previous else ()))
        usage = response.usage
        tokens = None if usage is None else (usage.prompt_tokens or 0) + (usage.completion_tokens or 0)
        turns.append(Turn(i + 1, f"{where}: responses[{i}]", Reply.of(response), previous is None or bool(results),
                          False, results, tokens))
        previous = response
    return Run(scenario.name, where, tuple(turns), Ending())


def read_records(items: Iterator[tuple[str, dict[str, Any]]]) -> Iterator[Run]:
    """Runs from run records, one per JSON object."""
    for where, data in items:
        yield record_run(where, data)


def read_scenarios(items: Iterator[tuple[str, dict[str, Any]]]) -> Iterator[Run]:
    """Runs from scenario files, one per JSON object."""
    for where, data in items:
        yield scenario_run(where, data)
