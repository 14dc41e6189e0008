"""Each detector on hand-built runs, at its boundaries: one repeat more or less, one failure more or less."""

from __future__ import annotations

from typing import Any

import pytest

from agentloops.diagnose.detectors import (
    FAILURE_STREAK,
    endings,
    failure_streaks,
    find,
    looks_failed,
    reasks,
    tool_repeats,
)
from agentloops.diagnose.model import Ending, Msg, Run, Turn, TurnBuilder
from agentloops.providers import Reply
from agentloops.response import Response

ANSWER = Response(content="42 lines", finish_reason="stop")
CUT = Response(content=None, finish_reason="length")


def call(name: str = "read_file", args: str = '{"path": "a"}', n: int = 1, content: str | None = None) -> Response:
    return Response.model_validate({"content": content, "finish_reason": "tool_calls",
                                    "tool_calls": [{"id": f"c{n}", "name": name, "arguments": args}]})


def result(text: str, n: int = 1, error: bool = False) -> Msg:
    return Msg("tool", text, call_id=f"c{n}", is_error=error)


def make_run(steps: list[tuple[Response, Any]], ending: Ending | None = None, **kwargs: Any) -> Run:
    """steps: (response, results sent with that call's request, or a dict of Turn fields)."""
    turns = []
    for i, (response, extra) in enumerate(steps, start=1):
        fields: dict[str, Any] = {"fresh": True, "user_spoke": False, "results": (), "tokens": 10}
        fields.update(extra if isinstance(extra, dict) else {"results": tuple(extra)})
        turns.append(Turn(i, f"line {i}", Reply.of(response), **fields))
    return Run("r", "line 1", tuple(turns), ending or Ending("returned"), **kwargs)


def kinds(run: Run, **kwargs: Any) -> list[str]:
    return [f.kind for f in find(run, **kwargs)]


# --- re-asks -----------------------------------------------------------------------------------------------

def test_a_response_that_comes_back_with_nothing_new_is_reasked() -> None:
    run = make_run([(CUT, {}), (CUT, {"fresh": False}), (CUT, {"fresh": False})], Ending("raised"))
    [finding] = list(reasks(run))
    assert (finding.count, finding.calls, finding.tokens) == (2, "2-3", 20)


def test_not_reasked_when_something_new_was_sent_or_the_response_changed() -> None:
    assert not list(reasks(make_run([(CUT, {}), (CUT, {"fresh": True})])))
    assert not list(reasks(make_run([(CUT, {}), (ANSWER, {"fresh": False})])))
    assert not list(reasks(make_run([(CUT, {}), (CUT, {"fresh": None})])))  # the log does not show the request


def test_two_separate_spins_are_two_findings() -> None:
    run = make_run([(CUT, {}), (CUT, {"fresh": False}), (ANSWER, {}), (ANSWER, {"fresh": False})])
    assert [f.calls for f in reasks(run)] == ["2", "4"]


# --- repeated tool calls, polling, alternation -------------------------------------------------------------

def test_the_same_call_with_the_same_result_is_a_repeat() -> None:
    run = make_run([(call(n=1), []), (call(n=2), [result("A", 1)]), (call(n=3), [result("A", 2)]),
                    (ANSWER, [result("A", 3)])])
    [finding] = list(tool_repeats(run))
    assert finding.kind == "repeated_tool_call" and finding.count == 2 and finding.calls == "2-3"


def test_one_call_is_not_a_repeat() -> None:
    assert not list(tool_repeats(make_run([(call(n=1), []), (ANSWER, [result("A", 1)])])))


def test_other_arguments_are_another_call() -> None:
    run = make_run([(call(n=1), []), (call(args='{"path": "b"}', n=2), [result("A", 1)]), (ANSWER, [result("A", 2)])])
    assert not list(tool_repeats(run))


def test_arguments_compare_as_json_not_as_text() -> None:
    run = make_run([(call(args='{"path": "a", "n": 1}', n=1), []), (call(args='{"n":1,"path":"a"}', n=2),
                   [result("A", 1)]), (ANSWER, [result("A", 2)])])
    assert [f.kind for f in tool_repeats(run)] == ["repeated_tool_call"]


