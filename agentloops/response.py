"""What a model sends back in one round: text, tool calls, and how the round ended.

The shape follows OpenAI's Chat Completions, the lingua franca of tool-calling
servers. Provider-specific stop values are normalised onto :data:`FinishReason`
(defined, with its table, in :mod:`agentloops.stops`; re-exported here) and the
original value is kept in ``raw_finish_reason``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cached_property
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeInt,
    PositiveInt,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from agentloops.i18n import shown
from agentloops.stops import ABNORMAL, FinishReason

ABNORMAL_FINISH: frozenset[str] = ABNORMAL | {"pause"}
"""Finish reasons after which a round's text is no answer: every abnormal end, and a paused turn."""


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
        return parse_arguments(self.arguments)

    @property
    def is_cut_off(self) -> bool:
        """True when the arguments are the start of valid JSON that stops too early."""
        return self.parsed_arguments is None and is_json_prefix(self.arguments)


def parse_arguments(arguments: str) -> dict[str, Any] | None:
    """:attr:`ToolCall.parsed_arguments` of raw arguments text (a log reader's calls as read parse theirs so)."""
    if not arguments.strip():
        return {}  # several servers send "" for a call without arguments
    try:
        parsed = json.loads(arguments)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser's stack
        return None
    return parsed if isinstance(parsed, dict) else None


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

    Three optional fields carry what real servers taught us (see ``data/field/``):
    ``reasoning`` is the hidden reasoning a reasoning model sent beside (or
    instead of) its text; ``max_tokens`` is the *request's* output limit, when
    the scenario states it, so that output tokens equal to it can be read as a
    cut whatever the finish value says; ``stream_error`` says how a streamed
    round broke (its finish reason is then ``provider_error``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: FinishReason
    raw_finish_reason: str | None = None
    usage: Usage | None = None
    reasoning: str | None = None
    max_tokens: PositiveInt | None = None
    stream_error: str | None = None

    @field_validator("tool_calls", mode="before")
    @classmethod
    def _null_means_none(cls, value: Any) -> Any:
        return () if value is None else value

    @model_serializer(mode="wrap")
    def _field_notes_when_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leave the field's notes (reasoning, the request's max_tokens, a stream's error) out while unset, so a
        round dumped before they existed — in a trace's scenario, a recording — stays byte-identical."""
        data: dict[str, Any] = handler(self)
        for name in ("reasoning", "max_tokens", "stream_error"):
            if data.get(name) is None:
                data.pop(name, None)
        return data

    @model_validator(mode="after")
    def _unknown_keeps_raw(self) -> Response:
        if self.finish_reason == "unknown" and not self.raw_finish_reason:
            raise ValueError("finish_reason 'unknown' needs raw_finish_reason, the value the provider sent")
        if self.stream_error and self.finish_reason != "provider_error":
            raise ValueError("stream_error needs finish_reason 'provider_error': a broken stream did not finish")
        return self

    @property
    def at_token_limit(self) -> bool:
        """True when the reported output tokens reached the request's ``max_tokens``: evidence of a cut.

        Servers have reported ``tool_calls`` or ``stop`` for rounds a token
        limit cut off (vllm-project/vllm#58228 found them only this way), so
        the count is evidence the finish value cannot overrule.
        """
        usage = self.usage
        if usage is None or usage.completion_tokens is None or self.max_tokens is None:
            return False
        return usage.completion_tokens >= self.max_tokens

    @property
    def text_tool_call(self) -> str | None:
        """The tool's name when the text *is* a tool call written as JSON, not an answer (else ``None``).

        Servers whose tool parser missed the model's call hand it back as text:
        ``{"name": ..., "arguments": {...}}`` (or ``"parameters"``), perhaps in a
        Markdown code fence or ``<tool_call>`` tags (ollama/ollama#13519), or
        Qwen coder's ``<function=name>`` text (vllm-project/vllm#21571).
        """
        return text_tool_call(self.content)

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
        return summary_line(self.content, self.tool_calls, self.finish_reason)


def summary_line(content: str | None, tool_calls: Iterable[Any], finish_reason: str) -> str:
    """:meth:`Response.summary` of these values (``tool_calls``: anything with a ``name`` and ``arguments``; a log
    reader's calls as read, too)."""
    calls = ", ".join(f"{c.name}({c.arguments})" for c in tool_calls) or "none"
    return f"content={show_content(content)} tool_calls=[{calls}] finish_reason={finish_reason}"


_WRAPPERS = (("```json", "```"), ("```", "```"), ("<tool_call>", "</tool_call>"))
_XML_CALL = re.compile(r"<function=([\w.\-]+)>")


def text_tool_call(content: str | None) -> str | None:
    """The tool name of a tool call written as JSON text in ``content``, or ``None`` for anything else."""
    if not content:
        return None
    text = content.strip()
    for start, end in _WRAPPERS:
        if text.startswith(start) and text.endswith(end) and len(text) >= len(start) + len(end):
            text = text[len(start):len(text) - len(end)].strip()
            break
    xml = _XML_CALL.match(text)  # Qwen coder's own format: <function=name><parameter=...>
    if xml is not None:
        return xml.group(1)
    if not text.startswith("{"):
        return None
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("name"), str) or not parsed["name"]:
        return None
    arguments = parsed.get("arguments", parsed.get("parameters"))
    return parsed["name"] if isinstance(arguments, (dict, str)) else None


