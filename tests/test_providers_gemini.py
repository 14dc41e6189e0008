"""Gemini adapter: functionCall parts with STOP, every finishReason, prompt blocks with no candidate."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentloops import Abort, Continue, correct, run_loop
from agentloops.providers import RawBodyError, adapt, stop_values
from agentloops.providers.examples import example_body, example_for
from agentloops.stubs import ScriptedModel

# A function-calling response as Gemini's function-calling guide shows it.
DOCUMENTED: dict[str, Any] = {
    "candidates": [{
        "content": {"parts": [{"functionCall": {"name": "set_light_values",
                                                "args": {"brightness": 25, "color_temp": "warm"}}}],
                    "role": "model"},
        "finishReason": "STOP", "index": 0,
    }],
    "usageMetadata": {"promptTokenCount": 89, "candidatesTokenCount": 24, "thoughtsTokenCount": 30,
                      "totalTokenCount": 143},
    "modelVersion": "gemini-2.5-flash",
}


def copy() -> dict[str, Any]:
    return json.loads(json.dumps(DOCUMENTED))


def test_function_call_arrives_with_stop():
    response = adapt("gemini", DOCUMENTED)
    assert (response.finish_reason, response.raw_finish_reason, response.content) == ("stop", "STOP", None)
    (call,) = response.tool_calls
    assert call.name == "set_light_values" and call.id == "gemini_call_1"
    assert call.parsed_arguments == {"brightness": 25, "color_temp": "warm"}
    assert response.usage is not None and (response.usage.prompt_tokens, response.usage.completion_tokens) == (89, 54)
    assert isinstance(correct(response), Continue)


def test_the_correct_loop_runs_tools_on_stop_with_function_call_rounds():
    tools = {"read_file": "(42 lines)", "count_lines": "42"}
    rounds = [adapt("gemini", example_body("gemini", "STOP", with_tool_call=True)),
              adapt("gemini", example_body("gemini", "STOP"))]
    record = run_loop(ScriptedModel(rounds), tools, criterion="correct")
    assert record.tools_executed == ("read_file",) and record.outcome == "answer" and record.steps == 2
    naive = run_loop(ScriptedModel(rounds), tools, criterion="finish_reason")
    assert naive.steps == 1 and naive.outcome == "premature_answer"


@pytest.mark.parametrize("stop", stop_values("gemini"), ids=lambda s: f"{s.field.split('.')[0]}={s.value}")
def test_every_documented_value_normalises_as_declared(stop):
    response = adapt("gemini", example_for("gemini", stop))
    assert response.finish_reason == stop.finish_reason
    prefix = "blockReason:" if stop.field.startswith("promptFeedback") else ""
    assert response.raw_finish_reason == prefix + stop.value


def test_enum_names_are_read_case_insensitively_but_kept_as_sent():
    body = copy()
    body["candidates"][0]["finishReason"] = "max_tokens"
    response = adapt("gemini", body)
    assert (response.finish_reason, response.raw_finish_reason) == ("length", "max_tokens")


def test_prompt_block_without_candidates_is_a_filter():
    body = {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 9}}
    response = adapt("gemini", body)
    assert (response.finish_reason, response.raw_finish_reason) == ("content_filter", "blockReason:PROHIBITED_CONTENT")
    decision = correct(response)
    assert isinstance(decision, Abort) and decision.code == "content_filter"


def test_malformed_function_call_with_no_content():
    body = {"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL", "index": 0}],
            "usageMetadata": {"promptTokenCount": 2595, "totalTokenCount": 2595}}
    response = adapt("gemini", body)
    assert (response.content, response.tool_calls, response.finish_reason) == (None, (), "malformed_tool_call")
    decision = correct(response)
    assert isinstance(decision, Abort) and decision.code == "malformed_tool_call"
    assert "MALFORMED_FUNCTION_CALL" in decision.reason


def test_thought_parts_are_skipped_and_text_parts_joined():
    body = copy()
    body["candidates"][0]["content"]["parts"] = [{"text": "thinking…", "thought": True}, {"text": "Lights "},
                                                 {"text": "set."}]
    assert adapt("gemini", body).content == "Lights set."


def test_a_call_id_from_the_api_is_kept():
    body = copy()
    body["candidates"][0]["content"]["parts"][0]["functionCall"]["id"] = "fc-7"
    assert adapt("gemini", body).tool_calls[0].id == "fc-7"


def test_other_is_a_provider_error_naming_the_value_even_with_a_function_call():
    for with_call in (False, True):
        decision = correct(adapt("gemini", example_body("gemini", "OTHER", with_tool_call=with_call)))
        assert isinstance(decision, Abort) and decision.code == "provider_error" and "'OTHER'" in decision.reason


MALFORMED = [
    (lambda b: b["candidates"][0].pop("finishReason"),
     r"^responses\[2\]\.candidates\[0\]\.finishReason: missing; expected a string$"),
    (lambda b: b.pop("candidates"),
     r"^responses\[2\]\.candidates: missing; expected at least one candidate, or promptFeedback\.blockReason"),
    (lambda b: b["candidates"][0]["content"].__setitem__("parts", "x"),
     r"^responses\[2\]\.candidates\[0\]\.content\.parts: expected a list of parts; got the string 'x'$"),
    (lambda b: b["candidates"][0]["content"]["parts"][0]["functionCall"].__setitem__("args", "{}"),
     r"parts\[0\]\.functionCall\.args: expected an args object; got the string '\{\}'$"),
    (lambda b: b["candidates"][0]["content"]["parts"][0]["functionCall"].pop("name"),
     r"parts\[0\]\.functionCall\.name: expected a non-empty string \(the tool's name\); got null$"),
    (lambda b: b["usageMetadata"].__setitem__("promptTokenCount", "89"),
     r"^responses\[2\]\.usageMetadata\.promptTokenCount: expected a whole number of tokens; got the string '89'$"),
]


@pytest.mark.parametrize(("edit", "message"), MALFORMED)
def test_malformed_bodies_fail_in_one_line_naming_the_field(edit, message):
    body = copy()
    edit(body)
    with pytest.raises(RawBodyError, match=message):
        adapt("gemini", body, "responses[2]")
