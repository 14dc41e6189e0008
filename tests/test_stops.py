"""The stop vocabulary: one table for every provider, and an abnormal end never runs a tool."""

from __future__ import annotations

from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentloops import stops
from agentloops.criteria import Abort, Continue, Finish, correct
from agentloops.errors import ErrorCode
from agentloops.loop import run_loop
from agentloops.providers import STOP_TABLE_HEADERS, render_stop_table, stop_table
from agentloops.response import Response
from agentloops.run_errors import ERROR_CLASSES, ProviderError, RunError
from agentloops.stubs import ScriptedModel

FINISHED, TOOLS, AGAIN, NO_ROUND = "finished", "go on with tools", "go on (call again, no tools)", "(no round to carry a call)"
DISAGREE = "finished (the fields disagree)"


def bad(code: str) -> str:
    return f"abnormal ({code})"


TRUNC, FILTER, REFUSAL, MALFORMED, PROVIDER, UNKNOWN = (
    bad("truncated"), bad("content_filter"), bad("refusal"), bad("malformed_tool_call"), bad("provider_error"),
    bad("unknown_stop"))
CHAT, RESP, ANTH, GEM, OLL = "openai-chat", "openai-responses", "anthropic", "gemini", "ollama"
FINISH, STATUS, REASON = "choices[0].finish_reason", "status", "incomplete_details.reason"
CAND, BLOCK = "candidates[0].finishReason", "promptFeedback.blockReason"

# Every documented stop value: (format, field, value, normalised, kind, no tool calls, with a well-formed tool call).
EXPECTED = [
    (CHAT, FINISH, "stop", "stop", "finished", FINISHED, TOOLS),
    (CHAT, FINISH, "length", "length", "abnormal", TRUNC, TRUNC),
    (CHAT, FINISH, "tool_calls", "tool_calls", "go_on", DISAGREE, TOOLS),
    (CHAT, FINISH, "content_filter", "content_filter", "abnormal", FILTER, FILTER),
    (CHAT, FINISH, "function_call", "tool_calls", "go_on", DISAGREE, TOOLS),
    (CHAT, FINISH, "tool", "tool_calls", "go_on", DISAGREE, TOOLS),  # llama.cpp's documented tool-call value
    (CHAT, "choices[0].message.refusal", "(non-null text)", "refusal", "abnormal", REFUSAL, REFUSAL),
    (RESP, STATUS, "completed", "stop", "finished", FINISHED, TOOLS),
    (RESP, STATUS, "failed", "provider_error", "abnormal", PROVIDER, PROVIDER),
    (RESP, STATUS, "cancelled", "provider_error", "abnormal", PROVIDER, PROVIDER),
    (RESP, STATUS, "in_progress", "provider_error", "abnormal", PROVIDER, PROVIDER),
    (RESP, STATUS, "queued", "provider_error", "abnormal", PROVIDER, PROVIDER),
    (RESP, REASON, "max_output_tokens", "length", "abnormal", TRUNC, TRUNC),
    (RESP, REASON, "content_filter", "content_filter", "abnormal", FILTER, FILTER),
    (RESP, REASON, "max_messages", "length", "abnormal", TRUNC, TRUNC),
    (RESP, REASON, "steered", "pause", "go_on", AGAIN, TOOLS),
    (RESP, REASON, "(absent)", "provider_error", "abnormal", PROVIDER, PROVIDER),
    (RESP, "output[].content[].type", "refusal", "refusal", "abnormal", REFUSAL, REFUSAL),
    (ANTH, "stop_reason", "end_turn", "stop", "finished", FINISHED, TOOLS),
    (ANTH, "stop_reason", "stop_sequence", "stop", "finished", FINISHED, TOOLS),
    (ANTH, "stop_reason", "tool_use", "tool_calls", "go_on", DISAGREE, TOOLS),
    (ANTH, "stop_reason", "max_tokens", "length", "abnormal", TRUNC, TRUNC),
    (ANTH, "stop_reason", "model_context_window_exceeded", "length", "abnormal", TRUNC, TRUNC),
    (ANTH, "stop_reason", "pause_turn", "pause", "go_on", AGAIN, TOOLS),
    (ANTH, "stop_reason", "refusal", "refusal", "abnormal", REFUSAL, REFUSAL),
    (ANTH, "stop_reason", "compaction", "pause", "go_on", AGAIN, TOOLS),
    (GEM, CAND, "STOP", "stop", "finished", FINISHED, TOOLS),
    (GEM, CAND, "MAX_TOKENS", "length", "abnormal", TRUNC, TRUNC),
    *[(GEM, CAND, value, "content_filter", "abnormal", FILTER, FILTER)
      for value in ("SAFETY", "RECITATION", "LANGUAGE", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
                    "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR")],
    (GEM, CAND, "MALFORMED_FUNCTION_CALL", "malformed_tool_call", "abnormal", MALFORMED, MALFORMED),
    (GEM, CAND, "UNEXPECTED_TOOL_CALL", "malformed_tool_call", "abnormal", MALFORMED, MALFORMED),
    *[(GEM, CAND, value, "provider_error", "abnormal", PROVIDER, PROVIDER)
      for value in ("TOO_MANY_TOOL_CALLS", "MALFORMED_RESPONSE", "MISSING_THOUGHT_SIGNATURE", "NO_IMAGE", "IMAGE_OTHER",
                    "OTHER")],
    (GEM, CAND, "FINISH_REASON_UNSPECIFIED", "unknown", "abnormal", UNKNOWN, UNKNOWN),
    *[(GEM, BLOCK, value, "content_filter", "abnormal", FILTER, NO_ROUND)
      for value in ("SAFETY", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT", "IMAGE_SAFETY", "MODEL_ARMOR", "JAILBREAK",
                    "BLOCKED_REASON_UNSPECIFIED")],
    (OLL, "done_reason", "stop", "stop", "finished", FINISHED, TOOLS),
    (OLL, "done_reason", "length", "length", "abnormal", TRUNC, TRUNC),
    (OLL, "done_reason", "load", "provider_error", "abnormal", PROVIDER, PROVIDER),
    (OLL, "done_reason", "unload", "provider_error", "abnormal", PROVIDER, PROVIDER),
    (OLL, "done_reason", "(absent)", "stop", "finished", FINISHED, TOOLS),
]


