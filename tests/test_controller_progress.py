"""Action fingerprints and no-progress detection: a loop is caught, a retry is not."""

from __future__ import annotations

import pytest

from agentloops import ScriptedModel
from agentloops.controller import (
    Controller,
    Fault,
    ProgressMonitor,
    TaskPlanner,
    fingerprint,
    make_task,
    normalize_args,
    run_scenario,
)
from agentloops.controller.stopping.progress import MONITOR_JSON
from agentloops.controller.vocabulary.tools import Param


def call(tool: str, args: dict) -> dict:
    return {"content": None, "tool_calls": [{"id": "c", "name": tool, "arguments": args}],
            "finish_reason": "tool_calls"}


def test_normalized_arguments_ignore_order_spacing_and_none_and_case_only_where_declared():
    free_text = {"a": Param("string", normalize="casefold")}
    assert normalize_args({"b": 1.0, "a": "  Bei  Jing "}, free_text) == \
        normalize_args({"a": "bei jing", "b": 1, "c": None}, free_text)
    assert normalize_args({"b": 1.0, "a": " x "}) == normalize_args({"a": "x", "b": 1, "c": None})
    assert normalize_args({"a": "x"}) != normalize_args({"a": "y"})
    # ids are case-sensitive unless the parameter says otherwise
    assert normalize_args({"a": "id-a"}) != normalize_args({"a": "ID-A"})
    assert normalize_args({"a": "id-a"}, {"a": Param("string")}) != normalize_args({"a": "ID-A"}, {"a": Param("string")})
    assert normalize_args({"a": "Bei  Jing"}) != normalize_args({"a": "Bei Jing"})
    assert normalize_args(None) == "<unparseable>"
    assert fingerprint("t", {"a": 1}, 3) != fingerprint("t", {"a": 1}, 4)


def test_a_repeat_with_no_new_observation_is_flagged_before_it_runs():
    monitor = ProgressMonitor()
    fp = fingerprint("get_weather", {"city": "A"}, 1)
    assert monitor.check(fp) is None
    monitor.record(fp, 2, "ok", new_observation=False, why="weather:A already known")
    repeat = monitor.check(fp)
    assert repeat is not None and repeat.first_turn == 2 and "weather:A already known" in repeat.explain()


def test_a_retry_after_a_timeout_is_not_a_loop():
    monitor = ProgressMonitor()
    fp = fingerprint("get_weather", {"city": "A"}, 1)
    monitor.record(fp, 2, "timeout", new_observation=False)
    assert monitor.check(fp) is None
    monitor.record(fp, 3, "ok", new_observation=True)
    assert monitor.check(fp) is None


def test_idle_turns_are_saved_with_the_monitor():
    monitor = ProgressMonitor()
    monitor.idle = 1
    monitor.record(fingerprint("get_weather", {"city": "A"}, 1), 2, "timeout", new_observation=False)
    saved = MONITOR_JSON.dump_python(monitor, mode="json")
    assert saved["sightings"] == [["get_weather", '{"city":"A"}', 1, 2, "timeout", False, "no new observation"]]
    again = MONITOR_JSON.validate_python(saved)
    assert again.idle == 1 and again.sightings == monitor.sightings


def test_the_controller_stops_a_repeat_long_before_the_cap():
    run = run_scenario("weather-reask")
    assert (run.status, run.code, run.steps) == ("no_progress", "repeated_action", 3)
    assert run.actions[-1] == "blocked:get_weather(city=Shanghai)"
    assert run.usage["tool_calls"] == 2  # the repeat never ran
    assert "brought no new observation" in run.stop.reason


def test_a_model_driven_retry_after_a_timeout_is_allowed_and_paid_for():
    task = make_task("weather_compare")
    # transient faults handed back to the model: the model retries the same call itself
    policy = {"name": "model-retries", "transient": "return_to_model"}
    run = Controller(task, TaskPlanner(task), policy=policy,
                     faults=[Fault(tool="get_weather", kind="timeout", times=1, match={"city": "Beijing"})]).run()
    assert run.status == "succeeded"
    assert run.actions == ["get_weather(city=Shanghai)", "get_weather(city=Beijing)",
                           "retry:get_weather(city=Beijing)", "answer"]
    assert run.usage["retries"] == 1


def test_state_lets_the_same_planner_finish_where_the_stateless_one_loops():
    with_state = run_scenario("weather-no-state", model=None, send_state=True)
    assert with_state.status == "no_progress"  # the planner still ignores state (use_state=False)
    task = make_task("weather_compare")
    seeing = Controller(task, TaskPlanner(task, use_state=True, window=2)).run()
    assert (seeing.status, seeing.steps) == ("succeeded", 3)


@pytest.mark.parametrize(("task", "policy", "action"), [
    (make_task("weather_compare"), "default", ("get_weather", {"city": "Atlantis"})),  # serves no item: nothing settles
    (make_task("document_lookup", document_id="B"), {"name": "hand-back", "not_found": "return_to_model"},
     ("read_metadata", {"document_id": "B"})),
], ids=["not-an-item", "not-found-handed-back"])
def test_an_identical_failing_call_repeated_is_stopped_before_the_cap(task, policy, action):
    # a recorded failure changes the state version but is not progress: the fingerprint must not move
    run = Controller(task, ScriptedModel([call(*action)]), policy=policy).run()  # the script repeats its last reply
    label = f"{action[0]}({', '.join(f'{k}={v}' for k, v in action[1].items())})"
    assert (run.status, run.code) == ("no_progress", "repeated_action")
    assert run.actions == [label, f"blocked:{label}"]
    assert run.usage["tool_calls"] == 1 and run.steps == 2 < task.budget.limit("steps")
    assert run.turns[0].state_version_after > run.turns[0].state_version  # the failure was recorded …
    assert "not_found" in run.stop.reason  # … and the stop says why the repeat brought nothing


def test_timeout_then_a_retry_then_success_is_not_flagged_as_a_repeat():
    task = make_task("weather_compare")
    script = [call("get_weather", {"city": "Shanghai"}), call("get_weather", {"city": "Beijing"}),
              call("get_weather", {"city": "Beijing"}), {"content": "done", "finish_reason": "stop"}]
    run = Controller(task, ScriptedModel(script), policy={"name": "model-retries", "transient": "return_to_model"},
                     faults=[Fault(tool="get_weather", kind="timeout", times=1, match={"city": "Beijing"})]).run()
    assert (run.status, run.code) == ("succeeded", "completion_condition_met")
    assert run.actions[1:3] == ["get_weather(city=Beijing)", "retry:get_weather(city=Beijing)"]
    assert run.usage["retries"] == 1


def test_identical_invalid_arguments_are_left_to_the_repair_rule():
    # rejected arguments are bounded by the repair allowance, whose stop names the real problem
    run = run_scenario("weather-bad-arguments")
    assert (run.status, run.code) == ("failed_unrecoverable", "invalid_arguments_repeated")
    assert run.actions == ["get_weather(city=404)", "get_weather(city=404)"]


def test_a_new_monitor_has_counted_no_idle_turns():
    assert ProgressMonitor().idle == 0


def test_a_replaced_repeat_stage_that_flags_a_first_attempt_names_no_earlier_turn():
    monitor = ProgressMonitor(repeat=lambda fp, seen: True)
    repeat = monitor.check(fingerprint("get_weather", {"city": "A"}, 1))
    assert repeat is not None and repeat.first_turn == 0 and "never taken before" in repeat.explain()
