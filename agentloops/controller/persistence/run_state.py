"""One versioned run state: what a stopped run holds, the single shape its other views are cut from.

Its parts are the runtime's own records — the task state, the progress monitor, the turn and call
records, the transcript's messages — validated and dumped by pydantic as they are: what runs is what
is saved, with no second copy of their fields for files.

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

from collections import Counter
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, field_validator, model_validator

from agentloops.controller.persistence.trace import TurnRecord
from agentloops.controller.persistence.trace_lines import StopRecordLine, TaskRef, checked
from agentloops.controller.policy.budgets import Budget, MeterUse
from agentloops.controller.policy.error_policy import ErrorPolicy
from agentloops.controller.sim.faults import Fault
from agentloops.controller.stopping.progress import ProgressMonitor
from agentloops.controller.stopping.status import StopStatus
from agentloops.controller.task.context import ContextPolicy
from agentloops.controller.task.state import TaskState
from agentloops.controller.vocabulary.ledger import CallRecord
from agentloops.messages import Message

RUN_STATE_SCHEMA = 2
"""The schema this package writes."""

READABLE_SCHEMAS = (1, 2)
"""The schemas it reads: 1 has no ``stop`` record; 2 has one, and it must agree with ``status``."""

_OPTIONAL_WHEN_EMPTY = ("resumed", "stop")
"""Fields left out of the JSON when ``None``: a schema-1 file read and written back keeps its shape."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _message_fields(message: Message) -> dict[str, Any]:
    return message._asdict()


SavedMessage = Annotated[Message, PlainSerializer(_message_fields)]
"""A transcript message, saved by field name (a named tuple would otherwise be saved as a list)."""


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
    faults: tuple[Fault, ...]
    injector: dict[int, int]
    state: TaskState
    meter: MeterUse
    clock: float = Field(ge=0)
    turn: int = Field(ge=0)
    paused_at_version: int = Field(ge=0)
    head: list[SavedMessage]
    groups: list[list[SavedMessage]]
    monitor: ProgressMonitor
    repairs_used: int = Field(ge=0)
    repairs: Counter[str] = Field(default_factory=Counter)
    claims_rejected: int = Field(ge=0)
    consecutive_failures: int = Field(default=0, ge=0)
    call_counter: int = Field(ge=0)
    failed_calls: Annotated[set[tuple[str, str]], PlainSerializer(sorted)]
    model_calls: int = Field(ge=0)
    turns: tuple[TurnRecord, ...]
    calls: tuple[CallRecord, ...]
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
