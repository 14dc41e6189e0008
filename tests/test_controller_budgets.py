"""Budgets: limits with a basis, the meter, and the property that no run exceeds any budget."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentloops.controller import (
    BUDGET_NAMES,
    TASK_TYPES,
    Budget,
    BudgetMeter,
    ConfigError,
    Controller,
    Fault,
    Limit,
    TaskPlanner,
    make_task,
    random_case,
    run_scenario,
)
from agentloops.controller.policy.budgets import budget_from_dict


def test_every_budget_of_every_task_type_has_a_basis():
    for kind in TASK_TYPES.values():
        for name in BUDGET_NAMES:
            limit = getattr(kind.budget, name)
            assert limit.value is not None and len(limit.basis) >= 15, (kind.name, name)
            assert "no basis" not in limit.basis


def test_overrides_accept_numbers_and_say_there_is_no_basis():
    budget = TASK_TYPES["weather_compare"].budget.with_values(steps=2, retries={"value": 0, "basis": "test"})
    assert budget.steps == Limit(value=2, basis="set by the caller, no basis given")
    assert (budget.retries.value, budget.retries.basis) == (0, "test")
    assert budget.with_values(tokens=None).limit("tokens") is None
    with pytest.raises(ConfigError, match=r"^unknown budget 'stepz'; expected one of: steps, wall_time_s"):
        budget.with_values(stepz=3)
    with pytest.raises(ConfigError, match=r"^budget override: steps\.value"):
        budget.with_values(steps=-1)
    with pytest.raises(ConfigError, match=r"^b: retries: missing; this field is required"):
        budget_from_dict({k: 1 for k in BUDGET_NAMES if k != "retries"}, "b")


def test_the_meter_checks_before_spending():
    budget = TASK_TYPES["weather_compare"].budget.with_values(tool_calls=2, wall_time_s=10, context_tokens=100)
    meter = BudgetMeter(budget)
    assert meter.allows("tool_calls", 2) and not meter.allows("tool_calls", 3)
    meter.spend("tool_calls", 2)
    assert not meter.allows("tool_calls")
    assert meter.allows("wall_time_s", 10) and not meter.allows("wall_time_s", 10.5)
    meter.spend("wall_time_s", 4)  # time is spent by moving the meter's clock
    assert meter.now == 4 and meter.left()["wall_time_s"] == 6 and meter.usage()["wall_time_s"] == 4
    assert meter.allows("context_tokens", 100) and not meter.allows("context_tokens", 101)
    assert all(meter.within_limits().values())
    with pytest.raises(ValueError, match="cannot go back"):
        meter.spend("wall_time_s", -1)
    assert meter.now == 4


def test_per_tool_retry_scope_lets_a_fallback_double_the_attempts():
    shared = run_scenario("weather-timeout-always")
    storm = run_scenario("weather-timeout-always", policy={"name": "per-tool", "retry_scope": "per_tool"})
    beijing = [a for a in storm.actions if "Beijing" in a]
    assert shared.usage["retries"] == 3 and len([a for a in shared.actions if "Beijing" in a]) == 4
    assert len(beijing) == 2 + 3 + 1  # each tool got its own 3 retries: 6 attempts against 4
    assert storm.usage["retries"] == 5 and not storm.within_budget["retries"]  # the task-level number is blown


def test_a_budget_stop_names_the_budget():
    run = run_scenario("weather-normal", budget=TASK_TYPES["weather_compare"].budget.with_values(steps=2))
    assert (run.status, run.code, run.stop.budget) == ("budget_exhausted", "budget:steps", "steps")
    assert "steps" in run.user_message() or "turns of the loop" in run.user_message()
    assert run.usage["steps"] == 2


def test_budget_stop_reasons_read_as_sentences_with_units():
    faults = [Fault(tool="get_weather", kind="timeout", match={"city": "Beijing"}),
              Fault(tool="weather_backup", kind="timeout", match={"city": "Beijing"})]
    task = make_task("weather_compare").with_budget(wall_time_s=12)
    run = Controller(task, TaskPlanner(task), faults=faults).run()
    assert (run.status, run.code) == ("budget_exhausted", "budget:wall_time_s")
    assert run.stop.reason == ("the wall-time budget would run out: 7.4 s used + 6 s for the next step > 12 s "
                               "allowed")
    steps = run_scenario("weather-normal", budget=TASK_TYPES["weather_compare"].budget.with_values(steps=2))
    assert steps.stop.reason == "the steps budget would be exceeded: 2 used + 1 needed > 2 allowed"


def limits() -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries({
        "steps": st.integers(1, 8), "model_calls": st.integers(1, 8), "tool_calls": st.integers(1, 10),
        "retries": st.integers(0, 4), "wall_time_s": st.floats(1, 60), "tokens": st.integers(600, 8000),
        "context_tokens": st.integers(250, 3000),
    })


@st.composite
def runs(draw) -> tuple[str, Controller]:
    kind = draw(st.sampled_from(["weather", "research", "order"]))
    policy = draw(st.sampled_from(["default", "degrade"]))
    if kind == "weather":
        case = random_case(draw(st.integers(0, 10_000)))
        task = case.task()
        model, faults = case.model(task), case.faults
    elif kind == "research":
        task = make_task("research", sources=["s1", "s2", "s3", "s4"], minimum=draw(st.integers(1, 4)))
        faults = tuple(Fault(tool="fetch", kind=k, match={"source_id": s}, latency_s=lat)
                       for s, k, lat in draw(st.lists(st.tuples(
                           st.sampled_from(["s1", "s2", "s3", "s4"]),
                           st.sampled_from(["timeout", "slow", "duplicate", "permanent_error", "empty"]),
                           st.sampled_from([None, 3.0, 20.0])), max_size=4))
                       if not (k != "slow" and lat is not None))
        model = TaskPlanner(task, parallel=draw(st.booleans()))
    else:
        task = make_task("order_status", order_id=draw(st.sampled_from([None, "A-1042", "Z-0000"])))
        faults = tuple(Fault(tool="lookup_order", kind=k) for k in draw(st.lists(
            st.sampled_from(["timeout", "rate_limited", "not_found"]), max_size=2)))
        model = TaskPlanner(task)
    budget = task.budget.with_values(**draw(limits()))
    return kind, Controller(task, model, policy=policy, budget=budget, faults=faults)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs())
def test_no_run_exceeds_any_budget(case):
    kind, controller = case
    run = controller.run()
    assert all(run.within_budget.values()), (kind, run.usage, run.status, run.code)
    for name in BUDGET_NAMES:
        limit = controller.budget.limit(name)
        assert limit is None or run.usage[name] <= limit + 1e-6, (name, run.usage[name], limit)
    if run.status == "budget_exhausted":
        assert run.stop.budget in BUDGET_NAMES and run.code == f"budget:{run.stop.budget}"


def test_budget_type_is_frozen():
    with pytest.raises(ValueError, match="frozen"):
        TASK_TYPES["weather_compare"].budget.steps = Limit(value=1, basis="x")  # type: ignore[misc]
    assert isinstance(TASK_TYPES["weather_compare"].budget, Budget)






def _meter(scope: str = "shared", **values) -> BudgetMeter:
    return BudgetMeter(TASK_TYPES["weather_compare"].budget.with_values(**values), scope)  # type: ignore[arg-type]


def test_a_meter_at_its_limit_exactly_is_within_it():
    meter = _meter(tool_calls=2, wall_time_s=5)
    meter.spend("tool_calls", 2)
    meter.spend("wall_time_s", 5)
    assert meter.within_limits()["tool_calls"] and meter.within_limits()["wall_time_s"]
    meter.spend("tool_calls")
    assert not meter.within_limits()["tool_calls"]


def test_a_tool_that_takes_no_time_leaves_the_clock_alone():
    meter = _meter()
    meter.spend("wall_time_s", 0)  # zero seconds is a valid spend; only going back is refused
    assert meter.now == 0


def test_remaining_is_the_limit_minus_use_but_a_request_size_stands_alone():
    meter = _meter(tool_calls=5, context_tokens=300, wall_time_s=10)
    meter.spend("tool_calls", 2)
    meter.spend("context_tokens", 120)
    meter.spend("wall_time_s", 4)
    assert (meter.remaining("tool_calls"), meter.remaining("context_tokens"), meter.remaining("wall_time_s")) == (3, 300, 6)
    assert _meter(tokens=None).remaining("tokens") is None


def test_what_is_left_is_rounded_to_milliseconds():
    meter = _meter(wall_time_s=10)
    meter.spend("wall_time_s", 3.33333)
    assert meter.left()["wall_time_s"] == 6.667


def test_retries_left_counts_the_shared_budget_or_each_tools_own():
    shared, per_tool = _meter(retries=3), _meter("per_tool", retries=3)
    for meter in (shared, per_tool):
        meter.spend("retries", 2, tool="get_weather")
    assert shared.retries_left("weather_backup") == 1  # the other tool's retries came out of the same budget
    assert per_tool.retries_left("weather_backup") == 3  # ... or out of get_weather's own
    assert per_tool.retries_left("get_weather") == 1
    assert per_tool.allows("retries", 3, tool="weather_backup") and not per_tool.allows("retries", 2, tool="get_weather")
    # retries reserved by earlier calls of a batch count against their own tool only (per tool), or all (shared)
    assert per_tool.retries_left("weather_backup", {"get_weather": 1}) == 3
    assert per_tool.retries_left("weather_backup", {"weather_backup": 1}) == 2
    assert shared.retries_left("weather_backup", {"get_weather": 1}) == 0


def test_the_last_retry_is_reported_as_one_left():
    meter = _meter(retries=1)
    assert meter.retries_left("get_weather") == 1
    meter.spend("retries", 1, tool="get_weather")
    assert meter.retries_left("get_weather") == 0


def test_a_budget_stage_that_refuses_leaves_no_retry_whatever_the_count():
    budget = TASK_TYPES["weather_compare"].budget.with_values(retries=3)
    meter = BudgetMeter(budget, check=lambda name, used, amount, limit: name != "retries")
    assert meter.retries_left("get_weather") == 0  # the learner's stage decides, not the arithmetic
