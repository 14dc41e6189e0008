"""OpenAI Responses adapter: status and incomplete_details, function_call items, refusal parts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentloops import Abort, Continue, Finish, correct
from agentloops.providers import RawBodyError, adapt, stop_values
from agentloops.providers.examples import example_body, example_for

# A function-calling response as OpenAI's API reference shows it (ids and usage from the documented example).
DOCUMENTED: dict[str, Any] = {
    "id": "resp_67ccd3a9da748190baa7f1570fe91ac604becb25c45c1d41", "object": "response", "created_at": 1741476777,
    "status": "completed", "error": None, "incomplete_details": None, "model": "gpt-4.1-2025-04-14",
    "output": [{"type": "function_call", "id": "fc_67ccd3acc8d48190a77525dc6de64b4104becb25c45c1d41",
                "call_id": "call_12345xyz", "name": "get_weather",
                "arguments": "{\"location\":\"Paris, France\"}", "status": "completed"}],
    "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
    "usage": {"input_tokens": 291, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 23,
              "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 314},
}


def copy() -> dict[str, Any]:
    return json.loads(json.dumps(DOCUMENTED))


def test_function_calls_arrive_with_status_completed_and_normalise_to_stop():
    response = adapt("openai-responses", DOCUMENTED)
    assert (response.finish_reason, response.raw_finish_reason, response.content) == ("stop", "completed", None)
    (call,) = response.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_12345xyz", "get_weather", '{"location":"Paris, France"}')
    assert response.usage is not None and (response.usage.prompt_tokens, response.usage.completion_tokens) == (291, 23)
    assert isinstance(correct(response), Continue)


@pytest.mark.parametrize("stop", stop_values("openai-responses"), ids=lambda s: f"{s.field}={s.value}")
def test_every_documented_value_normalises_as_declared(stop):
    response = adapt("openai-responses", example_for("openai-responses", stop))
    assert response.finish_reason == stop.finish_reason
    if stop.field == "incomplete_details.reason":
        assert response.raw_finish_reason == ("incomplete" if stop.value == "(absent)" else f"incomplete:{stop.value}")
    elif stop.field == "status":
        assert response.raw_finish_reason.split(":")[0] == stop.value


def test_output_text_parts_are_joined_and_reasoning_items_skipped():
    body = copy()
    body["output"] = [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
         "content": [{"type": "output_text", "text": "notes.txt has ", "annotations": []},
                     {"type": "output_text", "text": "42 lines.", "annotations": []}]},
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    ]
    response = adapt("openai-responses", body)
    assert (response.content, response.tool_calls) == ("notes.txt has 42 lines.", ())
    assert isinstance(correct(response), Finish)


def test_text_and_function_call_in_one_response():
    body = copy()
    body["output"].insert(0, {"type": "message", "id": "msg_0", "status": "completed", "role": "assistant",
                              "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}]})
    response = adapt("openai-responses", body)
    assert response.content == "Let me check." and len(response.tool_calls) == 1


def test_refusal_part_becomes_refusal():
    body = copy()
    body["output"] = [{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                       "content": [{"type": "refusal", "refusal": "I can't help with that."}]}]
    response = adapt("openai-responses", body)
    assert (response.finish_reason, response.raw_finish_reason, response.content) == ("refusal", "completed", None)


def test_incomplete_max_output_tokens_is_a_truncation_even_with_a_call():
    body = example_body("openai-responses", "max_output_tokens", field="incomplete_details.reason",
                        with_tool_call=True)
    decision = correct(adapt("openai-responses", body))
    assert isinstance(decision, Abort) and decision.code == "truncated"


def test_failed_keeps_the_error_code_and_is_never_an_answer():
    body = example_body("openai-responses", "failed")
    response = adapt("openai-responses", body)
    assert (response.finish_reason, response.raw_finish_reason) == ("provider_error", "failed:server_error")
    decision = correct(response)
    assert isinstance(decision, Abort) and decision.code == "provider_error" and "failed:server_error" in decision.reason


def test_incomplete_without_a_reason_is_a_provider_error_and_unknown_reasons_are_unknown():
    body = copy()
    body.update(status="incomplete", incomplete_details=None, output=[])
    response = adapt("openai-responses", body)
    assert (response.finish_reason, response.raw_finish_reason) == ("provider_error", "incomplete")
    body["incomplete_details"] = {"reason": "max_turns"}
    response = adapt("openai-responses", body)
    assert (response.finish_reason, response.raw_finish_reason) == ("unknown", "incomplete:max_turns")


def test_custom_tool_call_input_is_wrapped():
    body = copy()
    body["output"] = [{"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_9", "name": "grep",
                       "input": "TODO"}]
    (call,) = adapt("openai-responses", body).tool_calls
    assert (call.id, call.parsed_arguments) == ("call_9", {"input": "TODO"})


MALFORMED = [
    (lambda b: b.pop("status"), r"^responses\[1\]\.status: missing; expected a string$"),
    (lambda b: b.__setitem__("output", {"a": 1}),
     r"^responses\[1\]\.output: expected a list of output items; got an object$"),
    (lambda b: b["output"][0].pop("type"), r"^responses\[1\]\.output\[0\]\.type: missing; expected a string$"),
    (lambda b: b["output"][0].pop("call_id"), r"^responses\[1\]\.output\[0\]\.call_id: missing; expected a string$"),
    (lambda b: b["output"][0].__setitem__("arguments", {"location": "Paris"}),
     r"^responses\[1\]\.output\[0\]\.arguments: expected a string; got an object$"),
    (lambda b: b.__setitem__("incomplete_details", "long"),
     None),  # ignored while the status is completed
]


@pytest.mark.parametrize(("edit", "message"), MALFORMED)
def test_malformed_bodies_fail_in_one_line_naming_the_field(edit, message):
    body = copy()
    edit(body)
    if message is None:
        assert adapt("openai-responses", body, "responses[1]").finish_reason == "stop"
        return
    with pytest.raises(RawBodyError, match=message):
        adapt("openai-responses", body, "responses[1]")


def test_incomplete_details_of_the_wrong_type():
    body = copy()
    body.update(status="incomplete", incomplete_details="long")
    message = r"^response\.incomplete_details: expected an object with the reason; got the string 'long'$"
    with pytest.raises(RawBodyError, match=message):
        adapt("openai-responses", body)
