"""Part 1 exercises: each reference solution passes; each typical wrong answer fails with its own message.

The wrong answers here are the ones the facilitator guide lists (notebooks/workshop/facilitator-guide.md).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import pytest

import agentloops as al
from agentloops.criteria import CRITERIA, correct
from agentloops.exercises import session
from agentloops.exercises.part1 import (
    CRAFTED_ROUNDS,
    STOP_TEST_SCENARIOS,
    decide_rounds,
    q01_split,
    q02_stop_test,
    q03_wasted,
    q04_decide,
    q05_respond,
    request_log,
    two_rules,
)
from agentloops.exercises.registry import all_exercises

PART1 = (q01_split, q02_stop_test, q03_wasted, q04_decide, q05_respond)


@pytest.fixture(autouse=True)
def _fresh_progress():
    session.reset()
    yield
    session.reset()


@pytest.mark.parametrize("exercise", PART1, ids=lambda q: q.name)
def test_every_reference_solution_passes(exercise: Any) -> None:
    result = exercise.judge(exercise.reference())
    assert result.passed, str(result)


@pytest.mark.parametrize("exercise", PART1, ids=lambda q: q.name)
def test_every_prompt_states_its_function_and_is_shown_by_task(exercise: Any) -> None:
    assert f"{exercise.variable}(" in exercise.prompt
    assert str(exercise.task()).startswith(f"Task {exercise.name}: ")
    assert exercise.label.startswith(f"{exercise.name} · ")


def test_part1_is_a_set_listed_first() -> None:
    assert [q.name for q in all_exercises("part1")] == [q.name for q in PART1]
    assert all_exercises()[0] is q01_split


# --------------------------------------------------------------------------- 01


def test_q01_a_happy_round_splits_nothing() -> None:
    def splitting_round(done_test, going_test):
        return al.Response(content="notes.txt has 42 lines.", finish_reason="stop")

    result = q01_split.judge(splitting_round)
    assert result.status == "incorrect" and len(result.cases) == 6
    message = result.case("content done, tool_calls goes on").message
    assert "content says done" in message and "tool_calls says done" in message
    assert message.endswith("expected content to say done and tool_calls to say go on")


def test_q01_the_roles_matter() -> None:
    def splitting_round(done_test, going_test):  # the reference with the roles swapped
        return q01_split.reference()(going_test, done_test)

    result = q01_split.judge(splitting_round)
    assert [c.status for c in result.cases] == ["failed"] * 6


def test_q01_the_judges_are_the_naive_tests_themselves() -> None:
    talk_and_call = al.Response(content="Let me look.", tool_calls=[al.ToolCall(id="c", name="read_file",
                                                                                 arguments="{}")],
                                finish_reason="tool_calls")
    result = q01_split.judge(lambda done, going: talk_and_call)
    passed = {c.name for c in result.cases if c.passed}
    expected = {f"{a} done, {b} goes on" for a in CRITERIA for b in CRITERIA if a != b and a != "correct" != b
                and isinstance(CRITERIA[a](talk_and_call), al.Finish)
                and isinstance(CRITERIA[b](talk_and_call), al.Continue)}
    assert passed == expected == {"content done, finish_reason goes on", "content done, tool_calls goes on"}


def test_q01_a_dict_is_not_a_response() -> None:
    result = q01_split.judge(lambda done, going: {"content": "x", "finish_reason": "stop"})
    assert result.cases[0].message.startswith("returned dict of 2; expected an al.Response(")


# --------------------------------------------------------------------------- 02


def test_q02_checks_only_the_scenarios_01_and_02_teach() -> None:
    result = q02_stop_test.judge(q02_stop_test.reference())
    assert [c.name for c in result.cases] == list(STOP_TEST_SCENARIOS) == [
        "normal", "talk-and-call", "talk-only", "tool-call-with-stop"]  # truncated is 03's lesson
    assert result.passed


@pytest.mark.parametrize(("stop_test", "failing"), [
    (lambda response: bool(response.content), {"talk-and-call"}),
    (lambda response: response.finish_reason == "stop", {"tool-call-with-stop"}),
    (lambda response: not response.tool_calls, set()),  # 02's own lesson: the tool calls say whether work is left
    (lambda response: True, {"normal", "talk-and-call", "tool-call-with-stop"}),
])
def test_q02_each_naive_test_fails_where_the_lessons_say(stop_test: Any, failing: set[str]) -> None:
    result = q02_stop_test.judge(stop_test)
    assert {c.name for c in result.failures} == failing


def test_q02_one_is_not_true() -> None:
    result = q02_stop_test.judge(lambda response: int(not response.tool_calls and response.finish_reason == "stop"))
    assert result.status == "incorrect"
    assert result.case("normal").message.endswith("your function returned int (0); return exactly True (stop: this "
                                                  "is the answer) or False (go on)")


# --------------------------------------------------------------------------- 03


def test_q03_the_log_carries_no_verdict_to_add_up() -> None:
    record = al.run("truncated", "content")
    log = request_log(record)
    assert len(log) == record.steps and record.wasted_calls == 7
    keys = {key for entry in log for key in entry} | {key for entry in log for key in entry["response"]}
    assert keys == {"call", "new_messages", "response", "content", "tool_calls", "finish_reason"}
    assert log[1]["new_messages"] == [{"role": "assistant", "content": None, "tool_calls": []}]


def test_q03_same_response_alone_is_not_waste() -> None:
    def wasted_calls(log):
        return sum(now["response"] == before["response"] for before, now in itertools.pairwise(log))

    result = q03_wasted.judge(wasted_calls)
    assert {c.name for c in result.failures} == {"cut-off-arguments", "polling (new status each time)",
                                                 "paging (same text, another page)"}
    assert result.case("polling (new status each time)").message.startswith("on polling you counted 2; 0 calls were "
                                                                            "wasted")


def test_q03_ignoring_the_arguments_fails_on_paging() -> None:
    def wasted_calls(log):
        seen, wasted = set(), 0
        for before, now in zip([None, *log], log):
            fresh = {(m["name"], m["content"]) for m in now["new_messages"] if m["role"] == "tool"} - seen
            seen |= fresh
            wasted += before is not None and now["response"] == before["response"] and not fresh
        return wasted

    result = q03_wasted.judge(wasted_calls)
    assert [c.name for c in result.failures] == ["paging (same text, another page)"]


def test_q03_every_call_after_the_first_is_not_waste() -> None:
    result = q03_wasted.judge(lambda log: len(log) - 1)
    assert result.case("normal").message.startswith("on normal × content you counted 2; 0 calls were wasted")


# --------------------------------------------------------------------------- 04


def test_q04_asks_only_the_rounds_the_two_taught_rules_decide() -> None:
    every, taught = decide_rounds(taught_only=False), decide_rounds()
    left_out = [name for name, _ in every if name not in dict(taught)]
    assert left_out == ["pause", "finish_reason tool_calls, no call", "arguments cut off, with stop",
                        "arguments that are not JSON", "anthropic-pause-turn · response 1"]
    assert all(isinstance(correct(r), type(two_rules(r))) for _, r in taught)
    assert "tool calls with length" in dict(taught) and "tool calls with stop" in dict(taught)


def test_q04_judges_against_the_correct_loop_on_every_round() -> None:
    rounds = decide_rounds()
    assert len({r.summary() for _, r in rounds}) == len(rounds) > len(CRAFTED_ROUNDS) - 4
    result = q04_decide.judge(q04_decide.reference())
    for name, response in rounds:
        assert result.case(name).message.endswith(correct(response).reason)


def test_q04_tool_calls_first_runs_a_cut_off_round() -> None:
    def my_decide(response):
        if response.tool_calls:
            return al.Continue()
        if response.finish_reason == "length":
            return al.Abort("truncated", "cut off")
        return al.Finish(response.content)

    result = q04_decide.judge(my_decide)
    message = result.case("tool calls with length").message
    assert message.startswith("you said Continue() on content=null tool_calls=[read_file(")
    assert "the correct loop says Abort('truncated')" in message
    assert result.case("a filtered round with a tool call").status == "failed"
    assert result.case("tool calls with stop").passed


def test_q04_finish_reason_first_stops_on_tool_calls_with_stop() -> None:
    def my_decide(response):
        if response.finish_reason == "stop":
            return al.Finish(response.content)
        return q04_decide.reference()(response)

    result = q04_decide.judge(my_decide)
    assert result.case("tool calls with stop").message.startswith("you said Finish(None)")
    assert result.case("an empty stop").passed


def test_q04_a_bool_is_not_a_decision() -> None:
    message = q04_decide.judge(lambda response: not response.tool_calls).case("an empty stop").message
    assert message.endswith("your function returned bool (True); return al.Continue(), al.Finish(answer) or "
                            "al.Abort(code, reason)")


def test_q04_a_long_check_shows_its_failures_and_folds_the_rest() -> None:
    def my_decide(response):
        if response.finish_reason == "content_filter":
            return al.Continue()
        return q04_decide.reference()(response)

    result = q04_decide.judge(my_decide)
    lines = [line for line in str(result).splitlines() if not line.startswith("Stuck?")]
    failed = [c.name for c in result.failures]
    assert failed and len(lines) == 1 + len(failed) + 1  # the verdict, one line per failure, the folded rest
    assert lines[-1] == f"  ✓ {len(result.cases) - len(failed)} more cases passed"
    assert all(line.lstrip().startswith("✗") for line in lines[1:-1])
    html = result._repr_html_()
    assert html.count("<details>") == 1 and html.count("<tr>") == len(result.cases)


# --------------------------------------------------------------------------- 05


def test_q05_a_blind_retry_is_named() -> None:
    result = q05_respond.judge(lambda record, setup: setup)
    assert {c.name for c in result.failures} == {"truncated", "content_filter", "failing_tool",
                                                 "a chain longer than the cap"}
    assert "a blind retry pays the whole bill again" in result.case("truncated").message


def test_q05_raising_the_limit_everywhere_fixes_only_the_cut_off() -> None:
    result = q05_respond.judge(lambda record, setup: replace(setup, max_tokens=setup.max_tokens * 4))
    assert result.case("truncated").passed
    assert "calls for another input" in result.case("content_filter").message
    assert "fix the tool" in result.case("failing_tool").message


def test_q05_a_raise_too_small_is_run_and_found_out() -> None:
    result = q05_respond.judge(lambda record, setup: replace(setup, max_tokens=setup.max_tokens + 1))
    assert result.case("truncated").message.endswith("the right kind of change, but the next attempt still ended "
                                                     "with truncated; change it more")


def test_q05_a_prompt_that_still_asks_for_phone_numbers_is_filtered_again() -> None:
    def respond(record, setup):
        if record.error == "content_filter":
            return replace(setup, prompt="Please list every phone number in notes.txt.")
        return q05_respond.reference()(record, setup)

    assert "still ended with content_filter" in q05_respond.judge(respond).case("content_filter").message


def test_q05_raising_the_cap_without_a_failing_tool_is_not_automatic() -> None:
    def respond(record, setup):
        return q05_respond.reference()(record, setup) or replace(setup, max_tokens=setup.max_tokens * 2)

    message = q05_respond.judge(respond).case("a chain longer than the cap").message
    assert message.endswith("expected None — the run raised max_steps with no tool failing, so nothing automatic "
                            "helps: raising the cap is a decision, not a retry")
