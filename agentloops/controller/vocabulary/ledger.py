"""The call ledger: every tool call's id and state, and the one door its results come through.

Two independent read-only calls can run at once. That saves waiting and adds
states a sequential loop never meets: part done, part failed, a result that
arrives after everything was cancelled, a result delivered twice. So every
call gets an id and a state —

    pending → running → succeeded | failed
                      → cancelled → ignored   (its result arrived after the cancel)

— and every result enters the task through one door, the :class:`Ledger`,
which applies a result only if it belongs to this task, to a call still
running, and was not applied before. Everything else is written to the trace
and changes nothing: a late result never reopens a finished task, and a
duplicate is applied once. Below the layers: traces, saved runs and the engine all read its records.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Literal

from pydantic import ConfigDict, TypeAdapter

from agentloops.controller.vocabulary.tools import ToolResult
from agentloops.i18n import N_, Phrase

CallState = Literal["pending", "running", "succeeded", "failed", "cancelled", "ignored"]
CALL_STATES: tuple[CallState, ...] = ("pending", "running", "succeeded", "failed", "cancelled", "ignored")

Verdict = Literal["applied", "duplicate", "late", "unknown", "stale"]
"""What the ledger did with a delivery: only ``applied`` reaches the task state."""




@dataclass(slots=True)
class Call:
    """One tool call's life (mutable while the run goes; exported as a frozen :class:`CallRecord`)."""

    call_id: str
    turn: int
    tool: str
    args: str
    kind: str
    parallel: bool
    started_at: float
    state: CallState = "running"
    ended_at: float | None = None
    arrived_at: float | None = None
    status: str | None = None
    deliveries: int = 0
    note: str = ""

    def freeze(self) -> CallRecord:
        """A frozen copy for results."""
        return CallRecord(self.call_id, self.turn, self.tool, self.args, self.kind, self.parallel, self.started_at,
                          self.state, self.ended_at, self.arrived_at, self.status, self.deliveries, self.note)


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One tool call as the run ended: for timelines (Gantt charts) and tests.

    Attributes:
        call_id: unique within the run.
        turn: the turn that started it.
        tool: tool name.
        args: normalised arguments.
        kind: ``call``, ``retry`` or ``fallback``.
        parallel: started as part of a parallel batch.
        started_at: simulated start.
        state: final state.
        ended_at: when it finished or was cancelled.
        arrived_at: when its (first) result arrived, even if after a cancel.
        status: the tool status of that result.
        deliveries: how many times a result was delivered.
        note: why it ended the way it did.
    """

    __pydantic_config__ = ConfigDict(extra="forbid")  # saved runs hold this record as it is

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


CALL_JSON: TypeAdapter[CallRecord] = TypeAdapter(CallRecord)
"""Dumps a :class:`CallRecord` as saved runs and results hold it, and validates one read back."""


@dataclass(frozen=True, slots=True)
class Arrival:
    """A result on its way back: when it lands, for which call, and which delivery it is."""

    at: float
    call_id: str
    result: ToolResult
    delivery: int = 1
    task_id: str = ""


ARRIVAL_ORDER = attrgetter("at", "call_id", "delivery")
"""The order results land in: by time, then call id, then delivery (a sort key)."""


@dataclass(frozen=True, slots=True)
class LedgerEvent:
    """A delivery the ledger did not apply, as written to the trace."""

    at_s: float
    call_id: str
    verdict: Verdict
    status: str
    note: str

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


class Ledger:
    """The one door through which tool results reach a task: idempotent and closed after the stop."""

    def __init__(self, task_id: str, write: Callable[[dict[str, Any]], object] | None = None) -> None:
        self.task_id = task_id
        self.write = write
        """Where a delivery it refuses is written, as a trace line (``None``: only kept in :attr:`events`)."""
        self.calls: dict[str, Call] = {}
        self.applied: set[str] = set()
        self.closed = False
        self.events: list[LedgerEvent] = []

    def open(self, call_id: str, tool: str, args: str, turn: int, at: float, kind: str = "call",
             parallel: bool = False) -> None:
        """Register a call as running."""
        if call_id in self.calls:
            raise ValueError(f"call id {call_id!r} is already in use")
        self.calls[call_id] = Call(call_id, turn, tool, args, kind, parallel, at)

    def deliver(self, arrival: Arrival, turn: int = 0) -> Verdict:
        """Apply a result once, for a running call of this task (an ``ok`` or ``empty`` one: the call succeeded);
        anything else is kept as an event and written to the trace as a line of ``turn``."""
        call = self.calls.get(arrival.call_id)
        status = arrival.result.status
        verdict: Verdict
        if arrival.task_id and arrival.task_id != self.task_id:
            verdict, note = "stale", Phrase(N_("belongs to task {task}, not {own}"), task=arrival.task_id,
                                            own=self.task_id)
        elif call is None:
            verdict, note = "unknown", Phrase(N_("no call with this id was started"))
        elif arrival.call_id in self.applied or call.deliveries > 0:
            call.deliveries += 1
            verdict, note = "duplicate", Phrase(N_("delivery {n}: already applied once; ignored"), n=arrival.delivery)
        elif self.closed or call.state in ("cancelled", "ignored"):
            call.deliveries += 1
            if call.arrived_at is None:
                call.arrived_at = arrival.at
                call.status = status
            call.state = "ignored"
            why = Phrase(N_("the task had already stopped") if self.closed else N_("the call was cancelled"))
            verdict, note = "late", Phrase(N_("arrived after {why}; recorded, not applied"), why=why)
        else:
            call.deliveries += 1
            call.arrived_at = call.ended_at = arrival.at
            call.status = status
            call.state = "succeeded" if status in ("ok", "empty") else "failed"
            self.applied.add(arrival.call_id)
            return "applied"
        event = LedgerEvent(arrival.at, arrival.call_id, verdict, status, note)
        self.events.append(event)
        if self.write is not None:
            self.write({"kind": "event", "trace_id": self.task_id, "turn": turn, **event.to_dict()})
        return verdict

    def cancel_running(self, at: float, note: str) -> list[str]:
        """Cancel every running call (their results, if they come, will be ``late``); returns their ids."""
        cancelled = []
        for call in self.calls.values():
            if call.state in ("pending", "running"):
                call.state = "cancelled"
                call.ended_at = at
                call.note = note
                cancelled.append(call.call_id)
        return cancelled

    def close(self) -> None:
        """The task has stopped: from now on nothing is applied."""
        self.closed = True

    def records(self) -> tuple[CallRecord, ...]:
        """Frozen copies of every call, in start order."""
        return tuple(call.freeze() for call in self.calls.values())


