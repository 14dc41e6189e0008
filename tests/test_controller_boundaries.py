"""The decision logic's boundaries, each pinned by a test that fails if it moves by one — and the behaviours
the last mutation sample found untested (a hand-off resumed by the model, a repeat inside a productive batch,
failing turns that still progressed, a result exactly at the join deadline, unusable data marked retryable)."""

from __future__ import annotations

from typing import Any

import pytest

from agentloops import ScriptedModel
from agentloops.controller import Controller, make_task, resume, run_scenario
from agentloops.controller.policy.budgets import within
from agentloops.controller.policy.error_policy import DEFAULT_POLICY, RouteContext, route
from agentloops.controller.sim.faults import Fault
from agentloops.controller.stopping.status import Stop
from agentloops.controller.task.world import TOOLS
from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.controller.vocabulary.ledger import Arrival
from agentloops.controller.vocabulary.tools import Toolbox, ToolResult

WEATHER = make_task("weather_compare", cities=["Shanghai", "Beijing"])


def call(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"content": None, "finish_reason": "tool_calls",
            "tool_calls": [{"id": f"c{i}", "name": tool, "arguments": args} for i, (tool, args) in enumerate(calls)]}


def answer(text: str) -> dict[str, Any]:
    return {"content": text, "finish_reason": "stop"}


# -- the survivors of the last mutation sample --------------------------------------------------------------


def test_a_handed_off_run_is_for_a_person_and_the_model_cannot_resume_it() -> None:
    run = run_scenario("refund-handoff")
    assert run.status == "handed_off" and run.saved is not None  # its state is kept, for the person
    with pytest.raises(ConfigError, match="handed_off"):
        resume(run.saved, "go ahead")
    with pytest.raises(ConfigError, match="handed_off"):
        resume(run, "go ahead")


def test_one_repeat_inside_a_productive_batch_is_skipped_and_the_run_goes_on() -> None:
    task = make_task("research", sources=["s1", "s2", "s3"], minimum=3)
    script = [call(("fetch", {"source_id": "zz"})),  # nothing there: a fruitless action
              call(("fetch", {"source_id": "zz"}), ("fetch", {"source_id": "s1"}), ("fetch", {"source_id": "s2"})),
              call(("fetch", {"source_id": "s3"})), answer("Summary of s1, s2 and s3.")]
    run = Controller(task, ScriptedModel(script)).run()
    assert "blocked:fetch(source_id=zz)" in run.actions  # the repeat itself did not run …
    blocked = next(a for t in run.turns for a in t.actions if a["label"] == "blocked:fetch(source_id=zz)")
    assert blocked["route"] == "skip"  # … it was skipped, not taken for the run's stop
    assert (run.status, run.code) == ("succeeded", "completion_condition_met")  # … and the batch's progress counted


def test_a_batch_that_only_repeats_stops_as_no_progress() -> None:
    task = make_task("research", sources=["s1", "s2"], minimum=2)
    script = [call(("fetch", {"source_id": "zz"}), ("fetch", {"source_id": "yy"})),
              call(("fetch", {"source_id": "zz"}), ("fetch", {"source_id": "yy"}))]
    run = Controller(task, ScriptedModel(script)).run()
    assert (run.status, run.code) == ("no_progress", "repeated_action")


def test_failing_turns_that_still_progress_never_count_towards_a_hand_off() -> None:
    """Each turn has one failing call and one new fact: more failing turns than the limit, and no hand-off."""
    limit = DEFAULT_POLICY.max_consecutive_failures
    assert limit is not None
    sources = [f"s{i}" for i in range(1, limit + 3)]
    task = make_task("research", sources=sources, minimum=len(sources))
    task = task.with_budget(steps=20, model_calls=20, tool_calls=40)
    script = [call(("fetch", {"source_id": source}), ("fetch", {"source_id": f"missing-{source}"}))
              for source in sources] + [answer("Summary of every source.")]
    run = Controller(task, ScriptedModel(script)).run()
    assert sum("missing-" in a for a in run.actions) > limit
    assert (run.status, run.code) == ("succeeded", "completion_condition_met")