def test_the_computed_stop_table_is_exactly_the_expected_one():
    computed = [(r.format, r.field, r.value, r.finish_reason, r.kind, r.without_tools, r.with_tools)
                for r in stop_table()]
    assert computed == EXPECTED


def test_the_stop_table_is_the_vocabulary_table_and_renders_every_row():
    rows = stop_table()
    assert [(r.format, r.field, r.value, r.meaning, r.source) for r in rows] == [
        (v.format, v.field, v.value, v.meaning, v.source) for v in stops.STOP_VALUES]
    text = render_stop_table(fmt="markdown").splitlines()
    assert text[0] == "| " + " | ".join(STOP_TABLE_HEADERS) + " |"
    assert len(text) == 2 + len(EXPECTED)
    for line, row in zip(text[2:], rows):
        assert line == "| " + " | ".join(row.cells()) + " |"


def test_every_row_names_its_meaning_and_its_source():
    for value in stops.STOP_VALUES:
        assert value.meaning and value.source, value
        assert value.kind == stops.KINDS[value.finish_reason]
    keys = [(v.format, v.field, v.value) for v in stops.STOP_VALUES]
    assert len(keys) == len(set(keys))


def test_every_normalised_reason_has_a_kind_and_every_abnormal_one_an_error_code():
    assert set(stops.KINDS) == set(get_args(stops.FinishReason)) == set(stops.FINISH_REASONS)
    assert {r for r, k in stops.KINDS.items() if k != "abnormal"} == {"stop", "tool_calls", "pause"}
    assert set(stops.ABORT_CODES) == stops.ABNORMAL
    assert set(stops.ABORT_CODES.values()) <= set(ERROR_CLASSES)
    assert ERROR_CLASSES["provider_error"] is ProviderError and issubclass(ProviderError, RunError)
    assert "provider_error" in get_args(ErrorCode)



@pytest.mark.parametrize(("format", "field", "value", "expected"), [
    (GEM, CAND, "OTHER", "provider_error"),
    (GEM, BLOCK, "OTHER", "content_filter"),  # the same value means something else in another field
    (GEM, CAND, "other", "unknown"),  # the adapter folds the case, the table does not
    (RESP, STATUS, "incomplete", "unknown"),  # incomplete is read through its reason
    (CHAT, FINISH, "tool_call", "unknown"),
    (CHAT, FINISH, "tool", "tool_calls"),
    (OLL, FINISH, "stop", "unknown"),  # a value is looked up in its own format and field only
])
def test_normalise_looks_up_format_field_and_value(format, field, value, expected):
    assert stops.normalise(format, field, value) == expected


# ----------------------------------------------------------------------------- abnormal ends never run a tool

TOOL_NAMES = ("read_file", "count_lines")
arguments = st.one_of(
    st.fixed_dictionaries({"path": st.text(max_size=8)}),  # well formed
    st.sampled_from(['{"path": "no', '{"path": 1e', '{"a": tru', '{"a": "\\u00']),  # cut off
    st.sampled_from(['{"path" "x"}', "[1, 2]", "not json", '{"a": 01}']),  # malformed
    st.just(""),  # no arguments
)
tool_calls = st.lists(st.tuples(st.sampled_from(TOOL_NAMES), arguments), max_size=3)


