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
that into ``refusal``, keeping ``stop`` as the raw value.

Quirks the adapter keeps rather than repairs (repairing them would hide what
the criteria must cope with):

- Tool calls that arrive with ``finish_reason: "stop"``. OpenAI itself does it
  when ``tool_choice`` forces a call (vllm-project/vllm#25054 quotes such a
  body; ENTERPILOT/GoModel#124 verified it against the API), and so did
  OpenAI-compatible servers such as SGLang (sgl-project/sglang#2877), OpenVINO
  model server (openvinotoolkit/model_server#3927) and mlx-vlm
  (Blaizzy/mlx-vlm#990). The normalised value stays ``stop``.
- Values outside the documented five. mlx-lm once sent ``tool_call``
  (ml-explore/mlx-lm#782); DeepSeek documents ``insufficient_system_resource``
  (docs.rs ``ds-api`` ``FinishReason``). Both become ``unknown`` with the raw
  value kept: with well-formed tool calls the correct loop goes on, without
  them it raises ``unknown_stop`` naming the value.
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
    StopValue,
    build,
    count,
    fail,
    field,
    items,
    make_usage,
    need_object,
    normalise,
    string,
    tool_call,
)
from agentloops.response import Response, ToolCall

FORMAT = "openai-chat"
FIELD = "choices[0].finish_reason"

STOP_VALUES: tuple[StopValue, ...] = (
    StopValue(FIELD, "stop", "stop", "a natural stop point or a provided stop sequence"),
    StopValue(FIELD, "length", "length", "the max_tokens of the request (or the model's limit) was reached"),
    StopValue(FIELD, "tool_calls", "tool_calls", "the model called a tool"),
    StopValue(FIELD, "content_filter", "content_filter", "content was omitted by a content filter flag"),
    StopValue(FIELD, "function_call", "tool_calls", "deprecated: the model called a function (message.function_call)"),
    StopValue("choices[0].message.refusal", "(non-null text)", "refusal",
              "the model refused; finish_reason is still stop"),
)
"""Every documented stop signal of this format."""

_NORMALISE = {v.value: v.finish_reason for v in STOP_VALUES if v.field == FIELD}


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

    reason = normalise(finish, _NORMALISE)
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
    function = need_object(call.get("function"), f"{where}.function")
    return tool_call(f"{where}.function", call_id=call_id, name=function.get("name"),
                     arguments=function.get("arguments"))


__all__ = ["FIELD", "FORMAT", "STOP_VALUES", "adapt"]
