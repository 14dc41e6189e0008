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
from collections.abc import Mapping
from typing import Any

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
from agentloops.stops import normalise

FORMAT = "openai-chat"
FIELD = "choices[0].finish_reason"


def adapt(raw: object, where: str = "response") -> Response:
    """Convert one non-streaming Chat Completions body into a :class:`Response`.

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
    message = need_object(field(choice, "message", choice_at, "the assistant message", types=(Mapping,)), message_at)
    content = string(message, "content", message_at, optional=True)
    refusal = string(message, "refusal", message_at, optional=True)

    calls = [_tool_call(call, f"{message_at}.tool_calls[{j}]", j)
             for j, call in enumerate(items(message, "tool_calls", message_at, "a list of tool calls", optional=True))]
    legacy = field(message, "function_call", message_at, "a function call object", types=(Mapping,), optional=True)
    if legacy is not None:
        legacy_at = f"{message_at}.function_call"
        calls.append(tool_call(legacy_at, call_id="function_call", name=legacy.get("name"),
                               arguments=legacy.get("arguments")))

    reason = normalise(FORMAT, FIELD, finish)
    if refusal and reason == "stop":
        reason = "refusal"
    usage_body = field(body, "usage", where, "a usage object", types=(Mapping,), optional=True)
    usage = make_usage(count(usage_body, "prompt_tokens", f"{where}.usage"),
                       count(usage_body, "completion_tokens", f"{where}.usage"))
    return build(where, content=content, calls=calls, finish=reason, raw=finish, usage=usage)


def _tool_call(raw: Any, where: str, index: int) -> ToolCall:
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


__all__ = ["FIELD", "FORMAT", "adapt"]