@pytest.mark.parametrize(("turns", "handed_off"), [(-1, False), (0, True)])
def test_failing_turns_without_progress_hand_off_exactly_at_the_limit(turns: int, handed_off: bool) -> None:
    limit = DEFAULT_POLICY.max_consecutive_failures
    assert limit is not None
    task = make_task("research", sources=["s1"], minimum=1)
    script = [call(("fetch", {"source_id": f"missing-{i}"})) for i in range(limit + turns)] + \
        [call(("fetch", {"source_id": "s1"})), answer("Summary of s1.")]
    run = Controller(task, ScriptedModel(script)).run()
    assert (run.status == "handed_off" and run.code == "consecutive_failures") is handed_off, run.status


def _arrival(at: float, call_id: str) -> Arrival:
    return Arrival(at, call_id, ToolResult("ok", data={"x": 1}), 1, "t")


@pytest.mark.parametrize(("at", "taken"), [(5.0 - 1e-3, True), (5.0, True), (5.0 + 1e-3, False)])
def test_a_result_arriving_exactly_at_the_join_deadline_is_still_taken(at: float, taken: bool) -> None:
    from agentloops.controller.calls import _wait
    from agentloops.controller.engine import Turn

    run = _refund_controller(DEFAULT_POLICY).current  # a call the ledger does not know: taken, then refused
    queue = [_arrival(at, "a")]
    outcome, stop, _statuses = _wait(run, Turn(1, 0, "-"), {}, queue, 5.0, 1)
    assert (outcome, stop, len(queue)) == (("all arrived", None, 0) if taken else ("deadline", None, 1))


def test_unusable_data_is_not_retried_as_if_it_were_a_transient_failure() -> None:
    """A service answering for the wrong city: its data is refused, and the refusal is not retryable."""
    wrong_city = TOOLS["get_weather"].__class__(**{**TOOLS["get_weather"].__dict__,
                                                   "handler": lambda args: {"city": "Paris", "temp_c": 9,
                                                                            "conditions": "rain"}})
    tools = Toolbox.of([wrong_city, TOOLS["weather_backup"]])
    run = Controller(WEATHER, ScriptedModel([call(("get_weather", {"city": "Shanghai"})), answer("done")]),
                     tools=tools).run()
    assert run.actions[:2] == ["get_weather(city=Shanghai)", "fallback:weather_backup(city=Shanghai)"]
    assert run.usage["retries"] == 1  # the switch to the fallback, never a retry of the same data
    first = next(a for t in run.turns for a in t.actions if a["tool"] == "get_weather")
    assert (first["status"], first["route"], first["result"]["retryable"]) == ("permanent_error", "fallback", False)


# -- every limit, at its boundary ------------------------------------------------------------------------------


@pytest.mark.parametrize(("used", "amount", "limit", "allowed"), [
    (2, 1, 3, True), (3, 1, 3, False), (2.5, 0.5, 3.0, True), (2.5, 0.5 + 1e-3, 3.0, False), (10**9, 1, None, True),
    (3, 1e-6, 3, True)])  # the last: the clock keeps microseconds, so a microsecond of rounding is tolerated
def test_the_budget_check_allows_reaching_a_limit_and_nothing_past_it(used, amount, limit, allowed) -> None:
    assert within("steps", used, amount, limit) is allowed


@pytest.mark.parametrize("budget", ["steps", "model_calls", "tool_calls"])
@pytest.mark.parametrize(("cut", "stops"), [(0, False), (-1, True)])
def test_each_count_budget_stops_a_run_exactly_one_below_what_it_needs(budget: str, cut: int, stops: bool) -> None:
    used = run_scenario("weather-normal").usage[budget]
    run = run_scenario("weather-normal", budget=WEATHER.budget.with_values(**{budget: int(used) + cut}))
    assert (run.status == "budget_exhausted" and run.code == f"budget:{budget}") is stops, (run.status, run.code)
    assert (run.status == "succeeded") is not stops


