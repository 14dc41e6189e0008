"""Two of the article's root causes, run: a cap-only loop spins to its cap, the controller stops for a reason;
and a budget that runs out while calls are in flight cancels them, saying why."""

from __future__ import annotations

import json

import pytest

import agentloops.controller as ctl
from agentloops.controller.sim.planners import TaskPlanner
from agentloops.controller.teaching.experiments import run_cap_only
from agentloops.controller.teaching.root_causes import NO_RESULT_TRY_AGAIN, ROOT_CAUSES, loop_pair, root_cause_pairs


def test_each_root_cause_spins_a_cap_only_loop_and_the_controller_stops_early_for_its_reason() -> None:
    pairs = {pair.cause: pair for pair in root_cause_pairs()}
    assert set(pairs) == set(ROOT_CAUSES)
    for pair in pairs.values():
        assert (pair.cap_only.outcome, pair.cap_only.steps) == ("hit_cap", 8)
        assert pair.controller.steps < 8 and pair.controller.status != "budget_exhausted"
    open_ended = pairs["open-ended goal"].controller
    assert (open_ended.status, open_ended.code, open_ended.steps) == ("no_progress", "repeated_action", 5)
    assert {f.item for f in open_ended.stop.facts} == {"source:s1", "source:s2", "source:s3"}
    ambiguous = pairs["ambiguous tool feedback"]
    assert ambiguous.feedback == NO_RESULT_TRY_AGAIN and ambiguous.cap_only.statuses == ("empty",) * 8
    assert (ambiguous.controller.status, ambiguous.controller.steps) == ("succeeded", 2)


def test_the_flattened_feedback_alone_makes_the_ambiguous_case_loop() -> None:
    structured = loop_pair("ambiguous tool feedback", structured=True)
    assert structured.feedback is None and (structured.cap_only.outcome, structured.cap_only.steps) == (
        "answered_verified", 2)
    with pytest.raises(KeyError):
        loop_pair("no such cause")


def test_cap_only_feedback_replaces_every_result_but_ok() -> None:
    task = ctl.make_task("weather_compare")
    seen: list[str] = []
    model = TaskPlanner(task)
    faults = [ctl.Fault(tool="get_weather", kind="timeout", times=1, match={"city": "Beijing"})]
    run = run_cap_only(task, model, faults, feedback="TRY AGAIN")
    for request in model.requests:
        seen.extend(m.content or "" for m in request if m.role == "tool")
    assert "TRY AGAIN" in seen  # the timeout was flattened
    assert any(json.loads(text).get("status") == "ok" for text in seen if text != "TRY AGAIN")  # a success was not
    assert run.outcome == "answered_verified"


def test_an_open_ended_planner_never_answers_a_bounded_one_does() -> None:
    task = ctl.make_task("research", {"sources": ["s1", "s2"], "minimum": 1})
    assert run_cap_only(task, TaskPlanner(task, open_ended=True), max_steps=6).outcome == "hit_cap"
    bounded = run_cap_only(task, TaskPlanner(task), max_steps=6)
    assert (bounded.outcome, bounded.tool_calls) == ("answered_verified", 1)


def test_a_budget_that_runs_out_in_flight_cancels_the_running_calls_with_its_reason() -> None:
    run = ctl.run_scenario("research-budget-runs-out-in-flight")
    assert (run.status, run.code, run.stop.budget) == ("budget_exhausted", "budget:wall_time_s", "wall_time_s")
    running = [c for c in run.calls if c.args != '{"source_id":"s1"}']
    assert len(running) == 3 and all(c.state == "ignored" for c in running)
    assert all(c.note == f"cancelled: the task stopped: {run.stop.reason}" for c in running)
    assert all(c.ended_at == run.stop.at_s < c.arrived_at for c in running)  # cancelled before they could land
    assert [e.verdict for e in run.events] == ["late"] * 3
    assert run.turns[0].observation.startswith(f"the task stopped: {run.stop.reason}")
    assert "wall-time budget" in run.stop.reason


def test_open_ended_is_left_out_of_a_planner_dump_while_off() -> None:
    on = ctl.load_controller_scenario("research-open-ended").model_dump(mode="json")["model"]["planner"]
    off = ctl.load_controller_scenario("research-parallel").model_dump(mode="json")["model"]["planner"]
    assert on["open_ended"] is True and "open_ended" not in off
