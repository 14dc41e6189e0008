"""The result of a controller run: its stop, turns, calls and trace, readable as text, HTML and frames."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentloops.controller.persistence.run_state import RunState
from agentloops.controller.persistence.saved import portable_trace_path
from agentloops.controller.persistence.trace import TURN_HEADERS, Trace, TurnRecord, parse_lines
from agentloops.controller.policy.error_policy import (
    ErrorPolicy,
)
from agentloops.controller.stopping.status import Stop, StopStatus
from agentloops.controller.task.context import (
    CompactionEvent,
)
from agentloops.controller.task.tasks import Task
from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.controller.vocabulary.ledger import CALL_JSON, CallRecord, LedgerEvent
from agentloops.controller.vocabulary.readback import read_back
from agentloops.controller.vocabulary.render import html_table
from agentloops.controller.vocabulary.tools import (
    Toolbox,
)
from agentloops.i18n import N_, _, shown

if TYPE_CHECKING:
    import pandas as pd


class RunRecords(Protocol):
    """What a finished run kept as values, made into records when read."""

    def turns(self) -> tuple[TurnRecord, ...]:
        """Every turn, frozen."""
        ...

    def calls(self) -> tuple[CallRecord, ...]:
        """Every tool call, frozen."""
        ...

    def lines(self) -> tuple[dict[str, Any], ...]:
        """Every trace line, as a dict."""
        ...


@dataclass(frozen=True)
class ControllerRun:
    """The result of one controller run (or of a run resumed from saved state).

    Attributes:
        label: the scenario name, or ``custom``.
        trace_id: the run's id (kept across a resume).
        task: the task.
        policy: the error policy it ran under.
        stop: how and why it stopped.
        records: where the turns, calls and trace lines come from: kept as values while the run goes,
            they become the tuples below when first read (most runs are never read in full).
        turns: every turn record (those before a resume included).
        calls: every tool call with its final state and times (a timeline).
        events: late and duplicate deliveries the ledger refused.
        compactions: compactions done, with their checks.
        usage: what the run used of every budget.
        within_budget: per budget, whether usage stayed within the limit.
        trace_lines: the trace's lines as written (also to ``trace_path`` when one was given); :attr:`trace`
            reads them as a :class:`~agentloops.controller.persistence.trace.Trace` on first use.
        trace_path: the JSON Lines file, if any.
        run_state: for ``waiting_for_user``, everything needed to resume (once); for ``handed_off``,
            the same package handed to the person who takes over (it cannot be resumed). One versioned
            value (:class:`~agentloops.controller.persistence.run_state.RunState`); :attr:`saved` is its JSON.
        resumed_at_turn: the first turn after a resume (``None`` for a fresh run).
        toolbox: the tools the run used (a resume keeps them).
        stored: outputs kept outside the context, by reference (``ref:1``…): where the full data is.
    """

    label: str
    trace_id: str
    task: Task
    policy: ErrorPolicy
    stop: Stop
    records: RunRecords = field(repr=False, compare=False)
    events: tuple[LedgerEvent, ...]
    compactions: tuple[CompactionEvent, ...]
    usage: Mapping[str, float]
    within_budget: Mapping[str, bool]
    trace_path: Path | None = None
    run_state: RunState | None = None
    resumed_at_turn: int | None = None
    toolbox: Toolbox | None = None
    stored: Mapping[str, Any] = field(default_factory=dict)

    @cached_property
    def turns(self) -> tuple[TurnRecord, ...]:
        """Every turn record (those before a resume included)."""
        return self.records.turns()

    @cached_property
    def calls(self) -> tuple[CallRecord, ...]:
        """Every tool call with its final state and times (a timeline)."""
        return self.records.calls()

    @cached_property
    def trace_lines(self) -> tuple[dict[str, Any], ...]:
        """The trace's lines as written (also to ``trace_path`` when one was given)."""
        return self.records.lines()

    @cached_property
    def saved(self) -> dict[str, Any] | None:
        """The run state as saved-run JSON (one dict per run: a resume marks it, so it continues once)."""
        return None if self.run_state is None else self.run_state.to_saved()

    @cached_property
    def trace(self) -> Trace:
        """The trace, built from its lines when first asked for (most runs are never read back)."""
        return parse_lines(self.trace_lines, self.trace_path, where=str(self.trace_path or "trace"))

    @property
    def status(self) -> StopStatus:
        """The stop status."""
        return self.stop.status

    @property
    def code(self) -> str:
        """The stop reason code."""
        return self.stop.code

    @property
    def answer(self) -> str | None:
        """The final answer, if any."""
        return self.stop.answer

    @property
    def steps(self) -> int:
        """Turns that called the model."""
        return int(self.usage.get("steps", 0))

    @property
    def actions(self) -> list[str]:
        """Every action in order: ``tool(args)``, ``retry:…``, ``fallback:…``, ``blocked:…``, ``answer``…"""
        return [a["label"] for t in self.turns for a in t.actions]

    @property
    def new_actions(self) -> list[str]:
        """Actions since the resume (all actions for a fresh run)."""
        first = self.resumed_at_turn or 0
        return [a["label"] for t in self.turns if t.turn >= first for a in t.actions]

    def user_message(self) -> str:
        """The stop, for the user."""
        return self.stop.user_message()

    def system_record(self) -> dict[str, Any]:
        """The stop, for the system."""
        return self.stop.system_record()

    def save(self, path: str | Path) -> Path:
        """Write the saved state as JSON (to resume later, even in another process).

        The trace file is recorded relative to the saved file, and only when it lies beside it or
        below it: a saved file never names a place elsewhere for a later resume to write to.

        Raises:
            ConfigError: no saved state, or the file cannot be written (a missing folder, a folder).
        """
        if self.saved is None:
            raise ConfigError(f"a run that stopped as {self.status} has no saved state to write")
        target = Path(path)
        data = {**self.saved, "trace_path": portable_trace_path(self.trace_path, target)}
        try:
            target.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        except IsADirectoryError:
            raise ConfigError(f"{target}: is a folder; expected a file name for the saved run") from None
        except FileNotFoundError:
            raise ConfigError(f"{target}: its folder {target.parent} does not exist") from None
        except OSError as exc:
            raise ConfigError(f"{target}: cannot write the saved run ({exc.strerror or type(exc).__name__})") \
                from None
        return target

    def to_dict(self) -> dict[str, Any]:
        """JSON summary: stop record, actions, usage and turns."""
        return {
            "label": self.label, "trace_id": self.trace_id, "task": self.task.spec(), "policy": self.policy.name,
            "status": self.status, "code": self.code, "actions": self.actions, "usage": dict(self.usage),
            "within_budget": dict(self.within_budget), "stop": self.system_record(),
            "user_message": self.user_message(), "turns": [t.to_row() for t in self.turns],
            "calls": [CALL_JSON.dump_python(c) for c in self.calls], "events": [e.to_dict() for e in self.events],
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per turn: state version, open/missing items, context size, budgets left, decision."""
        from agentloops.controller.vocabulary.frames import shown_frame

        return shown_frame([t.to_row() for t in self.turns]).set_index("turn")

    def calls_frame(self) -> pd.DataFrame:
        """One row per tool call: start, end, arrival and state (draw a Gantt chart from it)."""
        from agentloops.controller.vocabulary.frames import shown_frame

        return shown_frame([CALL_JSON.dump_python(c) for c in self.calls])

    def headline(self) -> str:
        """One line: label, status, code, turns and tool calls."""
        return _("{label} [{task}, policy {policy}]: {status} ({code}) after {turns} turn(s), {calls} tool call(s), "
                 "{seconds} s simulated").format(
            label=shown(self.label), task=self.task.name, policy=self.policy.name, status=self.status,
            code=self.code, turns=self.steps, calls=int(self.usage.get("tool_calls", 0)),
            seconds=f"{self.usage.get('wall_time_s', 0):g}")

    def __str__(self) -> str:
        events = "".join("\n  " + _("late/duplicate at {at} s: {call} {verdict} — {note}").format(
            at=f"{e.at_s:g}", call=e.call_id, verdict=e.verdict, note=read_back(e.note)) for e in self.events)
        return f"{self.headline()}\n{self.trace.table()}{events}\n{self.stop}"

    def __repr__(self) -> str:
        return f"<ControllerRun {self.headline()}>"

    def _repr_html_(self) -> str:
        rows = [[t.turn, f"v{t.state_version}→v{t.state_version_after}", t.pending_goal, t.action, t.tool_status,
                 t.delta_shown(), t.context_tokens, t.decision] for t in self.turns]
        changed = [t.state_version_after != t.state_version for t in self.turns]
        headers = [*TURN_HEADERS[:-1], N_("context tokens"), TURN_HEADERS[-1]]
        table = html_table(self.headline(), [_(h) for h in headers], rows, highlight=changed)
        return f"<div>{table}{self.stop._repr_html_()}</div>" + "".join(
            f"<div><small>{html.escape(f'{e.call_id} {e.verdict} at {e.at_s:g} s: {e.note}')}</small></div>"
            for e in self.events)
