"""Task types: their parameters, their rules and their budgets say what their docstrings and bases say."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentloops.controller import TASK_TYPES, ConfigError, ToolResult, make_task
from agentloops.controller.task.task_types import RefundTask, WeatherTask
from agentloops.controller.task.world import ORDERS


def test_a_weather_task_may_ask_about_one_city():
    assert make_task("weather_compare", cities=["Oslo"]).items == ("weather:Oslo",)


def test_a_research_task_needs_two_sources_by_default():
    assert make_task("research").need == 2


def test_a_task_type_is_its_parameters_and_its_spec_reads_back_to_the_same_task():
    for name, kind in TASK_TYPES.items():
        task = make_task(name)
        assert type(task.kind) is kind and task.budget == kind.budget
        spec = task.spec()
        assert set(spec) == {"type", "params"} and spec["params"] == task.kind.model_dump(mode="json")
        assert make_task(spec["type"], spec["params"]).kind == task.kind
    weather = make_task("weather_compare", cities=["Oslo", "Rome"]).kind
    assert weather.cities == ("Oslo", "Rome") and weather != make_task("weather_compare").kind
    with pytest.raises(ValidationError):
        weather.cities = ("Paris",)  # type: ignore[misc]  # frozen: the derived items never go stale


def test_only_a_refund_grants_capabilities_and_it_grants_what_it_was_given():
    assert make_task("refund", granted=["orders:read", "payments:refund"]).granted == {"orders:read", "payments:refund"}
    assert all(make_task(name).granted == frozenset() for name in TASK_TYPES if name != "refund")


@pytest.mark.parametrize(("name", "params", "message"), [
    ("refund", {"amount": -1}, "s.json: params.amount: expected greater than 0; got -1"),
    ("weather_compare", {"cities": []}, "s.json: params.cities: expected at least 1 item(s); got 0"),
    ("document_lookup", {"field": "x"}, "s.json: params.field: expected 'published', 'version' or 'title'; got 'x'"),
    ("research", {"minimum": 5}, "s.json: params.minimum 5 is more than the 4 sources given"),
    ("order_status", {"order": "x"}, "s.json: params.order: is not a known field (check the spelling)"),
])
def test_bad_parameters_are_one_line_naming_the_field(name, params, message):
    with pytest.raises(ConfigError) as caught:
        make_task(name, params, source="s.json")
    assert str(caught.value) == message


def test_a_research_task_may_need_every_source_but_not_one_more():
    assert make_task("research", sources=["a", "b"], minimum=2).need == 2
    with pytest.raises(ConfigError, match="minimum 3 is more than the 2 sources given"):
        make_task("research", sources=["a", "b"], minimum=3)


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
