"""Parallel tool calls: call ids and states, join rules, cancellation, late and duplicate events.

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
duplicate is applied once.

A :class:`JoinRule` says when a batch is done: all calls, any one, or a
minimum number of successes (the "minimum evidence set").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, PositiveFloat, PositiveInt, model_validator

from agentloops.controller.tools import ToolResult

CallState = Literal["pending", "running", "succeeded", "failed", "cancelled", "ignored"]
CALL_STATES: tuple[CallState, ...] = ("pending", "running", "succeeded", "failed", "cancelled", "ignored")

Verdict = Literal["applied", "duplicate", "late", "unknown", "stale"]
"""What the ledger did with a delivery: only ``applied`` reaches the task state."""


class JoinRule(BaseModel):
    """When a batch of parallel calls is done.

    Attributes:
        kind: ``all`` (every call), ``any`` (one success) or ``minimum`` (``minimum`` successes).
        minimum: successes needed for ``minimum``.
        timeout_s: the longest the join waits for a batch of parallel calls (``None``: until the wall-time
            budget); a lone call — a batch of one — has nothing to join and waits for its tool's own timeout.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["all", "any", "minimum"] = "all"
    minimum: PositiveInt | None = None
    timeout_s: PositiveFloat | None = None

    @model_validator(mode="after")
    def _minimum_needs_a_number(self) -> JoinRule:
        if self.kind == "minimum" and self.minimum is None:
            raise ValueError("a 'minimum' join needs minimum: the number of successes to wait for")
        return self

    def needed(self, total: int) -> int:
        """Successes that satisfy the rule for a batch of ``total`` calls."""
        if self.kind == "all":
            return total
        if self.kind == "any":
            return min(1, total)
        return min(self.minimum or total, total)

    def satisfied(self, succeeded: int, total: int) -> bool:
        """Enough successes have arrived."""
        return succeeded >= self.needed(total)

    def impossible(self, succeeded: int, still_running: int, total: int) -> bool:
        """Even if every running call succeeds, the rule cannot be met."""
        return succeeded + still_running < self.needed(total)

    def describe(self) -> str:
        """``all``, ``any`` or ``minimum 2``, plus the timeout."""
        text = f"minimum {self.minimum}" if self.kind == "minimum" else self.kind
        return text + (f" within {self.timeout_s:g} s" if self.timeout_s else "")


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

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


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

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        self.calls: dict[str, Call] = {}
        self.applied: set[str] = set()
        self.closed = False
        self.events: list[LedgerEvent] = []

    def open(self, call_id: str, tool: str, args: str, turn: int, at: float, kind: str = "call",
             parallel: bool = False) -> Call:
        """Register a call as running."""
        if call_id in self.calls:
            raise ValueError(f"call id {call_id!r} is already in use")
        call = Call(call_id, turn, tool, args, kind, parallel, at)
        self.calls[call_id] = call
        return call

    def deliver(self, arrival: Arrival, succeeded: bool) -> Verdict:
        """Accept a result once, for a running call of this task; record anything else as an event.

        Args:
            arrival: the delivery.
            succeeded: whether the result counts as the call succeeding (else failed).
        """
        call = self.calls.get(arrival.call_id)
        status = arrival.result.status
        verdict: Verdict
        if arrival.task_id and arrival.task_id != self.task_id:
            verdict, note = "stale", f"belongs to task {arrival.task_id}, not {self.task_id}"
        elif call is None:
            verdict, note = "unknown", "no call with this id was started"
        elif arrival.call_id in self.applied or call.deliveries > 0:
            call.deliveries += 1
            verdict, note = "duplicate", f"delivery {arrival.delivery}: already applied once; ignored"
        elif self.closed or call.state in ("cancelled", "ignored"):
            call.deliveries += 1
            if call.arrived_at is None:
                call.arrived_at = arrival.at
                call.status = status
            call.state = "ignored"
            why = "the task had already stopped" if self.closed else "the call was cancelled"
            verdict, note = "late", f"arrived after {why}; recorded, not applied"
        else:
            call.deliveries += 1
            call.arrived_at = call.ended_at = arrival.at
            call.status = status
            call.state = "succeeded" if succeeded else "failed"
            self.applied.add(arrival.call_id)
            return "applied"
        self.events.append(LedgerEvent(arrival.at, arrival.call_id, verdict, status, note))
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


JoinCheck = Callable[[int, int, int, int], bool]
"""The join stage's shape: (successes so far, results so far, calls in the batch, successes needed) → stop waiting?"""


def joined(succeeded: int, finished: int, total: int, needed: int) -> bool:
    """The package's join stage: the batch is done once the successes the task still needs have arrived —
    never before (a running call that carries needed evidence is not cancelled), never later (what is still
    running is then not needed, and is cancelled)."""
    return succeeded >= needed


class Batch:
    """Feeds a batch's arrivals in time order until its join rule is satisfied or its deadline passes.

    Two rules keep a join from wasting work. It asks only for the successes the *task* still
    needs (``still_needed``: a minimum-evidence task that already holds one fact waits for one
    more, not for the batch's full minimum). And it never ends early just because the batch
    alone can no longer meet its rule: the calls still running carry evidence the task needs,
    so cancelling them would only mean issuing them again next turn. Only a satisfied join (the
    rest is not needed) or the deadline (time is up) cancels what is still running.
    """

    def __init__(self, join: JoinRule, total: int, deadline: float | None, still_needed: int | None = None,
                 arrivals: Iterable[Arrival] = (), satisfied: JoinCheck = joined) -> None:
        self.join = join
        self.satisfied = satisfied
        """The join stage: the package's :func:`joined`, or a learner's function of the same shape."""
        self.total = total
        self.deadline = deadline
        self.arrivals: list[Arrival] = sorted(arrivals, key=ARRIVAL_ORDER)
        self.succeeded = 0
        self.finished = 0
        self.outcome: str | None = None
        self.short = False
        needed = join.needed(total)
        self.needed = min(needed, max(still_needed, 0)) if join.kind != "all" and still_needed is not None else needed
        """The successes that end the batch: the join's number, capped by what the task still needs."""

    def next(self) -> Arrival | None:
        """The next arrival to process, or ``None`` once decided (or past the deadline)."""
        if self.outcome is not None or not self.arrivals:
            if self.outcome is None:
                self.outcome = "impossible" if self.short else "all arrived"
            return None
        if self.deadline is not None and self.arrivals[0].at > self.deadline:
            self.outcome = "deadline"
            return None
        return self.arrivals.pop(0)

    def note(self, applied: bool, succeeded: bool) -> None:
        """Count a processed first delivery; end the batch once the join is satisfied."""
        if not applied:
            return
        self.finished += 1
        self.succeeded += int(succeeded)
        if self.satisfied(self.succeeded, self.finished, self.total, self.needed):
            self.outcome = "satisfied"
        elif self.succeeded + self.total - self.finished < self.needed:
            self.short = True  # noted, but the running calls are still needed: wait for them

    def leftover(self) -> list[Arrival]:
        """Arrivals not processed: they will land late."""
        rest, self.arrivals = self.arrivals, []
        return rest
