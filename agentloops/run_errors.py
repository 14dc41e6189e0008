"""The exceptions of a run that ended badly: :class:`RunError` and one subclass per error code.

    RunError                     the loop ran and ended without an answer; carries the partial record
    ├── TruncatedError           a round was cut off by a token limit (code ``truncated``)
    ├── ContentFilterError       the provider filtered the output (``content_filter``)
    ├── RefusalError             the model explicitly refused (``refusal``)
    ├── MalformedToolCallError   a tool call that cannot be executed (``malformed_tool_call``)
    ├── ProviderError            the provider says the turn failed or never finished (``provider_error``)
    ├── UnknownStopError         a stop value the loop does not understand (``unknown_stop``)
    ├── MaxStepsError            the step cap was reached without an answer (``max_steps``)
    └── ModelError               the model call itself raised (``model_error``)

Each carries the :class:`~agentloops.record.RunRecord` up to the failure, so a failed run
can still be measured; the usage errors and the codes are :mod:`agentloops.errors`.
"""

from __future__ import annotations

from typing import ClassVar

from agentloops.errors import AgentLoopsError, ErrorCode
from agentloops.record import RunRecord


class RunError(AgentLoopsError, RuntimeError):
    """The loop ran and ended without an answer it can stand behind.

    Attributes:
        code: the short error code, also found in ``record.error``.
        record: the run up to the failure, so a failed run can still be measured.
    """

    code: ClassVar[ErrorCode]

    def __init__(self, message: str, record: RunRecord | None = None) -> None:
        super().__init__(message)
        self.record = record

    def __str__(self) -> str:
        """The message in the learner's language, when the run can word it (:meth:`RunRecord.shown_error`)."""
        message = super().__str__()
        if self.record is not None and self.record.error_message == message:
            return self.record.shown_error() or message
        return message


class TruncatedError(RunError):
    """A round was cut off by a token limit; raise the limit, do not retry in place."""

    code = "truncated"


class ContentFilterError(RunError):
    """The provider filtered the output; change the input, do not retry in place."""

    code = "content_filter"


class RefusalError(RunError):
    """The model explicitly refused; retrying the same request asks for the same refusal."""

    code = "refusal"


class MalformedToolCallError(RunError):
    """A tool call that cannot be executed as sent (bad JSON, or a tool-call stop with no call)."""

    code = "malformed_tool_call"


class ProviderError(RunError):
    """The provider reported that the turn failed, was cancelled or never finished; nothing in it may run."""

    code = "provider_error"


class UnknownStopError(RunError):
    """The round ended with a stop value the loop does not know; never treat it as success."""

    code = "unknown_stop"


class MaxStepsError(RunError):
    """The step cap was reached: the loop did not converge, so there is no answer to return."""

    code = "max_steps"


class ModelError(RunError):
    """The model call raised (a provider error, or a bug in a FunctionModel); the cause is chained."""

    code = "model_error"


ERROR_CLASSES: dict[ErrorCode, type[RunError]] = {
    cls.code: cls
    for cls in (
        TruncatedError,
        ContentFilterError,
        RefusalError,
        MalformedToolCallError,
        ProviderError,
        UnknownStopError,
        MaxStepsError,
        ModelError,
    )
}
"""Map from error code to the exception the loop raises for it."""