@pytest.mark.parametrize(("retries", "attempts"), [(1, 2), (2, 3), (3, 4)])
def test_the_shared_retry_budget_allows_exactly_its_number_of_retries(retries: int, attempts: int) -> None:
    faults = [Fault(tool="get_weather", kind="timeout", times=10, match={"city": "Beijing"}),
              Fault(tool="weather_backup", kind="timeout", times=10)]
    policy = DEFAULT_POLICY.model_copy(update={"attempts_per_tool": 99})
    run = Controller(WEATHER, ScriptedModel([call(("get_weather", {"city": "Shanghai"})),
                                             call(("get_weather", {"city": "Beijing"})), answer("?")]),
                     faults=faults, policy=policy, budget=WEATHER.budget.with_values(retries=retries)).run()
    beijing = [a for a in run.actions if "Beijing" in a]
    assert len(beijing) == attempts and run.usage["retries"] == retries
    assert (run.status, run.code) == ("budget_exhausted", "budget:retries")


@pytest.mark.parametrize(("repairs", "status"), [(0, "failed_unrecoverable"), (1, "succeeded")])
def test_one_repair_is_granted_and_the_second_slip_stops(repairs: int, status: str) -> None:
    script = [call(("get_weather", {"city": "Shanghai"})), call(("get_weather", {"city": 404})),
              call(("get_weather", {"city": "Beijing"})), answer("Shanghai 24°C sunny, Beijing 18°C cloudy.")]
    policy = DEFAULT_POLICY.model_copy(update={"invalid_argument_repairs": repairs})
    assert Controller(WEATHER, ScriptedModel(script), policy=policy).run().status == status


@pytest.mark.parametrize(("claims", "status"), [(0, "partially_completed"), (1, "succeeded")])
def test_one_premature_claim_is_answered_with_what_is_missing_then_the_next_one_stops(claims: int, status: str) -> None:
    script = [call(("get_weather", {"city": "Shanghai"})), answer("Done."), call(("get_weather", {"city": "Beijing"})),
              answer("Shanghai 24°C sunny, Beijing 18°C cloudy.")]
    policy = DEFAULT_POLICY.model_copy(update={"premature_claims": claims})
    assert Controller(WEATHER, ScriptedModel(script), policy=policy).run().status == status


@pytest.mark.parametrize(("idle", "stops"), [(3, True), (4, False)])
def test_idle_turns_stop_a_run_exactly_at_the_limit(idle: int, stops: bool) -> None:
    """Three turns in a row that add nothing (each a different fruitless call), then progress."""
    task = make_task("research", sources=["s1"], minimum=1)
    script = [call(("fetch", {"source_id": f"none-{i}"})) for i in range(3)] + \
        [call(("fetch", {"source_id": "s1"})), answer("Summary of s1.")]
    policy = DEFAULT_POLICY.model_copy(update={"idle_turns": idle, "max_consecutive_failures": None})
    run = Controller(task, ScriptedModel(script), policy=policy).run()
    assert (run.code == "idle_turns") is stops, (run.status, run.code)


@pytest.mark.parametrize(("attempts", "route_name"), [(1, "retry"), (2, "retry"), (3, "fallback")])
def test_a_tool_is_tried_attempts_per_tool_times_before_its_fallback(attempts: int, route_name: str) -> None:
    spec, backup = TOOLS["get_weather"], TOOLS["weather_backup"]
    result = ToolResult("timeout", error="slow", retryable=True)
    policy = DEFAULT_POLICY.model_copy(update={"attempts_per_tool": 3})
    decision = route(policy, result, RouteContext(spec, attempts_on_tool=attempts, retries_left=5, fallback=backup))
    assert decision.name == route_name


@pytest.mark.parametrize(("left", "route_name"), [(1, "retry"), (0.999, "stop:budget_exhausted"),
                                                  (0, "stop:budget_exhausted"), (None, "retry")])