def show_content(content: str | None, width: int = 60) -> str:
    """Render content for a learner, so that ``None`` and ``""`` look different; a shipped scenario's text in the
    learner's language (:data:`agentloops.scenario.SCENARIO_SAYS`)."""
    return quote_content(shown(content) if content else content, width)


def quote_content(content: str | None, width: int = 60) -> str:
    """Render content as data (rows written to JSON): ``null``, ``""`` or the text quoted, as it is."""
    if content is None:
        return "null"
    return json.dumps(shorten(content, width), ensure_ascii=False)


def shorten(text: str, width: int = 60) -> str:
    """``text`` cut to ``width`` characters with an ellipsis, for one-line messages."""
    return text if len(text) <= width else text[: width - 1] + "…"


def is_json_prefix(text: str) -> bool:
    """True when ``text`` is the start of a JSON object that stops too early (a token limit cut it short).

    Any proper prefix of a valid object counts — a cut inside a number, a
    literal (``tru``), a ``\\u`` escape, after a key or a comma. Text that is
    complete, or wrong before it ends (``{"a" 1``), is not.
    """
    completion = json_completion(text)
    return completion is not None and completion != ""


def json_completion(text: str) -> str | None:
    """The text that makes ``text`` a complete JSON object: ``""`` if it already is, ``None`` if nothing can.

    A left-to-right scan with a stack, one state per place in the JSON grammar
    (RFC 8259, plus the ``NaN`` and ``Infinity`` that Python's parser accepts).
    Every state can be completed, so a text every character of which fits its
    state is a prefix of some object — no guessing at what was cut off.
    """
    scanner = _Scanner()
    return scanner.completion() if all(scanner.feed(char) for char in text) else None


_WHITESPACE = " \t\n\r"
_HEX = frozenset("0123456789abcdefABCDEF")
_ESCAPES = frozenset('"\\/bfnrtu')
_LITERALS = {"t": "rue", "f": "alse", "n": "ull", "N": "aN", "I": "nfinity"}
_NUMBER: dict[str, dict[str, str]] = {  # state → character class → next state
    "minus": {"0": "zero", "1": "int"},
    "zero": {".": "dot", "e": "exp"},
    "int": {"0": "int", "1": "int", ".": "dot", "e": "exp"},
    "dot": {"0": "frac", "1": "frac"},
    "frac": {"0": "frac", "1": "frac", "e": "exp"},
    "exp": {"0": "exp_digits", "1": "exp_digits", "+": "exp_sign"},
    "exp_sign": {"0": "exp_digits", "1": "exp_digits"},
    "exp_digits": {"0": "exp_digits", "1": "exp_digits"},
}
_UNFINISHED_NUMBER = frozenset({"minus", "dot", "exp", "exp_sign"})
_EXPECTED_COMPLETION = {"start": "{}", "colon": ":null", "value": "null", "key": '"":null'}


