"""Values the task state and the meter keep as they change agree with what they replace: a recount."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from agentloops.controller.policy.budgets import BudgetMeter
from agentloops.controller.task.state import STATE_JSON, Fact, TaskState
from agentloops.controller.task.task_types import WEATHER_BUDGET
from agentloops.tokens import CACHED_TEXT_LENGTH, _cached_count, _general_estimate, estimate_tokens

ITEMS = ("weather:A", "weather:B", "weather:C")
ops = st.lists(st.tuples(st.sampled_from(["fact", "nosource", "missing", "failure"]), st.sampled_from(ITEMS),
                         st.sampled_from(["timeout", "empty"])), max_size=12)


def _recount(s: TaskState) -> tuple[list[str], list[str], int]:
    counts: dict[tuple[str, str], int] = {}
    for f in s.failures:
        counts[(f["tool"], f["status"])] = counts.get((f["tool"], f["status"]), 0) + 1
    tried = [f"{t}: {st_}" + (f" ×{n}" if n > 1 else "") for (t, st_), n in counts.items()]
    return [i for i, v in s.items.items() if v == "open"], tried, sum(1 for f in s.facts.values() if f.source)


@given(ops)
def test_open_items_tally_and_done_count_agree_with_a_recount(steps):
    s = TaskState("weather_compare", "compare", ("use °C",), ITEMS)
    for kind, item, status in steps:
        if kind in ("fact", "nosource"):
            s.add_fact(Fact(item, 1, "1°C", "svc" if kind == "fact" else "", 1))
        elif kind == "missing":
            s.mark_missing(item, "gone", code="not_found")
        else:
            s.record_failure(item.split(":")[1], status, "x", 1)
        open_now, tried, done = _recount(s)
        assert s.open_items() == open_now
        assert s.failure_summary() == tried
        for need in range(4):
            expect = "complete" if done >= need else "impossible" if done + len(open_now) < need else "incomplete"
            assert s.assess(need) == expect
    back = STATE_JSON.validate_python(json.loads(json.dumps(s.snapshot())))
    assert back.snapshot() == s.snapshot() and back.open_items() == s.open_items()
    assert back.failure_summary() == s.failure_summary() and back.for_model() == s.for_model()
    assert back.end_turn()["changes"] == []  # restoring is not a turn


def test_end_turn_starts_the_next_turn():
    s = TaskState("t", "g", (), ("a", "b"))
    s.add_fact(Fact("a", 1, "one", "svc", 1))
    first = s.end_turn()
    assert first["changes"] and (first["version_before"], first["version_after"]) == (0, 1)
    s.record_failure("tool", "timeout", "x", 2)
    second = s.end_turn()
    assert (second["version_before"], second["version_after"]) == (1, 2) and second["changes"] == ["failure tool: timeout"]


def test_the_budgets_the_state_block_shows_are_the_meters_left_as_json():
    meter = BudgetMeter(WEATHER_BUDGET.with_values(tokens=None, retries=2.5))
    meter.spend("steps")
    meter.spend("retries", 0.25, tool="get_weather")
    meter.spend("wall_time_s", 1.2345)
    left = {k: v for k, v in meter.left().items() if v is not None and k != "context_tokens"}
    shown = json.loads(TaskState("t", "g", (), ("a",)).for_model(meter.left()).partition("\n")[2])["budget_left"]
    assert shown == left and shown["retries"] == 2.25 and "context_tokens" not in shown
    assert meter.retries_by_tool == {"get_weather": 0} and meter.retries_left("get_weather") == 2.25


@given(st.text(alphabet=st.characters(max_codepoint=0x9FFF), max_size=300))
def test_the_short_count_of_text_below_u0100_is_the_general_estimate(text):
    assert estimate_tokens(text) == _general_estimate(text)
    if len(text) <= CACHED_TEXT_LENGTH:
        assert estimate_tokens(text) == _cached_count(text)