def test_polling_until_the_result_changes_is_healthy() -> None:
    steps = [(call(n=1), []), (call(n=2), [result("pending", 1)]), (call(n=3), [result("pending", 2)]),
             (ANSWER, [result("done", 3)])]
    assert not list(tool_repeats(make_run(steps)))


def test_a_repeat_after_the_last_change_is_still_a_repeat() -> None:
    steps = [(call(n=1), []), (call(n=2), [result("pending", 1)]), (call(n=3), [result("done", 2)]),
             (ANSWER, [result("done", 3)])]
    [finding] = list(tool_repeats(make_run(steps)))
    assert finding.count == 1 and finding.calls == "3"


def test_alternating_calls_are_ping_pong() -> None:
    a, b = '{"path": "a"}', '{"path": "b"}'
    steps = [(call(args=a, n=1), []), (call(args=b, n=2), [result("A", 1)]), (call(args=a, n=3), [result("B", 2)]),
             (call(args=b, n=4), [result("A", 3)]), (ANSWER, [result("B", 4)])]
    [finding] = list(tool_repeats(make_run(steps)))
    assert finding.kind == "ping_pong" and finding.calls == "3-4"


def _batch(n: int) -> Response:
    """One model call asking for two tools at once (a parallel batch): ids ``a{n}`` and ``b{n}``."""
    return Response.model_validate({"content": None, "finish_reason": "tool_calls", "tool_calls": [
        {"id": f"a{n}", "name": "weather", "arguments": '{"city": "A"}'},
        {"id": f"b{n}", "name": "weather", "arguments": '{"city": "B"}'}]})


def test_a_parallel_batch_sent_again_repeats_each_call_it_does_not_alternate() -> None:
    def answered(n: int) -> list[Msg]:  # results come back in either order, matched by id
        return [Msg("tool", "B: rain", call_id=f"b{n}"), Msg("tool", "A: sun", call_id=f"a{n}")]

    steps = [(_batch(1), []), (_batch(2), answered(1)), (_batch(3), answered(2)), (ANSWER, answered(3))]
    found = [(f.kind, f.calls, f.count) for f in tool_repeats(make_run(steps))]
    assert found == [("repeated_tool_call", "2-3", 2)] * 2  # A B A B in file order, but never across calls


def test_unknown_results_are_never_called_repeats() -> None:
    steps = [(call(n=1), []), (call(n=2), [Msg("tool", None, call_id="c1")]), (ANSWER, [Msg("tool", None, call_id="c2")])]
    assert not list(tool_repeats(make_run(steps)))


def test_results_without_ids_match_by_position() -> None:
    steps = [(call(n=1), []), (call(n=2), [Msg("tool", "A")]), (ANSWER, [Msg("tool", "A")])]
    assert [f.kind for f in tool_repeats(make_run(steps))] == ["repeated_tool_call"]


# --- failures ----------------------------------------------------------------------------------------------

def _failing(failures: int, then_success: bool) -> Run:
    steps: list[tuple[Response, Any]] = [(call(n=1), [])]
    for n in range(2, failures + 1):
        steps.append((call(n=n), [result("error: timeout", n - 1, error=True)]))
    last = failures
    steps.append((call(n=last + 1) if then_success else ANSWER, [result("error: timeout", last, error=True)]))
    if then_success:
        steps.append((ANSWER, [result("ok", last + 1)]))
    return make_run(steps)


def test_a_streak_starts_at_the_threshold() -> None:
    assert FAILURE_STREAK == 3
    assert [f.count for f in failure_streaks(_failing(FAILURE_STREAK, then_success=False))] == [FAILURE_STREAK]
    assert not list(failure_streaks(_failing(FAILURE_STREAK - 1, then_success=False)))


def test_a_retry_after_a_transient_error_is_healthy() -> None:
    run = _failing(2, then_success=True)
    assert kinds(run) == []


def test_a_streak_then_a_success_is_still_a_streak() -> None:
    assert [f.kind for f in failure_streaks(_failing(4, then_success=True))] == ["failure_streak"]


