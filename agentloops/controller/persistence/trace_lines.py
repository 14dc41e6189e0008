"""The trace's line schemas: what each JSON line of a trace must hold, nested fields included.

A turn line and the records inside it (an action, its tool result, the state delta) are the runtime's own
dataclasses, validated by pydantic as they are; an action's is here (:class:`Action`). The rest: the lines
written as plain dicts (event, resume, stop) and the start line, the run's configuration.

:func:`~agentloops.controller.persistence.trace.parse_lines` validates every line against these, so a
damaged file is one error naming the line and the field. Apart from :mod:`~agentloops.controller.persistence.trace`
(which writes and reads traces) because the schema is the versioned contract, not the machinery.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from agentloops.controller.policy.budgets import Budget
from agentloops.controller.policy.error_policy import ErrorPolicy
from agentloops.controller.stopping.progress import Fingerprint
from agentloops.controller.stopping.status import StopStatus
from agentloops.controller.task.context import ContextPolicy
from agentloops.controller.vocabulary.tools import ToolResult
from agentloops.errors import describe_validation_error


class _Line(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def checked(model: type[BaseModel] | TypeAdapter[Any], value: Any) -> Any:
    """Validate ``value`` against ``model`` (a model, or a runtime record's adapter) but keep it as it was
    (lines stay plain JSON values).

    A problem becomes a ``ValueError`` whose text is the inner field path and what was
    expected, so the line's own error reads ``task: type: missing; …`` in one line.
    """
    try:
        if isinstance(model, TypeAdapter):
            model.validate_python(value)
        else:
            model.model_validate(value)
    except ValidationError as exc:
        raise ValueError(describe_validation_error(exc)) from None
    return value


class TaskRef(_Line):
    """A task as traces and saved runs name it: the type and its parameters."""

    type: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)


def _fingerprint_row(value: Any) -> Any:
    """A row read back as the fields it names; anything else but a fingerprint is refused in one line."""
    if isinstance(value, Fingerprint):
        return value
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise ValueError(f"expected a row [tool, args, state_version]; got {value!r}")
    return dict(zip(("tool", "args", "state_version"), value))


FingerprintRow = Annotated[Fingerprint, BeforeValidator(_fingerprint_row),
                           PlainSerializer(lambda fp: [fp.tool, fp.args, fp.state_version])]
"""A fingerprint as a trace keeps it: a row ``[tool, args, state_version]``."""


@dataclass(slots=True, kw_only=True)
class Action:
    """One action of a turn — what was tried, how it ended, how it was routed, and its full result — kept as
    values while the turn runs; its trace form is this record dumped (:data:`ACTION_JSON`).

    A final answer or a question to the user is written as a plain dict of the same shape, with no tool,
    arguments or fingerprint.
    """

    __pydantic_config__ = ConfigDict(extra="forbid")  # an action read back from a trace is checked against it

    label: str
    call_id: str | None = None
    tool: str | None = None
    args: Mapping[str, Any] | None = None
    args_norm: str | None = None
    kind: str
    status: str | None = None
    """The result's status (``None``: nothing ran)."""
    route: str | None = None
    result: ToolResult | None = None
    fingerprint: FingerprintRow | None = None


ACTION_JSON: TypeAdapter[Action] = TypeAdapter(Action)
"""Dumps an :class:`Action` as its trace form, and checks one read back."""


class StartLine(_Line):
    """The first line: how the run was configured (enough to replay it).

    Its fields are the run's own configuration values (the task named by type and parameters): the line
    is this value dumped (:meth:`to_dict`), and a line read back is validated into it, nested models
    included, so a bad policy or budget is a one-line error there and not a traceback in replay.
    """

    kind: Literal["start"] = "start"
    schema_version: int
    trace_id: str = Field(min_length=1)
    label: str
    at_s: float
    task: TaskRef
    policy: ErrorPolicy
    budget: Budget
    context: ContextPolicy
    send_state: bool
    model_latency_s: float = Field(ge=0)
    scenario: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``start`` line."""
        return self.model_dump(mode="json")


class EventLine(_Line):
    """A result the ledger did not apply: late (after a cancel or the stop) or a duplicate."""

    kind: Literal["event"]
    trace_id: str
    turn: int
    at_s: float
    call_id: str
    verdict: str
    status: str
    note: str


class ResumeLine(_Line):
    """The user answered; the task continues from saved state.

    ``turn`` and ``from_version`` are the turn and state version the task paused at (a saved
    run continues once: a second resume from the same pause is refused); ``state_version`` is
    the version after the answer was recorded.
    """

    kind: Literal["resume"]
    trace_id: str
    turn: int
    at_s: float
    parameter: str
    answer: str
    state_version: int
    from_version: int | None = None


class StopRecordLine(BaseModel):
    """The parts of a stop record that replay and tables read (the rest is kept as written)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    status: StopStatus
    code: str
    reason: str


class StopLine(_Line):
    """The stop's system record."""

    kind: Literal["stop"]
    trace_id: str
    record: dict[str, Any]

    @field_validator("record")
    @classmethod
    def _record(cls, value: dict[str, Any]) -> dict[str, Any]:
        return checked(StopRecordLine, value)  # type: ignore[no-any-return]


_LINE_TYPES: dict[str, type[_Line]] = {"start": StartLine, "event": EventLine, "resume": ResumeLine,
                                       "stop": StopLine}
"""The line models by kind; a ``turn`` line is read as the runtime's own record
(:class:`~agentloops.controller.persistence.trace.TurnRecord`)."""
