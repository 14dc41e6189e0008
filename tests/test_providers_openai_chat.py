"""OpenAI Chat Completions adapter: documented bodies, every finish value, the refusal field and the quirks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentloops import Abort, Continue, correct
from agentloops.providers import RawBodyError, adapt, stop_values
from agentloops.providers.examples import example_body, example_for

# The tool-call body of OpenAI's function-calling guide, as a real gpt-4o run returned it.
DOCUMENTED_TOOL_CALL: dict[str, Any] = {
    "id": "chatcmpl-BcQ8ko2nz9B7CRvV0uVbcowidHpQU", "object": "chat.completion", "created": 1748496646,
    "model": "gpt-4o-2024-08-06",
    "choices": [{"finish_reason": "tool_calls", "index": 0, "logprobs": None,
                 "message": {"content": None, "refusal": None, "role": "assistant", "annotations": [], "audio": None,
                             "function_call": None,
                             "tool_calls": [{"id": "call_qOfTGgDrItLORNfC6VwUbyLL",
                                             "function": {"arguments": "{\"location\":\"Shanghai\"}",
                                                          "name": "get_weather"}, "type": "function"}]}}],
    "service_tier": "default", "system_fingerprint": "fp_76544d79cb",
    "usage": {"completion_tokens": 14, "prompt_tokens": 91, "total_tokens": 105,
              "completion_tokens_details": {"reasoning_tokens": 0}, "prompt_tokens_details": {"cached_tokens": 0}},
}


def chat(message: dict[str, Any], finish: Any = "stop") -> dict[str, Any]:
    body = json.loads(json.dumps(DOCUMENTED_TOOL_CALL))
    body["choices"][0]["message"] = {"role": "assistant", **message}
    body["choices"][0]["finish_reason"] = finish
    return body


def test_documented_tool_call_keeps_raw_argument_text_and_usage():
    response = adapt("openai-chat", DOCUMENTED_TOOL_CALL)
    assert response.finish_reason == "tool_calls" and response.raw_finish_reason == "tool_calls"
    assert response.content is None
    (call,) = response.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_qOfTGgDrItLORNfC6VwUbyLL", "get_weather",
                                                    '{"location":"Shanghai"}')
    assert response.usage is not None and (response.usage.prompt_tokens, response.usage.completion_tokens) == (91, 14)


@pytest.mark.parametrize("stop", stop_values("openai-chat"), ids=lambda s: s.value)
def test_every_documented_value_normalises_as_declared(stop):
    response = adapt("openai-chat", example_for("openai-chat", stop))
    assert response.finish_reason == stop.finish_reason
    expected_raw = "stop" if stop.field.endswith("refusal") else stop.value
    assert response.raw_finish_reason == expected_raw


def test_refusal_field_becomes_refusal_with_stop_kept_raw():
    response = adapt("openai-chat", chat({"content": None, "refusal": "I'm sorry, I can't help with that."}))
    assert (response.content, response.finish_reason, response.raw_finish_reason) == (None, "refusal", "stop")
    decision = correct(response)
    assert isinstance(decision, Abort) and decision.code == "refusal"


def test_tool_calls_with_stop_stay_stop_and_the_correct_loop_goes_on():
    body = chat({"content": None, "tool_calls": DOCUMENTED_TOOL_CALL["choices"][0]["message"]["tool_calls"]}, "stop")
    response = adapt("openai-chat", body)
    assert response.finish_reason == "stop" and len(response.tool_calls) == 1
    assert isinstance(correct(response), Continue)


def test_empty_string_content_is_not_null():
    assert adapt("openai-chat", chat({"content": ""}, "tool_calls")).content == ""
    assert adapt("openai-chat", chat({}, "stop")).content is None


def test_legacy_function_call_becomes_one_tool_call():
    response = adapt("openai-chat", chat({"content": None, "function_call": {"name": "read_file",
                                                                             "arguments": '{"path": "a"}'}},
                                         "function_call"))
    assert response.finish_reason == "tool_calls" and response.raw_finish_reason == "function_call"
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [("function_call", "read_file",
                                                                           '{"path": "a"}')]


def test_custom_tool_call_input_is_wrapped_and_missing_ids_are_numbered():
    calls = [{"type": "custom", "id": "call_c", "custom": {"name": "grep", "input": "TODO"}},
             {"function": {"name": "read_file", "arguments": "{}"}}]
    response = adapt("openai-chat", chat({"content": None, "tool_calls": calls}, "tool_calls"))
    assert [(c.id, c.name, c.parsed_arguments) for c in response.tool_calls] == [
        ("call_c", "grep", {"input": "TODO"}), ("call_2", "read_file", {})]


def test_cut_off_arguments_are_kept_as_sent():
    calls = [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "no'}}]
    response = adapt("openai-chat", chat({"content": None, "tool_calls": calls}, "length"))
    assert response.tool_calls[0].arguments == '{"path": "no' and response.tool_calls[0].is_cut_off
    decision = correct(response)
    assert isinstance(decision, Abort) and decision.code == "truncated"


@pytest.mark.parametrize("value", ["tool_call", "insufficient_system_resource", "model_length", "error"])
def test_unknown_values_keep_the_raw_value(value):
    plain = adapt("openai-chat", example_body("openai-chat", value))
    assert (plain.finish_reason, plain.raw_finish_reason) == ("unknown", value)
    decision = correct(plain)
    assert isinstance(decision, Abort) and decision.code == "unknown_stop" and repr(value) in decision.reason
    calling = adapt("openai-chat", example_body("openai-chat", value, with_tool_call=True))
    decision = correct(calling)
    assert isinstance(decision, Abort) and decision.code == "unknown_stop" and "1 tool call(s) were not run" in decision.reason


def test_extra_keys_are_kept_out_of_the_way():
    body = chat({"content": "hi", "reasoning_content": "thinking…", "provider_specific": {"a": 1}})
    body["choices"][0]["matched_stop"] = 151645
    body["prompt_logprobs"] = None
    assert adapt("openai-chat", body).content == "hi"


@pytest.mark.parametrize("entry", [
    {"id": "call_9", "type": "function", "name": "get_weather", "arguments": '{"location":"Shanghai"}'},
    {"id": "call_9", "name": "get_weather", "arguments": {"location": "Shanghai"}},  # arguments as an object
    {"id": "call_9", "name": "get_weather", "arguments": '{"location":"Shanghai"}', "function": None},
])
def test_flat_tool_call_entries_without_the_function_wrapper_are_read(entry):
    response = adapt("openai-chat", chat({"content": None, "tool_calls": [entry]}, "tool_calls"))
    (call,) = response.tool_calls
    assert (call.id, call.name, call.parsed_arguments) == ("call_9", "get_weather", {"location": "Shanghai"})
    assert isinstance(correct(response), Continue)


def test_flat_entries_without_an_id_are_numbered_and_mix_with_standard_ones():
    standard = DOCUMENTED_TOOL_CALL["choices"][0]["message"]["tool_calls"][0]
    flat = {"name": "count_lines", "arguments": ""}
    (first, second) = adapt("openai-chat", chat({"content": None, "tool_calls": [standard, flat]})).tool_calls
    assert (first.name, second.id, second.name, second.parsed_arguments) == ("get_weather", "call_2", "count_lines", {})


@pytest.mark.parametrize(("entry", "message"), [
    ({"id": "call_9", "arguments": "{}"},
     r"tool_calls\[0\]\.function: missing; expected a function object, or name and arguments on the call itself$"),
    ({"id": "call_9", "function": None},
     r"tool_calls\[0\]\.function: expected a function object, or name and arguments on the call itself; got null$"),
    ({"id": "call_9", "name": "", "arguments": "{}"},
     r"tool_calls\[0\]\.name: expected a non-empty string \(the tool's name\); got the string ''$"),
    ({"id": "call_9", "name": "f", "arguments": 3},
     r"tool_calls\[0\]\.arguments: expected a JSON object or its text; got the number 3$"),
])
def test_an_entry_that_is_neither_shape_fails_in_one_line(entry, message):
    with pytest.raises(RawBodyError, match=message):
        adapt("openai-chat", chat({"content": None, "tool_calls": [entry]}, "tool_calls"))


MALFORMED = [
    (lambda b: b["choices"][0].pop("finish_reason"),
     r"^responses\[3\]\.choices\[0\]\.finish_reason: missing; expected a string$"),
    (lambda b: b["choices"][0].__setitem__("finish_reason", 5),
     r"^responses\[3\]\.choices\[0\]\.finish_reason: expected a string; got the number 5$"),
    (lambda b: b["choices"][0].__setitem__("finish_reason", None),
     r"choices\[0\]\.finish_reason: expected a string; got null$"),
    (lambda b: b.__setitem__("choices", []), r"^responses\[3\]\.choices: expected at least one choice; got a list$"),
    (lambda b: b.pop("choices"), r"^responses\[3\]\.choices: missing; expected a list of choices$"),
    (lambda b: b["choices"][0].__setitem__("message", "hi"),
     r"choices\[0\]\.message: expected the assistant message; got the string 'hi'$"),
    (lambda b: b["choices"][0]["message"].__setitem__("content", ["a"]),
     r"choices\[0\]\.message\.content: expected a string; got a list$"),
    (lambda b: b["choices"][0]["message"]["tool_calls"][0]["function"].pop("name"),
     r"message\.tool_calls\[0\]\.function\.name: expected a non-empty string \(the tool's name\); got null$"),
    (lambda b: b["choices"][0]["message"]["tool_calls"][0]["function"].__setitem__("arguments", 3),
     r"tool_calls\[0\]\.function\.arguments: expected a JSON object or its text; got the number 3$"),
    (lambda b: b["usage"].__setitem__("prompt_tokens", -2),
     r"usage\.prompt_tokens: expected a whole number of tokens \(0 or more\); got the number -2$"),
]


@pytest.mark.parametrize(("edit", "message"), MALFORMED)
def test_malformed_bodies_fail_in_one_line_naming_the_field(edit, message):
    body = json.loads(json.dumps(DOCUMENTED_TOOL_CALL))
    edit(body)
    with pytest.raises(RawBodyError, match=message):
        adapt("openai-chat", body, "responses[3]")


def test_a_body_that_is_not_an_object():
    with pytest.raises(RawBodyError, match=r"^response: expected a JSON object; got a list$"):
        adapt("openai-chat", [DOCUMENTED_TOOL_CALL])
