"""Task types: their parameters, their rules and their budgets say what their docstrings and bases say."""

from __future__ import annotations

from agentloops.controller import TASK_TYPES, ToolResult, make_task
from agentloops.controller.task.task_types import RefundTask, WeatherTask
from agentloops.controller.task.world import ORDERS


def test_a_weather_task_may_ask_about_one_city():
    assert make_task("weather_compare", cities=["Oslo"]).items == ("weather:Oslo",)


def test_a_research_task_needs_two_sources_by_default():
    assert make_task("research").need == 2


def test_a_city_whose_name_holds_a_colon_keeps_all_of_it():
    weather, item = WeatherTask(cities=("Zone:1",)), "weather:Zone:1"
    assert weather.action(item, {}) == ("get_weather", {"city": "Zone:1"})
    fact = weather.fact(item, ToolResult("ok", data={"city": "Zone:1", "temp_c": 3, "conditions": "fog"}))
    assert isinstance(fact, tuple) and fact[0] == {"temp_c": 3, "conditions": "fog"}
    assert "Zone:1: 3°C" in str(weather.answer({item: "3°C fog"}, {}))


def test_a_refund_of_the_whole_order_is_allowed_and_a_cent_more_is_not():
    total = ORDERS["A-1042"]["total"]
    refund = RefundTask()
    assert refund.rules("issue_refund", {"order_id": "A-1042", "amount": total}) is None
    refused = refund.rules("issue_refund", {"order_id": "A-1042", "amount": total + 0.01})
    assert refused is not None and "more than the order total" in refused


def test_model_calls_equal_steps_wherever_the_basis_says_so():
    for kind in TASK_TYPES.values():
        if "equal to steps" in kind.budget.model_calls.basis:
            assert kind.budget.model_calls.value == kind.budget.steps.value, kind.name


def test_the_refund_and_order_budgets_hold_the_counts_their_bases_give():
    refund, order = TASK_TYPES["refund"].budget, TASK_TYPES["order_status"].budget
    assert "never retried" in refund.retries.basis and refund.retries.value == 0
    assert refund.tool_calls.basis.startswith("the write, and at most one more call") and refund.tool_calls.value == 2
    assert refund.steps.basis.startswith("a write: 1 call + 1 answer + 1 spare") and refund.steps.value == 3
    assert order.retries.basis.startswith("two transient failures") and order.retries.value == 2
