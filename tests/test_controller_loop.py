"""The controller loop's exits, one test each: every way a turn can end the run."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from agentloops import ScriptedModel
from agentloops.controller import (
    ConfigError,
    Controller,
    Controls,
    Fault,
    Param,
    TaskPlanner,
    Toolbox,
    ToolSpec,
    make_task,
    read_trace,
    run_scenario,
)
from agentloops.controller.running.resuming import resume
from agentloops.controller.task.task_types import WeatherTask
from agentloops.controller.task.world import TOOLS


def call(tool: str, args: dict, content: str | None = None) -> dict:
    return {"content": content, "tool_calls": [{"id": "c", "name": tool, "arguments": args}],
            "finish_reason": "tool_calls"}


WEATHER = make_task("weather_compare")


def test_a_truncated_reply_is_a_system_failure_before_anything_runs_and_the_user_gets_plain_words():
    run = Controller(WEATHER, ScriptedModel([{"content": "Shang", "finish_reason": "length"}])).run()
    assert (run.status, run.code, run.usage["tool_calls"]) == ("system_failure", "truncated", 0)
    message = run.user_message()
    assert "finish_reason" not in message and "length" not in message
    assert "cut off" in message and "What you can do: try again" in message


def test_a_content_filter_is_against_the_rules_not_a_system_failure():
    run = Controller(WEATHER, ScriptedModel([{"content": "", "finish_reason": "content_filter"}])).run()
    assert (run.status, run.code) == ("failed_unrecoverable", "content_filter")
    assert "finish_reason" not in run.user_message()


def test_a_reply_longer_than_the_reserved_output_counts_as_cut_off():
    long_reply = {"content": "word " * 2000, "finish_reason": "stop"}
    run = Controller(WEATHER, ScriptedModel([long_reply])).run()
    assert (run.status, run.code) == ("system_failure", "truncated")
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
    resumed = resume(run, "B-2001", model=TaskPlanner(task, ask_for_inputs=True))
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


BEIJING_DOWN = [Fault(tool="get_weather", kind="timeout", match={"city": "Beijing"}),
                Fault(tool="weather_backup", kind="timeout", match={"city": "Beijing"})]


def test_a_fallback_that_needs_a_missing_permission_never_runs():
    locked = dataclasses.replace(TOOLS["weather_backup"], name="weather_admin", capability="weather:admin")
    tools = Toolbox.of([dataclasses.replace(TOOLS["get_weather"], fallback="weather_admin"), locked])
    run = Controller(WEATHER, TaskPlanner(WEATHER), tools=tools,
                     faults=[Fault(tool="get_weather", kind="permanent_error", match={"city": "Beijing"})]).run()
    assert "weather_admin" not in {c.tool for c in run.calls}
    assert (run.status, run.code) == ("partially_completed", "items_unobtainable")
    assert run.stop.missing[0][0] == "weather:Beijing"


def test_a_fallback_goes_through_the_task_rules_before_it_runs():
    class NoBackup(WeatherTask):
        def rules(self, tool, args):
            return "the backup provider is not approved for this customer" if tool == "weather_backup" else None

    task = make_task(NoBackup)
    run = Controller(task, TaskPlanner(task), faults=[Fault(tool="get_weather", kind="format_change",
                                                            match={"city": "Beijing"})]).run()
    assert "weather_backup" not in {c.tool for c in run.calls}  # refused before it ran …
    assert run.turns[1].actions[0]["route"] == "degrade"  # … and the item was given up instead
    assert "not approved" in dict(run.stop.missing)["weather:Beijing"]


def test_a_timed_out_side_effect_is_never_repeated_even_when_timeouts_go_back_to_the_model():
    task = make_task("refund", granted=["orders:read", "payments:refund"]).with_budget(retries=2)
    script = [call("issue_refund", {"order_id": "A-1042", "amount": 25.0})]  # the model would repeat it
    run = Controller(task, ScriptedModel(script),
                     policy={"name": "hand-back", "high_risk": "allow", "transient": "return_to_model"},
                     faults=[Fault(tool="issue_refund", kind="timeout")]).run()
    assert (run.status, run.code) == ("handed_off", "unknown_outcome_side_effect")
    assert run.usage["tool_calls"] == 1 and run.usage["retries"] == 0
    assert run.actions == ["issue_refund(order_id=A-1042, amount=25.0)"]


@pytest.mark.parametrize("retries", [2, 1])
def test_parallel_calls_retry_inside_the_batch_and_pay_from_the_shared_retry_budget(retries):
    # s2 and s3 are rate limited once; each is retried inside the batch, as it would be alone
    task = make_task("research", sources=["s1", "s2", "s3", "s4"], minimum=3).with_budget(retries=retries)
    faults = [Fault(tool="fetch", kind="rate_limited", times=1, match={"source_id": s}) for s in ("s2", "s3")]
    run = Controller(task, TaskPlanner(task, parallel=True), faults=faults).run()
    assert all(run.within_budget.values())
    assert run.turns[0].actions[4]["label"] == "retry:fetch(source_id=s2)"
    if retries == 2:
        assert run.status == "succeeded" and run.usage["retries"] == 2 and run.steps == 2
        assert [c.kind for c in run.calls] == ["call", "call", "call", "call", "retry", "retry"]
    else:  # one retry for two rate-limited calls: the second finds the shared budget spent, as a lone call would
        assert (run.status, run.code) == ("budget_exhausted", "budget:retries")
        assert run.usage["retries"] == 1 and run.usage["tool_calls"] == 5


@pytest.mark.parametrize(("cancel_at", "stopped_at", "late"), [(5.0, 5.0, ["late"]), (7.9, 7.9, [])],
                         ids=["while-a-call-runs", "during-the-back-off"])
def test_cancelling_between_retry_attempts_stops_at_the_cancel_time(cancel_at, stopped_at, late):
    run = Controller(WEATHER, TaskPlanner(WEATHER), faults=BEIJING_DOWN, controls=Controls(cancel_at_s=cancel_at)).run()
    assert (run.status, run.code) == ("cancelled", "cancelled_by_user")
    assert run.stop.at_s == stopped_at and run.usage["retries"] == 0
    assert run.actions == ["get_weather(city=Shanghai)", "get_weather(city=Beijing)"]
    assert [e.verdict for e in run.events] == late  # a call cut off by the cancel lands late, and is ignored
    assert run.calls[-1].state == ("ignored" if late else "failed")


@pytest.mark.parametrize(("cancel_at", "running"), [(8.5, "get_weather(city=Beijing)"),
                                               (13.5, "weather_backup(city=Beijing)")], ids=["a-retry", "a-fallback"])
def test_a_retry_or_a_fallback_cut_off_by_the_cancel_lands_late_as_a_first_attempt_would(cancel_at, running):
    # a further attempt is launched and waited for on the same path as the first: the cancel is its deadline
    run = Controller(WEATHER, TaskPlanner(WEATHER), faults=BEIJING_DOWN, controls=Controls(cancel_at_s=cancel_at)).run()
    assert (run.status, run.code, run.stop.at_s) == ("cancelled", "cancelled_by_user", cancel_at)
    assert run.stop.reason == f"the user cancelled the task while {running} was running"
    cut = run.calls[-1]
    assert cut.kind in ("retry", "fallback") and (cut.state, cut.ended_at) == ("ignored", cancel_at)
    assert cut.arrived_at > cancel_at and [(e.call_id, e.verdict) for e in run.events] == [(cut.call_id, "late")]


def test_a_retry_s_duplicate_delivery_lands_a_moment_after_the_first_as_any_call_s_does():
    faults = [Fault(tool="get_weather", kind="timeout", times=1, match={"city": "Beijing"}),
              Fault(tool="get_weather", kind="duplicate", after=1, match={"city": "Beijing"})]
    run = Controller(WEATHER, TaskPlanner(WEATHER), faults=faults).run()
    retry = run.calls[-1]
    assert (run.status, retry.kind, retry.state, retry.deliveries) == ("succeeded", "retry", "succeeded", 2)
    assert [(e.call_id, e.verdict, e.at_s) for e in run.events] == [
        (retry.call_id, "duplicate", round(retry.arrived_at + 0.05, 6))]


def test_a_retry_the_tool_call_budget_refuses_leaves_the_call_answered_with_its_last_result():
    run = Controller(WEATHER, TaskPlanner(WEATHER), faults=BEIJING_DOWN,
                     budget=WEATHER.budget.with_values(tool_calls=2)).run()
    assert (run.status, run.code) == ("budget_exhausted", "budget:tool_calls")
    assert run.usage["tool_calls"] == 2 and [c.kind for c in run.calls] == ["call", "call"]
    assert run.turns[-1].tool_status == "timeout"  # what the tool said, not an invented "not run" error


def test_a_model_that_raises_is_a_stop_with_a_reason_not_a_traceback(tmp_path: Path):
    def broken(messages):
        raise ConnectionError("upstream 503 at https://internal.example/v1 (secret detail)")

    path = tmp_path / "t.jsonl"
    run = Controller(WEATHER, broken, trace=path).run()
    assert (run.status, run.code, run.stop.error_class) == ("system_failure", "model_error", "ConnectionError")
    assert "secret" not in run.user_message() and "Traceback" not in run.user_message()
    assert "What you can do" in run.user_message()
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [line["kind"] for line in lines] == ["start", "turn", "stop"]
    assert lines[-1]["record"]["code"] == "model_error" and run.usage["model_calls"] == 1


def test_giving_up_on_spent_retries_is_a_budget_stop_with_a_structured_code():
    task = make_task("document_lookup", document_id="A").with_budget(retries=1)
    policy = {"name": "hand-back-degrade", "transient": "return_to_model", "on_retries_exhausted": "degrade"}
    run = Controller(task, TaskPlanner(task), policy=policy,
                     faults=[Fault(tool="read_metadata", kind="timeout")]).run()
    assert (run.status, run.code, run.stop.budget) == ("budget_exhausted", "budget:retries", "retries")
    assert run.actions == ["read_metadata(document_id=A)", "retry:read_metadata(document_id=A)",
                           "blocked:read_metadata(document_id=A)"]
    assert run.stop.state["codes"] == {"doc:A:published": "budget:retries"}


def test_a_value_the_user_gave_that_fails_the_schema_goes_back_to_the_user():
    first = run_scenario("order-missing-id")
    again = resume(first, "1042")  # not an order id: only the user can fix that
    assert (again.status, again.code) == ("waiting_for_user", "invalid_user_input")
    assert again.new_actions == ["held:lookup_order(order_id=1042)"] and again.usage["tool_calls"] == 0
    assert again.usage["model_calls"] == first.usage["model_calls"] + 1  # the model was not asked to repair it
    message = again.user_message()
    assert "'1042' does not look like a valid order id" in message and "A-1042" in message
    assert "[A-Z]" not in message and "pattern" not in message  # no validation regex in front of the user
    done = resume(again, "A-1042")
    assert (done.status, done.new_actions) == ("succeeded", ["lookup_order(order_id=A-1042)", "answer"])
