"""What every adapter shares: reading a raw body field by field, with errors that name the field.

A raw body is untyped JSON. Each adapter reads only the fields it needs and
ignores the rest (providers add keys all the time, and a recorded body must
load as it was sent). A field that is missing or has the wrong type fails with
one line: where it is (``responses[2].choices[0].finish_reason``), what was
expected and what was found.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentloops.errors import ScenarioError
from agentloops.i18n import Phrase
from agentloops.providers.reply import Call, Reply
from agentloops.response import FinishReason


class RawBodyError(ScenarioError):
    """A provider's raw response body does not have the shape its API documents."""


_MISSING = object()


def kind(value: object) -> str:
    """A JSON-ish name for the type of ``value``, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = repr(value)
        return f"the string {shown[:40] + '…' if len(shown) > 40 else shown}"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, Sequence):
        return "a list"
    return type(value).__name__


def fail(where: str, expected: str, value: object = _MISSING) -> RawBodyError:
    """The one-line error for a field: ``where: expected …; got …`` (or ``missing``)."""
    if value is _MISSING:
        return RawBodyError(f"{where}: missing; expected {expected}")
    return RawBodyError(f"{where}: expected {expected}; got {kind(value)}")


OBJECT: tuple[type, ...] = (dict, Mapping)
"""The types of a JSON object, ``dict`` first: a parsed body's objects pass without the ABC's slower check."""


def need_object(value: object, where: str) -> Mapping[str, Any]:
    """``value`` as a JSON object, or the error naming ``where``."""
    if isinstance(value, dict):  # a parsed body's object, told apart without the ABC's slower check
        return value
    if not isinstance(value, Mapping):
        raise fail(where, "a JSON object", value)
    return value


def field(body: Mapping[str, Any], key: str, where: str, expected: str, *, types: tuple[type, ...],
          optional: bool = False, nullable: bool = False) -> Any:
    """Read ``body[key]`` and check its type.

    Args:
        body: the object holding the field.
        key: the field name.
        where: the path of ``body`` (the error names ``where.key``).
        expected: words for the error ("a string", "a list of content blocks").
        types: accepted Python types (``bool`` is never accepted as a number).
        optional: a missing key returns ``None`` instead of failing.
        nullable: ``null`` returns ``None`` instead of failing.
    """
    if key not in body:
        if optional:
            return None
        raise fail(f"{where}.{key}", expected)
    value = body[key]
    if value is None:
        if nullable or optional:
            return None
        raise fail(f"{where}.{key}", expected, value)
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise fail(f"{where}.{key}", expected, value)
    return value


def string(body: Mapping[str, Any], key: str, where: str, *, optional: bool = False,
           nullable: bool = False) -> str | None:
    """Read a string field (see :func:`field`); a string, or an optional one absent or null, is returned at once."""
    value = body.get(key)
    if isinstance(value, str) or (value is None and optional):
        return value
    return field(body, key, where, "a string", types=(str,), optional=optional, nullable=nullable)


def items(body: Mapping[str, Any], key: str, where: str, expected: str, *, optional: bool = False) -> list[Any]:
    """Read a list field; a missing optional list (or ``null``) is empty. The list is the body's own: read it only."""
    value = body.get(key)
    if type(value) is list:  # a parsed body's list, the common case, returned at once
        return value
    value = field(body, key, where, expected, types=(list, tuple), optional=optional, nullable=optional)
    return list(value) if value is not None else []


def count(body: Mapping[str, Any] | None, key: str, where: str) -> int | None:
    """Read an optional non-negative token count; a count as sent, the common case, is returned at once."""
    if body is None:
        return None
    value = body.get(key)
    if type(value) is int and value >= 0:  # not a bool, which is an int to Python
        return value
    if value is None:  # absent or null: not reported
        return None
    value = field(body, key, where, "a whole number of tokens", types=(int,), optional=True, nullable=True)
    if value is not None and value < 0:
        raise fail(f"{where}.{key}", "a whole number of tokens (0 or more)", value)
    return value


def arguments_text(value: object, where: str) -> str:
    """Arguments as raw JSON text: strings stay as sent, objects are serialised once.

    OpenAI sends a string (possibly cut off or malformed, which is the point);
    Anthropic, Gemini and Ollama send an already-parsed object.
    """
    if value is None:
        return "{}"
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, Mapping)):  # dict first: a parsed body's object skips the ABC's slower check
        return _dumps(value)
    raise fail(where, "a JSON object or its text", value)


