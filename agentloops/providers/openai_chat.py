"""OpenAI Chat Completions (``POST /v1/chat/completions``), and every server that copies it.

The shape: ``choices[0].message`` holds ``content`` (text or ``null``),
``tool_calls`` (each ``{"id", "type": "function", "function": {"name",
"arguments"}}`` with the arguments as JSON *text*, possibly cut off), the
legacy ``function_call``, and ``refusal``; ``choices[0].finish_reason`` says
how the round ended; ``usage`` counts ``prompt_tokens`` and ``completion_tokens``.

Documented ``finish_reason`` values (every one, from the SDK's ``Literal``):
``stop``, ``length``, ``tool_calls``, ``content_filter``, ``function_call``
(deprecated). A refusal is not a finish value: the model sets
``message.refusal`` and the round still ends with ``stop``; the adapter turns
that into ``refusal``, keeping ``stop`` as the raw value. The mapping is the
``openai-chat`` rows of :data:`agentloops.stops.STOP_VALUES`.

Quirks the adapter keeps rather than repairs (repairing them would hide what
the criteria must cope with):

- Tool calls that arrive with ``finish_reason: "stop"``. OpenAI itself does it
  when ``tool_choice`` forces a call (vllm-project/vllm#25054 quotes such a
  body; ENTERPILOT/GoModel#124 verified it against the API), and so did
  OpenAI-compatible servers such as SGLang (sgl-project/sglang#2877), OpenVINO
  model server (openvinotoolkit/model_server#3927) and mlx-vlm
  (Blaizzy/mlx-vlm#990). The normalised value stays ``stop``.
- ``finish_reason: "tool_calls"`` with no tool call at all. Agent loops that
  took the value for a tool round spun until their cap (mastra-ai/mastra#14187,
  Kilo-Org/kilocode#7773, open-webui/open-webui#23095). The normalised value
  stays ``tool_calls``; the correct loop takes the text as the answer and says
  the fields disagreed (with no text either, it aborts).
- Values outside the documented five. mlx-lm once sent ``tool_call``
  (ml-explore/mlx-lm#782); DeepSeek documents ``insufficient_system_resource``
  (docs.rs ``ds-api`` ``FinishReason``). Neither is OpenAI's, so both become
  ``unknown`` with the raw value kept, and the correct loop raises
  ``unknown_stop`` naming the value — before any tool call of the round runs.
- Tool-call entries without the ``function`` wrapper, ``{"id"?, "name",
  "arguments"}`` with the arguments as text or as an object: proxies that
  translate between providers' formats send them (acon96/home-llm#348 quotes
  ``{name: HassTurnOn, arguments: {...}}``), as do compatible servers whose
  entries lack ``function`` (langchain-ai/langchain#34432), and the Responses
  API's own ``function_call`` items have this shape (crewAIInc/crewAI#6657).
  They are read like the standard shape.
- A tool call without an ``id`` (some local servers omit it) gets
  ``call_<n>``; a call without ``type`` is read as a function call. A
  ``custom`` tool call's free-text ``input`` becomes ``{"input": …}``.

Sources:
    - openai/openai-python ``src/openai/types/chat/chat_completion.py``
      (``Choice.finish_reason``), ``chat_completion_message.py`` (``content``,
      ``refusal``, ``function_call``, ``tool_calls``),
      ``chat_completion_message_function_tool_call.py``,
      ``chat_completion_message_custom_tool_call.py``, ``completion_usage.py``;
      the same files in the installed ``openai`` 3.57.0.
    - OpenAI-compatible servers: the pull requests and issues named above.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
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
from agentloops.stops import normalise

FORMAT = "openai-chat"
FIELD = "choices[0].finish_reason"


def adapt(raw: object, where: str = "response") -> Reply:
    """Convert one non-streaming Chat Completions body into a :class:`~agentloops.providers.reply.Reply`.

    Args:
        raw: the JSON body exactly as the API returned it (extra keys are ignored).
        where: the path of ``raw`` in error messages (``responses[2]`` in a scenario file).

    Raises:
        RawBodyError: a field the adapter needs is missing or has the wrong type.
    """
    body = need_object(raw, where)
    choices = items(body, "choices", where, "a list of choices")
    if not choices:
        raise fail(f"{where}.choices", "at least one choice", choices)
    choice_at = f"{where}.choices[0]"
    choice = need_object(choices[0], choice_at)
    finish = string(choice, "finish_reason", choice_at)
    assert finish is not None
    message_at = f"{choice_at}.message"
    message = choice.get("message")
    if type(message) is not dict:  # a parsed body's object passes without a check
        message = need_object(field(choice, "message", choice_at, "the assistant message", types=OBJECT), message_at)
    content = string(message, "content", message_at, optional=True)
    refusal = string(message, "refusal", message_at, optional=True)
    reasoning = (string(message, "reasoning_content", message_at, optional=True)
                 or string(message, "reasoning", message_at, optional=True))

    calls = [_tool_call(call, f"{message_at}.tool_calls[{j}]", j)
             for j, call in enumerate(items(message, "tool_calls", message_at, "a list of tool calls", optional=True))]
    legacy = field(message, "function_call", message_at, "a function call object", types=OBJECT, optional=True)
    if legacy is not None:
        legacy_at = f"{message_at}.function_call"
        calls.append(tool_call(legacy_at, call_id="function_call", name=legacy.get("name"),
                               arguments=legacy.get("arguments")))

    reason = normalise(FORMAT, FIELD, finish)
    if refusal and reason == "stop":
        reason = "refusal"
    usage_body = body.get("usage")
    if usage_body is not None and type(usage_body) is not dict:  # a parsed body's object passes without a check
        usage_body = field(body, "usage", where, "a usage object", types=OBJECT, optional=True)
    usage_at = f"{where}.usage"
    usage = make_usage(count(usage_body, "prompt_tokens", usage_at), count(usage_body, "completion_tokens", usage_at))
    return build(where, content=content, calls=calls, finish=reason, raw=finish, usage=usage, reasoning=reasoning)


def assemble_stream(chunks: Sequence[Mapping[str, Any]], where: str) -> dict[str, Any]:
    """The whole body a stream of ``chat.completion.chunk`` objects adds up to.

    ``choices[0].delta`` pieces are joined: ``content``, ``refusal``,
    ``reasoning_content``/``reasoning``, the legacy ``function_call`` and each
    ``tool_calls[]`` entry by its ``index`` (the first piece names the call,
    the rest add ``function.arguments`` text). The last non-empty
    ``finish_reason`` wins (Ollama's ``/v1`` once sent ``""`` on every chunk,
    ollama/ollama#4357); ``usage`` may come in a last chunk whose ``choices``
    is empty. ``data: [DONE]`` is optional: the stop value is what ends a round.

    Raises:
        StreamBroken: no chunk carried a ``finish_reason``, a delta came after
            it, or a call's arguments came before its name.
        RawBodyError: a chunk is not shaped as documented.
    """
    message: dict[str, Any] = {"role": "assistant"}
    calls: dict[int, dict[str, Any]] = {}
    body: dict[str, Any] = {"object": "chat.completion"}
    finish: str | None = None
    for i, raw in enumerate(chunks):
        at = f"{where}[{i}]"
        chunk = need_object(raw, at)
        usage = field(chunk, "usage", at, "a usage object", types=OBJECT, optional=True)
        if usage is not None:
            body["usage"] = dict(usage)
        choices = items(chunk, "choices", at, "a list of choices", optional=True)
        if not choices:
            continue
        choice = need_object(choices[0], f"{at}.choices[0]")
        delta = field(choice, "delta", f"{at}.choices[0]", "a delta object", types=OBJECT, optional=True) or {}
        if finish is not None and _carries_output(delta):
            raise StreamBroken(N_("chunk {i} carries output after finish_reason {finish}"), i=i, finish=repr(finish))
        _add_delta(message, calls, delta, f"{at}.choices[0].delta", i)
        value = string(choice, "finish_reason", f"{at}.choices[0]", optional=True)
        if value:
            finish = value
    if calls:
        message["tool_calls"] = [calls[k] for k in sorted(calls)]
    body["choices"] = [{"index": 0, "message": message, "finish_reason": finish or "stop"}]
    if finish is None:
        raise StreamBroken(N_("the stream ended without a finish_reason"), body)
    return body


def _carries_output(delta: Mapping[str, Any]) -> bool:
    return any(delta.get(key) for key in ("content", "refusal", "tool_calls", "function_call", "reasoning_content"))


def _add_delta(message: dict[str, Any], calls: dict[int, dict[str, Any]], delta: Mapping[str, Any], at: str,
               n: int) -> None:
    for key in ("content", "refusal", "reasoning_content", "reasoning"):
        text = string(delta, key, at, optional=True)
        if text is not None:
            message[key] = (message.get(key) or "") + text
    legacy = field(delta, "function_call", at, "a function call piece", types=OBJECT, optional=True)
    if legacy is not None:
        held = message.setdefault("function_call", {"arguments": ""})
        held["name"] = legacy.get("name") or held.get("name")
        held["arguments"] += legacy.get("arguments") or ""
    for j, raw in enumerate(items(delta, "tool_calls", at, "a list of tool-call pieces", optional=True)):
        piece = need_object(raw, f"{at}.tool_calls[{j}]")
        index = field(piece, "index", f"{at}.tool_calls[{j}]", "the call's index", types=(int,))
        function: Mapping[str, Any] = piece["function"] if isinstance(piece.get("function"), Mapping) else {}
        if index not in calls:
            if not function.get("name"):
                raise StreamBroken(N_("chunk {n} continues tool call {index} before any chunk named it"), n=n,
                                   index=index)
            calls[index] = {"type": piece.get("type") or "function",
                            "function": {"name": function["name"], "arguments": ""}}
            if piece.get("id"):
                calls[index]["id"] = piece["id"]
        calls[index]["function"]["arguments"] += function.get("arguments") or ""


def stream_body(body: Mapping[str, Any], rng: random.Random | None = None) -> list[Any]:
    """``body`` as the chunks a server streams it in (text and arguments split at ``rng``'s points), then ``[DONE]``."""
    choice = body["choices"][0]
    message = choice["message"]
    head = {k: body[k] for k in ("id", "created", "model") if k in body}
    head["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", **({"content": ""} if message.get("content") == "" else {})})]
    for key in ("reasoning_content", "reasoning", "content", "refusal"):
        if message.get(key):
            out += [chunk({key: piece}) for piece in pieces(message[key], rng)]
    legacy = message.get("function_call")
    if legacy:
        out.append(chunk({"function_call": {"name": legacy["name"], "arguments": ""}}))
        out += [chunk({"function_call": {"arguments": p}}) for p in pieces(_text(legacy.get("arguments")), rng)]
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or call
        first: dict[str, Any] = {"index": index, "type": "function", "function": {"name": function["name"],
                                                                                  "arguments": ""}}
        if call.get("id"):
            first["id"] = call["id"]
        out.append(chunk({"tool_calls": [first]}))
        out += [chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]})
                for p in pieces(_text(function.get("arguments")), rng) if p]
    out.append(chunk({}, choice["finish_reason"]))
    if "usage" in body:
        out.append({**head, "choices": [], "usage": body["usage"]})
    return [*out, "[DONE]"]


