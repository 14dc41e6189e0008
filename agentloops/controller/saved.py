"""Saved runs: the state a paused task needs to continue later, even in another process.

A task waiting for the user must not keep a loop spinning in the background.
It saves what it has — task state, budgets used, clock, transcript, action
fingerprints, fault counters, the outputs it stored outside the context — and
stops. :func:`~agentloops.controller.resuming.resume` continues from exactly
there once the user answers, and only once: a saved run records the state
version it paused at, and a second resume of the same pause is refused (see
:func:`check_not_resumed`).

Every field is typed, so a hand-edited or truncated file fails in one line
that names the field — never with a traceback from deep inside ``resume``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentloops.controller.budgets import Budget
from agentloops.controller.context import ContextPolicy
from agentloops.controller.errors import ConfigError, TraceError
from agentloops.controller.faults import Fault
from agentloops.controller.parallel import CallState
from agentloops.controller.policy import ErrorPolicy
from agentloops.controller.trace import read_trace, read_trace_lines
from agentloops.controller.trace_lines import TaskRef, TurnLine
from agentloops.errors import describe_validation_error
from agentloops.jsonfile import read_json
from agentloops.messages import Message
from agentloops.response import ToolCall


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FactLine(_Strict):
    """A verified fact (see :class:`~agentloops.controller.state.Fact`)."""

    item: str
    value: Any = None
    summary: str
    source: str
    turn: int
    ref: str | None = None


class FailureLine(_Strict):
    """One failed tool attempt in the "already tried" list."""

    tool: str
    status: str
    summary: str
    turn: int


class StateLine(_Strict):
    """A task-state snapshot (see :meth:`~agentloops.controller.state.TaskState.snapshot`)."""

    task: str
    goal: str
    constraints: list[str]
    items: dict[str, Literal["open", "done", "missing"]]
    reasons: dict[str, str]
    codes: dict[str, str] = Field(default_factory=dict)
    facts: list[FactLine]
    inputs: dict[str, str]
    waiting_for: dict[str, str] | None
    failures: list[FailureLine]
    version: int = Field(ge=0)
    progress_count: int = Field(default=0, ge=0)
    finished: str | None


class MeterLine(_Strict):
    """What the budget meter had used."""

    used: dict[str, float]
    retries_by_tool: dict[str, int]
    started_at: float


class CallLine(_Strict):
    """One tool call of the ledger (see :class:`~agentloops.controller.parallel.CallRecord`)."""

    call_id: str
    turn: int
    tool: str
    args: str
    kind: str
    parallel: bool
    started_at: float
    state: CallState
    ended_at: float | None
    arrived_at: float | None
    status: str | None
    deliveries: int
    note: str


class ToolCallLine(_Strict):
    """A tool call inside a saved message."""

    id: str
    name: str
    arguments: str


class MessageLine(_Strict):
    """A transcript message."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None
    tool_calls: list[ToolCallLine] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None


class MonitorLine(_Strict):
    """The progress monitor: idle turns and fingerprint sightings."""

    idle: int = Field(ge=0)
    sightings: list[tuple[str, str, int, int, str, bool, str]]


class SavedRun(_Strict):
    """The shape of a saved run (validated when loaded).

    Attributes:
        paused_at_version: the task-state version when the run paused; a resume is recorded
            against it, so the same pause cannot be continued twice.
        resumed: set once this saved run has been resumed (when, from which pause).
        store: outputs kept outside the context, by reference, so references stay valid.
    """

    schema_version: int
    trace_id: str = Field(min_length=1)
    label: str
    status: str
    question: str | None
    parameter: str | None
    task: TaskRef
    budget: Budget
    policy: ErrorPolicy
    context: ContextPolicy
    send_state: bool
    model_latency_s: float = Field(ge=0)
    scenario: dict[str, Any] | None
    faults: list[Fault]
    injector: dict[str, int]
    state: StateLine
    meter: MeterLine
    clock: float = Field(ge=0)
    turn: int = Field(ge=0)
    paused_at_version: int = Field(ge=0)
    head: list[MessageLine]
    groups: list[list[MessageLine]]
    monitor: MonitorLine
    repairs_used: int = Field(ge=0)
    repairs: dict[str, int] = Field(default_factory=dict)
    claims_rejected: int = Field(ge=0)
    consecutive_failures: int = Field(default=0, ge=0)
    call_counter: int = Field(ge=0)
    failed_calls: list[tuple[str, str]]
    model_calls: int = Field(ge=0)
    turns: list[TurnLine]
    calls: list[CallLine]
    store: dict[str, Any] = Field(default_factory=dict)
    trace_path: str | None
    resumed: dict[str, Any] | None = None
    pause_id: str | None = None
    trace_lines: list[dict[str, Any]] | None = None


def load_saved(saved: Mapping[str, Any] | str | Path) -> dict[str, Any]:
    """Validate a saved run given as a dict or a JSON file; one-line errors name the source and field."""
    source = "saved run"
    if isinstance(saved, (str, Path)):
        source = str(saved)
        data: Any = read_json(saved, error=ConfigError, what="saved-run file (written by 'controller run --save')")
    else:
        data = dict(saved)
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a JSON object; got {type(data).__name__}")
    try:
        SavedRun.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{source}: {describe_validation_error(exc)}") from None
    if data["status"] != "waiting_for_user":
        raise ConfigError(f"{source}: status {data['status']!r} cannot be resumed; only a waiting_for_user run "
                          "continues with a user's answer (a handed-off run is picked up by a person)")
    return data


