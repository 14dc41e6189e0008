"""One versioned run state: what a stopped run holds, the single shape its other views are cut from.

A paused or handed-off run is described once, by :class:`RunState`: the saved file (and
``run.saved``) is its JSON (:meth:`RunState.to_saved`); :class:`~agentloops.controller.persistence.result.ControllerRun`
carries it as ``run_state``; its ``stop`` is the stop's system record, which must equal the trace's
last stop line (:meth:`RunState.stop_line`) — checked whenever a state is built, in memory or from a
file. :meth:`Controller.from_state <agentloops.controller.controller.Controller.from_state>` rebuilds a
controller from it, which is how a resume continues. So the file, the trace and the result cannot
disagree about status, code, facts, missing items, budgets used or the version the run paused at.

``schema_version`` says which shape a file has. Schema 1 (saved files before the stop record was
kept with them) still loads; schema 2 adds ``stop``, the stop's system record.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentloops.controller.persistence.trace_lines import StopRecordLine, TaskRef, TurnLine, checked
from agentloops.controller.policy.budgets import Budget
from agentloops.controller.policy.error_policy import ErrorPolicy
from agentloops.controller.sim.faults import Fault
from agentloops.controller.stopping.status import StopStatus
from agentloops.controller.task.context import ContextPolicy
from agentloops.controller.vocabulary.ledger import CallState

RUN_STATE_SCHEMA = 2
"""The schema this package writes."""

READABLE_SCHEMAS = (1, 2)
"""The schemas it reads: 1 has no ``stop`` record; 2 has one, and it must agree with ``status``."""

_OPTIONAL_WHEN_EMPTY = ("resumed", "stop")
"""Fields left out of the JSON when ``None``: a schema-1 file read and written back keeps its shape."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FactLine(_Strict):
    """A verified fact (see :class:`~agentloops.controller.task.state.Fact`)."""

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
    """A task-state snapshot (see :meth:`~agentloops.controller.task.state.TaskState.snapshot`)."""

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

    used: dict[str, int | float]  # counts stay ints: they are shown to the model in the TASK STATE block
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


class RunState(_Strict):
    """A stopped run, versioned: saved runs, the stop line and results are views of it.

    Attributes:
        paused_at_version: the task-state version when the run paused; a resume is recorded
            against it, so the same pause cannot be continued twice.
        resumed: set once this saved run has been resumed (when, from which pause).
        store: outputs kept outside the context, by reference, so references stay valid.
        stop: the stop's system record, as the trace's stop line holds it (schema 2 on; ``None``
            in a schema-1 file).
    """

    schema_version: int
    trace_id: str = Field(min_length=1)
    label: str
    status: StopStatus
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
    stop: dict[str, Any] | None = None

    @field_validator("schema_version")
    @classmethod
    def _schema(cls, value: int) -> int:
        if value not in READABLE_SCHEMAS:
            raise ValueError(f"expected one of {', '.join(map(str, READABLE_SCHEMAS))} (the saved-run schemas "
                             f"this package reads); got {value}")
        return value

    @field_validator("stop")
    @classmethod
    def _stop(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if value is None else checked(StopRecordLine, value)  # type: ignore[no-any-return]

    @model_validator(mode="after")
    def _agrees(self) -> RunState:
        """From schema 2 on the stop record is required, and it is the stop ``status`` and the trace name."""
        if self.schema_version >= 2 and self.stop is None:
            raise ValueError("stop: missing; a schema-2 saved run keeps its stop record")
        if self.stop is not None and self.stop["status"] != self.status:
            raise ValueError(f"stop.status: expected {self.status!r} (the saved run's status); "
                             f"got {self.stop['status']!r}")
        stops = [line for line in self.trace_lines or () if line.get("kind") == "stop"]
        if self.stop is not None and stops and stops[-1].get("record") != self.stop:
            raise ValueError("stop: expected the record of the last stop line in trace_lines (they are one "
                             "record); the two differ")
        return self

    def to_saved(self) -> dict[str, Any]:
        """The saved-run JSON (what ``run.saved`` holds and :meth:`ControllerRun.save` writes)."""
        data = self.model_dump(mode="json")
        for name in _OPTIONAL_WHEN_EMPTY:
            if data[name] is None:
                del data[name]
        return data

    def stop_line(self) -> dict[str, Any] | None:
        """The trace's stop line for this stop (``None`` for a schema-1 state, which kept no record)."""
        return None if self.stop is None else {"kind": "stop", "trace_id": self.trace_id, "record": self.stop}