def json_encoder(*, sort_keys: bool = False, separators: tuple[str, str] = (", ", ": ")) -> Callable[[Any], str]:
    """``json.JSONEncoder(ensure_ascii=False, sort_keys=…, separators=…).encode``, its C encoder built once.

    ``encode`` builds the C encoder anew on every call, which costs more than encoding a tool call's
    arguments (and a log reader encodes some every line). Parsed JSON holds no cycles, so none is looked
    for (a value nested too deeply still raises ``RecursionError``). Without the C accelerator, ``encode``.
    """
    encoder = json.JSONEncoder(ensure_ascii=False, sort_keys=sort_keys, separators=separators)
    make = getattr(json.encoder, "c_make_encoder", None)
    try:  # the arguments JSONEncoder.iterencode passes it
        chunks = make(None, encoder.default, json.encoder.encode_basestring, None, separators[1], separators[0],
                      sort_keys, False, True) if make is not None else None
    except TypeError:  # another Python's C encoder: the encoder's own way
        chunks = None
    if chunks is None:
        return encoder.encode
    return lambda value: "".join(chunks(value, 0))


_dumps = json_encoder()
"""``json.dumps(value, ensure_ascii=False)``."""


def join_text(parts: Sequence[str]) -> str | None:
    """Text parts joined as the SDKs' ``output_text`` helpers do; ``None`` when there were none."""
    return "".join(parts) if parts else None


Counts = tuple[int | None, int | None] | None
"""A body's token counts as read, ``(prompt, completion)``; ``None`` when it reported neither."""


def make_usage(prompt: int | None, completion: int | None) -> Counts:
    """The counts, or ``None`` when the body reported neither."""
    if prompt is None and completion is None:
        return None
    return prompt, completion


def build(where: str, *, content: str | None, calls: Sequence[Call], finish: FinishReason,
          raw: str, usage: Counts, reasoning: str | None = None) -> Reply:
    """Assemble the :class:`~agentloops.providers.reply.Reply` (the raw value is always kept, known or not).

    Every field was checked as it was read, so the values are kept as they are: the
    :class:`~agentloops.response.Response` is built from them when it is asked for.
    """
    prompt, completion = usage if usage is not None else (None, None)
    return Reply(content, tuple(calls), finish, raw or repr(raw), usage is not None, prompt, completion,
                 reasoning or None)


def tool_call(where: str, *, call_id: object, name: object, arguments: object,
              id_field: str = "id", name_field: str = "name", arguments_field: str = "arguments") -> Call:
    """A tool call from fields already read, with errors naming the provider's own field names."""
    if not isinstance(call_id, str) or not call_id:
        raise fail(f"{where}.{id_field}", "a non-empty string", call_id)
    if not isinstance(name, str) or not name:
        raise fail(f"{where}.{name_field}", "a non-empty string (the tool's name)", name)
    if type(arguments) is dict:  # a parsed body's object, the common case: no path to build
        return Call(call_id, name, _dumps(arguments))
    return Call(call_id, name, arguments_text(arguments, f"{where}.{arguments_field}"))


class StreamBroken(Exception):
    """A stream that broke its format's protocol; the message says how (it becomes a ``provider_error`` round).

    ``partial`` is the whole body the chunks before the break add up to, with a
    placeholder stop value, when the assembler could build one: a naive loop
    reads its text as a real client would. ``problem`` is the message as a phrase (``template`` filled with
    ``fields``): English as data, shown in the learner's language.
    """

    def __init__(self, template: str, partial: dict[str, Any] | None = None, **fields: object) -> None:
        self.problem = Phrase(template, **fields)
        super().__init__(self.problem)
        self.partial = partial


def pieces(text: str, rng: random.Random | None) -> list[str]:
    """``text`` split at random points (one piece without ``rng``), as a server streams it; never empty pieces."""
    if rng is None or len(text) < 2:
        return [text]
    cuts = sorted(rng.sample(range(1, len(text)), k=min(len(text) - 1, rng.randint(1, 4))))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def chunk_object(value: object, where: str) -> Mapping[str, Any]:
    """One stream chunk as an object, or the one-line error naming it."""
    return need_object(value, where)
