"""Stand-ins for a model: a script that replays responses, and a plain function.

Both record every request they receive, as an immutable sequence of frozen
messages (a tuple, or the loop's :class:`~agentloops.messages.TranscriptView`,
kept without a copy): it shows exactly what each call was sent, which is how
repeated calls and context growth are measured.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, cast

from pydantic import ValidationError

from agentloops.errors import UsageError, describe_validation_error
from agentloops.messages import Message, detached
from agentloops.response import Response

ResponseLike = Response | Mapping[str, Any]
"""A :class:`Response`, or a dict with the same fields."""


class Model(Protocol):
    """Anything the loop can ask: messages in, one response out."""

    def __call__(self, messages: Sequence[Message]) -> Response: ...


def to_response(value: object, source: str) -> Response:
    """Validate ``value`` as a response, naming ``source`` in the error."""
    if isinstance(value, Response):
        return value
    if not isinstance(value, Mapping):
        raise UsageError(
            f"{source} gave {type(value).__name__}; expected a Response or a dict "
            "with content, tool_calls and finish_reason"
        )
    try:
        return Response.model_validate(value)
    except ValidationError as exc:
        raise UsageError(f"{source} gave an invalid response: {describe_validation_error(exc)}") from None


class ScriptedModel:
    """Replays a list of responses in order, then keeps returning the last one.

    The position in the script is the number of requests received, so a model
    used for a second run continues where the first stopped; call :meth:`reset`
    (or build a new one, as :func:`agentloops.run` does) to start over.
    Repeating the last response is what makes a naive loop visible: a loop
    that never sees the signal it waits for asks the same question until its
    cap, and every extra call lands in :attr:`requests`.
    """

    def __init__(self, responses: Iterable[ResponseLike]) -> None:
        given = tuple(responses)
        if not all(type(r) is Response for r in given):  # a scenario's responses are validated already
            given = tuple(to_response(r, f"ScriptedModel response {i}") for i, r in enumerate(given))
        self.responses = cast("tuple[Response, ...]", given)
        if not self.responses:
            raise UsageError("ScriptedModel needs at least one response")
        self.requests: list[Sequence[Message]] = []

    def __call__(self, messages: Sequence[Message]) -> Response:
        self.requests.append(detached(messages))
        return self.responses[min(len(self.requests), len(self.responses)) - 1]

    def reset(self) -> None:
        """Forget the requests and start the script again (a second run otherwise resumes mid-script)."""
        self.requests.clear()

    def __repr__(self) -> str:
        return f"ScriptedModel({len(self.responses)} responses, {len(self.requests)} calls so far)"


class FunctionModel:
    """A model whose reply is computed by ``function(messages)``.

    For exercises and experiments: the function sees the whole transcript so
    far and returns a :class:`Response` or an equivalent dict.
    """

    def __init__(self, function: Callable[[Sequence[Message]], ResponseLike]) -> None:
        self.function = function
        self.requests: list[Sequence[Message]] = []

    def __call__(self, messages: Sequence[Message]) -> Response:
        request = detached(messages)
        self.requests.append(request)
        name = getattr(self.function, "__name__", "function")
        return to_response(self.function(request), f"FunctionModel {name}()")

    def __repr__(self) -> str:
        name = getattr(self.function, "__name__", "function")
        return f"FunctionModel({name}, {len(self.requests)} calls so far)"
