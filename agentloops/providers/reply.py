"""A response body as read: plain values, the pydantic :class:`~agentloops.response.Response` built when asked for.

The adapters check every field of a body as they read it, so validating the
same values again in the model is work a log reader cannot afford once a line:
building a ``Response`` costs about as much as parsing the line's JSON.
:func:`agentloops.providers.adapt` hands out the ``Response`` at once; the log
reader (:mod:`agentloops.diagnose`) keeps the :class:`Reply` and builds the
``Response`` only for the few rounds whose ending it judges.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

from agentloops.response import FinishReason, Response, is_json_prefix, parse_arguments, summary_line, text_tool_call


class Call(NamedTuple):
    """One tool call as read (the fields of :class:`~agentloops.response.ToolCall`, checked by the adapter)."""

    id: str
    name: str
    arguments: str

    @property
    def parsed_arguments(self) -> dict[str, Any] | None:
        """:attr:`ToolCall.parsed_arguments <agentloops.response.ToolCall.parsed_arguments>` of the text as read."""
        return parse_arguments(self.arguments)

    @property
    def is_cut_off(self) -> bool:
        """:attr:`ToolCall.is_cut_off <agentloops.response.ToolCall.is_cut_off>` of the text as read."""
        return self.parsed_arguments is None and is_json_prefix(self.arguments)


class Counts(NamedTuple):
    """A reply's usage as read (the counts of :class:`~agentloops.response.Usage`)."""

    prompt_tokens: int | None
    completion_tokens: int | None


@dataclass(eq=False)
class Reply:
    """One round's reply as read from a body: the fields of :class:`~agentloops.response.Response`.

    ``prompt_tokens`` and ``completion_tokens`` are the usage's counts; ``has_usage``
    says whether the body reported any (a ``Response`` then has a ``usage``).

    Not frozen, and compared by identity (:meth:`same_as` compares what a reply says): a log
    reader builds one a line, and a frozen dataclass sets each field through ``object.__setattr__``,
    which costs several times what setting it does. Nothing changes a reply once read.
    """

    content: str | None
    tool_calls: tuple[Call, ...]
    finish_reason: FinishReason
    raw_finish_reason: str | None
    has_usage: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning: str | None = None

    @cached_property
    def response(self) -> Response:
        """The package's :class:`~agentloops.response.Response` of this reply (built once, on first use)."""
        usage = {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}
        return Response.model_validate({  # one call of the validator, the calls and usage nested in it
            "content": self.content, "tool_calls": [call._asdict() for call in self.tool_calls],
            "finish_reason": self.finish_reason, "raw_finish_reason": self.raw_finish_reason,
            "usage": usage if self.has_usage else None, "reasoning": self.reasoning})

    @property
    def stream_error(self) -> None:
        """A body as read is whole (a broken stream is the package's to report, as it assembles one)."""
        return None

    @property
    def max_tokens(self) -> None:
        """A body does not state the request's output limit..."""
        return None

    @property
    def at_token_limit(self) -> bool:
        """... so its output is never known to have reached it."""
        return False

    @property
    def usage(self) -> Counts | None:
        """The usage's counts, when the body reported any."""
        return Counts(self.prompt_tokens, self.completion_tokens) if self.has_usage else None

    @property
    def text_tool_call(self) -> str | None:
        """:attr:`Response.text_tool_call <agentloops.response.Response.text_tool_call>` of the text as read."""
        return text_tool_call(self.content)

    @property
    def tokens(self) -> int | None:
        """Prompt plus completion tokens, when the body reported usage."""
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0) if self.has_usage else None

    def same_as(self, other: Reply) -> bool:
        """:meth:`Response.same_as <agentloops.response.Response.same_as>` on the values as read."""
        if self is other:
            return True
        return (self.content == other.content and self.finish_reason == other.finish_reason
                and [(c.name, c.arguments) for c in self.tool_calls]
                == [(c.name, c.arguments) for c in other.tool_calls])

    def summary(self) -> str:
        """:meth:`Response.summary <agentloops.response.Response.summary>`: one line, as a log would show it."""
        return summary_line(self.content, self.tool_calls, self.finish_reason)

    @classmethod
    def of(cls, response: Response) -> Reply:
        """The reply of a :class:`~agentloops.response.Response` already built (its ``response`` is that one)."""
        usage = response.usage
        reply = cls(response.content, tuple(Call(c.id, c.name, c.arguments) for c in response.tool_calls),
                    response.finish_reason, response.raw_finish_reason, usage is not None,
                    None if usage is None else usage.prompt_tokens,
                    None if usage is None else usage.completion_tokens, response.reasoning)
        reply.__dict__["response"] = response  # the very object given: cached_property reads it from there
        return reply
