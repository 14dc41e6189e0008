"""Ollama /api/chat adapter: tool calls with done_reason stop, arguments as objects, load and unload."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentloops import Abort, Continue, Finish, correct
from agentloops.providers import RawBodyError, adapt, stop_values
from agentloops.providers.examples import example_for

# "Chat request (with tools)" response of ollama/ollama docs/api.md.
DOCUMENTED: dict[str, Any] = {
    "model": "llama3.2", "created_at": "2024-07-22T20:33:28.123648Z",
    "message": {"role": "assistant", "content": "",
                "tool_calls": [{"function": {"name": "get_current_weather",
                                             "arguments": {"format": "celsius", "location": "Paris, FR"}}}]},
    "done_reason": "stop", "done": True, "total_duration": 885095291, "load_duration": 3753500,
    "prompt_eval_count": 122, "prompt_eval_duration": 328493000, "eval_count": 33, "eval_duration": 552222000,
}


def copy() -> dict[str, Any]:
    return json.loads(json.dumps(DOCUMENTED))


def test_documented_tool_call_round_ends_with_stop():
    response = adapt("ollama", DOCUMENTED)
    assert (response.content, response.finish_reason, response.raw_finish_reason) == ("", "stop", "stop")
    (call,) = response.tool_calls
    assert call.id == "call_1" and call.name == "get_current_weather"
    assert call.parsed_arguments == {"format": "celsius", "location": "Paris, FR"}
    assert response.usage is not None and (response.usage.prompt_tokens, response.usage.completion_tokens) == (122, 33)
    assert isinstance(correct(response), Continue)


@pytest.mark.parametrize("stop", stop_values("ollama"), ids=lambda s: s.value)
def test_every_documented_value_normalises_as_declared(stop):
    response = adapt("ollama", example_for("ollama", stop))
    assert response.finish_reason == stop.finish_reason
    assert response.raw_finish_reason == (None if stop.value == "(absent)" else stop.value)


def test_load_is_not_an_answer():
    body = {"model": "llama3.2", "created_at": "2024-09-12T21:17:29.110811Z",
            "message": {"role": "assistant", "content": ""}, "done_reason": "load", "done": True}
    decision = correct(adapt("ollama", body))
    assert isinstance(decision, Abort) and decision.code == "provider_error" and "'load'" in decision.reason


def test_older_servers_without_done_reason_finish():
    body = copy()
    body.pop("done_reason")
    body["message"] = {"role": "assistant", "content": "Hello! How are you today?"}
    response = adapt("ollama", body)
    assert (response.finish_reason, response.raw_finish_reason) == ("stop", None)
    assert isinstance(correct(response), Finish)


def test_an_empty_done_reason_is_unknown_and_shown():
    body = copy()
    body["done_reason"] = ""
    response = adapt("ollama", body)
    assert (response.finish_reason, response.raw_finish_reason) == ("unknown", "''")


def test_ids_and_string_arguments_from_newer_servers_are_kept():
    body = copy()
    body["message"]["tool_calls"] = [{"id": "call_x1", "function": {"index": 0, "name": "f", "arguments": '{"a": 1}'}}]
    (call,) = adapt("ollama", body).tool_calls
    assert (call.id, call.arguments) == ("call_x1", '{"a": 1}')


def test_thinking_is_not_content():
    body = copy()
    body["message"] = {"role": "assistant", "content": "", "thinking": "The user wants…"}
    body["done_reason"] = "length"
    response = adapt("ollama", body)
    assert response.content == "" and response.finish_reason == "length"


MALFORMED = [
    (lambda b: b.__setitem__("done", False),
     r"^responses\[0\]\.done: expected true \(a non-streaming body is finished\); got a boolean$"),
    (lambda b: b.pop("done"), r"^responses\[0\]\.done: missing; expected true"),
    (lambda b: b.pop("message"), r"^responses\[0\]\.message: missing; expected the assistant message$"),
    (lambda b: b["message"]["tool_calls"][0].pop("function"),
     r"^responses\[0\]\.message\.tool_calls\[0\]\.function: expected a JSON object; got null$"),
    (lambda b: b["message"]["tool_calls"][0]["function"].__setitem__("arguments", [1]),
     r"tool_calls\[0\]\.function\.arguments: expected an arguments object or its JSON text; got a list$"),
    (lambda b: b.__setitem__("done_reason", 1), r"^responses\[0\]\.done_reason: expected a string; got the number 1$"),
]


@pytest.mark.parametrize(("edit", "message"), MALFORMED)
def test_malformed_bodies_fail_in_one_line_naming_the_field(edit, message):
    body = copy()
    edit(body)
    with pytest.raises(RawBodyError, match=message):
        adapt("ollama", body, "responses[0]")
