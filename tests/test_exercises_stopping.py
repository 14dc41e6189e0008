"""Exercise set 1: each checker passes the reference solution and fails wrong ones with the right message."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import agentloops as al
from agentloops.errors import ERROR_CODES
from agentloops.exercises import session
from agentloops.exercises.stopping import LOOP_CASES, q1, q2, q3, run_tool, tool_results

LIMIT = 0.5  # seconds per case when a wrong solution loops forever


@pytest.fixture(autouse=True)
def _fresh_progress():
    session.reset()
    yield
    session.reset()


# --------------------------------------------------------------------------- q1: a stop criterion


def test_q1_checks_every_article_and_extra_scenario() -> None:
    result = q1.judge(q1.reference())
    assert result.passed, str(result)
    assert [c.name for c in result.cases] == al.scenario_names(["article", "extra"])
    assert result.case("truncated").message.startswith("raised truncated at call 1")


def test_q1_the_starting_cell_fails_where_the_naive_test_does() -> None:
    result = q1.judge(lambda response: not response.tool_calls)
    assert result.status == "incorrect"
    assert {c.name for c in result.failures} == {"truncated", "content-filter", "cut-off-arguments", "truncated-partial"}
    assert result.case("truncated").message == (
        "empty answer reported as success at call 1 (returned null); expected: raised truncated at call 1 — "
        "finish_reason is length: the output hit the token limit")
    assert result.case("cut-off-arguments").message.startswith(
        "spun to the cap and raised max_steps at call 8 (6 calls wasted); expected: raised truncated at call 1")


def test_q1_an_infinite_loop_is_stopped_and_the_rest_reported() -> None:
    def stop_criterion(response):
        while response.finish_reason == "length":  # never changes: hangs on the cut-off rounds
            pass
        return al.Continue() if response.tool_calls else al.Finish(response.content)

    result = q1.judge(stop_criterion, time_limit=LIMIT)
    assert result.case("truncated").status == "timeout"
    assert result.case("truncated").message.startswith(f"did not finish within {LIMIT:g} s and was stopped")
    assert result.case("talk-only").passed
    assert result.case("cut-off-arguments").status == "timeout"
    assert result.case("long-chain").status == "skipped"


def test_q1_an_exception_names_the_call_the_response_and_the_line() -> None:
    def stop_criterion(response):
        return response.content.strip() != ""

    message = q1.judge(stop_criterion).case("normal").message
    assert message.startswith("on call 1 (content=null tool_calls=[read_file({\"path\": \"notes.txt\"})] "
                              "finish_reason=tool_calls) your function raised AttributeError: 'NoneType' object "
                              "has no attribute 'strip' (in stop_criterion, line ")
    assert "`return response.content.strip() != \"\"`" in message


def test_q1_a_wrong_return_type_says_what_to_return() -> None:
    result = q1.judge(lambda response: "done")
    assert all(c.status == "failed" for c in result.cases)
    assert result.case("talk-only").message == (
        "on call 1 (content=\"Hello! How can I help?\" tool_calls=[none] finish_reason=stop) your function returned "
        "str ('done'); return True/False, or al.Continue(), al.Finish(answer), al.Abort(code, reason)")


def test_q1_an_unknown_abort_code_lists_the_codes() -> None:
    def stop_criterion(response):
        if response.finish_reason == "length":
            return al.Abort("cut_off", "too long")
        return not response.tool_calls

    message = q1.judge(stop_criterion).case("truncated").message
    assert message.endswith(f"your function aborted with code 'cut_off'; the codes are: {', '.join(ERROR_CODES)}")


def test_q1_the_content_test_fails_on_the_talking_round() -> None:
    message = q1.judge(lambda response: bool(response.content)).case("talk-and-call").message
    assert message == ('premature answer (tool results never seen) at call 1 (returned "Let me open the file '
                       'first."); expected: answered "notes.txt has 42 lines." at call 2 — 1 tool result(s) ran '
                       "but never reached the model")


def test_q1_a_boolean_criterion_cannot_pass_a_cut_off_round() -> None:
    def stop_criterion(response):
        return not response.tool_calls and response.finish_reason == "stop"

    result = q1.judge(stop_criterion)
    assert result.case("truncated").message.startswith(
        "spun to the cap and raised max_steps at call 8 (7 calls wasted); expected: raised truncated at call 1")
    assert result.case("normal").passed


# --------------------------------------------------------------------------- q2: raise at the cap


def naive_loop(model: Any, tools: Any, max_steps: int = 8) -> Any:
    messages = [al.Message("user", "How many lines does notes.txt have?")]
    last_text = None
    for _ in range(max_steps):
        response = model(messages)
        messages.append(al.Message.from_response(response))
        if not response.tool_calls:
            return response.content
        for call in response.tool_calls:
            messages.append(al.Message("tool", run_tool(tools, call), tool_call_id=call.id, name=call.name))
        last_text = response.content
    return last_text


def test_q2_the_reference_passes_every_run() -> None:
    result = q2.judge(q2.reference())
    assert result.passed, str(result)
    assert [c.name for c in result.cases] == [name for name, _, _ in LOOP_CASES]


def test_q2_the_naive_loop_returns_at_the_cap() -> None:
    result = q2.judge(naive_loop)
    assert {c.name for c in result.failures} == {"long-chain, max_steps=8", "long-chain, max_steps=10",
                                                 "stuck, max_steps=3"}
    assert result.case("stuck, max_steps=3").message == (
        "returned None after 3 model calls; expected to raise al.MaxStepsError after 3 model calls — a loop that "
        "ran out of steps has no answer, and returning its last text lets a spin pass silently")


def test_q2_a_loop_without_a_cap_is_stopped_by_the_model_or_the_clock() -> None:
    def keeps_asking(model, tools, max_steps=8):
        messages = [al.Message("user", "?")]
        while True:
            response = model(messages)
            if not response.tool_calls:
                return response.content

    def never_asks(model, tools, max_steps=8):
        done = False
        while not done:
            pass

    asking = q2.judge(keeps_asking).case("stuck, max_steps=3")
    assert asking.message.startswith("kept calling the model: stopped at 40 calls with max_steps=3 — the loop has "
                                     "no working cap")
    hanging = q2.judge(never_asks, time_limit=LIMIT)
    assert hanging.case("normal").status == "timeout"
    assert hanging.case("long-chain, max_steps=8").status == "skipped"


def test_q2_the_wrong_exception_names_the_right_one() -> None:
    def capped_loop(model, tools, max_steps=8):
        try:
            return naive_loop(model, tools, max_steps) or _raise()
        except LookupError:
            raise RuntimeError("cap reached") from None

    def _raise() -> str:
        raise LookupError

    message = q2.judge(capped_loop).case("stuck, max_steps=3").message
    assert message.startswith("raised RuntimeError: cap reached (in capped_loop, line ")
    assert message.endswith("after 3 model calls; expected to raise al.MaxStepsError after 3 model calls — raise "
                            "al.MaxStepsError: it is the RunError (code 'max_steps') callers catch for 'did not "
                            "converge', apart from bugs")


def test_q2_a_wrong_return_type_asks_for_the_text() -> None:
    def capped_loop(model, tools, max_steps=8):
        for _ in range(max_steps):
            response = model([al.Message("user", "?")])
            if not response.tool_calls:
                return response  # the whole response, not its text
        raise al.MaxStepsError("cap")

    message = q2.judge(capped_loop).case("normal").message
    assert message.startswith("returned Response; expected the answer text (a str): return \"notes.txt has 42 "
                              "lines.\" after 3 model calls")


def test_q2_off_by_one_is_named() -> None:
    def capped_loop(model, tools, max_steps=8):
        try:
            return naive_loop(model, tools, max_steps - 1) or _cap(max_steps)
        except TypeError:
            return None

    def _cap(max_steps: int) -> str:
        raise al.MaxStepsError(f"reached max_steps={max_steps}")

    result = q2.judge(capped_loop)
    assert result.case("long-chain, max_steps=8").message == (
        "raised MaxStepsError after 7 model calls; max_steps=8 allows exactly 8 — off by one")
    assert result.case("long-chain, max_steps=11").message.endswith("— the last allowed call must still run")


# --------------------------------------------------------------------------- q3: the wasted-call detector


def test_q3_the_reference_matches_every_run() -> None:
    result = q3.judge(q3.reference())
    assert result.passed, str(result)
    assert result.case("truncated").message == ("matches RunRecord.wasted_calls: content 7, finish_reason 7, "
                                                "tool_calls 0, correct 0")


def test_q3_counting_same_responses_only_fails_on_polling() -> None:
    def count_wasted(rounds):
        return sum(now.response.same_as(before.response) for before, now in itertools.pairwise(rounds))

    result = q3.judge(count_wasted)
    assert [c.name for c in result.failures] == ["cut-off-arguments", "polling (new status each time)",
                                                 "paging (same text, another page)"]
    # the first error message sent back for the cut-off call is new information; only the later repeats are waste
    assert result.case("cut-off-arguments").message.startswith(
        "under content: you counted 7; RunRecord.wasted_calls is 6 (repeats: calls 3, 4, 5, 6, 7, 8;")
    assert result.case("polling (new status each time)").message == (
        "under correct: you counted 2; RunRecord.wasted_calls is 0 (repeats: none; 4 calls in all, 4 steps  "
        "tools[job_status×3])")


def test_q3_ignoring_the_arguments_fails_on_paging() -> None:
    def count_wasted(rounds):
        wasted = 0
        for before, now in itertools.pairwise(rounds):
            new = {(t, x) for t, _, x in tool_results(now.request[now.new_from:])} - {
                (t, x) for t, _, x in tool_results(before.request)}
            wasted += now.response.same_as(before.response) and not new
        return wasted

    result = q3.judge(count_wasted)
    assert [c.name for c in result.failures] == ["paging (same text, another page)"]
    assert result.case("paging (same text, another page)").message.startswith(
        "under correct: you counted 2; RunRecord.wasted_calls is 1 (repeats: call 4;")


def test_q3_an_infinite_loop_an_exception_and_a_wrong_type() -> None:
    def loops(rounds):
        i = 0
        while i < len(rounds):
            pass

    def crashes(rounds):
        return int(rounds[1].repeated) + len(rounds[2:])

    def lists(rounds):
        return [r.step for r in rounds[1:]]

    looping = q3.judge(loops, time_limit=LIMIT)
    assert looping.case("normal").status == "timeout" and looping.case("talk-only").status == "skipped"
    crashing = q3.judge(crashes).case("talk-only").message
    assert crashing.startswith("on talk-only × content your function raised IndexError: tuple index out of range "
                               "(in crashes, line ")
    listing = q3.judge(lists).case("truncated").message
    assert listing == ("on truncated × content your function returned list of 7; expected an int: the number of "
                       "wasted calls")


def test_q3_a_boolean_is_not_a_count() -> None:
    result = q3.judge(lambda rounds: False)
    assert result.case("normal").message.endswith("returned bool (False); expected an int: the number of wasted calls")


def test_q3_summing_the_loops_own_verdict_is_not_possible() -> None:
    result = q3.judge(lambda rounds: sum(r.repeated for r in rounds))
    assert result.status == "incorrect"
    assert "'LoggedCall' object has no attribute 'repeated'" in result.case("normal").message


# --------------------------------------------------------------------------- q2b: one wasted call


def test_q2b_the_reference_agrees_with_the_loop_on_every_pair() -> None:
    from agentloops.exercises.stopping import call_pairs, q2b

    result = q2b.judge(q2b.reference())
    assert result.passed, str(result)
    assert len(result.cases) == len(call_pairs()) >= 20
    assert result.case("truncated × content · call 2").message == (
        "True — the same response, and nothing new was sent in between")


def test_q2b_the_same_response_alone_is_not_waste() -> None:
    from agentloops.exercises.stopping import q2b

    result = q2b.judge(lambda before, now: now.response.same_as(before.response))
    failed = {c.name for c in result.failures}
    assert "cut-off-arguments × content · call 2" in failed
    assert any(name.startswith("polling") for name in failed)
    assert result.case("cut-off-arguments × content · call 2").message == (
        "you said True for call 2; expected False — the same response, but a tool result it had not seen was sent")


def test_q2b_news_alone_is_not_waste_either() -> None:
    from agentloops.exercises.stopping import q2b

    def is_wasted(before, now):  # forgets to compare the responses
        return not set(tool_results(now.request[now.new_from:])) - set(tool_results(before.request))

    result = q2b.judge(is_wasted)
    assert result.case("rephrasing (new words, nothing new learned) · call 4").message == (
        "you said True for call 4; expected False — a different response")
    assert result.case("rephrasing (new words, nothing new learned) · call 3").passed  # word for word: wasted


def test_q2b_one_is_not_true() -> None:
    from agentloops.exercises.stopping import q2b

    message = q2b.judge(lambda before, now: 1).cases[0].message
    assert message == "returned int (1); expected True (wasted) or False"