@pytest.mark.parametrize(("text", "failed"), [
    ("Error: connection refused", True), ('{"error": "not found"}', True), ("timed out after 10 s", True),
    ("[ERROR] disk full", True), ("42 lines", False), ("no errors found", False), ("", False),
])
def test_what_looks_like_a_failure(text: str, failed: bool) -> None:
    assert looks_failed(Msg("tool", text)) is failed
    assert looks_failed(Msg("tool", text, is_error=True))


# --- endings -----------------------------------------------------------------------------------------------

def test_a_truncated_round_returned_is_an_abnormal_answer_but_raising_is_fine() -> None:
    assert kinds(make_run([(CUT, {})], Ending("returned"))) == ["abnormal_answer"]
    assert kinds(make_run([(CUT, {})], Ending("raised", "TruncatedError"))) == []


@pytest.mark.parametrize("reason", ["content_filter", "refusal"])
def test_filtered_and_refused_rounds_taken_as_answers(reason: str) -> None:
    run = make_run([(Response(content="", finish_reason=reason), {})], Ending("unknown"))
    [finding] = find(run)
    assert finding.kind == "abnormal_answer" and reason in finding.detail and "no exception logged" in finding.detail


def test_a_run_that_ends_on_tool_calls_is_premature() -> None:
    assert kinds(make_run([(call(content="let me look"), {})])) == ["premature_answer"]
    assert kinds(make_run([(call(), {}), (ANSWER, [result("A")])])) == []


def test_a_cut_off_tool_call_is_abnormal_not_premature() -> None:
    cut = Response.model_validate({"content": None, "finish_reason": "length",
                                   "tool_calls": [{"id": "c1", "name": "read_file", "arguments": '{"path": "no'}]})
    assert kinds(make_run([(cut, {})])) == ["abnormal_answer"]


def test_a_cap_the_log_reports_returns_the_last_text() -> None:
    run = make_run([(call(n=1), []), (call(args='{"path": "b"}', n=2), [result("A", 1)])],
                   Ending("returned", hit_cap=True))
    assert kinds(run) == ["cap_returned_last"]


def test_a_spin_that_ends_the_log_was_stopped_by_a_cap() -> None:
    run = make_run([(CUT, {}), (CUT, {"fresh": False})], Ending("unknown"))
    assert kinds(run) == ["reasked", "cap_returned_last"]


def test_max_steps_marks_a_run_that_used_every_step() -> None:
    run = make_run([(call(n=1), []), (call(args='{"path": "b"}', n=2), [result("A", 1)])], Ending("unknown"))
    assert kinds(run, max_steps=2) == ["cap_returned_last"]
    assert kinds(run, max_steps=3) == ["premature_answer"]
    assert kinds(run) == ["premature_answer"]


def test_an_incomplete_run_has_no_ending_finding() -> None:
    assert kinds(make_run([(CUT, {})], complete=False)) == []


def test_answering_the_user_mid_conversation_with_a_cut_off_round() -> None:
    run = make_run([(CUT, {}), (ANSWER, {"user_spoke": True})])
    [finding] = list(endings(run))
    assert finding.kind == "abnormal_answer" and finding.calls == "1"
    with_results = make_run([(call(), {}), (ANSWER, {"user_spoke": True, "results": (result("A"),)})])
    assert not list(endings(with_results))


# --- the turn builder: what counts as new ------------------------------------------------------------------

def test_a_repeated_tool_result_is_not_new_information() -> None:
    builder = TurnBuilder()
    user = Msg("user", "how many lines?")
    reply = Msg("assistant", None, (("read_file", '{"path":"a"}'),))
    first = builder.add("1", (user,), Reply.of(call(n=1)), None)
    second = builder.add("2", (user, reply, result("A", 1)), Reply.of(call(n=2)), None)
    third = builder.add("3", (user, reply, result("A", 1), reply, result("A", 2)), Reply.of(call(n=3)), None)
    fourth = builder.add("4", (user, reply, result("A", 1), reply, result("A", 2), reply, result("B", 3)),
                         Reply.of(ANSWER), None)
    assert [t.fresh for t in (first, second, third, fourth)] == [True, True, False, True]
    assert [len(t.results) for t in (first, second, third, fourth)] == [0, 1, 1, 1]


