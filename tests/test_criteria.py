"""Each criterion is a pure function of one response: test it without a loop."""

from __future__ import annotations

import pytest

from agentloops import CRITERIA, Abort, Continue, Criterion, CriterionError, Finish, Response, correct
from agentloops.criteria import (
    ARTICLE_LOOP,
    abnormal_end,
    article_loop,
    by_content,
    by_finish_reason,
    by_tool_calls,
    resolve_criterion,
)
from agentloops.providers.field import field_cases
from agentloops.response import ToolCall, Usage
from tests.conftest import response

TALK_AND_CALL = response("Let me open the file first.", [("read_file", {"path": "a"})], "tool_calls")
TRUNCATED = response(None, [], "length")
ANSWER = response("42 lines", [], "stop")
CALL_WITH_STOP = response(None, [("read_file", {"path": "a"})], "stop")


@pytest.mark.parametrize(
    ("decide", "round_", "expected"),
    [
        (by_content, TALK_AND_CALL, Finish),
        (by_content, TRUNCATED, Continue),
        (by_content, response("", [], "stop"), Continue),
        (by_finish_reason, TALK_AND_CALL, Continue),
        (by_finish_reason, TRUNCATED, Continue),
        (by_finish_reason, CALL_WITH_STOP, Finish),
        (by_tool_calls, TRUNCATED, Finish),
        (by_tool_calls, TALK_AND_CALL, Continue),
        (by_tool_calls, ANSWER, Finish),
    ],
)
def test_naive_criteria_watch_one_field(decide, round_, expected):
    assert isinstance(decide(round_), expected)


def test_content_criterion_tells_null_from_empty():
    assert by_content(response(None, [], "stop")).reason == "content is null"
    assert by_content(response("", [], "stop")).reason == "content is empty"


@pytest.mark.parametrize(
    ("round_", "code"),
    [
        (TRUNCATED, "truncated"),
        (response("partial tex", [], "length"), "truncated"),
        (response(None, [], "content_filter"), "content_filter"),
        (response("I can't help with that.", [], "refusal"), "refusal"),
        (response(None, [], "malformed_tool_call"), "malformed_tool_call"),
        (response(None, [("read_file", '{"path": "no')], "stop"), "truncated"),
        (response(None, [("read_file", '{"path": "notes.txt", ')], "tool_calls"), "truncated"),
        (response(None, [("read_file", '{"path" "x"}')], "tool_calls"), "malformed_tool_call"),
        (response(None, [("read_file", "[1, 2]")], "tool_calls"), "malformed_tool_call"),
        (response(None, [], "tool_calls"), "malformed_tool_call"),
        (Response(content=None, finish_reason="unknown", raw_finish_reason="SPII"), "unknown_stop"),
        (Response(content=None, finish_reason="provider_error", raw_finish_reason="failed:server_error"),
         "provider_error"),
        (response("partial", [("read_file", {"path": "a"})], "provider_error"), "provider_error"),
        (response(None, [("read_file", '{"path" "x"}')], "length"), "truncated"),  # the end decides first
    ],
)
def test_correct_aborts_on_every_abnormal_round(round_, code):
    decision = correct(round_)
    assert isinstance(decision, Abort)
    assert decision.code == code


def test_correct_lets_tool_calls_decide_even_with_stop():
    assert isinstance(correct(CALL_WITH_STOP), Continue)
    assert isinstance(correct(TALK_AND_CALL), Continue)


def test_correct_aborts_on_an_unknown_stop_even_with_well_formed_calls():
    round_ = Response(content=None, tool_calls=CALL_WITH_STOP.tool_calls, finish_reason="unknown",
                      raw_finish_reason="weird")
    decision = correct(round_)
    assert isinstance(decision, Abort) and decision.code == "unknown_stop"
    assert decision.reason == "unknown stop value 'weird'; its 1 tool call(s) were not run"


def test_correct_resumes_a_paused_turn():
    assert isinstance(correct(response("thinking…", [], "pause")), Continue)


def test_correct_returns_empty_string_for_null_content():
    decision = correct(response(None, [], "stop"))
    assert decision == Finish("", "no tool calls and finish_reason is stop")


def test_unknown_stop_names_the_value():
    decision = correct(Response(content=None, finish_reason="unknown", raw_finish_reason="SPII"))
    assert "'SPII'" in decision.reason


def test_empty_argument_text_means_no_arguments():
    decision = correct(response(None, [("read_file", "")], "tool_calls"))
    assert isinstance(decision, Continue)


def test_builtin_criteria_order_and_cap_behaviour():
    assert list(CRITERIA) == ["content", "finish_reason", "tool_calls", "correct"]
    assert {c.at_cap for name, c in CRITERIA.items() if name != "correct"} == {"return_last"}
    assert CRITERIA["correct"].at_cap == "raise"


