"""Traces: one structured JSON line per turn, written and flushed as the turn finishes.

A trace records decisions, not hidden reasoning: for each turn the trace id,
turn number, state version, pending goal, the action and an argument summary,
the tool status, a short observation, the state delta, the budgets left and
the decision — plus, for replay, every tool result in full and the model's
visible reply. Because each line is flushed when its turn ends, a process
killed mid-run leaves every finished turn on disk, readable (the test raises a
simulated kill inside a tool and reads the file back).

Line kinds: ``start`` (configuration), ``turn``, ``event`` (late or duplicate
results, written when they arrive — so a result that lands after the task
stopped follows the ``stop`` line, and changes nothing), ``resume`` (a user
answer: the paused task continues, once) and ``stop`` (the stop's system
record; a resumed task has one per segment).

Reading a trace validates every line, nested fields included (the task, the
policy, the budgets, each action's tool result, the model's reply, the stop
record), so a damaged file is one error line naming the line and the field.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol

from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter, ValidationError

from agentloops.controller.persistence.trace_lines import (
    _LINE_TYPES,
    ACTION_JSON,
    EventLine,
    ResumeLine,
    StartLine,
    StopLine,
    checked,
)
from agentloops.controller.task.state import DELTA_JSON
from agentloops.controller.vocabulary.errors import TraceError
from agentloops.controller.vocabulary.readback import read_back, readable
from agentloops.controller.vocabulary.render import clip, html_table
from agentloops.errors import describe_validation_error
from agentloops.i18n import N_, _
from agentloops.jsonfile import CUT_TAIL, iter_json_lines
from agentloops.response import Response
from agentloops.tables import text_table

if TYPE_CHECKING:
    import pandas as pd

TRACE_SCHEMA = 1

_KINDS = ("start", "turn", "event", "resume", "stop")
"""Every line kind, in the order a trace meets them."""


TURN_HEADERS: tuple[str, ...] = (N_("turn"), N_("state"), N_("pending goal"), N_("action"), N_("tool status"),
                                 N_("state delta"), N_("decision"))
"""A trace's turn table columns (English here; shown through ``_()``)."""

