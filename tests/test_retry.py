"""Caps are not retries: a blind retry pays again for the same failure; the right response fixes the cause."""

from __future__ import annotations

import inspect
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentloops as al
from agentloops import retry, stop_cases
from agentloops.errors import ErrorCode, UsageError
from agentloops.messages import Message
from agentloops.tokens import estimate_tokens

CASES = list(stop_cases.CASES)


def _summary_need() -> int:
    """Output tokens the truncation case's answer needs, by the same count the loop uses."""
    return Message("assistant", stop_cases.SUMMARY).tokens(estimate_tokens)


@pytest.mark.parametrize("name", CASES)
def test_each_case_first_fails_with_its_stop(name: str) -> None:
    case = stop_cases.CASES[name]
    record = stop_cases.attempt(case)
    assert record.error == case.stop
    assert not record.succeeded


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("retries", [0, 1, 3])
def test_blind_retry_gets_the_same_failure_and_pays_again(name: str, retries: int) -> None:
    result = retry.blind_retry(name, retries)
    first = result.attempts[0].record
    assert len(result.attempts) == retries + 1
    assert not result.succeeded
    assert set(result.errors) == {stop_cases.CASES[name].stop}
    assert all(a.setup == stop_cases.CASES[name].setup for a in result.attempts)
    assert result.calls == (retries + 1) * first.steps
    assert result.tokens == (retries + 1) * (first.billed_prompt_tokens + first.billed_completion_tokens)


@pytest.mark.parametrize("name", CASES)
def test_right_response_answers_and_costs_less(name: str) -> None:
    blind, right = retry.blind_retry(name, 3), retry.right_response(name, 4)
    assert right.succeeded
    assert right.errors[0] == stop_cases.CASES[name].stop and right.errors[-1] is None
    assert right.calls < blind.calls and right.tokens < blind.tokens
    assert right.attempts[1].setup != right.attempts[0].setup


def test_the_limit_fix_depends_on_the_limit_alone() -> None:
    case = stop_cases.CASES["truncated"]
    need = _summary_need()
    below = stop_cases.attempt(case, stop_cases.Setup(need - 1, case.setup.prompt))
    at = stop_cases.attempt(case, stop_cases.Setup(need, case.setup.prompt))
    assert below.error == "truncated" and at.succeeded
    assert case.setup.max_tokens < need <= 2 * case.setup.max_tokens  # why one doubling is enough here


@settings(max_examples=60, deadline=None)
@given(limit=st.integers(min_value=16, max_value=400))
def test_truncation_happens_exactly_below_what_the_answer_needs(limit: int) -> None:
    case = stop_cases.CASES["truncated"]
    record = stop_cases.attempt(case, stop_cases.Setup(limit, case.setup.prompt))
    assert record.succeeded == (limit >= _summary_need())
    if not record.succeeded:
        cut = record.rounds[-1]
        assert cut.response.finish_reason == "length"
        assert cut.response.usage is not None and cut.response.usage.completion_tokens == limit
        kept = cut.response.content or ""
        assert stop_cases.SUMMARY.startswith(kept)
        budget = limit - (_summary_need() - estimate_tokens(stop_cases.SUMMARY))  # what the text itself may use
        assert estimate_tokens(kept) <= budget < estimate_tokens(stop_cases.SUMMARY[: len(kept) + 1])  # the longest fit


def test_right_response_doubles_the_limit_until_it_fits() -> None:
    case = stop_cases.CASES["truncated"]
    tight = stop_cases.StopCase(case.name, case.title, case.stop, stop_cases.Setup(8, case.setup.prompt), case.model, case.tools)
    result = retry.right_response(tight, max_attempts=10)
    limits = [a.setup.max_tokens for a in result.attempts]
    assert limits == [8 * 2**i for i in range(len(limits))]
    assert result.succeeded and limits[-2] < _summary_need() <= limits[-1]


def test_the_filter_fires_on_the_input_and_a_changed_input_passes() -> None:
    case = stop_cases.CASES["content_filter"]
    assert case.safer_prompt
    changed = stop_cases.attempt(case, stop_cases.Setup(case.setup.max_tokens, case.safer_prompt))
    assert changed.succeeded and changed.answer == stop_cases.ACTION_ITEMS


