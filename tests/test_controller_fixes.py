"""One test per bug the controller review reproduced (issue 11); each failed on the code before the fix."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentloops import ScriptedModel
from agentloops.controller import (
    STOP_STATUSES,
    ConfigError,
    Controller,
    Fault,
    TaskPlanner,
    ToolResult,
    make_task,
    read_trace,
    run_scenario,
)
from agentloops.controller.persistence.saved import PauseStore
from agentloops.controller.policy.error_policy import DEFAULT_POLICY, RouteContext, route
from agentloops.controller.policy.routes import Fallback, Retry
from agentloops.controller.running.resuming import resume
from agentloops.controller.sim.executor import execute
from agentloops.controller.stopping.status import NEXT_STEPS, STOP_CODES, Stop
from agentloops.controller.task.world import TOOLS


def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"content": None, "tool_calls": [{"id": "c", "name": tool, "arguments": args}],
            "finish_reason": "tool_calls"}


def answer(text: str) -> dict[str, Any]:
    return {"content": text, "finish_reason": "stop"}


WEATHER = make_task("weather_compare", cities=["Shanghai", "Beijing"])


# -- 1. a parallel batch uses the fallback for a permanent error, as a single call does ---------------------

@pytest.mark.parametrize("parallel", [False, True])
def test_a_permanent_error_switches_to_the_fallback_alone_or_in_a_batch(parallel: bool):
    fault = Fault(tool="get_weather", kind="permanent_error", match={"city": "Beijing"})
    run = Controller(WEATHER, TaskPlanner(WEATHER, parallel=parallel), faults=[fault]).run()
    assert "fallback:weather_backup(city=Beijing)" in run.actions
    assert (run.status, run.code) == ("succeeded", "completion_condition_met")
    assert run.usage["retries"] == 1  # the switch is paid from the shared retry budget either way


# -- 2. fingerprints normalise only what the parameter declares -----------------------------------------------

def test_a_model_that_corrects_the_case_of_an_id_makes_a_new_call_not_a_repeat():
    task = make_task("research", sources=["s1"], minimum=1)
    script = [call("fetch", {"source_id": "S1"}), call("fetch", {"source_id": "s1"}),
              answer("Summary from “Stopping conditions for ReAct agents” (2024).")]
    run = Controller(task, ScriptedModel(script)).run()
    assert run.actions[:2] == ["fetch(source_id=S1)", "fetch(source_id=s1)"]
    assert (run.status, run.code) == ("succeeded", "completion_condition_met")


def test_a_parameter_declared_casefold_still_catches_a_repeat_that_only_changes_case():
    script = [call("get_weather", {"city": "Atlantis"}), call("get_weather", {"city": "ATLANTIS"})]
    run = Controller(WEATHER, ScriptedModel(script)).run()
    assert (run.status, run.code) == ("no_progress", "repeated_action")
    assert run.actions == ["get_weather(city=Atlantis)", "blocked:get_weather(city=ATLANTIS)"]


# -- 3. the repair allowance is per (tool, kind of slip) and reset by a success --------------------------------

def test_the_same_slip_after_a_success_is_a_first_slip_again():
    script = [call("get_weather", {"city": 404}), call("get_weather", {"city": "Shanghai"}),
              call("get_weather", {"city": 404}), call("get_weather", {"city": "Beijing"}),
              answer("Shanghai 24°C sunny, Beijing 18°C cloudy.")]
    run = Controller(WEATHER, ScriptedModel(script)).run()
    assert (run.status, run.code) == ("succeeded", "completion_condition_met")


def test_two_different_slips_in_a_row_are_two_first_slips():
    script = [call("get_weather", {"city": 404}), call("get_weather", {"town": "Shanghai"}),
              call("get_weather", {"city": "Shanghai"}), call("get_weather", {"city": "Beijing"}),
              answer("Shanghai 24°C sunny, Beijing 18°C cloudy.")]
    run = Controller(WEATHER, ScriptedModel(script)).run()
    assert (run.status, run.code) == ("succeeded", "completion_condition_met")


def test_the_same_slip_twice_in_a_row_still_stops():
    script = [call("get_weather", {"city": "Shanghai"}), call("get_weather", {"city": 404}),
              call("get_weather", {"city": 404})]
    run = Controller(WEATHER, ScriptedModel(script)).run()
    assert (run.status, run.code) == ("failed_unrecoverable", "invalid_arguments_repeated")


# -- 4. a system failure is its own status, and every stop tells the user what to do next ---------------------

def test_a_provider_outage_is_a_system_failure_whose_message_agrees_with_it():
    run = run_scenario("weather-provider-outage")
    assert (run.status, run.code) == ("system_failure", "model_error")
    message = run.user_message()
    assert "system failure, not because of your request" in message
    assert "try again in a few minutes" in message
    assert [f.item for f in run.stop.facts] == ["weather:Shanghai"]  # what was done is kept
    assert "system_failure" in STOP_STATUSES


def test_every_stop_code_has_a_plain_words_next_step():
    assert set(NEXT_STEPS) == set(STOP_CODES)
    for code, step in NEXT_STEPS.items():
        assert "_" not in step and "budget:" not in step and "finish" not in step, code


@pytest.mark.parametrize("code", STOP_CODES)
def test_no_user_message_shows_an_internal_code(code: str):
    status = "succeeded" if code in ("completion_condition_met", "model_said_done") else "failed_unrecoverable"
    stop = Stop(status, code, "finish_reason is length: the output hit the token limit", 1, 0.0, "t", "task", "p")
    message = stop.user_message()
    if status != "succeeded":
        assert "What you can do: " + NEXT_STEPS[code] in message
    if code in ("truncated", "content_filter", "refusal", "model_error", "provider_error", "malformed_tool_call",
                "unknown_stop"):
        assert "finish_reason" not in message


# -- 5. a success answer agrees with the verified facts --------------------------------------------------------

def test_an_answer_with_wrong_numbers_never_reaches_the_user_as_a_verified_success():
    script = [call("get_weather", {"city": "Shanghai"}), call("get_weather", {"city": "Beijing"}),
              answer("Shanghai 31°C sunny, Beijing 18°C cloudy.")]
    run = Controller(WEATHER, ScriptedModel(script)).run()
    assert run.status == "succeeded"
    assert run.answer is not None and "31" not in run.answer and "24°C" in run.answer and "18°C" in run.answer
    assert "31" in run.stop.reason and "written from the verified facts" in run.stop.reason
    assert "31" not in run.user_message()


def test_an_answer_that_agrees_with_the_facts_is_kept_word_for_word():
    text = "Shanghai 24°C sunny, Beijing 18°C cloudy."
    script = [call("get_weather", {"city": "Shanghai"}), call("get_weather", {"city": "Beijing"}), answer(text)]
    assert Controller(WEATHER, ScriptedModel(script)).run().answer == text


# -- 6. a pause resumes once, whoever delivers it, and the in-memory trace equals the file ----------------------

def test_the_same_pause_delivered_twice_resumes_once():
    run = run_scenario("order-missing-id")
    assert run.status == "waiting_for_user" and run.saved is not None
    first, again = copy.deepcopy(run.saved), copy.deepcopy(run.saved)  # a queue redelivers a copy
    store = PauseStore()
    assert resume(first, "A-1042", store=store).status == "succeeded"
    with pytest.raises(ConfigError, match=r"already resumed from its pause at state v2 \(the same pause delivered twice\)"):
        resume(again, "A-1042", store=store)


def test_a_new_run_that_reuses_a_seeded_trace_id_is_not_taken_for_a_redelivery():
    from agentloops.controller.running.scenarios import build_controller

    store = PauseStore()
    for _ in range(2):  # a notebook cell run twice
        run = build_controller("order-missing-id", trace_id="seeded").run()
        assert resume(run.saved or {}, "A-1042", store=store).status == "succeeded"


def test_after_a_resume_the_in_memory_trace_equals_the_file(tmp_path: Path):
    path = tmp_path / "run.jsonl"
    run = run_scenario("order-missing-id", trace=path)
    resumed = resume(run, "A-1042")
    on_disk = read_trace(path)
    for name in ("start", "turns", "events", "resumes", "stops", "stop"):
        assert getattr(resumed.trace, name) == getattr(on_disk, name), name
    assert len(resumed.trace.stops) == 2


# -- 7. the router honours the tool's `retryable` -------------------------------------------------------------

def test_a_timeout_the_tool_marks_not_retryable_is_not_retried_but_falls_back():
    def executor(spec, args):
        if spec.name == "get_weather" and args["city"] == "Beijing":
            return ToolResult("timeout", error="the station is being decommissioned", retryable=False,
                              latency_s=0.1)
        return execute(spec, args)

    run = Controller(WEATHER, TaskPlanner(WEATHER), executor=executor).run()
    assert not any(a.startswith("retry:") for a in run.actions)
    assert "fallback:weather_backup(city=Beijing)" in run.actions


def test_route_reads_retryable_and_the_tools_back_off():
    ctx = RouteContext(TOOLS["get_weather"], retries_left=3, fallback=TOOLS["weather_backup"])
    assert isinstance(route(DEFAULT_POLICY, ToolResult("timeout", retryable=False), ctx), Fallback)
    assert isinstance(route(DEFAULT_POLICY, ToolResult("timeout", retryable=True), ctx), Retry)
    assert isinstance(route(DEFAULT_POLICY, ToolResult("permanent_error", retryable=True), ctx), Retry)
    waited = route(DEFAULT_POLICY, ToolResult("rate_limited", retryable=True, retry_after_s=4.0), ctx)
    assert isinstance(waited, Retry) and waited.delay_s == 4.0
    shorter = route(DEFAULT_POLICY, ToolResult("rate_limited", retryable=True, retry_after_s=0.1), ctx)
    assert isinstance(shorter, Retry) and shorter.delay_s == DEFAULT_POLICY.backoff(1)


# -- 8. joins never cancel a call they still need; minimum evidence counts what is still needed ----------------

def test_a_join_that_the_batch_alone_cannot_meet_waits_for_its_running_calls_instead_of_reissuing_them():
    task = make_task("research", sources=["s1", "s2"], minimum=2)
    faults = [Fault(tool="fetch", kind="permanent_error", match={"source_id": "s1"}),
              Fault(tool="fetch", kind="slow", latency_s=6.0, match={"source_id": "s2"})]
    run = Controller(task, TaskPlanner(task, parallel=True), faults=faults).run()
    assert [c.state for c in run.calls] == ["failed", "succeeded"]  # s2 is never cancelled, never fetched again
    assert run.actions.count("fetch(source_id=s2)") == 1
    assert (run.status, run.code) == ("partially_completed", "items_unobtainable")


def test_minimum_evidence_counts_the_facts_the_task_already_holds():
    task = make_task("research", sources=["s1", "s2", "s3"], minimum=2)
    batch = {"content": None, "finish_reason": "tool_calls", "tool_calls": [
        {"id": "a", "name": "fetch", "arguments": {"source_id": "s2"}},
        {"id": "b", "name": "fetch", "arguments": {"source_id": "s3"}}]}
    script = [call("fetch", {"source_id": "s1"}), batch, answer("Summary from s1 and s2.")]
    faults = [Fault(tool="fetch", kind="slow", latency_s=9.0, match={"source_id": "s3"})]
    run = Controller(task, ScriptedModel(script), faults=faults).run()
    assert run.status == "succeeded"
    assert [c.state for c in run.calls] == ["succeeded", "succeeded", "ignored"]  # s3 not needed: cancelled
    assert run.turns[1].observation.startswith("join 'minimum 2")
    assert run.turns[1].at_s < 5.0  # the turn did not wait 9 s for evidence the task no longer needed


def test_every_shipped_scenario_stops_with_a_declared_code():
    from agentloops.controller import list_controller_scenarios

    for scenario in list_controller_scenarios():
        run = run_scenario(scenario.name, resume=True)
        assert run.code in STOP_CODES, (scenario.name, run.code)
        assert run.status in STOP_STATUSES


# ---------------------------------------------------------------- a reply without tool calls and with nothing done


def _stop_text(text: str):
    from agentloops.response import Response

    return Response(content=text, finish_reason="stop")


def test_a_model_that_never_asks_for_a_detail_only_the_user_has_leaves_the_task_waiting_for_it():
    order = make_task("order_status")
    run = Controller(order, ScriptedModel([_stop_text("Your order is on its way.")])).run()
    assert (run.status, run.code) == ("waiting_for_user", "missing_parameter")
    assert run.saved is not None and run.saved["parameter"] == "order_id" and run.stop.question


def test_a_model_that_does_not_know_what_to_do_is_handed_to_a_person_not_failed():
    weather = make_task("weather_compare")  # no parameter only the user can give: nothing to ask
    run = Controller(weather, ScriptedModel([_stop_text("I am not sure which tool can answer this.")])).run()
    assert (run.status, run.code) == ("handed_off", "no_next_step")
    assert "no_next_step" not in run.user_message() and NEXT_STEPS["no_next_step"] in run.user_message()


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="0123456789-.,a Z_°C\né中x", max_size=40))
def test_the_faster_number_pattern_finds_exactly_what_the_plain_one_finds(text: str):
    import re

    from agentloops.controller.task.answers import _NUMBER

    plain = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)?(?!\w)")  # the pattern as first written
    assert _NUMBER.findall(text) == plain.findall(text)
