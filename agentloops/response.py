"""What a model sends back in one round: text, tool calls, and how the round ended.

The shape follows OpenAI's Chat Completions, the lingua franca of tool-calling
servers. Provider-specific stop values are normalised onto :data:`FinishReason`
and the original value is kept in ``raw_finish_reason``.
"""

from __future__ import annotations

import json
import re
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, field_validator, model_validator

FinishReason = Literal[
    "stop",
    "tool_calls",
    "length",
    "content_filter",
    "refusal",
    "pause",
    "malformed_tool_call",
    "unknown",
]
"""How a round ended, normalised across providers.

- ``stop``: the model finished its turn (a natural end or a stop sequence).
- ``tool_calls``: the model handed over to tools.
- ``length``: a token limit cut the round off.
- ``content_filter``: the provider withheld or removed output.
- ``refusal``: the model explicitly declined (Anthropic ``refusal``).
- ``pause``: the provider paused a long turn and asks to be called again (Anthropic ``pause_turn``).
- ``malformed_tool_call``: the provider reports a tool call it could not produce (Gemini).
- ``unknown``: a value the package does not know; the raw value is in ``raw_finish_reason``.

The finish reason says *how* a round ended. Whether the loop goes on is decided
elsewhere — by the tool calls, in the correct loop (see :mod:`agentloops.criteria`).
"""

ABNORMAL_FINISH: frozenset[str] = frozenset(
    {"length", "content_filter", "refusal", "pause", "malformed_tool_call", "unknown"}
)
"""Finish reasons that mean the round did not end the way its text suggests."""


class ToolCall(BaseModel):
    """One tool call, with its arguments exactly as the model sent them.

    ``arguments`` is the raw JSON text. A call cut off mid-generation carries
    text that does not parse, so the parsed form is optional:
    ``parsed_arguments`` is a dict when the text is a JSON object, else ``None``.
    Scenario files may give ``arguments`` as an object for convenience; it is
    stored as JSON text.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: str = "{}"

    @field_validator("arguments", mode="before")
    @classmethod
    def _object_to_text(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return json.dumps(value, ensure_ascii=False)
        if not isinstance(value, str):
            raise ValueError(f"expected a JSON object or its raw JSON text; got {type(value).__name__}")
        return value

    @cached_property
    def parsed_arguments(self) -> dict[str, Any] | None:
        """The arguments as a dict, or ``None`` when the raw text is not a JSON object."""
        if not self.arguments.strip():
            return {}  # several servers send "" for a call without arguments
        try:
            parsed = json.loads(self.arguments)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None

    @property
    def is_cut_off(self) -> bool:
        """True when the arguments are the start of valid JSON that stops too early."""
        return self.parsed_arguments is None and _is_json_prefix(self.arguments)


class Usage(BaseModel):
    """Token counts a provider reported for one round (either may be missing)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_tokens: NonNegativeInt | None = None
    completion_tokens: NonNegativeInt | None = None


class Response(BaseModel):
    """One round's reply from the model.

    ``content`` is ``None`` and ``""`` in different situations and both matter:
    a naive "non-empty text means done" test treats them alike, while a
    provider sends ``null`` for a pure tool-call round and ``""`` from some
    servers. The field is therefore required, so a scenario file has to say
    which one it means.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: FinishReason
    raw_finish_reason: str | None = None
    usage: Usage | None = None

    @field_validator("tool_calls", mode="before")
    @classmethod
    def _null_means_none(cls, value: Any) -> Any:
        return () if value is None else value

    @model_validator(mode="after")
    def _unknown_keeps_raw(self) -> Response:
        if self.finish_reason == "unknown" and not self.raw_finish_reason:
            raise ValueError("finish_reason 'unknown' needs raw_finish_reason, the value the provider sent")
        return self

    def same_as(self, other: Response) -> bool:
        """True when both rounds say the same thing (tool-call ids and usage are ignored)."""
        if self is other:
            return True
        return (
            self.content == other.content
            and self.finish_reason == other.finish_reason
            and len(self.tool_calls) == len(other.tool_calls)
            and all(
                a.name == b.name and a.arguments == b.arguments
                for a, b in zip(self.tool_calls, other.tool_calls, strict=False)
            )
        )

    def summary(self) -> str:
        """One line: content, tool calls, finish reason — as a log would show it."""
        calls = ", ".join(f"{c.name}({c.arguments})" for c in self.tool_calls) or "none"
        return f"content={show_content(self.content)} tool_calls=[{calls}] finish_reason={self.finish_reason}"


def show_content(content: str | None, width: int = 60) -> str:
    """Render content so that ``None`` and ``""`` look different."""
    if content is None:
        return "null"
    return json.dumps(shorten(content, width), ensure_ascii=False)


def shorten(text: str, width: int = 60) -> str:
    """``text`` cut to ``width`` characters with an ellipsis, for one-line messages."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _is_json_prefix(text: str) -> bool:
    """True when ``text`` is the start of a JSON object that a token limit cut short.

    Close whatever is open (a string, then brackets, completing a half-written
    key, value or literal) and check that the result parses as an object.
    Text that is complete but wrong (``{"a" 1}``) or wrong before it ends
    (``{"a" "b"``) is malformed, not truncated.
    """
    stack: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]" and (not stack or stack.pop() != char):
            return False
    if not stack:
        return False
    head = (text[:-1] if escaped else text) + ('"' if in_string else "")
    head = _LITERAL_TAIL.sub(lambda m: _LITERALS[m.group(1)[0]], head.rstrip())
    closers = "".join(reversed(stack))
    candidates = (head, head.rstrip(","), head + " null", head + ": null")
    return any(_is_object(candidate + closers) for candidate in candidates)


_LITERALS = {"t": "true", "f": "false", "n": "null"}
_LITERAL_TAIL = re.compile(r"(?<![\w\"])(t|tr|tru|f|fa|fal|fals|n|nu|nul)$")


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False
