"""Exercise set 2: each checker passes the reference solution and fails wrong ones with the right message."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from agentloops.controller import DEFAULT_POLICY, route
from agentloops.controller.vocabulary.tools import TRANSIENT
from agentloops.errors import UsageError
from agentloops.exercises import session
from agentloops.exercises.controlling import (
    COMPLETION_CASES,
    RANDOM_SEED,
    REPEAT_CASES,
    ROUTING_CASES,
    Action,
    Attempt,
    controller_repeat,
    price_state,
    q4,
    q5,
    q6,
    random_history,
)

LIMIT = 0.5


@pytest.fixture(autouse=True)
def _fresh_progress():
    session.reset()
    yield
    session.reset()


# --------------------------------------------------------------------------- q4: repeats and retries


def test_q4_the_reference_agrees_with_the_progress_monitor() -> None:
    result = q4.judge(q4.reference())
    assert result.passed, str(result)
    from agentloops.controller import fingerprint

    shown = fingerprint("get_weather", {"city": "Beijing"}, 2)  # however the controller normalises it
    assert result.case("retry after a timeout").message.startswith(f"False — not a repeat: the last attempt with "
                                                                   f"{shown} (turn 2) ended in timeout, so this is "
                                                                   "a retry")


def test_q4_the_named_situations_cover_both_answers() -> None:
    answers = {name: controller_repeat(action, history)[0] for name, action, history in REPEAT_CASES}
    assert answers["asked again, nothing new"] and answers["same call, spaced differently"]
    assert not answers["retry after a timeout"] and not answers["the state moved on"]
    assert answers["timeout, then a fruitless retry"]


def test_q4_random_histories_are_coherent_and_mixed() -> None:
    rng = random.Random(RANDOM_SEED)
    cases = [random_history(rng) for _ in range(200)]
    for _, history in cases:  # a new observation always moves the state version
        for before, after in itertools.pairwise(history):
            assert after.action.state_version == before.action.state_version + int(before.new_observation)
    verdicts = {controller_repeat(action, history)[0] for action, history in cases}
    assert verdicts == {True, False}


def test_q4_blocking_every_retry_fails_with_the_reason() -> None:
    def is_repeat(action, history):
        return any(a.action == action and not a.new_observation for a in history)

    result = q4.judge(is_repeat)
    message = result.case("retry after a timeout").message
    assert message.startswith("you said True for get_weather(city='Beijing') at v2 after: turn 2: "
                              "get_weather(city='Beijing') at v2 → timeout, nothing new; expected False — not a "
                              "repeat:")
    assert result.case("same call, spaced differently").status == "failed"  # no normalisation either


def test_q4_ignoring_the_state_version_fails() -> None:
    from agentloops.controller import fingerprint

    def is_repeat(action, history):
        key = fingerprint(action.tool, action.args, 0)
        same = [a for a in history if fingerprint(a.action.tool, a.action.args, 0) == key]
        return bool(same) and not same[-1].new_observation and same[-1].status not in TRANSIENT

    message = q4.judge(is_repeat).case("the state moved on").message
    assert message.startswith("you said True for get_weather(city='Beijing') at v3")
    shown = fingerprint("get_weather", {"city": "Beijing"}, 3)
    assert message.endswith(f"expected False — not a repeat: nothing was done with fingerprint {shown} before")


def test_q4_an_infinite_loop_an_exception_and_a_wrong_type() -> None:
    def loops(action, history):
        while history:
            pass
        return False

    looping = q4.judge(loops, time_limit=LIMIT)
    assert looping.case("first call").passed
    assert looping.case("asked again, nothing new").status == "timeout"
    assert looping.case("the state moved on").status == "skipped"

    crashing = q4.judge(lambda action, history: history[-1].status == "ok").case("first call").message
    assert crashing.startswith("your function raised IndexError: list index out of range (in <lambda>, line ")
    assert crashing.endswith("on get_weather(city='Beijing') at v2 after: nothing yet")

    typed = q4.judge(lambda action, history: "repeat").case("first call").message
    assert typed == ("your function returned str ('repeat'); expected True (a repeat: stop before running it) or "
                     "False (let it run)")


# --------------------------------------------------------------------------- q5: error routing


def test_q5_the_reference_agrees_with_route() -> None:
    result = q5.judge(q5.reference())
    assert result.passed, str(result)
    assert len(result.cases) == len(ROUTING_CASES)


def test_q5_route_values_are_accepted_as_moves() -> None:
    assert q5.judge(lambda result, ctx: route(DEFAULT_POLICY, result, ctx)).passed


def test_q5_the_naive_retry_branch_fails_with_the_controllers_reason() -> None:
    result = q5.judge(lambda result, ctx: "retry")
    assert {c.name for c in result.cases if c.passed} == {
        "timeout · 1st attempt, retries left", "timeout · 2nd attempt, the fallback is on the same service",
        "rate_limited · 1st attempt, retries left"}
    assert result.case("timeout · the tool has side effects").message == (
        "you said 'retry' (tool write_tool (side effects), attempt 1, retries left: 3); the controller says 'stop' — "
        "stop:handed_off: write_tool changes the world and ended in timeout: whether it took effect is unknown, so "
        "a person must check before anything is repeated")
    assert result.case("missing_parameter").message.endswith(
        "the controller says 'ask_user' — ask_user: only the user can supply it; guessing spreads errors")


def test_q5_routing_around_a_denial_fails() -> None:
    def next_move(result, ctx):
        if result.status == "permission_denied" and ctx.fallback is not None:
            return "fallback"
        return q5.reference()(result, ctx)

    result = q5.judge(next_move)
    assert [c.name for c in result.failures] == ["permission_denied"]
    assert result.case("permission_denied").message.endswith(
        "the controller says 'stop' — stop:failed_unrecoverable: read_tool: the caller lacks orders:refund; no other "
        "tool may be used to get around it")


def test_q5_an_infinite_loop_an_exception_a_wrong_type_and_a_made_up_move() -> None:
    def loops(result, ctx):
        while result.status == "empty":
            pass
        return "accept"

    looping = q5.judge(loops, time_limit=LIMIT)
    assert looping.case("ok").passed
    assert [c.status for c in looping.cases[1:4]] == ["timeout", "timeout", "skipped"]

    crashing = q5.judge(lambda result, ctx: {"ok": "accept"}[result.status]).case("empty · the task accepts 'not "
                                                                                   "found'").message
    assert crashing.startswith("your function raised KeyError: 'empty' (in <lambda>, line ")
    assert crashing.endswith("on status empty (tool read_tool, attempt 1, retries left: 3, 'not found' is an answer)")

    typed = q5.judge(lambda result, ctx: 3).case("ok").message
    assert typed == ("your function returned int (3); expected one of: 'accept', 'accept_not_found', 'ask_user', "
                     "'repair', 'retry', 'fallback', 'degrade', 'stop'")
    made_up = q5.judge(lambda result, ctx: "ask").case("ok").message
    assert made_up.startswith("your function returned 'ask', which is not a move; expected one of: 'accept'")


# --------------------------------------------------------------------------- q6: a completion condition


def test_q6_the_reference_agrees_with_every_expected_assessment() -> None:
    result = q6.judge(q6.reference())
    assert result.passed, str(result)
    assert {expected for _, _, expected, _ in COMPLETION_CASES} == {"complete", "incomplete", "impossible"}


def test_q6_trusting_any_two_items_fails_on_sources_and_currency() -> None:
    def price_compare_done(state):
        done = len(state.done_items())
        if done >= 2:
            return "complete"
        return "impossible" if done + len(state.open_items()) < 2 else "incomplete"

    result = q6.judge(price_compare_done)
    assert {c.name for c in result.failures} == {"two prices, one without a source", "two prices, one in USD",
                                                 "EUR, USD and a shop given up", "a sourceless price, a shop given up"}
    assert result.case("two prices, one in USD").message == (
        "you said 'complete' for shop-a: 19.9 EUR from shop-a/prices#call_1, shop-b: 23.0 USD from "
        "shop-b/prices#call_2; expected 'incomplete' — a USD price does not answer a EUR question; shop-c is still "
        "open")


def test_q6_never_saying_impossible_fails() -> None:
    def price_compare_done(state):
        return "complete" if len(state.done_items()) >= 2 else "incomplete"

    message = q6.judge(price_compare_done).case("one price, two shops given up").message
    assert message.endswith("expected 'impossible' — only 1 usable price and no shop left to ask")


def test_q6_an_infinite_loop_an_exception_and_a_wrong_type() -> None:
    def loops(state):
        while state.open_items():
            pass
        return "complete"

    looping = q6.judge(loops, time_limit=LIMIT)
    assert looping.case("nothing found yet").status == "timeout"
    assert looping.case("all three prices").status == "skipped"

    def crashes(state):
        return "complete" if sum(f.value["price"] for f in state.facts.values()) else "incomplete"

    crashing = q6.judge(crashes)
    assert crashing.case("nothing found yet").passed  # no fact: nothing to index
    assert crashing.case("one price").message.startswith("your function raised KeyError: 'price' (in ")
    assert crashing.case("one price").message.endswith("on the state shop-a: 19.9 EUR from shop-a/prices#call_1")

    typed = q6.judge(lambda state: bool(state.facts)).case("two prices").message
    assert typed == "your function returned bool (True); expected one of 'complete', 'incomplete', 'impossible'"


def test_price_state_builds_through_the_task_state_api() -> None:
    state = price_state({"shop-a": (19.9, "EUR", "shop-a/prices#call_1"), "shop-b": "not found"})
    assert state.done_items() == ["price:shop-a"] and state.open_items() == ["price:shop-c"]
    assert state.missing_items() == {"price:shop-b": "not found"} and state.version == 2
    with pytest.raises(UsageError, match="price_state: unknown shop 'shop-z'; expected one of: shop-a, shop-b"):
        price_state({"shop-z": "closed"})
    with pytest.raises(UsageError, match=r"price_state: shop-a: expected \(amount, currency, source\) or a reason"):
        price_state({"shop-a": (19.9, "EUR")})  # type: ignore[dict-item]


def test_actions_and_attempts_read_as_text() -> None:
    attempt = Attempt(Action("get_weather", {"city": "Beijing"}, 2), "timeout", False, 3)
    assert str(attempt) == "turn 3: get_weather(city='Beijing') at v2 → timeout, nothing new"


def test_q5_states_a_rule_for_every_status_it_checks() -> None:
    from agentloops.exercises.controlling import MOVES, ROUTING_CASES

    statuses = {result.status for _, result, _ in ROUTING_CASES}
    for status in statuses:
        assert re.search(rf"\b{status}\b[^.]*→", q5.prompt), status
    assert all(move in q5.prompt for move in MOVES)
    assert str(q5.task()).startswith("Task q5: Write next_move(result, ctx) returning one of: accept,")