def test_a_retry_needs_one_whole_retry_left(left: float | None, route_name: str) -> None:
    result = ToolResult("timeout", error="slow", retryable=True)
    decision = route(DEFAULT_POLICY, result, RouteContext(TOOLS["get_weather"], retries_left=left))
    assert decision.name == route_name


# -- the survivors of this wave's own mutation sample ---------------------------------------------------------


def _refund_controller(policy: Any) -> Controller:
    task = make_task("refund", order_id="A-1042", amount=25.0, granted=["orders:read", "payments:refund", "db:admin"])
    return Controller(task, ScriptedModel([answer("?")]), policy=policy, budget=task.budget.with_values(retries=2))


@pytest.mark.parametrize(("retry_side_effects", "verdict"), [(True, "run"), (False, "stop")])
def test_a_side_effect_that_failed_transiently_is_retried_only_where_the_policy_allows_it(
        retry_side_effects: bool, verdict: str) -> None:
    from agentloops.controller.attempts import plan
    from agentloops.controller.calls import admit
    from agentloops.controller.engine import Turn
    from agentloops.response import ToolCall

    controller = _refund_controller(DEFAULT_POLICY.model_copy(update={"retry_side_effects": retry_side_effects}))
    run = controller.current
    args = {"table": "refunds", "values": {"order_id": "A-1042"}}
    use = plan(run, ToolCall(id="c1", name="db_write", arguments=args), dict(args))
    run.failed_calls.add(("db_write", use.norm))  # the same call failed transiently before
    run.groups.append([])  # the reply the call came in (a call that does not run is answered there)
    said = admit(run, Turn(1, 0, "-"), use, in_batch=False, reserved={}, repeats=[])
    assert ("run" if said is None else "stop" if isinstance(said, Stop) else "other") == verdict
    assert (use.kind == "retry") is (verdict == "run")


def test_a_claim_when_the_task_can_no_longer_be_done_stops_at_once_even_with_items_open() -> None:
    """Three sources needed, one is gone: the task is impossible while two items are still open. A reply
    without tool calls then ends the run on what cannot be obtained — it is not answered as a premature claim."""
    task = make_task("research", sources=["s1", "s2", "s3"], minimum=3)
    fault = Fault(tool="fetch", kind="not_found", match={"source_id": "s1"})
    script = [call(("fetch", {"source_id": "s1"})), answer("I could not find enough."),
              call(("fetch", {"source_id": "s2"})), answer("Done.")]
    run = Controller(task, ScriptedModel(script), faults=[fault]).run()
    assert run.stop.open_items and run.actions[-1] == "answer" and len(run.actions) == 2
    assert run.code != "premature_claim"


def test_a_retry_budget_stop_needs_every_given_up_item_to_have_failed_transiently() -> None:
    from agentloops.controller.engine import stop_unobtainable

    task = make_task("weather_compare", cities=["Shanghai", "Beijing"])
    run = Controller(task, ScriptedModel([answer("?")])).current
    run.state.mark_missing("weather:Shanghai", "timed out", code="timeout")
    run.state.mark_missing("weather:Beijing", "no reason recorded")  # given up without a code
    assert stop_unobtainable(run).status == "failed_unrecoverable"
    run = Controller(task, ScriptedModel([answer("?")])).current
    run.state.mark_missing("weather:Shanghai", "timed out", code="timeout")
    run.state.mark_missing("weather:Beijing", "retries spent", code="budget:retries")
    assert (stop_unobtainable(run).status, stop_unobtainable(run).code) == ("budget_exhausted", "budget:retries")


# -- a call the model repeats after it failed retryably: the admission's boundaries (calls.py) -------------------


def _weather_run(retries: int, exhausted: str = "stop") -> Any:
    policy = DEFAULT_POLICY.model_copy(update={"on_retries_exhausted": exhausted})
    run = Controller(WEATHER, ScriptedModel([answer("?")]), policy=policy,
                     budget=WEATHER.budget.with_values(retries=retries)).current
    run.groups.append([])  # the reply the calls came in (a call that does not run is answered there)
    return run