def _text(arguments: object) -> str:
    if arguments is None:
        return "{}"  # what the adapter reads for a call without arguments
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _tool_call(raw: Any, where: str, index: int) -> Call:
    call = need_object(raw, where)
    call_id = string(call, "id", where, optional=True) or f"call_{index + 1}"
    kind = string(call, "type", where, optional=True) or "function"
    if kind == "custom":
        custom = need_object(call.get("custom"), f"{where}.custom")
        text = string(custom, "input", f"{where}.custom", optional=True) or ""
        return tool_call(f"{where}.custom", call_id=call_id, name=custom.get("name"),
                         arguments=json.dumps({"input": text}, ensure_ascii=False), arguments_field="input")
    function_at = f"{where}.function"
    if call.get("function") is None:
        if "name" in call:  # the flat shape of some proxies and compatible servers
            return tool_call(where, call_id=call_id, name=call.get("name"), arguments=call.get("arguments"))
        expected = "a function object, or name and arguments on the call itself"
        raise fail(function_at, expected, None) if "function" in call else fail(function_at, expected)
    function = need_object(call["function"], function_at)
    return tool_call(function_at, call_id=call_id, name=function.get("name"), arguments=function.get("arguments"))


__all__ = ["FIELD", "FORMAT", "adapt", "assemble_stream", "stream_body"]