NO_CHANGE = readable(N_("no change: {why}"))
NOTHING_NEW = readable(N_("nothing new observed"))
"""A turn's state delta when nothing changed (English data; read back where shown)."""


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One turn of the loop, as written to the trace: its line is this record dumped, and a line read back is
    validated into it (nested records included), so a turn has one shape in memory, in traces and in saved runs.

    Attributes:
        kind: ``turn`` (the line's kind).
        trace_id: the run's id.
        turn: 1-based turn number.
        at_s: simulated time when the turn ended.
        state_version: state version when the turn began.
        pending_goal: the first open item (what the turn was for).
        action: what was done, in one line.
        args_summary: the arguments, normalised.
        tool_status: the tool status (``a→b`` when retried; a list for a parallel batch).
        observation: a short summary of what came back.
        state_delta: the state delta (see :class:`~agentloops.controller.task.state.StateDelta`).
        budget_left: what remained of each budget after the turn.
        decision: continue (and why) or ``stop:<status>``.
        context_tokens: size of the request sent to the model this turn.
        open_items: items still open after the turn.
        missing_items: items given up after the turn.
        progress: the turn added a fact, settled an item or recorded a user input.
        actions: every tool action of the turn, each with its full result (for replay).
        response: the model's visible reply (content, tool calls, finish reason).
        compaction: the compaction done before this turn's request, if any.
    """

    __pydantic_config__ = ConfigDict(extra="forbid")  # a trace's turn line is read back as this record

    kind: Literal["turn"] = field(default="turn", kw_only=True)
    trace_id: str
    turn: Annotated[int, Field(ge=1)]
    at_s: float
    state_version: int
    pending_goal: str
    action: str
    args_summary: str
    tool_status: str
    observation: str
    state_delta: Annotated[dict[str, Any], AfterValidator(partial(checked, DELTA_JSON))]
    budget_left: dict[str, int | float | None]
    decision: str
    context_tokens: int
    open_items: tuple[str, ...] = ()
    missing_items: tuple[str, ...] = ()
    progress: bool = False
    actions: tuple[Annotated[dict[str, Any], AfterValidator(partial(checked, ACTION_JSON))], ...] = ()
    response: Annotated[dict[str, Any], AfterValidator(partial(checked, Response))] | None = None
    compaction: dict[str, Any] | None = None

    @property
    def state_version_after(self) -> int:
        """State version when the turn ended."""
        return int(self.state_delta.get("version_after", self.state_version))

    def delta_text(self) -> str:
        """The state delta in one line (why nothing changed, when nothing did)."""
        changes = self.state_delta.get("changes") or []
        if changes:
            return "; ".join(changes)
        unchanged = self.state_delta.get("unchanged") or []
        return NO_CHANGE.format(why="; ".join(unchanged) if unchanged else NOTHING_NEW)

    def delta_shown(self) -> str:
        """:meth:`delta_text` as the learner reads it: each change read back on its own."""
        changes = self.state_delta.get("changes") or []
        if changes:
            return _("; ").join(read_back(c) for c in changes)
        unchanged = self.state_delta.get("unchanged") or []
        why = _("; ").join(read_back(u) for u in unchanged) if unchanged else read_back(NOTHING_NEW)
        return _(NO_CHANGE).format(why=why)

    def to_dict(self) -> dict[str, Any]:
        """The JSON line (``kind`` = ``turn``)."""
        return TURN_JSON.dump_python(self, mode="json")  # type: ignore[no-any-return]

    def to_row(self) -> dict[str, Any]:
        """A flat row for tables and pandas."""
        return {
            "turn": self.turn, "at_s": self.at_s, "state_version": self.state_version,
            "state_version_after": self.state_version_after, "pending_goal": self.pending_goal,
            "action": self.action, "tool_status": self.tool_status, "observation": self.observation,
            "state_delta": self.delta_text(), "progress": self.progress, "open_items": len(self.open_items),
            "missing_items": len(self.missing_items), "context_tokens": self.context_tokens,
            "decision": self.decision,
            **{f"left_{k}": v for k, v in self.budget_left.items()},
        }


TURN_JSON: TypeAdapter[TurnRecord] = TypeAdapter(TurnRecord)
"""Dumps a :class:`TurnRecord` as its trace line, and validates one read back (nested records included)."""


class TraceWriter:
    """Appends JSON lines to a file, flushing after each one.

    Flushing hands the line to the operating system, so it survives the
    process dying; ``fsync=True`` also forces it to the disk (to survive a
    power cut), at a cost per turn.
    """

    def __init__(self, path: str | Path, *, append: bool = False, fsync: bool = False) -> None:
        self.path = Path(path)
        self.fsync = fsync
        try:
            self.file = self.path.open("a" if append else "w", encoding="utf-8")
        except OSError as exc:
            why = exc.strerror or exc.__class__.__name__
            raise TraceError(f"{self.path}: " + N_("cannot open for writing ({why})").format(why=why)) from None

    def write(self, data: Mapping[str, Any]) -> None:
        """Write one line and flush it."""
        self.file.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
        self.file.flush()
        if self.fsync:
            os.fsync(self.file.fileno())

    def close(self) -> None:
        """Close the file (idempotent)."""
        if not self.file.closed:
            self.file.close()


@dataclass(frozen=True)
class Trace:
    """A trace read back (from a file or from a run in memory).

    Attributes:
        start: the configuration line.
        turns: every finished turn.
        events: late and duplicate results.
        resumes: user answers that resumed the task.
        stop: the last stop record — ``None`` when the run died before stopping, *including* a run
            that was resumed after a stop and then died (its earlier stop is in ``stops``).
        path: the file it came from, if any.
        truncated_tail: the last line was cut off mid-write and was skipped.
        stops: every stop record in order (a resumed task stops once per segment).
    """

    start: StartLine
    turns: tuple[TurnRecord, ...]
    events: tuple[EventLine, ...] = ()
    resumes: tuple[ResumeLine, ...] = ()
    stop: dict[str, Any] | None = None
    path: Path | None = None
    truncated_tail: bool = False
    stops: tuple[dict[str, Any], ...] = ()

    @property
    def trace_id(self) -> str:
        """The run's id."""
        return self.start.trace_id

    @property
    def complete(self) -> bool:
        """True when the run's last segment reached a stop (a killed run — resumed or not — did not)."""
        return self.stop is not None

    @property
    def status(self) -> str | None:
        """The stop status, if the run stopped."""
        return None if self.stop is None else str(self.stop.get("status"))

    @property
    def actions(self) -> list[str]:
        """Every action label, in order."""
        return [a["label"] for t in self.turns for a in t.actions]

    def tool_results(self) -> list[dict[str, Any]]:
        """Every recorded tool execution: tool, normalised args and the full result (for replay)."""
        return [a for t in self.turns for a in t.actions if a.get("result") is not None and a["result"].get("ran")]

    def to_frame(self) -> pd.DataFrame:
        """One row per turn (imports pandas on first use)."""
        from agentloops.controller.vocabulary.frames import shown_frame

        return shown_frame([t.to_row() for t in self.turns]).set_index("turn")

    def table(self) -> str:
        """The turns as a text table: version, goal, action, status, state delta, decision."""
        rows = [[t.turn, f"v{t.state_version}→v{t.state_version_after}", clip(read_back(t.pending_goal), 22),
                 clip(read_back(t.action), 40), clip(read_back(t.tool_status), 26), clip(t.delta_shown(), 60),
                 clip(read_back(t.decision), 44)] for t in self.turns]
        return text_table([_(h) for h in TURN_HEADERS], rows)

    def __str__(self) -> str:
        head = _("trace {trace_id} ({label}, task {task}, policy {policy}): {n} turns").format(
            trace_id=self.trace_id, label=read_back(self.start.label), task=self.start.task.type,
            policy=self.start.policy.name, n=len(self.turns))
        tail = _("stop: {status} ({code}): {reason}").format(
            status=self.stop["status"], code=self.stop["code"], reason=read_back(self.stop["reason"])) if self.stop \
            else _("no stop line: the run did not finish (killed?)")
        events = "".join("\n" + _("event at {at} s: {call} {verdict} ({note})").format(
            at=f"{e.at_s:g}", call=e.call_id, verdict=e.verdict, note=read_back(e.note)) for e in self.events)
        return f"{head}\n{self.table()}{events}\n{tail}"

    def _repr_html_(self) -> str:
        rows = [[t.turn, f"v{t.state_version}→v{t.state_version_after}", t.pending_goal, t.action, t.tool_status,
                 t.delta_shown(), t.decision] for t in self.turns]
        changed = [t.state_version_after != t.state_version for t in self.turns]
        note = (_("stop: {status} ({code}): {reason}").format(status=self.stop["status"], code=self.stop["code"],
                                                              reason=read_back(self.stop["reason"])) if self.stop
                else _("no stop line: the run did not finish"))
        return html_table(_("trace {trace_id}").format(trace_id=self.trace_id), [_(h) for h in TURN_HEADERS], rows,
                          note, highlight=changed)


def parse_lines(lines: Iterable[Mapping[str, Any]], path: Path | None = None, truncated_tail: bool = False,
                where: str = "trace") -> Trace:
    """Build a :class:`Trace` from already-decoded lines, validated one by one into their records."""
    start: StartLine | None = None
    turns: list[TurnRecord] = []
    events: list[EventLine] = []
    resumes: list[ResumeLine] = []
    stop: dict[str, Any] | None = None
    stops: list[dict[str, Any]] = []
    for number, data in enumerate(lines, start=1):
        at = f"{where}:{number}: "
        if not isinstance(data, Mapping):
            raise TraceError(at + N_("expected a JSON object; got {kind}").format(kind=type(data).__name__))
        kind = data.get("kind")
        model = TURN_JSON if kind == "turn" else _LINE_TYPES.get(str(kind))
        if model is None:
            raise TraceError(at + N_("kind: expected one of {kinds}; got {kind!r}").format(kinds=", ".join(_KINDS),
                                                                                           kind=kind))
        try:
            line = model.validate_python(data) if isinstance(model, TypeAdapter) else model.model_validate(data)
        except ValidationError as exc:
            raise TraceError(at + describe_validation_error(exc)) from None
        if number == 1 and not isinstance(line, StartLine):
            raise TraceError(at + N_("a trace starts with a 'start' line; got {kind!r}").format(kind=kind))
        if isinstance(line, StartLine):
            if start is not None:
                raise TraceError(at + N_("a second 'start' line"))
            start = line
        elif isinstance(line, TurnRecord):
            turns.append(line)
        elif isinstance(line, EventLine):
            events.append(line)
        elif isinstance(line, ResumeLine):
            resumes.append(line)
            stop = None  # the task continues: only a later stop line finishes it again
        elif isinstance(line, StopLine):
            stops.append(stop := dict(line.record))
    if start is None:
        raise TraceError(f"{where}: " + (N_("its only line is cut off mid-write; a trace starts with a 'start' line")
                                         if truncated_tail else N_("empty; a trace starts with a 'start' line")))
    return Trace(start, tuple(turns), tuple(events), tuple(resumes), stop, path, truncated_tail, tuple(stops))


def read_trace(path: str | Path) -> Trace:
    """Read and validate a JSON Lines trace; errors name the file, the line and the field.

    A last line cut off mid-write (no newline, not JSON) is skipped and flagged
    in ``truncated_tail``: everything before it is still a valid trace.

    Raises:
        TraceError: missing file, a line that is not JSON, or a line of the wrong shape.
    """
    decoded, truncated = read_trace_lines(path)
    return parse_lines(decoded, Path(path), truncated, where=str(path))


def read_trace_lines(path: str | Path) -> tuple[list[dict[str, Any]], bool]:
    """The decoded lines of a trace file, and whether a cut-off last line was skipped (not yet validated). Read
    through :func:`agentloops.jsonfile.iter_json_lines`: strict JSON, one-line errors naming the file and line, and
    a FIFO or a huge file is refused instead of hanging or filling memory."""
    decoded: list[dict[str, Any]] = []
    for number, value in iter_json_lines(path, error=TraceError, what=N_("JSON Lines trace"), cut_tail=True):
        if value is CUT_TAIL:
            return decoded, True
        if not isinstance(value, dict):
            raise TraceError(f"{path}:{number}: " + N_("expected a JSON object per line; got {kind}").format(
                kind=type(value).__name__))
        decoded.append(value)
    return decoded, False


class LazyLine(Protocol):
    """A line kept as values until it is read: :meth:`to_dict` makes its JSON-compatible dict."""

    def to_dict(self) -> dict[str, Any]: ...


class TraceSink:
    """Where a run's lines go: kept in memory always, and written to a file when one is given.

    A turn's line is built lazily: kept as its values (a :class:`TurnRecord`, or the turn being
    recorded) and turned into a dict only when :attr:`lines` is read — unless a file is open,
    which gets every line as it happens. With no file open, a stage may append a value to
    :attr:`kept` itself (that is all :meth:`write` would do with it).
    """

    def __init__(self, writer: TraceWriter | None = None) -> None:
        self.writer = writer
        self.kept: list[dict[str, Any] | LazyLine] = []
        """Every line so far: a dict, or a value that becomes one when :attr:`lines` is read."""

    @property
    def lines(self) -> list[dict[str, Any]]:
        """Every line so far, as JSON-compatible dicts."""
        lines = self.kept
        for index, line in enumerate(lines):
            if not isinstance(line, dict):
                lines[index] = line.to_dict()
        return lines  # type: ignore[return-value]

    @lines.setter
    def lines(self, value: list[dict[str, Any]]) -> None:
        self.kept = list(value)

    def write(self, data: Mapping[str, Any] | LazyLine) -> None:
        """Keep and (if a file is open) write one line."""
        if self.writer is None:
            self.kept.append(dict(data) if isinstance(data, Mapping) else data)
            return
        line = dict(data) if isinstance(data, Mapping) else data.to_dict()
        self.kept.append(line)
        self.writer.write(line)

    def close(self) -> None:
        """Close the file, if any."""
        if self.writer is not None:
            self.writer.close()

    def trace(self) -> Trace:
        """The lines so far as a :class:`Trace`."""
        path = self.writer.path if self.writer is not None else None
        return parse_lines(self.lines, path, where=str(path) if path else "trace")