def _failed_before(run: Any, *cities: str) -> list[Any]:
    from agentloops.controller.attempts import plan
    from agentloops.response import ToolCall

    uses = [plan(run, ToolCall(id=f"c{i}", name="get_weather", arguments={"city": c}), {"city": c})
            for i, c in enumerate(cities)]
    run.failed_calls.update(("get_weather", use.norm) for use in uses)  # each failed retryably before
    return uses


@pytest.mark.parametrize(("retries", "exhausted", "verdict"), [
    (1, "stop", "run"), (2, "stop", "run"), (0, "stop", "stop:budget_exhausted"), (0, "degrade", "degrade")])
def test_a_repeated_failed_call_runs_as_a_retry_while_one_whole_retry_is_left(
        retries: int, exhausted: str, verdict: str) -> None:
    from agentloops.controller.calls import admit
    from agentloops.controller.engine import Turn
    from agentloops.controller.policy.routes import Degrade

    run = _weather_run(retries, exhausted)
    [use] = _failed_before(run, "Shanghai")
    said = admit(run, Turn(1, 0, "-"), use, in_batch=False, reserved={}, repeats=[])
    got = "run" if said is None else f"stop:{said.status}" if isinstance(said, Stop) else \
        "degrade" if isinstance(said, Degrade) else repr(said)
    assert got == verdict
    assert (use.kind == "retry") is (verdict == "run")
    if isinstance(said, Stop):  # the budget named, with the one retry the call needed
        assert said.code == "budget:retries" and "+ 1 needed > 0 allowed" in str(said.reason)
    if verdict == "degrade":
        assert (run.state.items["weather:Shanghai"], run.state.codes["weather:Shanghai"]) == ("missing", "budget:retries")


@pytest.mark.parametrize(("retries", "ran"), [(1, 1), (2, 2), (3, 2)])
def test_retries_repeated_in_one_batch_share_the_budget_one_each(retries: int, ran: int) -> None:
    from agentloops.controller.calls import run_calls
    from agentloops.controller.engine import Turn

    run = _weather_run(retries, "degrade")
    uses = _failed_before(run, "Shanghai", "Beijing")
    t = Turn(1, 0, "-")
    run_calls(run, t, [use.call for use in uses])
    labels = [a["label"] if isinstance(a, dict) else a.label for a in t.actions]
    assert sum(label.startswith("retry:") for label in labels) == ran, labels
    assert sum(label.startswith("blocked:") for label in labels) == 2 - ran, labels


# -- a repeat: alone it stops the run, inside a batch of two it is skipped --------------------------------------


def test_a_lone_repeat_stops_the_run_naming_what_it_repeats() -> None:
    task = make_task("research", sources=["s1", "s2"], minimum=2)
    run = Controller(task, ScriptedModel([call(("fetch", {"source_id": "zz"})),
                                          call(("fetch", {"source_id": "zz"}))])).run()
    assert (run.status, run.code) == ("no_progress", "repeated_action")
    assert run.stop.reason.startswith('fetch{"source_id":"zz"} was already done at turn 1')
    blocked = run.turns[-1].actions[-1]
    assert (blocked["label"], blocked["route"]) == ("blocked:fetch(source_id=zz)", "stop:no_progress")
    assert run.turns[-1].action == "fetch(source_id=zz)"


def test_a_batch_of_two_that_only_repeats_says_so_and_each_repeat_is_skipped() -> None:
    task = make_task("research", sources=["s1", "s2"], minimum=2)
    script = [call(("fetch", {"source_id": "zz"}), ("fetch", {"source_id": "yy"}))] * 2
    run = Controller(task, ScriptedModel(script)).run()
    assert (run.status, run.code) == ("no_progress", "repeated_action")
    assert run.stop.reason == "every call of the batch repeats an action that brought nothing new"
    assert [a["route"] for a in run.turns[-1].actions] == ["skip", "skip"]


