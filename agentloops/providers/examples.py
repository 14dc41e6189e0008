"""Minimal raw bodies for any documented stop value, in each provider's shape.

The stop-value table (:func:`agentloops.providers.stop_table`) says what each
value *should* normalise to; :func:`example_body` builds a body that carries
the value, so tests and the notebook can check that the adapter really does
it, and the widget can show a body for any row of the table.

The bodies are cut down from the providers' documented examples (see each
adapter's docstring for the sources): only the fields an adapter reads, plus
the identifying ones a reader expects (``object``, ``model``, ``type``).
"""

from __future__ import annotations

from typing import Any

from agentloops.providers._common import RawBodyError
from agentloops.stops import ABSENT, StopValue, stop_values

TEXT = "notes.txt has 42 lines."
ARGS = {"path": "notes.txt"}


def example_body(format: str, value: str, *, field: str | None = None, with_tool_call: bool = False) -> dict[str, Any]:
    """A minimal raw body of ``format`` that ends with stop value ``value``.

    Args:
        format: a provider format.
        value: a stop value as the provider sends it (``"MAX_TOKENS"``, ``"pause_turn"``…);
            undocumented values are allowed, to show what happens to them.
        field: which signal carries the value when a format has several
            (``"incomplete_details.reason"``, ``"promptFeedback.blockReason"``…); default: the main one.
        with_tool_call: add one well-formed call of ``read_file`` to the round.
    """
    text = None if with_tool_call else TEXT
    if format == "openai-chat":
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
        finish = value
        if field == "choices[0].message.refusal":
            message.update(content=None, refusal="I'm sorry, I can't help with that.")
            finish = "stop"
        if with_tool_call:
            message["tool_calls"] = [{"id": "call_1", "type": "function",
                                      "function": {"name": "read_file", "arguments": '{"path": "notes.txt"}'}}]
        return {"id": "chatcmpl-example", "object": "chat.completion", "created": 1748496646, "model": "gpt-4o",
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                "usage": {"prompt_tokens": 91, "completion_tokens": 14, "total_tokens": 105}}
    if format == "openai-responses":
        output: list[dict[str, Any]] = []
        status, details = value, None
        if field == "incomplete_details.reason":
            status, details = "incomplete", (None if value == ABSENT else {"reason": value})
        if field == "output[].content[].type":
            status = "completed"
            output.append({"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                           "content": [{"type": "refusal", "refusal": "I'm sorry, I can't help with that."}]})
        elif text is not None:
            output.append({"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                           "content": [{"type": "output_text", "text": text, "annotations": []}]})
        if with_tool_call:
            output.append({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file",
                           "arguments": '{"path": "notes.txt"}', "status": "completed"})
        body: dict[str, Any] = {"id": "resp_example", "object": "response", "created_at": 1741476777,
                                "status": status, "incomplete_details": details, "model": "gpt-4.1", "output": output,
                                "usage": {"input_tokens": 86, "output_tokens": 18, "total_tokens": 104}}
        if status == "failed":
            body["error"] = {"code": "server_error", "message": "The model failed to generate a response."}
        return body
    if format == "anthropic":
        content: list[dict[str, Any]] = [] if text is None else [{"type": "text", "text": text}]
        if with_tool_call:
            content.append({"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": dict(ARGS)})
        return {"id": "msg_example", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": content, "stop_reason": value, "stop_sequence": None,
                "usage": {"input_tokens": 384, "output_tokens": 52}}
    if format == "gemini":
        usage = {"promptTokenCount": 79, "candidatesTokenCount": 12, "totalTokenCount": 91}
        if field == "promptFeedback.blockReason":
            return {"promptFeedback": {"blockReason": value}, "usageMetadata": {"promptTokenCount": 9},
                    "modelVersion": "gemini-2.5-flash"}
        parts: list[dict[str, Any]] = [] if text is None else [{"text": text}]
        if with_tool_call:
            parts.append({"functionCall": {"name": "read_file", "args": dict(ARGS)}})
        return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": value, "index": 0}],
                "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"}
    if format == "ollama":
        chat: dict[str, Any] = {"role": "assistant", "content": text or ""}
        if with_tool_call:
            chat["tool_calls"] = [{"function": {"name": "read_file", "arguments": dict(ARGS)}}]
        body = {"model": "llama3.2", "created_at": "2024-07-22T20:33:28.123648Z", "message": chat, "done": True,
                "prompt_eval_count": 122, "eval_count": 33}
        if value != ABSENT:
            body["done_reason"] = value
        return body
    raise RawBodyError(f"no example bodies for format {format!r}")


def example_for(format: str, stop: StopValue, *, with_tool_call: bool = False) -> dict[str, Any]:
    """:func:`example_body` for one row of a format's documented stop values."""
    return example_body(format, stop.value, field=stop.field, with_tool_call=with_tool_call)


def examples(format: str, *, with_tool_call: bool = False) -> list[tuple[StopValue, dict[str, Any]]]:
    """One example body per documented stop value of ``format``."""
    return [(stop, example_for(format, stop, with_tool_call=with_tool_call)) for stop in stop_values(format)]


__all__ = ["example_body", "example_for", "examples"]
