"""What the loop sends to the model: an immutable transcript of messages.

Messages are immutable named tuples, so what a call was sent cannot change
later. A named tuple rather than a frozen dataclass because the loop builds
several per round and a tuple is three times cheaper to build
(``benchmarks/bench_loop.py``).

Every call resends the whole transcript, so copying it into each recorded
request would cost time and memory quadratic in the number of steps. The loop
stores the transcript once, in a list it only ever appends to, and records each
request as a :class:`TranscriptView` — the first ``length`` messages of that
list, which later appends cannot change (``benchmarks/bench_long_run.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from operator import index as as_index
from typing import Any, Literal, NamedTuple, overload

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


class TranscriptView(Sequence[Message]):
    """The first ``length`` messages of an append-only list: one request, recorded without a copy.

    It behaves as the tuple it stands for: ``len``, indexing, slicing (which
    returns a tuple), iteration, ``+``, equality and hash as that tuple's, and a
    tuple-like ``repr``. Whoever builds one must only ever append to ``messages``.
    Pickling keeps the list shared, so a pickled run stores its transcript once.
    """

    __slots__ = ("_length", "_messages")

    def __init__(self, messages: list[Message], length: int) -> None:
        self._messages = messages
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...

    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        if isinstance(index, slice):
            return tuple(map(self._messages.__getitem__, range(*index.indices(self._length))))
        position = as_index(index)
        if position < 0:
            position += self._length
        if not 0 <= position < self._length:
            raise IndexError("transcript index out of range")
        return self._messages[position]

    def __iter__(self) -> Iterator[Message]:
        return islice(self._messages, self._length)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TranscriptView):
            if self._length != other._length:
                return False
            return self._messages is other._messages or tuple(self) == tuple(other)
        if isinstance(other, tuple):
            return len(other) == self._length and tuple(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __add__(self, other: tuple[Message, ...]) -> tuple[Message, ...]:
        if isinstance(other, (tuple, TranscriptView)):
            return (*self, *other)
        return NotImplemented

    def __radd__(self, other: tuple[Message, ...]) -> tuple[Message, ...]:
        if isinstance(other, tuple):
            return (*other, *self)
        return NotImplemented

    def __reduce__(self) -> tuple[type[TranscriptView], tuple[list[Message], int]]:
        return (TranscriptView, (self._messages, self._length))

    def __repr__(self) -> str:
        return repr(tuple(self))


def detached(messages: Sequence[Message]) -> Sequence[Message]:
    """An immutable copy of ``messages``, free when they already are one (a tuple or a view)."""
    kind = type(messages)
    return messages if kind is TranscriptView or kind is tuple else tuple(messages)