def test_one_repeat_in_a_batch_of_two_is_skipped_and_the_other_call_runs() -> None:
    task = make_task("research", sources=["s1", "s2"], minimum=2)
    script = [call(("fetch", {"source_id": "zz"})), call(("fetch", {"source_id": "zz"}), ("fetch", {"source_id": "s1"})),
              call(("fetch", {"source_id": "s2"})), answer("Summary of s1 and s2.")]
    run = Controller(task, ScriptedModel(script)).run()
    assert [(a["label"], a["route"]) for a in run.turns[1].actions] == [
        ("blocked:fetch(source_id=zz)", "skip"), ("fetch(source_id=s1)", "accept")]
    assert (run.status, run.code) == ("succeeded", "completion_condition_met")


# -- the repair allowance counts one per slip ---------------------------------------------------------------


@pytest.mark.parametrize(("repairs", "slips", "status"), [(2, 2, "succeeded"), (2, 3, "failed_unrecoverable")])
def test_each_slip_uses_one_repair_of_the_allowance(repairs: int, slips: int, status: str) -> None:
    script = [call(("get_weather", {"city": "Shanghai"}))] + [call(("get_weather", {"city": 404 + i}))
                                                             for i in range(slips)] + \
        [call(("get_weather", {"city": "Beijing"})), answer("Shanghai 24°C sunny, Beijing 18°C cloudy.")]
    policy = DEFAULT_POLICY.model_copy(update={"invalid_argument_repairs": repairs})
    run = Controller(WEATHER, ScriptedModel(script), policy=policy,
                     budget=WEATHER.budget.with_values(steps=10, model_calls=10)).run()
    assert run.status == status, (run.status, run.code)
    assert run.turns[1].decision == f"continue: repair 1 of {repairs} allowed for get_weather:invalid_arguments:city"
    assert run.turns[2].decision == f"continue: repair 2 of {repairs} allowed for get_weather:invalid_arguments:city"


# -- a call the budgets cannot pay for is not started, and the stop names the budget with what it needed -------


@pytest.mark.parametrize("budget", ["tool_calls", "wall_time_s"])
def test_a_call_the_budget_cannot_pay_for_stops_naming_what_the_call_needed(budget: str) -> None:
    from agentloops.controller.calls import run_calls
    from agentloops.controller.engine import Turn
    from agentloops.response import ToolCall

    timeout = TOOLS["get_weather"].timeout_s
    limit = 1 if budget == "tool_calls" else timeout / 2
    run = Controller(WEATHER, ScriptedModel([answer("?")]), budget=WEATHER.budget.with_values(**{budget: limit})).current
    run.groups.append([])
    if budget == "tool_calls":
        run.meter.spend("tool_calls")
    t = Turn(1, 0, "-")
    stop = run_calls(run, t, [ToolCall(id="c1", name="get_weather", arguments={"city": "Shanghai"})])
    assert stop is not None and stop.code == f"budget:{budget}" and not run.ledger.records()
    assert str(stop.reason) == (
        "the tool_calls budget would be exceeded: 1 used + 1 needed > 1 allowed" if budget == "tool_calls" else
        f"the wall-time budget would run out: 0 s used + {timeout:g} s for the next step > {limit:g} s allowed")
    assert t.actions[0].route == f"budget:{budget}"


def test_a_learner_route_sees_a_call_the_schema_rejected_as_its_first_attempt() -> None:
    from agentloops.controller.stages import Stages

    seen: list[int] = []

    def mine(result: ToolResult, ctx: RouteContext) -> Any:
        seen.append(ctx.attempts_on_tool)
        return route(DEFAULT_POLICY, result, ctx)

    script = [call(("get_weather", {"city": 404})), call(("get_weather", {"city": "Shanghai"})),
              call(("get_weather", {"city": "Beijing"})), answer("Shanghai 24°C sunny, Beijing 18°C cloudy.")]
    run = Controller(WEATHER, ScriptedModel(script), stages=Stages.of(route=mine)).run()
    assert run.turns[0].actions[0]["status"] == "invalid_arguments" and seen[0] == 1