def _number_class(char: str) -> str:
    if char == "0":
        return "0"
    if char in "123456789":
        return "1"
    if char in "eE":
        return "e"
    return "+" if char in "+-" else char


class _Scanner:
    """Where a scan of JSON text stands: the open containers, what may come next, and the token being read."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.expect = "start"  # start | key_or_close | key | colon | value | value_or_close | comma_or_close | done
        self.token = ""  # "", "string", "number" or "literal"
        self.is_key = self.backslash = False
        self.hex_left = 0
        self.number = ""
        self.literal_left = ""

    def feed(self, char: str) -> bool:
        """Take one character; ``False`` when no valid JSON object continues this way."""
        if self.token == "string":
            return self._string(char)
        if self.token == "literal":
            if char != self.literal_left[:1]:
                return False
            self.literal_left = self.literal_left[1:]
            if not self.literal_left:
                self._value_done()
            return True
        if self.token == "number":
            step = _NUMBER[self.number].get(_number_class(char))
            if step is not None:
                self.number = step
                return True
            if self.number == "minus" and char == "I":  # -Infinity
                self.token, self.literal_left = "literal", _LITERALS["I"]
                return True
            if self.number in _UNFINISHED_NUMBER:
                return False
            self._value_done()
        return char in _WHITESPACE or self._structure(char)

    def _string(self, char: str) -> bool:
        if self.hex_left:
            self.hex_left -= 1
            return char in _HEX
        if self.backslash:
            self.backslash = False
            self.hex_left = 4 if char == "u" else 0
            return char in _ESCAPES
        if char == "\\":
            self.backslash = True
        elif char == '"':
            if self.is_key:
                self.token, self.expect = "", "colon"
            else:
                self._value_done()
        return char >= " "  # control characters must be escaped

    def _structure(self, char: str) -> bool:
        expect = self.expect
        if expect == "start":
            return char == "{" and self._open(char)
        if expect in ("key_or_close", "key") and char == '"':
            self.token, self.is_key = "string", True
            return True
        if expect == "colon":
            self.expect = "value"
            return char == ":"
        if expect in ("value", "value_or_close") and self._value(char):
            return True
        if expect == "comma_or_close" and char == ",":
            self.expect = "key" if self.stack[-1] == "{" else "value"
            return True
        innermost = "}" if self.stack[-1:] == ["{"] else "]"
        closes = {"key_or_close": "}", "value_or_close": "]", "comma_or_close": innermost}
        if closes.get(expect) == char:
            self.stack.pop()
            self.expect = "comma_or_close" if self.stack else "done"
            return True
        return False

    def _value(self, char: str) -> bool:
        if char in "{[":
            return self._open(char)
        if char == '"':
            self.token, self.is_key = "string", False
        elif char == "-" or char in "0123456789":
            self.token, self.number = "number", {"-": "minus", "0": "zero"}.get(char, "int")
        elif char in _LITERALS:
            self.token, self.literal_left = "literal", _LITERALS[char]
        else:
            return False
        return True

    def _open(self, char: str) -> bool:
        self.stack.append(char)
        self.expect = "key_or_close" if char == "{" else "value_or_close"
        return True

    def _value_done(self) -> None:
        self.token, self.expect = "", "comma_or_close"

    def completion(self) -> str:
        """What closes the text read so far: the open token, what its place still needs, the open containers."""
        tail, expect = "", self.expect
        if self.token == "string":
            tail = ("n" if self.backslash else "") + "0" * self.hex_left + '"'
            expect = "colon" if self.is_key else "comma_or_close"
        elif self.token == "number":
            tail, expect = ("0" if self.number in _UNFINISHED_NUMBER else ""), "comma_or_close"
        elif self.token == "literal":
            tail, expect = self.literal_left, "comma_or_close"
        closers = "".join("}" if c == "{" else "]" for c in reversed(self.stack))
        return tail + _EXPECTED_COMPLETION.get(expect, "") + closers
