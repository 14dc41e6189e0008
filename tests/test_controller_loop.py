"""The controller loop's exits, one test each: every way a turn can end the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentloops import ScriptedModel
from agentloops.controller import (
    ConfigError,
    Controller,
    Fault,
    Param,
    TaskPlanner,
    Toolbox,
    ToolSpec,
    make_task,
    read_trace,
)


def call(tool: str, args: dict, content: str | None = None) -> dict:
    return {"content": content, "tool_calls": [{"id": "c", "name": tool, "arguments": args}],
            "finish_reason": "tool_calls"}


WEATHER = make_task("weather_compare")


def test_a_truncated_reply_stops_as_unrecoverable_before_anything_runs():
    run = Controller(WEATHER, ScriptedModel([{"content": "Shang", "finish_reason": "length"}])).run()
    assert (run.status, run.code, run.usage["tool_calls"]) == ("failed_unrecoverable", "truncated", 0)


def test_a_reply_longer_than_the_reserved_output_counts_as_cut_off():
    long_reply = {"content": "word " * 2000, "finish_reason": "stop"}
    run = Controller(WEATHER, ScriptedModel([long_reply])).run()
    assert (run.status, run.code) == ("failed_unrecoverable", "truncated")
    assert run.usage["tokens"] <= WEATHER.budget.limit("tokens")


def test_a_paused_turn_continues():
    script = [{"content": None, "finish_reason": "pause"}, call("get_weather", {"city": "Shanghai"}),
              call("get_weather", {"city": "Beijing"}), {"content": "done", "finish_reason": "stop"}]
    run = Controller(WEATHER, ScriptedModel(script)).run()
    assert run.status == "succeeded" and run.turns[0].decision == "continue: the provider paused the turn"


def test_an_unknown_tool_is_an_argument_error_the_model_may_repair_once():
    script = [call("get_wether", {"city": "Shanghai"}), call("get_weather", {"city": "Shanghai"}),
              call("get_weather", {"city": "Beijing"}), {"content": "done", "finish_reason": "stop"}]
    run = Controller(WEATHER, ScriptedModel(script)).run()
    assert run.status == "succeeded" and run.turns[0].tool_status == "invalid_arguments"
    assert "there is no tool named 'get_wether'" in run.turns[0].observation


def test_the_model_can_ask_the_user_and_resume():
    task = make_task("order_status")
    run = Controller(task, TaskPlanner(task, ask_for_inputs=True)).run()
    assert (run.status, run.code, run.actions) == ("waiting_for_user", "asked_user", ["ask_user"])
    assert run.usage["tool_calls"] == 0
    resumed = run.resume("B-2001", model=TaskPlanner(task, ask_for_inputs=True))
    assert resumed.status == "succeeded" and "processing" in (resumed.answer or "")


def test_a_side_effect_that_timed_out_goes_to_a_person_never_to_a_retry():
    task = make_task("refund", granted=["orders:read", "payments:refund"])
    run = Controller(task, TaskPlanner(task), policy={"name": "allow-risk", "high_risk": "allow"},
                     faults=[Fault(tool="issue_refund", kind="timeout")]).run()
    assert (run.status, run.code) == ("handed_off", "unknown_outcome_side_effect")
    assert run.usage["tool_calls"] == 1 and run.usage["retries"] == 0


def test_an_action_against_the_rules_is_unrecoverable():
    task = make_task("refund", amount=500.0, granted=["orders:read", "payments:refund"])
    run = Controller(task, TaskPlanner(task)).run()
    assert (run.status, run.code) == ("failed_unrecoverable", "against_policy")
    assert "more than the order total" in run.stop.reason and run.usage["tool_calls"] == 0


def test_too_many_failed_turns_in_a_row_go_to_a_person():
    policy = {"name": "patient", "invalid_argument_repairs": 99}
    run = Controller(WEATHER, TaskPlanner(WEATHER, bad_arguments=10), policy=policy).run()
    assert (run.status, run.code, run.steps) == ("handed_off", "consecutive_failures", 3)


def test_idle_turns_stop_a_model_that_alternates_between_useless_actions():
    policy = {"name": "no-fingerprints", "detect_repeats": False}
    run = Controller(WEATHER, TaskPlanner(WEATHER, use_state=False, window=2), policy=policy).run()
    assert (run.status, run.code) == ("no_progress", "idle_turns")
    assert run.steps == 5  # turns 3, 4 and 5 added nothing; turn 6 never called the model


def test_any_kill_inside_a_tool_leaves_the_finished_turns(tmp_path: Path):
    calls = {"n": 0}

    def flaky(args: dict) -> dict:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # Ctrl-C (or a kill) in the middle of turn 2
        return {"city": args["city"], "temp_c": 20, "conditions": "fine"}

    tools = Toolbox.of([ToolSpec("get_weather", "weather", {"city": Param()}, flaky, source="svc")])
    path = tmp_path / "t.jsonl"
    with pytest.raises(KeyboardInterrupt):
        Controller(WEATHER, TaskPlanner(WEATHER), tools=tools, trace=path).run()
    trace = read_trace(path)
    assert [t.turn for t in trace.turns] == [1] and not trace.complete


def test_a_controller_runs_once():
    controller = Controller(WEATHER, TaskPlanner(WEATHER))
    controller.run()
    with pytest.raises(ConfigError, match="already run"):
        controller.run()


def test_faults_must_name_a_tool_of_the_task():
    with pytest.raises(ConfigError, match=r"fault on 'fetch': no such tool in this task's toolbox"):
        Controller(WEATHER, TaskPlanner(WEATHER), faults=[Fault(tool="fetch", kind="timeout")])