def test_the_failing_tool_is_read_from_the_record() -> None:
    record = stop_cases.attempt("failing_tool")
    assert record.error == "max_steps" and record.steps == al.DEFAULT_MAX_STEPS
    assert retry.failing_tools(record) == {"read_file": (stop_cases.TOOL_ERROR, record.steps - 1)}
    assert record.wasted_calls > 0
    assert retry.failing_tools(al.run("long-chain")) == {}


def test_advice_covers_every_error_code() -> None:
    assert set(retry.ADVICE) == set(get_args(ErrorCode))


@pytest.mark.parametrize(("scenario", "code", "fixes"), [
    ("truncated", "truncated", True),
    ("content-filter", "content_filter", False),  # no case given: no other input to try
    ("long-chain", "max_steps", False),  # no tool failed: the cap is not something to retry past
])
def test_prescribe_reads_the_error_code(scenario: str, code: str, fixes: bool) -> None:
    record = al.run(scenario)
    assert record.error == code
    remedy = retry.prescribe(record, stop_cases.Setup(64, "q"))
    assert remedy.advice == retry.ADVICE[code]
    assert (remedy.setup is not None) == fixes


@pytest.mark.parametrize(("finish", "arguments", "code"), [
    ("refusal", None, "refusal"),
    ("unknown", None, "unknown_stop"),
    ("tool_calls", '{"path" 1}', "malformed_tool_call"),
])
def test_prescribe_hands_the_rest_to_a_person(make_response, make_scenario, finish: str, arguments: str | None,
                                              code: str) -> None:
    calls = [("read_file", arguments)] if arguments else None
    response = make_response(None, calls, finish) if finish != "unknown" else al.Response(
        content=None, finish_reason="unknown", raw_finish_reason="WEIRD")
    record = al.run(make_scenario(response))
    assert record.error == code
    remedy = retry.prescribe(record, stop_cases.Setup(64, "q"))
    assert remedy.setup is None and remedy.advice == retry.ADVICE[code]  # type: ignore[index]


def test_refusal_with_a_safer_prompt_changes_the_input(make_response, make_scenario) -> None:
    record = al.run(make_scenario(make_response(None, None, "refusal")))
    case = stop_cases.CASES["content_filter"]
    remedy = retry.prescribe(record, case.setup, case)
    assert remedy.setup is not None and remedy.setup.prompt == case.safer_prompt
    assert retry.prescribe(record, remedy.setup, case).setup is None  # already changed: nothing left to try


def test_misuse_gets_one_clear_line() -> None:
    with pytest.raises(UsageError, match="unknown stop case 'timeout'; expected one of: truncated"):
        retry.blind_retry("timeout")
    with pytest.raises(UsageError, match="retries must be a whole number of at least 0; got -1"):
        retry.blind_retry("truncated", -1)
    with pytest.raises(UsageError, match="max_attempts must be a whole number of at least 1; got 0"):
        retry.right_response("truncated", 0)
    with pytest.raises(UsageError, match="the run ended with 'answer', not an error; there is nothing to respond to"):
        retry.prescribe(al.run("normal"), stop_cases.Setup(64, "q"))


def test_comparison_table() -> None:
    policies = retry.compare_policies(retries=2)
    assert policies.case_names() == CASES
    assert len(policies.rows()) == 2 * len(CASES)
    frame = policies.to_frame()
    assert list(frame.columns) == policies.headers()
    assert frame["calls"].tolist() == [r.calls for r in policies.results]
    text = str(policies)
    assert repr(policies) == text and "blind retry" in text and "right response" in text
    assert "<table>" in policies._repr_html_()
    assert all(len(policies.get(c, "blind_retry").attempts) == 3 for c in CASES)
    with pytest.raises(KeyError):
        policies.get("truncated", "pray")  # type: ignore[arg-type]


def test_policy_result_text_lists_every_attempt() -> None:
    text = str(retry.right_response("truncated"))
    assert "first try" in text and "raised max_tokens 64 → 128" in text and "answer" in text


def test_a_provider_error_is_advised_and_handed_on_not_retried_blindly() -> None:
    record = al.run("openai-responses-failed", "correct")
    assert record.error == "provider_error"
    remedy = retry.prescribe(record, stop_cases.Setup(64, "q"))
    assert remedy.setup is None and remedy.advice == retry.ADVICE["provider_error"]
    assert "inside a budget" in remedy.advice and "never read the partial round" in remedy.advice


