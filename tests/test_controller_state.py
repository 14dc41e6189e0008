"""Task state: versions, deltas, the finished-task guard, snapshots."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentloops.controller import Fact, TaskFinishedError, TaskState, make_task
from agentloops.controller.task.state import STATE_JSON, assess


def state() -> TaskState:
    return TaskState("weather_compare", "compare", ("use °C",), ("weather:A", "weather:B"))


def test_every_change_bumps_the_version_and_lands_in_the_delta():
    s = state()
    assert s.add_fact(Fact("weather:A", {"t": 1}, "1°C", "svc", 1))
    s.record_failure("get_weather", "timeout", "slow", 1)
    delta = s.end_turn()
    assert (delta["version_before"], delta["version_after"], s.version) == (0, 2, 2)
    assert delta["progress"] and len(delta["changes"]) == 2
    assert s.open_items() == ["weather:B"] and s.done_items() == ["weather:A"]


def test_a_known_fact_changes_nothing_and_says_why():
    s = state()
    s.add_fact(Fact("weather:A", {"t": 1}, "1°C", "svc", 1))
    s.end_turn()
    assert not s.add_fact(Fact("weather:A", {"t": 1}, "1°C", "svc", 2))
    delta = s.end_turn()
    assert delta["version_after"] == delta["version_before"] and not delta["progress"]
    assert delta["changes"] == [] and delta["unchanged"][0].startswith("weather:A already known from turn 1 (same value")


def test_failures_change_the_version_but_are_not_progress():
    s = state()
    s.record_failure("get_weather", "timeout", "slow", 1)
    delta = s.end_turn()
    assert delta["version_after"] == delta["version_before"] + 1 and not delta["progress"]
    assert s.failure_summary() == ["get_weather: timeout"]


def test_only_progress_moves_the_progress_version_that_fingerprints_use():
    s = state()
    s.record_failure("get_weather", "not_found", "no such city", 1)
    s.set_waiting("city", "Which city?")
    assert (s.version, s.progress_version) == (2, 0)  # the state changed, but nothing was learned
    s.add_fact(Fact("weather:A", {"t": 1}, "1°C", "svc", 2))
    s.add_input("city", "B")
    s.mark_missing("weather:B", "not_found: no such city", code="not_found")
    assert (s.version, s.progress_version) == (5, 3)
    assert STATE_JSON.validate_python(s.snapshot()).progress_version == 3


def test_a_missing_item_keeps_its_reason_code_apart_from_the_sentence():
    s = state()
    s.mark_missing("weather:A", "retry budget spent", code="budget:retries")
    s.mark_missing("weather:B", "nobody knows: why")
    assert s.missing_codes() == {"weather:A": "budget:retries", "weather:B": None}
    assert STATE_JSON.validate_python(s.snapshot()).missing_codes() == s.missing_codes()


def test_a_finished_task_refuses_every_change():
    s = state()
    s.finish("succeeded")
    with pytest.raises(TaskFinishedError, match="already stopped"):
        s.add_fact(Fact("weather:B", 1, "x", "svc", 3))
    with pytest.raises(TaskFinishedError, match="already stopped"):
        s.add_fact(Fact("weather:A", 1, "x", "svc", 3))
    with pytest.raises(TaskFinishedError, match="already stopped"):
        s.mark_missing("weather:B", "gone")
    with pytest.raises(TaskFinishedError, match="cannot stop again"):
        s.finish("cancelled")
    assert s.version == 0


def test_snapshot_round_trip_and_model_rendering():
    s = state()
    s.add_fact(Fact("weather:A", {"t": 1}, "1°C", "svc", 1, ref="ref:1"))
    s.mark_missing("weather:B", "timeout: gave up")
    s.add_input("order_id", "A-1042")
    again = STATE_JSON.validate_python(s.snapshot())
    assert again.snapshot() == s.snapshot()
    text = s.for_model({"steps": 3, "context_tokens": 100})
    assert text.startswith("TASK STATE\n") and "weather:B" in text and "context_tokens" not in text


def test_the_completion_condition_is_a_check_over_state():
    task = make_task("weather_compare", cities=["Shanghai", "Beijing"])
    s = task.new_state()
    assert task.assess(s) == "incomplete"
    s.add_fact(Fact("weather:Shanghai", 1, "x", "met-service", 1))
    assert task.assess(s) == "incomplete"
    s.mark_missing("weather:Beijing", "empty")
    assert task.assess(s) == "impossible"
    other = task.new_state()
    for item in task.items:
        other.add_fact(Fact(item, 1, "x", "met-service", 1))
    assert task.assess(other) == "complete"
    unsourced = task.new_state()
    for item in task.items:
        unsourced.add_fact(Fact(item, 1, "x", "", 1))
    assert task.assess(unsourced) != "complete"  # a fact without a source is not evidence


def _block(text: str) -> dict[str, object]:
    header, _, body = text.partition("\n")
    assert header == "TASK STATE"
    return json.loads(body)


def test_the_state_block_sent_to_the_model_follows_every_change_and_only_the_budgets_change_between():
    s = state()
    first = _block(s.for_model({"steps": 3, "context_tokens": 100, "retries": None}))
    assert first["budget_left"] == {"steps": 3} and first["open"] == ["weather:A", "weather:B"]
    assert _block(s.for_model({"steps": 2}))["budget_left"] == {"steps": 2}  # same version: new budgets shown
    assert "budget_left" not in _block(s.for_model())
    s.add_fact(Fact("weather:A", {"t": 1}, "1°C", "svc", 1))
    s.record_failure("get_weather", "timeout", "slow", 1)
    after = _block(s.for_model({"steps": 1}))
    assert after["version"] == 2 and after["open"] == ["weather:B"] and after["done"] == {"weather:A": "1°C [svc]"}
    assert after["tried"] == ["get_weather: timeout"]
    s.mark_missing("weather:B", "empty")
    s.add_input("city", "Paris")
    last = _block(s.for_model({"steps": 0}))
    assert (last["version"], last["open"], last["missing"], last["inputs"]) == (
        4, [], {"weather:B": "empty"}, {"city": "Paris"})
    assert list(last) == ["version", "goal", "constraints", "done", "open", "missing", "inputs", "tried",
                          "budget_left"]


def test_a_cached_state_block_reads_exactly_as_a_fresh_one_even_when_the_state_holds_a_budgets_key():
    def new() -> TaskState:
        s = TaskState("weather_compare", "compare", (), ("weather:A",))
        s.inputs.update({"city": "Paris", "budget_left": "a user's own field"})  # as a task sets its inputs
        return s

    cached = new()
    cached.for_model({"steps": 5})  # fills the cache for this version
    assert cached.for_model({"steps": 4, "retries": 1.5}) == new().for_model({"steps": 4, "retries": 1.5})
    assert cached.for_model() == new().for_model()
    assert _block(cached.for_model({"steps": 4}))["inputs"]["budget_left"] == "a user's own field"


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["steps", "wall_time_s", "tool_calls", "tokens", "context_tokens", "retries"]),
                       st.none() | st.integers(-5, 10**6) | st.floats(allow_nan=True, allow_infinity=True)))
def test_the_budgets_in_the_state_block_read_exactly_as_json_dumps_writes_them(left):
    s = state()
    shown = {k: v for k, v in left.items() if v is not None and k != "context_tokens"}
    data = {"version": 0, "goal": s.goal, "constraints": list(s.constraints), "done": {}, "open": s.open_items(),
            "missing": {}, "inputs": {}, "tried": [], "budget_left": shown}
    assert s.for_model(left) == "TASK STATE\n" + json.dumps(data, ensure_ascii=False)


def test_a_task_is_impossible_only_when_every_open_item_together_would_still_fall_short():
    fact = Fact("weather:A", {"t": 1}, "1°C", "svc", 1)
    items = {"weather:A": "done", "weather:B": "open", "weather:C": "open"}
    assert assess(items, {"weather:A": fact}, 3) == "incomplete"  # one done + two open can still make three
    assert assess({**items, "weather:C": "missing"}, {"weather:A": fact}, 3) == "impossible"
    assert assess({**items, "weather:C": "missing"}, {"weather:A": fact}, 2) == "incomplete"


def test_an_older_saved_state_without_a_progress_count_reads_as_no_progress_yet():
    saved = state().snapshot()
    del saved["progress_count"]
    assert STATE_JSON.validate_python(saved).progress_version == 0
