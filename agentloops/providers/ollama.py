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

from collections.abc import Mapping

from agentloops.providers._common import (
    build,
    count,
    fail,
    field,
    items,
    make_usage,
    need_object,
    string,
    tool_call,
)
from agentloops.response import Response, ToolCall
from agentloops.stops import ABSENT, normalise

FORMAT = "ollama"
FIELD = "done_reason"


def adapt(raw: object, where: str = "response") -> Response:
    """Convert one non-streaming ``/api/chat`` body into a :class:`Response`.

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
    message = need_object(field(body, "message", where, "the assistant message", types=(Mapping,)), message_at)
    content = string(message, "content", message_at, optional=True)
    calls: list[ToolCall] = []
    for j, call_raw in enumerate(items(message, "tool_calls", message_at, "a list of tool calls", optional=True)):
        call_at = f"{message_at}.tool_calls[{j}]"
        call = need_object(call_raw, call_at)
        call_id = string(call, "id", call_at, optional=True) or f"call_{j + 1}"
        function_at = f"{call_at}.function"
        function = need_object(call.get("function"), function_at)
        arguments = field(function, "arguments", function_at, "an arguments object or its JSON text",
                          types=(Mapping, str), optional=True)
        calls.append(tool_call(function_at, call_id=call_id, name=function.get("name"),
                               arguments=arguments if arguments is not None else {}))
    reason_text = string(body, "done_reason", where, optional=True)
    finish = normalise(FORMAT, FIELD, ABSENT if reason_text is None else reason_text)
    usage = make_usage(count(body, "prompt_eval_count", where), count(body, "eval_count", where))
    response = build(where, content=content, calls=calls, finish=finish, raw=reason_text or "", usage=usage)
    if reason_text is None:
        return response.model_copy(update={"raw_finish_reason": None})
    return response


__all__ = ["FIELD", "FORMAT", "adapt"]