def test_plain_function_becomes_a_criterion_that_raises_at_cap():
    def stop_on_text(r: Response) -> bool:
        return bool(r.content)

    rule = resolve_criterion(stop_on_text)
    assert rule.name == "stop_on_text"
    assert rule.at_cap == "raise"
    assert rule(ANSWER) == Finish("42 lines", "stop_on_text returned True")
    assert isinstance(rule(TRUNCATED), Continue)


def test_criterion_returning_nonsense_is_a_clear_error():
    rule = Criterion("sloppy", lambda r: 1)  # type: ignore[arg-type, return-value]
    with pytest.raises(CriterionError, match=r"criterion 'sloppy' returned int; expected True/False or a decision"):
        rule(ANSWER)


@pytest.mark.parametrize("bad", ["contents", "", "CORRECT"])
def test_unknown_criterion_name(bad):
    with pytest.raises(CriterionError, match=r"unknown criterion .*; expected one of: content, finish_reason"):
        resolve_criterion(bad)


def test_criterion_of_wrong_type():
    with pytest.raises(CriterionError, match=r"criterion must be a name .* or a function; got int"):
        resolve_criterion(3)  # type: ignore[arg-type]


def test_custom_abort_with_an_unknown_code():
    rule = Criterion("oops", lambda r: Abort("oops", "made up"))  # type: ignore[arg-type]
    with pytest.raises(CriterionError, match=r"criterion 'oops' aborted with unknown code 'oops'; expected one of: "):
        rule(ANSWER)


def test_at_cap_is_checked():
    with pytest.raises(CriterionError, match=r"at_cap must be 'return_last' or 'raise'; got 'rasie'"):
        Criterion("typo", by_content, "rasie")  # type: ignore[arg-type]


def test_provider_value_is_named_when_it_differs():
    filtered = Response(content=None, finish_reason="content_filter", raw_finish_reason="SAFETY")
    assert correct(filtered).reason.endswith("(the provider said 'SAFETY')")


def test_long_arguments_are_shortened_in_the_reason():
    decision = correct(response(None, [("read_file", '{"path": "' + "x" * 10_000)], "tool_calls"))
    assert decision.code == "truncated" and len(decision.reason) < 120