@pytest.fixture
def in_chinese(monkeypatch: pytest.MonkeyPatch):
    from agentloops.i18n import set_language

    for name in ("AGENTLOOPS_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        monkeypatch.delenv(name, raising=False)
    set_language("zh")
    yield
    set_language(None)


def test_the_advice_and_the_tables_in_chinese_with_the_data_in_english(in_chinese) -> None:
    from agentloops.i18n import shown

    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in retry.advice(code)) for code in retry.ADVICE)
    assert retry.advice("truncated").startswith("调高 Token 上限（max_tokens）")
    record = stop_cases.attempt("truncated")
    remedy = retry.prescribe(record, stop_cases.CASES["truncated"].setup)
    assert remedy.advice == retry.ADVICE["truncated"] and remedy.action == "raised max_tokens 64 → 128"
    assert shown(remedy.action) == "max_tokens 从 64 调高到 128" and remedy.shown().endswith("→ max_tokens 从 64 调高到 128")
    text = str(retry.right_response("truncated"))
    assert text.startswith("truncated × 对症处理：2 次尝试") and "第一次尝试" in text and "从 64 调高到 128" in text
    assert [a.action for a in retry.right_response("truncated").attempts] == ["first try", "raised max_tokens 64 → 128"]
    failing = str(retry.right_response("failing_tool"))
    assert "read_file 返回了 7 次 「错误：没有权限：notes.txt」：修好了工具" in failing
    policies = retry.compare_policies(["content_filter"])
    assert policies.headers()[:3] == ["停止", "策略", "尝试次数"]
    assert policies.rows()[0][:2] == ["content_filter", "盲目重试"] and policies.rows()[0][-1] == "没有回答（content_filter）"
    assert "<th>策略</th>" in policies._repr_html_()
    assert stop_cases.CASES["truncated"].setup.describe() == "max_tokens=64，prompt='用一段话总结 notes.txt。'，工具未改"
    assert stop_cases.CASES["truncated"].setup.prompt == "Summarise notes.txt in one paragraph.", "the model's is English"
    with pytest.raises(UsageError, match="未知的停止案例 'timeout'"):
        retry.blind_retry("timeout")
    with pytest.raises(UsageError, match="retries 必须是不小于 0 的整数；收到的是 -1"):
        retry.blind_retry("truncated", -1)


@pytest.mark.parametrize("max_attempts", [1, 2, 5])
def test_right_response_makes_at_most_its_attempts_numbered_from_one(max_attempts: int) -> None:
    result = retry.right_response("truncated", max_attempts)
    numbers = [a.number for a in result.attempts]
    assert numbers == list(range(1, len(numbers) + 1)) and 1 <= len(numbers) <= max_attempts
    assert len(retry.right_response("failing_tool", max_attempts).attempts) == min(max_attempts, 2)


def test_the_comparison_gives_both_policies_the_same_number_of_tries() -> None:
    """Fair by default: the right response may make as many attempts as the blind loop makes requests."""
    default = inspect.signature(retry.blind_retry).parameters["retries"].default
    assert inspect.signature(retry.compare_policies).parameters["retries"].default == default
    assert len(retry.blind_retry("failing_tool").attempts) == default + 1


@pytest.mark.parametrize("retries", [0, 2])
def test_the_blind_loop_labels_its_first_try_and_then_the_same_request(retries: int) -> None:
    actions = [a.action for a in retry.blind_retry("failing_tool", retries).attempts]
    assert actions == [retry._FIRST_TRY] + [retry._SAME_AGAIN] * retries


def test_a_comparison_without_retries_tries_each_policy_once_and_names_each_failure() -> None:
    table = retry.compare_policies(retries=0)
    assert {len(r.attempts) for r in table.results} == {1}
    for row, result in zip(table.rows(), table.results, strict=True):
        assert result.succeeded or str(result.errors[-1]) in row[-1]
    assert [table.case_title(name) for name in table.case_names()] == [c.title for c in table.cases]
    assert len({c.title for c in table.cases}) == len(table.cases)  # so a title lookup could not pass by luck