def check_not_resumed(data: Mapping[str, Any], source: str, trace_path: str | Path | None) -> None:
    """Refuse to continue a pause that has already been continued.

    Two witnesses, either one enough: the saved run itself (marked when resumed), and the
    trace, which shows a ``resume`` line for this pause or a turn after it.

    Raises:
        ConfigError: in one line, naming the saved run, the pause and what shows it continued.
    """
    turn, version = data["turn"], data["paused_at_version"]
    again = "a paused task continues only once; resume from the saved state of its latest stop instead"
    if data.get("resumed"):
        raise ConfigError(f"{source}: already resumed (it paused at turn {turn}, state v{version}); {again}")
    if trace_path is None or not Path(trace_path).exists():
        return
    try:
        trace = read_trace(trace_path)
    except TraceError:
        return  # an unreadable trace is reported when it is appended to, not here
    if trace.trace_id != data["trace_id"]:
        return
    later = [r.turn for r in trace.resumes if r.turn >= turn] + [t.turn for t in trace.turns if t.turn > turn]
    if later:
        raise ConfigError(f"{source}: trace {trace_path} shows run {data['trace_id']} already continued after turn "
                          f"{turn} (state v{version}); {again}")


class PauseStore:
    """Which pauses have been continued, keyed on (trace id, paused state version).

    The caller's dict is no witness: a queue that redelivers a pause hands over a
    *copy*, and a copy carries no mark. This store is. Each pause also carries a
    random ``pause_id``, so the same pause delivered twice is refused while a new run
    that reuses a seeded trace id (a notebook cell run again) is not mistaken for it.
    The trace file, when there is one, is the second witness (:func:`check_not_resumed`).
    """

    def __init__(self) -> None:
        self.claims: dict[tuple[str, int], str | None] = {}

    def claim(self, data: Mapping[str, Any], source: str) -> None:
        """Record that this pause is being continued; refuse if it already was.

        Raises:
            ConfigError: the same pause (trace id, version and pause id) was continued before.
        """
        key = (str(data["trace_id"]), int(data["paused_at_version"]))
        pause_id = data.get("pause_id")
        if key in self.claims and self.claims[key] == pause_id:
            raise ConfigError(f"{source}: run {key[0]} was already resumed from its pause at state v{key[1]} "
                              "(the same pause delivered twice); a paused task continues only once")
        self.claims[key] = pause_id


RESUMED = PauseStore()
"""The process-wide store :func:`~agentloops.controller.resuming.resume` claims pauses in by default."""


def mark_resumed(saved: Mapping[str, Any] | str | Path, data: dict[str, Any], at_s: float) -> None:
    """Record in the saved run (the dict, or the file) that its pause has been continued."""
    marker = {"at_turn": data["turn"], "from_version": data["paused_at_version"], "at_s": at_s}
    if isinstance(saved, (str, Path)):
        path = Path(saved)
        try:
            path.write_text(json.dumps({**data, "resumed": marker}, ensure_ascii=False, indent=1), encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{path}: cannot mark the saved run as resumed ({exc.strerror or 'not writable'})") \
                from None
    elif isinstance(saved, MutableMapping):
        saved["resumed"] = marker


def trace_prefix(data: Mapping[str, Any], path: Path | None) -> list[dict[str, Any]] | None:
    """The lines a resumed run's in-memory trace starts with: the file's own (the record of truth), else the
    lines saved with the pause; ``None`` for an older saved run that kept neither."""
    if path is not None:
        try:
            lines, _ = read_trace_lines(path)
        except TraceError:
            lines = []
        if lines and lines[0].get("trace_id") == data["trace_id"]:
            return lines
    saved = data.get("trace_lines")
    return [dict(line) for line in saved] if saved else None


def message_to_dict(message: Message) -> dict[str, Any]:
    """A message as JSON (for saved runs), keeping the tool name."""
    return {"role": message.role, "content": message.content,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls],
            "tool_call_id": message.tool_call_id, "name": message.name}


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """Inverse of :func:`message_to_dict`."""
    calls = tuple(ToolCall(**c) for c in data.get("tool_calls") or ())
    return Message(data["role"], data.get("content"), calls, data.get("tool_call_id"), data.get("name"))


def portable_trace_path(trace: Path | None, saved_file: Path) -> str | None:
    """``trace`` relative to the folder of ``saved_file`` when it lies there or below; otherwise ``None``."""
    if trace is None:
        return None
    try:
        return trace.resolve().relative_to(saved_file.resolve().parent).as_posix()
    except ValueError:
        return None


def trace_beside(saved_file: Path, recorded: str | None) -> Path | None:
    """Where a saved *file* says its trace is: only beside or below it — never absolute, never up with ``..``.

    Raises:
        ConfigError: the recorded path is absolute or climbs out of the saved file's folder.
    """
    if not recorded:
        return None
    relative = Path(recorded)
    if relative.is_absolute() or ".." in relative.parts:
        raise ConfigError(f"{saved_file}: trace_path {recorded!r} must be relative to the saved file's folder, "
                          "with no '..'; pass --trace to choose where the trace goes")
    return saved_file.parent / relative
