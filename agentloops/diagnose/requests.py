"""The request side of a provider log: the messages a caller sent, in each of the five wire formats.

Responses are read by :func:`agentloops.providers.read`; requests are
not part of the providers package, so each format's message list is read
here — only the parts the detectors compare: who spoke, the text, the tool
calls an assistant turn made, and the tool results sent back (with their
call ids and error flags where the format has them).

Shapes followed: Chat Completions ``messages`` (also Ollama's ``/api/chat``),
the Responses API ``input`` (a string or a list of items; with
``previous_response_id`` only the new items are sent), Anthropic Messages
``messages`` with ``tool_use`` / ``tool_result`` blocks, and Gemini
``contents`` with ``functionCall`` / ``functionResponse`` parts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agentloops.diagnose.model import Msg, PrefixMemo, canonical_arguments, canonical_json
from agentloops.i18n import N_, Phrase
from agentloops.providers import RawBodyError, reader

Request = tuple[tuple[Msg, ...], bool]
"""A request's messages and whether it is incremental (sends only what is new)."""


def _object(value: object, where: str) -> Mapping[str, Any]:
    if type(value) is dict:  # a parsed log's object, the common case
        return value
    if not isinstance(value, Mapping):
        raise _refuse(N_("{where}: expected a JSON object; got {kind}"), where=where, kind=_kind(value))
    return value


