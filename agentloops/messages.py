"""What the loop sends to the model: an immutable transcript of messages.

Messages are immutable named tuples, so a recorded request (a tuple of them)
is a detached copy for free: later rounds cannot change what an earlier call
was sent. A named tuple rather than a frozen dataclass because the loop builds
several per round and a tuple is three times cheaper to build
(``benchmarks/bench_loop.py``).
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from agentloops.response import Response, ToolCall
from agentloops.tokens import MESSAGE_OVERHEAD, Tokenizer

Role = Literal["system", "user", "assistant", "tool"]


class Message(NamedTuple):
    """One chat message in OpenAI's shape.

    Attributes:
        role: who speaks.
        content: the text (``None`` for an assistant round with only tool calls).
        tool_calls: the calls an assistant message made.
        tool_call_id: for a tool message, which call it answers.
        name: for a tool message, which tool produced it.
    """

    role: Role
    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    @classmethod
    def from_response(cls, response: Response) -> Message:
        """The assistant message that appends ``response`` to the transcript."""
        return cls("assistant", response.content, response.tool_calls)

    def tokens(self, tokenizer: Tokenizer) -> int:
        """Estimated prompt tokens this message costs every time it is sent."""
        total = MESSAGE_OVERHEAD + tokenizer(self.content or "")
        for call in self.tool_calls:
            total += tokenizer(call.name) + tokenizer(call.arguments)
        return total

    def to_dict(self) -> dict[str, Any]:
        """The message as Chat Completions JSON."""
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        return data
