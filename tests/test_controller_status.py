"""What a stop tells the user and the system: the item names, the budget's label, the no-progress note."""

from __future__ import annotations

from typing import Any

from agentloops.controller.stopping.status import Stop, shown_item
from agentloops.controller.task.state import Fact


def stop(status: str, code: str, **kw: Any) -> Stop:
    return Stop(status, code, "the reason", 3, 1.5, "t", "task", "p", **kw)  # type: ignore[arg-type]


def test_an_item_is_shown_without_its_kind_prefix_and_keeps_colons_of_its_own():
    assert shown_item("weather:Shanghai") == "Shanghai"
    assert shown_item("source:https://example.org/a") == "https://example.org/a"
    assert shown_item("plain") == "plain"
    message = stop("partially_completed", "partial", missing=(("weather:Beijing", "timed out"),)).user_message()
    assert "  ✗ Beijing: timed out" in message.splitlines()


def test_a_budget_stop_names_the_budget_that_ran_out_in_words():
    for budget, label in (("steps", "turns of the loop"), ("retries", "retries, shared by all tools")):
        message = stop("budget_exhausted", f"budget:{budget}", budget=budget).user_message()
        assert message.splitlines()[0].startswith(f"I stopped because the budget for {label}")
    assert "budget for this task ran out" in stop("budget_exhausted", "budget:x").user_message()


def test_a_no_progress_stop_says_the_work_was_collected_only_when_it_was():
    fact = Fact("weather:Beijing", {"t": 1}, "Beijing 1°C", "svc", 1)
    collected = stop("no_progress", "repeated_action", verified=True, facts=(fact,)).user_message()
    assert "Everything needed was collected" in collected
    assert "Everything needed was collected" not in stop("no_progress", "repeated_action").user_message()
    assert "Everything needed was collected" not in stop("partially_completed", "partial", verified=True,
                                                         facts=(fact,)).user_message()


def test_the_html_view_shows_the_system_record_without_the_state_snapshot():
    page = stop("cancelled", "cancelled_by_user", state={"items": {"weather:A": "done"}})._repr_html_()
    assert "&quot;code&quot;: &quot;cancelled_by_user&quot;" in page
    assert "&quot;state&quot;" not in page