def _list(body: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = body.get(key)
    if not isinstance(value, list):
        got = _MISSING if key not in body else Phrase(N_("got {kind}"), kind=_kind(value))
        raise _refuse(N_("{where}.{key}: expected a list of messages; {got}"), where=where, key=key, got=got)
    return value


def _refuse(template: str, /, **fields: object) -> RawBodyError:
    """The error for a request body that is not as its API documents (worded as a :class:`Phrase`)."""
    return RawBodyError(Phrase(template, **fields))


_MISSING = Phrase(N_("missing"))
_KINDS: dict[type, Phrase] = {dict: Phrase(N_("an object")), list: Phrase(N_("a list")), str: Phrase(N_("a string")),
                              bool: Phrase(N_("a boolean"))}
_NUMBER = Phrase(N_("a number"))


def _kind(value: object) -> str:
    """What a JSON value is, in words (a :class:`Phrase`: English as data)."""
    if value is None:
        return "null"
    return _KINDS.get(type(value), _NUMBER)


def _text(content: object, where: str) -> str | None:
    """Text content: a string, or a list of parts whose text fields are joined."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [str(p["text"]) for p in content if isinstance(p, (dict, Mapping)) and isinstance(p.get("text"), str)]
        return "".join(parts) if parts else None
    raise _refuse(N_("{where}: expected text or a list of parts; got {kind}"), where=where, kind=_kind(content))


def _role(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise _refuse(N_("{where}.role: expected a string; got {kind}"), where=where, kind=_kind(value))
    return value


def _name(entry: Mapping[str, Any], key: str, where: str) -> str | None:
    """An id or a name that a result is matched by: a string, or absent."""
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise _refuse(N_("{where}.{key}: expected a string; got {kind}"), where=where, key=key, kind=_kind(value))
    return value


def _entries(value: object, where: str, key: str) -> list[Any]:
    """An optional list inside an entry (``tool_calls``, ``parts``, ``content``): absent or null is empty."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _refuse(N_("{where}.{key}: expected a list; got {kind}"), where=where, key=key, kind=_kind(value))
    return value


LEGACY_CALL_ID = "function_call"
"""The id the response reader gives a legacy ``function_call`` (it has none), so its ``function`` result matches it."""


def chat_message(raw: object, at: str) -> tuple[Msg, ...]:
    """One Chat Completions (or Ollama ``/api/chat``) message."""
    message = _object(raw, at)
    role = _role(message.get("role"), at)
    content = message.get("content")
    text = content if content is None or isinstance(content, str) else _text(content, f"{at}.content")
    if role == "tool":
        name = _name(message, "tool_name", at) or _name(message, "name", at)
        return (Msg("tool", text, (), _name(message, "tool_call_id", at), name),)
    if role == "function":  # the legacy function calling: the result of the one function_call before it
        return (Msg("tool", text, (), LEGACY_CALL_ID, _name(message, "name", at)),)
    if role == "assistant":
        entries = _entries(message.get("tool_calls"), at, "tool_calls")
        calls = tuple([_chat_call(c, f"{at}.tool_calls[{j}]") for j, c in enumerate(entries)]) if entries else ()
        if message.get("function_call") is not None:
            calls += (_function(_object(message["function_call"], f"{at}.function_call")),)
        return (Msg("assistant", text, calls),)
    return (Msg("system" if role in ("system", "developer") else "user", text),)


def _chat_call(raw: object, where: str) -> tuple[str, str]:
    return _function(_object(_object(raw, where).get("function"), f"{where}.function"))


def _function(function: Mapping[str, Any]) -> tuple[str, str]:
    return str(function.get("name")), canonical_arguments(function.get("arguments") or {})


def responses_item(item: object, at: str) -> tuple[Msg, ...]:
    """One Responses API input item: a message, a function call or a function call's output."""
    entry = _object(item, at)
    kind = entry.get("type", "message")
    if kind == "function_call":
        return (Msg("assistant", None, ((str(entry.get("name")), canonical_arguments(entry.get("arguments"))),)),)
    if kind == "function_call_output":
        output = entry.get("output")
        return (Msg("tool", output if isinstance(output, str) else canonical_json(output),
                    call_id=_name(entry, "call_id", at)),)
    if kind == "message":
        role = _role(entry.get("role"), at)
        text = _text(entry.get("content"), f"{at}.content")
        return (Msg("assistant" if role == "assistant" else "system" if role in ("system", "developer") else "user",
                    text),)
    return ()


def anthropic_message(raw: object, at: str) -> tuple[Msg, ...]:
    """One Anthropic message: each ``tool_result`` block a tool result, then the message's own text and calls."""
    message = _object(raw, at)
    role = _role(message.get("role"), at)
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    out: list[Msg] = []
    texts: list[str] = []
    calls: list[tuple[str, str]] = []
    for j, block in enumerate(blocks):
        entry = block if isinstance(block, dict) else _object(block, f"{at}.content[{j}]")
        kind = entry.get("type")
        if kind == "tool_result":
            block_at = f"{at}.content[{j}]"
            out.append(Msg("tool", _text(entry.get("content"), f"{block_at}.content"),
                           call_id=_name(entry, "tool_use_id", block_at), is_error=entry.get("is_error") is True))
        elif kind == "tool_use":
            calls.append((str(entry.get("name")), canonical_arguments(entry.get("input") or {})))
        elif kind == "text" and isinstance(entry.get("text"), str):
            texts.append(entry["text"])
    if role == "assistant":
        out.append(Msg("assistant", "".join(texts) if texts else None, tuple(calls)))
    elif texts:
        out.append(Msg("user", "".join(texts)))
    return tuple(out)


def gemini_content(raw: object, at: str) -> tuple[Msg, ...]:
    """One Gemini content: ``functionResponse`` parts become tool results (matched by their ``id`` when the API
    gave the calls ids, else by position)."""
    content = _object(raw, at)
    parts = content.get("parts") or []
    if not isinstance(parts, list):
        raise _refuse(N_("{where}.parts: expected a list of parts; got {kind}"), where=at, kind=_kind(parts))
    out: list[Msg] = []
    texts: list[str] = []
    calls: list[tuple[str, str]] = []
    for j, part in enumerate(parts):
        entry = part if isinstance(part, dict) else _object(part, f"{at}.parts[{j}]")
        if "functionResponse" in entry:
            response_at = f"{at}.parts[{j}].functionResponse"
            response = _object(entry["functionResponse"], response_at)
            result = response.get("response")
            is_error = isinstance(result, (dict, Mapping)) and result.get("error") is not None
            out.append(Msg("tool", canonical_arguments(result), call_id=_name(response, "id", response_at),
                           name=_name(response, "name", response_at), is_error=is_error))
        elif "functionCall" in entry:
            call = _object(entry["functionCall"], f"{at}.parts[{j}].functionCall")
            calls.append((str(call.get("name")), canonical_arguments(call.get("args") or {})))
        elif isinstance(entry.get("text"), str):
            texts.append(entry["text"])
    if content.get("role") == "model":
        out.append(Msg("assistant", "".join(texts) if texts else None, tuple(calls)))
    elif texts:
        out.append(Msg("user", "".join(texts)))
    return tuple(out)


_SHAPES: dict[str, tuple[str, Callable[[object, str], tuple[Msg, ...]]]] = {
    "openai-chat": ("messages", chat_message),
    "openai-responses": ("input", responses_item),
    "anthropic": ("messages", anthropic_message),
    "gemini": ("contents", gemini_content),
    "ollama": ("messages", chat_message),
}
"""Each provider format's list of request entries and how one entry becomes messages."""


class RequestReader:
    """The request side of one stream of a provider format, read incrementally (see :class:`PrefixMemo`), and the
    format's response reader (looked up once a stream, not once a line)."""

    def __init__(self, format: str) -> None:
        self.format = format
        self._key, self._convert = _SHAPES[format]
        self._memo = PrefixMemo()
        self.reply = reader(format)  # the response side: agentloops.providers.read of this format

    def read(self, body: object, where: str = "request") -> Request:
        """The messages of one request body and whether it is incremental; errors name the field."""
        entries = _object(body, where)
        incremental = False
        if self.format == "openai-responses":
            incremental = entries.get("previous_response_id") is not None
            raw = entries.get("input")
            if isinstance(raw, str):
                return (Msg("user", raw),), incremental
            if not isinstance(raw, list):
                raise _refuse(N_("{where}.input: expected a string or a list of items; got {kind}"), where=where,
                              kind=_MISSING if "input" not in entries else _kind(raw))
        key, convert = self._key, self._convert
        items = _list(entries, key, where)
        return self._memo.read(items, lambda i, item: convert(item, f"{where}.{key}[{i}]")), incremental


def read_request(format: str, body: object, where: str = "request") -> Request:
    """The messages of one request body of ``format``, read alone; errors name the field."""
    return RequestReader(format).read(body, where)
