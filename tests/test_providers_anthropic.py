"""Anthropic Messages adapter: content blocks, every stop_reason, pause_turn and the token limits."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentloops import Abort, Continue, Finish, correct
from agentloops.providers import RawBodyError, adapt, stop_values
from agentloops.providers.examples import example_for

# The tool-use response of Anthropic's tool-use guide: a text block and a tool_use block in one turn.
DOCUMENTED: dict[str, Any] = {
    "id": "msg_01Aq9w938a90dw8q", "model": "claude-sonnet-4-5", "stop_reason": "tool_use", "stop_sequence": None,
    "role": "assistant", "type": "message",
    "content": [
        {"type": "text", "text": "I'll check the current weather in San Francisco for you."},
        {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
         "input": {"location": "San Francisco, CA", "unit": "celsius"}},
    ],
    "usage": {"input_tokens": 384, "cache_creation_input_tokens": 10, "cache_read_input_tokens": 100,
              "output_tokens": 52},
}


def copy() -> dict[str, Any]:
    return json.loads(json.dumps(DOCUMENTED))


def test_text_and_tool_use_in_one_turn():
    response = adapt("anthropic", DOCUMENTED)
    assert response.content == "I'll check the current weather in San Francisco for you."
    (call,) = response.tool_calls
    assert (call.id, call.name) == ("toolu_01A09q90qw90lq917835lq9", "get_weather")
    assert json.loads(call.arguments) == {"location": "San Francisco, CA", "unit": "celsius"}
    assert (response.finish_reason, response.raw_finish_reason) == ("tool_calls", "tool_use")
    assert response.usage is not None and response.usage.prompt_tokens == 384 + 10 + 100
    assert response.usage.completion_tokens == 52
    assert isinstance(correct(response), Continue)


@pytest.mark.parametrize("stop", stop_values("anthropic"), ids=lambda s: s.value)
def test_every_documented_value_normalises_as_declared(stop):
    response = adapt("anthropic", example_for("anthropic", stop))
    assert (response.finish_reason, response.raw_finish_reason) == (stop.finish_reason, stop.value)


def test_pause_turn_without_tools_asks_to_go_on():
    body = copy()
    body["stop_reason"] = "pause_turn"
    body["content"] = [
        {"type": "text", "text": "Searching."},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
    ]
    response = adapt("anthropic", body)
    assert response.tool_calls == () and response.finish_reason == "pause"
    assert isinstance(correct(response), Continue)


@pytest.mark.parametrize("value", ["max_tokens", "model_context_window_exceeded"])
def test_token_limits_are_truncations_even_inside_a_tool_use_block(value):
    body = copy()
    body["stop_reason"] = value
    body["content"][1]["input"] = {}
    decision = correct(adapt("anthropic", body))
    assert isinstance(decision, Abort) and decision.code == "truncated"


def test_thinking_blocks_are_skipped_and_an_empty_turn_has_null_content():
    body = copy()
    body.update(stop_reason="max_tokens", content=[{"type": "thinking", "thinking": "…", "signature": "sig"}])
    response = adapt("anthropic", body)
    assert (response.content, response.tool_calls) == (None, ())


def test_end_turn_and_stop_sequence_finish():
    for value in ("end_turn", "stop_sequence"):
        body = copy()
        body.update(stop_reason=value, content=[{"type": "text", "text": "done"}])
        assert isinstance(correct(adapt("anthropic", body)), Finish)


def test_an_unknown_stop_reason_is_kept():
    body = copy()
    body["stop_reason"] = "tool_budget_exhausted"
    response = adapt("anthropic", body)
    assert (response.finish_reason, response.raw_finish_reason) == ("unknown", "tool_budget_exhausted")
    decision = correct(response)  # its tool_use block is well formed, and still not run
    assert isinstance(decision, Abort) and decision.code == "unknown_stop" and "were not run" in decision.reason


MALFORMED = [
    (lambda b: b.__setitem__("stop_reason", None),
     r"^responses\[0\]\.stop_reason: expected a string; got null$"),
    (lambda b: b.pop("stop_reason"), r"^responses\[0\]\.stop_reason: missing; expected a string$"),
    (lambda b: b.__setitem__("stop_reason", ""),
     r"^responses\[0\]\.stop_reason: expected a stop_reason \(never empty in a non-streaming body\); "
     r"got the string ''$"),
    (lambda b: b.pop("content"), r"^responses\[0\]\.content: missing; expected a list of content blocks$"),
    (lambda b: b["content"][1].__setitem__("input", '{"location": "SF"}'),
     r"^responses\[0\]\.content\[1\]\.input: expected the tool input object; got the string"),
    (lambda b: b["content"][1].pop("id"),
     r"^responses\[0\]\.content\[1\]\.id: expected a non-empty string; got null$"),
    (lambda b: b["content"][0].__setitem__("text", 3),
     r"^responses\[0\]\.content\[0\]\.text: expected a string; got the number 3$"),
]


@pytest.mark.parametrize(("edit", "message"), MALFORMED)
def test_malformed_bodies_fail_in_one_line_naming_the_field(edit, message):
    body = copy()
    edit(body)
    with pytest.raises(RawBodyError, match=message):
        adapt("anthropic", body, "responses[0]")