@st.composite
def abnormal_rounds(draw: st.DrawFn) -> Response:
    reason = draw(st.sampled_from(sorted(stops.ABNORMAL)))
    calls = draw(tool_calls)
    return Response.model_validate({
        "content": draw(st.sampled_from([None, "", "some text"])),
        "tool_calls": [{"id": f"c{i}", "name": n, "arguments": a} for i, (n, a) in enumerate(calls)],
        "finish_reason": reason,
        "raw_finish_reason": draw(st.sampled_from([None, "SOMETHING_NEW"])) if reason != "unknown" else "NEW",
    })


@settings(max_examples=300, deadline=None)
@given(abnormal_rounds())
def test_correct_aborts_on_every_abnormal_end_whatever_the_tool_calls(round_: Response):
    decision = correct(round_)
    assert not isinstance(decision, (Continue, Finish))
    assert isinstance(decision, Abort) and decision.code == stops.ABORT_CODES[round_.finish_reason]


@settings(max_examples=150, deadline=None)
@given(abnormal_rounds(), st.lists(st.tuples(st.sampled_from(TOOL_NAMES), st.just({"path": "a"})), max_size=2))
def test_a_run_that_meets_an_abnormal_end_raises_and_runs_no_tool_of_it(round_: Response, earlier_calls):
    ran: list[str] = []

    def tool(name: str):
        return lambda arguments: ran.append(name) or "ok"

    earlier = [Response.model_validate({"content": None, "finish_reason": "tool_calls", "tool_calls": [
        {"id": f"e{i}", "name": name, "arguments": args}]}) for i, (name, args) in enumerate(earlier_calls)]
    model = ScriptedModel([*earlier, round_])
    with pytest.raises(ERROR_CLASSES[stops.ABORT_CODES[round_.finish_reason]]) as caught:
        run_loop(model, {name: tool(name) for name in TOOL_NAMES}, criterion="correct", max_steps=8)
    record = caught.value.record
    assert record is not None and record.steps == len(earlier) + 1
    assert ran == [name for name, _ in earlier_calls]  # only the earlier, well-formed rounds ran tools
    assert record.rounds[-1].tools_run == () and isinstance(record.rounds[-1].decision, Abort)


@pytest.mark.parametrize("reason", ["stop", "tool_calls", "pause"])
def test_go_on_and_finished_ends_run_well_formed_calls(reason):
    round_ = Response.model_validate({"content": "text", "finish_reason": reason, "tool_calls": [
        {"id": "c1", "name": "read_file", "arguments": {"path": "a"}}]})
    assert isinstance(correct(round_), Continue)


# ----------------------------------------------------------------------------- tool_calls with text and no call

def test_tool_calls_with_text_and_no_call_is_an_answer_that_notes_the_mismatch():
    round_ = Response(content="notes.txt has 42 lines.", finish_reason="tool_calls")
    decision = correct(round_)
    assert isinstance(decision, Finish) and decision.answer == "notes.txt has 42 lines."
    assert decision.fields_disagree and decision.reason.startswith("the fields disagree")
    record = run_loop(ScriptedModel([round_]), {}, criterion="correct")
    assert (record.answer, record.outcome) == ("notes.txt has 42 lines.", "answer")
    assert record.rounds[-1].decision.fields_disagree


@pytest.mark.parametrize("content", [None, ""])
def test_tool_calls_with_no_call_and_no_text_stays_abnormal(content):
    decision = correct(Response(content=content, finish_reason="tool_calls"))
    assert isinstance(decision, Abort) and decision.code == "malformed_tool_call"


def test_a_plain_answer_does_not_claim_a_mismatch():
    decision = correct(Response(content="42", finish_reason="stop"))
    assert isinstance(decision, Finish) and not decision.fields_disagree


def test_the_shipped_mismatch_scenario_answers_where_the_value_watcher_spins():
    from agentloops import run

    record = run("openai-chat-tool-calls-finish-with-text")
    assert (record.outcome, record.answer, record.tools_executed) == ("answer", "notes.txt has 42 lines.",
                                                                      ("read_file",))
    assert record.rounds[-1].decision.fields_disagree
    assert run("openai-chat-tool-calls-finish-with-text", "finish_reason").hit_cap


@pytest.mark.parametrize(("name", "tool"), [
    ("openai-responses-failed-with-call", "read_file"),
    ("openai-responses-in-progress-with-call", "read_file"),
    ("gemini-too-many-tool-calls", "read_file"),
])
def test_shipped_provider_failures_carrying_a_call_raise_before_it_runs(name, tool):
    from agentloops import load_scenario, run

    scenario = load_scenario(name)
    assert [c.name for c in scenario.responses[0].tool_calls] == [tool]
    with pytest.raises(ProviderError, match=r"^call 1: the provider reported that the turn failed.*were not run$"):
        run(scenario, "correct", raise_errors=True)
    assert run(scenario, "tool_calls").tools_executed[:1] == (tool,)  # a naive loop runs it