def test_reasons_are_english_data_that_can_be_shown_in_chinese(monkeypatch):
    from agentloops.i18n import Phrase, set_language, shown

    for name in ("AGENTLOOPS_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        monkeypatch.delenv(name, raising=False)
    set_language("zh")
    try:
        decision = correct(response(None, [], "length"))
        assert decision.reason == "finish_reason is length: the output hit the token limit"
        assert isinstance(decision.reason, Phrase) and shown(decision.reason) == "finish_reason 为 length：输出撞上了 Token 上限"
        assert by_content(response(None, [], "stop")) == Continue("content is null"), "equality is on the English text"
        assert shown(correct(response(None, [], "stop")).reason) != "no tool calls and finish_reason is stop"
        assert shown(Continue("my own words").reason) == "my own words", "a learner's reason is shown as written"
        custom = resolve_criterion(lambda r: True)
        assert custom(response("hi", [], "stop")).reason == "<lambda> returned True"
        assert shown(custom(response("hi", [], "stop")).reason) != "<lambda> returned True"
    finally:
        set_language(None)


# ----------------------------------------------------------------------------- what the field taught (issue 23)


def _call(arguments: str = '{"path": "notes.txt"}') -> ToolCall:
    return ToolCall(id="c1", name="read_file", arguments=arguments)


def test_output_at_the_requests_limit_is_a_cut_whatever_the_finish_value_says():
    at_limit = Response(content=None, tool_calls=(_call(),), finish_reason="tool_calls",
                        usage=Usage(completion_tokens=64), max_tokens=64)
    decision = correct(at_limit)
    assert isinstance(decision, Abort) and decision.code == "truncated"
    assert "max_tokens=64 (64 tokens)" in decision.reason and "'tool_calls'" in decision.reason
    below = at_limit.model_copy(update={"usage": Usage(completion_tokens=63)})
    assert isinstance(correct(below), Continue)
    unknown_limit = at_limit.model_copy(update={"max_tokens": None})
    assert isinstance(correct(unknown_limit), Continue)
    assert not at_limit.model_copy(update={"usage": None}).at_token_limit


def test_a_cut_off_prefix_is_truncated_even_under_tool_calls():
    decision = correct(Response(content=None, tool_calls=(_call('{"path": "no'),), finish_reason="tool_calls"))
    assert isinstance(decision, Abort) and decision.code == "truncated"
    assert isinstance(article_loop(Response(content=None, tool_calls=(_call('{"path": "no'),),
                                            finish_reason="tool_calls")), Continue)


def test_a_reasoning_only_round_at_the_limit_is_truncated_not_an_empty_answer():
    cut = Response(content=None, finish_reason="length", reasoning="Let me think about the file...")
    decision = correct(cut)
    assert isinstance(decision, Abort) and decision.code == "truncated" and "spent on reasoning" in decision.reason
    labelled_stop = Response(content="", finish_reason="stop", reasoning="thinking...",
                             usage=Usage(completion_tokens=200), max_tokens=200)
    decision = correct(labelled_stop)
    assert isinstance(decision, Abort) and decision.code == "truncated" and "only hidden reasoning" in decision.reason
    assert isinstance(article_loop(labelled_stop), Finish)


@pytest.mark.parametrize("text", [
    '{"name": "read_file", "arguments": {"path": "notes.txt"}}',
    '```json\n{"name": "read_file", "parameters": {"path": "notes.txt"}}\n```',
    '<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n</tool_call>',
])
def test_a_tool_call_written_as_text_is_flagged_not_answered_nor_run(text):
    response = Response(content=text, finish_reason="stop")
    assert response.text_tool_call == "read_file"
    decision = correct(response)
    assert isinstance(decision, Abort) and decision.code == "malformed_tool_call" and "read_file" in decision.reason
    assert isinstance(article_loop(response), Finish)


@pytest.mark.parametrize("text", ['{"name": "Ada"}', '{"city": "Paris", "arguments": {}}', "notes.txt has 42 lines.",
                                  '{"name": "read_file", "arguments": 3}', '{"name": "", "arguments": {}}', "{"])
def test_ordinary_text_is_not_a_tool_call(text):
    response = Response(content=text, finish_reason="stop")
    assert response.text_tool_call is None
    assert isinstance(correct(response), Finish)


def test_the_article_loop_raises_on_length_and_filter_only():
    assert article_loop(Response(content="x", finish_reason="length")).code == "truncated"  # type: ignore[union-attr]
    assert article_loop(Response(content=None, finish_reason="content_filter")).code == "content_filter"  # type: ignore[union-attr]
    assert isinstance(article_loop(Response(content="?", finish_reason="unknown", raw_finish_reason="abort")), Finish)
    assert isinstance(article_loop(Response(content=None, tool_calls=(_call(),), finish_reason="provider_error")),
                      Continue)
    assert ARTICLE_LOOP.at_cap == "raise" and ARTICLE_LOOP.name == "article"


def test_a_broken_stream_needs_provider_error():
    with pytest.raises(ValueError, match="stream_error needs finish_reason 'provider_error'"):
        Response(content=None, finish_reason="stop", stream_error="cut")


def test_qwen_coders_own_call_format_is_a_tool_call_too():
    text = "<tool_call>\n<function=square_the_number>\n<parameter=input_num>\n1024\n</tool_call>"
    assert Response(content=text, finish_reason="stop").text_tool_call == "square_the_number"
    assert Response(content="use <function=f> here", finish_reason="stop").text_tool_call is None


def test_a_plain_function_wraps_into_a_criterion_under_its_own_name():
    import agentloops as al

    def my_test(r: Response) -> bool:
        return bool(r.content)

    rule = al.Criterion(my_test, at_cap="return_last")  # as notebook 04 writes it
    assert (rule.name, rule.decide, rule.at_cap, rule.summary) == ("my_test", my_test, "return_last", "")
    assert rule == Criterion("my_test", my_test, "return_last")
    record = al.run("truncated", rule, max_steps=2)
    assert record.criterion == "my_test" and record.error is None  # at the cap it hands back the last text
    assert Criterion(my_test).at_cap == "raise"


@pytest.mark.parametrize(("args", "message"), [
    (("mine",), r"Criterion\('mine'\) has no decision function; write Criterion\(my_test\)"),
    ((by_content, by_content), r"a criterion's name must be text; got function"),
    ((by_content, None, "rasie"), r"at_cap must be 'return_last' or 'raise'; got 'rasie'"),
])
def test_a_criterion_built_wrongly_says_how(args, message):
    with pytest.raises(CriterionError, match=message):
        Criterion(*args)


def test_abnormal_end_is_the_abort_half_of_correct():
    """The controller reads a reply with ``abnormal_end``: it must abort exactly where ``correct`` does, and let a
    normal end (an answer, tool calls, a pause, text under ``tool_calls``) through as ``None``."""
    rounds = [TALK_AND_CALL, TRUNCATED, ANSWER, CALL_WITH_STOP, response(None, [], "pause"),
              response("text only", [], "tool_calls"), response(None, [], "tool_calls"),
              response('{"name": "read_file", "parameters": {"path": "a"}}', [], "stop")]
    rounds += [r for case in field_cases() for r in case.scenario.responses]
    aborted = 0
    for round_ in rounds:
        decision, ended = correct(round_), abnormal_end(round_)
        if isinstance(decision, Abort):
            aborted += 1
            assert ended == (decision.code, decision.reason)
        else:
            assert ended is None
    assert aborted and aborted < len(rounds)
