"""Ollama's native chat API (``POST /api/chat`` with ``"stream": false``).

The shape: ``message`` holds ``content`` (an empty string, never ``null``,
when the model only calls tools), ``tool_calls`` (each ``{"function":
{"name", "arguments"}}`` with the arguments as an already-parsed JSON
*object*; recent servers add an ``id`` and ``index``) and, for thinking
models, ``thinking`` (skipped). ``done`` is true on a finished body and
``done_reason`` says how it ended. ``prompt_eval_count`` and ``eval_count``
are the prompt and output tokens.

The quirk that matters: **a round of tool calls ends with ``done_reason:
"stop"``**. The native API has no tool-call value; Ollama's maintainers
chose to send ``tool_calls`` only on the OpenAI-compatible ``/v1`` endpoint
(ollama/ollama#5995), which is the ``openai-chat`` format here.

Documented ``done_reason`` values: ``stop`` and ``length`` (the server's
``DoneReason`` enum in ``llm/server.go``), ``load`` and ``unload`` (an empty
request that only loads or unloads a model, in ``docs/api.md``). The enum's
third member, a closed connection, is written as an empty string, which Go
omits from the JSON; and the documentation's own older examples of a finished
chat carry no ``done_reason`` at all. A finished body without one is
therefore read as ``stop`` (raw value ``None``), the only meaning those
servers had. ``load`` and ``unload`` say nothing was generated: the provider
never produced a turn → ``provider_error``, so a tool call in such a body is
never run. There is no filter or refusal value. The mapping is the ``ollama``
rows of :data:`agentloops.stops.STOP_VALUES`.

Tool calls without an ``id`` get ``call_<n>``.

Sources:
    - ollama/ollama ``docs/api.md`` ("Chat request (with tools)": a
      ``tool_calls`` round with ``"done_reason": "stop"`` and arguments as an
      object; "Load a model" / "Unload a model": ``load`` and ``unload``).
    - ollama/ollama ``llm/server.go`` (``DoneReason``: stop, length, and the
      closed connection written as ``""``), ``server/routes.go`` (``unload``).
    - ollama/ollama pull request #5995 ("return tool calls finish reason for
      openai": ``tool_calls`` only on the OpenAI-compatible API).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from agentloops.i18n import N_
from agentloops.providers._common import (
    OBJECT,
    StreamBroken,
    build,
    count,
    fail,
    field,
    items,
    make_usage,
    need_object,
    pieces,
    string,
    tool_call,
)
from agentloops.providers.reply import Call, Reply
from agentloops.stops import ABSENT, normalise

FORMAT = "ollama"
FIELD = "done_reason"


def adapt(raw: object, where: str = "response") -> Reply:
    """Convert one non-streaming ``/api/chat`` body into a :class:`~agentloops.providers.reply.Reply`.

    Args:
        raw: the JSON body exactly as the server returned it (extra keys are ignored).
        where: the path of ``raw`` in error messages.

    Raises:
        RawBodyError: a field the adapter needs is missing or has the wrong type.
    """
    body = need_object(raw, where)
    done = field(body, "done", where, "true (a non-streaming body is finished)", types=(bool,))
    if done is not True:
        raise fail(f"{where}.done", "true (a non-streaming body is finished)", done)
    message_at = f"{where}.message"
    message = body.get("message")
    if type(message) is not dict:  # a parsed body's object passes without a check
        message = need_object(field(body, "message", where, "the assistant message", types=OBJECT), message_at)
    content = string(message, "content", message_at, optional=True)
    thinking = string(message, "thinking", message_at, optional=True)
    calls: list[Call] = []
    for j, call_raw in enumerate(items(message, "tool_calls", message_at, "a list of tool calls", optional=True)):
        call_at = f"{message_at}.tool_calls[{j}]"
        call = need_object(call_raw, call_at)
        call_id = string(call, "id", call_at, optional=True) or f"call_{j + 1}"
        function_at = f"{call_at}.function"
        function = need_object(call.get("function"), function_at)
        arguments = field(function, "arguments", function_at, "an arguments object or its JSON text",
                          types=(dict, Mapping, str), optional=True)
        calls.append(tool_call(function_at, call_id=call_id, name=function.get("name"),
                               arguments=arguments if arguments is not None else {}))
    reason_text = string(body, "done_reason", where, optional=True)
    finish = normalise(FORMAT, FIELD, ABSENT if reason_text is None else reason_text)
    usage = make_usage(count(body, "prompt_eval_count", where), count(body, "eval_count", where))
    response = build(where, content=content, calls=calls, finish=finish, raw=reason_text or "", usage=usage,
                     reasoning=thinking)
    if reason_text is None:
        return replace(response, raw_finish_reason=None)
    return response


def assemble_stream(lines: Sequence[Mapping[str, Any]], where: str) -> dict[str, Any]:
    """The whole ``/api/chat`` body a stream of NDJSON lines adds up to.

    Each line holds a ``message`` piece: ``content`` and ``thinking`` text is
    joined, ``tool_calls`` arrive whole and are collected in order. The line
    with ``done: true`` ends the round and carries ``done_reason`` and the
    token counts.

    Raises:
        StreamBroken: no line had ``done: true``, or a line came after it.
        RawBodyError: a line is not shaped as documented.
    """
    message: dict[str, Any] = {"role": "assistant"}
    calls: list[Any] = []
    final: dict[str, Any] | None = None
    for i, raw in enumerate(lines):
        at = f"{where}[{i}]"
        line = need_object(raw, at)
        if final is not None:
            raise StreamBroken(N_("line {i} arrived after the line with done: true"), i=i)
        piece = field(line, "message", at, "the assistant message piece", types=OBJECT, optional=True) or {}
        for key in ("content", "thinking"):
            text = string(piece, key, f"{at}.message", optional=True)
            if text is not None:
                message[key] = message.get(key, "") + text
        calls += items(piece, "tool_calls", f"{at}.message", "a list of tool calls", optional=True)
        if field(line, "done", at, "true or false", types=(bool,), optional=True):
            final = {k: v for k, v in line.items() if k != "message"}
    if calls:
        message["tool_calls"] = calls
    if final is None:
        raise StreamBroken(N_("the stream ended without a line with done: true"), {"message": message, "done": True})
    return {**final, "message": message}


def stream_body(body: Mapping[str, Any], rng: random.Random | None = None) -> list[dict[str, Any]]:
    """``body`` as the NDJSON lines ``/api/chat`` streams (text split at ``rng``'s points, tool calls whole)."""
    head = {k: v for k, v in body.items() if k in ("model", "created_at")}
    message = body.get("message") or {}
    role = message.get("role", "assistant")
    lines = []
    for key in ("thinking", "content"):
        if message.get(key):
            lines += [{**head, "message": {"role": role, key: p}, "done": False} for p in pieces(message[key], rng)]
    for call in message.get("tool_calls") or []:
        said = {"content": ""} if "content" in message else {}
        lines.append({**head, "message": {"role": role, **said, "tool_calls": [call]}, "done": False})
    last_message: dict[str, Any] = {"role": role}
    if "content" in message:
        last_message["content"] = ""
    return [*lines, {**{k: v for k, v in body.items() if k != "message"}, "message": last_message}]


__all__ = ["FIELD", "FORMAT", "adapt", "assemble_stream", "stream_body"]