def test_a_rewritten_history_is_compared_message_by_message() -> None:
    builder = TurnBuilder()
    builder.add("1", (Msg("user", "q"), Msg("user", "more")), Reply.of(CUT), None)
    assert builder.add("2", (Msg("user", "q"),), Reply.of(CUT), None).fresh is False
    assert builder.add("3", (Msg("user", "other"),), Reply.of(CUT), None).fresh is True


def test_a_request_the_log_does_not_show_is_unknown() -> None:
    builder = TurnBuilder()
    builder.add("1", None, Reply.of(CUT), None)
    assert builder.add("2", None, Reply.of(CUT), None).fresh is None


# --- what a finding says: where it points, which calls, how many, and its sentence -------------------------

def _sequence(*names: str) -> Run:
    """Calls of the named tools in order (each result is its tool's name in capitals), then an answer."""
    steps: list[tuple[Response, Any]] = []
    for n, name in enumerate(names, start=1):
        steps.append((call(name=name, args="{}", n=n), [result(names[n - 2].upper(), n - 1)] if n > 1 else []))
    steps.append((ANSWER, [result(names[-1].upper(), len(names))]))
    return make_run(steps)


def test_a_ping_pong_points_at_its_first_repeat_and_names_each_tool_once() -> None:
    [finding] = list(tool_repeats(_sequence("a", "b", "a", "b")))
    assert (finding.where, finding.calls, finding.count) == ("line 3", "3-4", 2)
    assert finding.detail == "a({}) and b({}) alternate, each returning what it returned before"


def test_three_tools_taking_turns_are_named_in_the_order_they_alternate() -> None:
    [finding] = list(tool_repeats(_sequence("a", "b", "a", "b", "c", "b", "c")))
    assert finding.kind == "ping_pong" and finding.detail.startswith("a({}) and b({}) and c({}) alternate")


def test_a_failure_streak_points_at_its_first_failure_and_quotes_the_last() -> None:
    steps: list[tuple[Response, Any]] = [(call(n=1), [])]
    for n, text in enumerate(["error: timeout", "error: refused"], start=2):
        steps.append((call(n=n), [Msg("tool", text, call_id=f"c{n - 1}", name="read_file", is_error=True)]))
    steps.append((ANSWER, [Msg("tool", "error: gone", call_id="c3", name="fetch", is_error=True)]))
    [finding] = list(failure_streaks(make_run(steps)))
    assert (finding.where, finding.calls, finding.count, finding.tokens) == ("line 1", "1-3", 3, 30)
    assert finding.detail == "3 tool results in a row failed (fetch, read_file): 'error: gone'"


def test_a_reask_names_the_call_whose_response_came_back() -> None:
    run = make_run([(ANSWER, {}), (CUT, {}), (CUT, {"fresh": False}), (CUT, {"fresh": False})], Ending("raised"))
    [finding] = list(reasks(run))
    assert finding.detail.startswith("call 2's response came back 2 more time(s) with nothing new sent")


@pytest.mark.parametrize(("steps", "ending", "kind"), [
    ([(CUT, {})], Ending("returned"), "abnormal_answer"),
    ([(call(content="let me look"), {})], Ending("returned"), "premature_answer"),
    ([(call(n=1), []), (call(args='{"path": "b"}', n=2), [result("A", 1)])], Ending("returned", hit_cap=True),
     "cap_returned_last"),
])
def test_an_ending_is_one_finding_about_one_call(steps: list[tuple[Response, Any]], ending: Ending, kind: str) -> None:
    [finding] = find(make_run(steps, ending))
    assert (finding.kind, finding.count, finding.calls, finding.where) == (kind, 1, str(len(steps)), f"line {len(steps)}")


def test_a_one_call_log_whose_request_shows_nothing_new_did_not_spin() -> None:
    assert kinds(make_run([(ANSWER, {"fresh": False})])) == []


def test_a_ping_pong_names_its_tools_in_chinese_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentloops.i18n import set_language

    for name in ("AGENTLOOPS_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        monkeypatch.delenv(name, raising=False)
    set_language("zh")
    try:
        [finding] = list(tool_repeats(_sequence("a", "b", "a", "b")))
    finally:
        set_language(None)
    assert finding.shown.index("a({})") < finding.shown.index("b({})") and finding.shown.count("a({})") == 1
    assert finding.detail.startswith("a({}) and b({})")
