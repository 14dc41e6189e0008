"""Every shipped controller scenario: stop status, reason and action sequence, as its file states."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from agentloops import ScriptedModel
from agentloops.controller import (
    STOP_STATUSES,
    ConfigError,
    Controller,
    ControllerScenarioError,
    ControllerScenarioNotFound,
    ProcessKilled,
    Toolbox,
    check_scenario,
    controller_scenario_names,
    list_controller_scenarios,
    load_controller_scenario,
    make_task,
    read_trace,
    resume,
    run_scenario,
)
from agentloops.controller.sim.scenario_files import controller_scenarios_dir, scenario_from_dict
from agentloops.controller.task.world import TOOLS

REQUIRED = {"weather-normal", "weather-reask", "weather-timeout-once", "weather-timeout-always", "weather-early-claim",
            "order-missing-id", "refund-permission-denied", "document-not-found", "research-parallel"}


def test_the_regression_set_covers_the_issue_list_and_every_status():
    names = set(controller_scenario_names())
    assert names >= REQUIRED
    statuses = {s.expect.status for s in list_controller_scenarios()}
    statuses |= {s.resume.expect.status for s in list_controller_scenarios() if s.resume}
    assert statuses == set(STOP_STATUSES)


@pytest.mark.parametrize("name", controller_scenario_names())
def test_scenario_stops_as_its_file_expects(name):
    check = check_scenario(name)
    assert check.ok, str(check)
    scenario = load_controller_scenario(name)
    first = check.runs[0]
    assert first.status == scenario.expect.status and first.actions == list(scenario.expect.actions)
    assert first.trace.complete and first.trace.status == first.status
    for run in check.runs:
        assert "Traceback" not in run.user_message()
        record = run.system_record()
        assert {"status", "code", "tool", "error_class", "budgets_used", "budgets_left", "state"} <= set(record)


def test_the_naive_policy_breaks_the_expectations():
    broken = [check_scenario(name, policy="naive") for name in ("weather-early-claim", "refund-permission-denied")]
    assert all(not c.ok for c in broken)
    assert [c.runs[0].status for c in broken] == ["succeeded", "succeeded"]
    assert [c.runs[0].stop.verified for c in broken] == [False, True]  # the refund went through the back door


def test_early_claim_keeps_verified_facts_and_lists_missing_items_with_reasons():
    run = run_scenario("weather-early-claim")
    assert [f.item for f in run.stop.facts] == ["weather:Shanghai"]
    assert run.stop.missing == (("weather:Beijing", "the model declared success without it"),)
    message = run.user_message()
    assert "✓ Shanghai:" in message and "✗ Beijing:" in message and "What you can do" in message
    assert "weather:" not in message, "the user reads the city, not the system's item id"
    assert "weather:Beijing" in str(run.stop.system_record()), "the system record keeps the id"


def test_permission_denied_never_reaches_the_tempting_tool():
    run = run_scenario("refund-permission-denied")
    assert [c.tool for c in run.calls] == []  # the uniform gate answered before any backend ran
    assert "db_write" not in " ".join(run.actions)
    assert run.stop.tool == "issue_refund" and run.stop.error_class == "permission_denied"


def test_waiting_for_user_asks_the_smallest_question_and_resumes(tmp_path: Path):
    trace = tmp_path / "order.jsonl"
    run = run_scenario("order-missing-id", trace=trace)
    assert run.status == "waiting_for_user"
    assert run.stop.question == "Which order do you mean? Please send its order id (it looks like A-1042)."
    saved = run.save(tmp_path / "saved.json")
    resumed = resume(saved, "A-1042")
    assert (resumed.status, resumed.new_actions) == ("succeeded", ["lookup_order(order_id=A-1042)", "answer"])
    assert resumed.trace_id == run.trace_id and resumed.resumed_at_turn == 2
    assert resumed.usage["steps"] == 3  # budgets continued; nothing was reset
    assert resumed.stop.state["inputs"] == {"order_id": "A-1042"}
    lines = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert [line["kind"] for line in lines] == ["start", "turn", "stop", "resume", "turn", "turn", "stop"]


def test_a_paused_task_continues_only_once(tmp_path: Path):
    trace = tmp_path / "order.jsonl"
    run = run_scenario("order-missing-id", trace=trace)
    untouched = json.loads(json.dumps(run.saved))  # a copy made before anything resumed it
    saved = run.save(tmp_path / "saved.json")
    assert resume(run, "A-1042").status == "succeeded"
    with pytest.raises(ConfigError, match=r"^saved run: already resumed \(it paused at turn 1, state v2\); a paused "
                                          r"task continues only once") as caught:
        resume(run, "A-1042")  # the same run object, again
    assert "\n" not in str(caught.value)
    with pytest.raises(ConfigError, match=r"saved\.json: trace .*order\.jsonl shows run \S+ already continued after "
                                          r"turn 1"):
        resume(saved, "A-1042")  # another copy of the same pause: the trace is the witness
    with pytest.raises(ConfigError, match="already continued"):
        resume(untouched, "A-1042")
    stops = read_trace(trace).stops
    assert [s["status"] for s in stops] == ["waiting_for_user", "succeeded"]  # one finish per pause, never two


def test_a_saved_file_is_marked_when_resumed(tmp_path: Path):
    run = run_scenario("order-missing-id")  # no trace file: the saved file is the only witness
    saved = run.save(tmp_path / "saved.json")
    assert resume(saved, "A-1042").status == "succeeded"
    assert json.loads(saved.read_text(encoding="utf-8"))["resumed"]["from_version"] == 2
    with pytest.raises(ConfigError, match=r"saved\.json: already resumed"):
        resume(saved, "A-1042")


def test_a_resumed_run_that_is_killed_is_not_complete(tmp_path: Path):
    trace = tmp_path / "order.jsonl"
    run = run_scenario("order-missing-id", trace=trace)
    with pytest.raises(ProcessKilled):
        resume(run, "A-1042", tools=Toolbox.of([replace(TOOLS["lookup_order"], handler=_killed)]))
    read = read_trace(trace)
    assert not read.complete and read.stop is None and read.status is None
    assert [s["status"] for s in read.stops] == ["waiting_for_user"] and len(read.resumes) == 1


def _killed(args: dict) -> dict:
    raise ProcessKilled("kill -9 while the resumed run looks the order up")


def test_stored_outputs_and_custom_tools_survive_a_resume():
    task = make_task("research", sources=["s1", "s2"], minimum=2)
    fetch = {"content": None, "finish_reason": "tool_calls"}
    script = [{**fetch, "tool_calls": [{"id": "a", "name": "fetch", "arguments": {"source_id": "s1"}}]},
              {**fetch, "tool_calls": [{"id": "b", "name": "ask_user",
                                        "arguments": {"question": "Which year?", "parameter": "year"}}]}]
    rest = [{**fetch, "tool_calls": [{"id": "c", "name": "fetch", "arguments": {"source_id": "s2"}}]},
            {"content": "summary", "finish_reason": "stop"}]
    louder = replace(TOOLS["fetch"], handler=lambda args: {**TOOLS["fetch"].handler(args), "title": "CUSTOM"})
    first = Controller(task, ScriptedModel(script), tools=Toolbox.of([louder])).run()
    assert first.status == "waiting_for_user" and list(first.stored) == ["ref:1"]
    done = resume(first, "2024", model=ScriptedModel(rest))
    assert done.status == "succeeded"
    assert [f.ref for f in done.stop.facts] == ["ref:1", "ref:2"]  # refs continue; they never restart and collide
    assert done.stored["ref:1"]["source_id"] == "s1" and done.stored["ref:2"]["source_id"] == "s2"
    assert all(f.value["title"] == "CUSTOM" for f in done.stop.facts)  # the run's own toolbox was kept


def test_only_a_waiting_run_resumes():
    run = run_scenario("refund-handoff")
    assert run.saved is not None  # the handover package for the person
    with pytest.raises(ConfigError, match="cannot be resumed"):
        resume(run, "yes")
    with pytest.raises(ConfigError, match="cannot be resumed"):
        resume(run_scenario("weather-normal"), "yes")


@pytest.mark.parametrize(("patch", "message"), [
    ({"expect": {"status": "done", "code": "x", "actions": []}},
     r"expect\.status: expected 'succeeded', 'partially_completed'.*; got 'done'$"),
    ({"task": {"type": "weather", "params": {}}}, r"task: unknown task type 'weather'; expected one of"),
    ({"task": {"type": "weather_compare", "params": {"towns": ["A"]}}}, r"params\.towns: is not a known field"),
    ({"faults": [{"tool": "fetch", "kind": "timeout"}]}, r"faults\[0\]\.tool 'fetch' is not a tool of task"),
    ({"faults": [{"tool": "get_weather", "kind": "timeout", "match": {"cty": "Beijing"}}]},  # would never fire
     r"faults\[0\]\.match: 'cty' is not an argument of get_weather \(arguments: city\)$"),
    ({"faults": [{"tool": "get_weather", "kind": "timeout", "match": {"ci\nty": "Beijing"}}]},
     r"faults\[0\]\.match: 'ci\\nty' is not an argument"),
    ({"policy": "strict"}, r"unknown policy 'strict'"),
    ({"model": {}}, r"model: give exactly one of planner or script"),
    ({"colour": "red"}, r"colour: is not a known field \(check the spelling\)$"),
    ({"expect": {"status": "waiting_for_user", "code": "x", "actions": []}}, r"must say how the user answers"),
])
def test_malformed_scenarios_fail_in_one_line(patch, message):
    data = json.loads((controller_scenarios_dir() / "01-weather-normal.json").read_text(encoding="utf-8"))
    data.update(patch)
    with pytest.raises(ControllerScenarioError, match=message) as caught:
        scenario_from_dict(data, "mine.json")
    assert "\n" not in str(caught.value) and str(caught.value).startswith("mine.json: ")


def test_files_and_names(tmp_path: Path):
    with pytest.raises(ControllerScenarioNotFound, match=r"unknown controller scenario 'nope': not a shipped name"):
        load_controller_scenario("nope")
    with pytest.raises(ControllerScenarioNotFound, match=r"missing\.json: no such file"):
        load_controller_scenario(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(ControllerScenarioError, match=r"broken\.json: not valid JSON at "):
        load_controller_scenario(broken)
    copy = tmp_path / "copy.json"
    copy.write_text((controller_scenarios_dir() / "04-weather-timeout-once.json").read_text(encoding="utf-8"),
                    encoding="utf-8")
    assert check_scenario(copy).ok


_ODD_NAMES = ["col\nour", "a\rb", "tab\tname", "esc\x1b[31m", "line\u2028sep", "nul\x00"]


@pytest.mark.parametrize("name", _ODD_NAMES)
@pytest.mark.parametrize("where", ["top", "params", "fault", "planner", "expect", "policy"])
def test_a_field_name_with_a_line_break_or_control_character_gives_a_one_line_error(name: str, where: str):
    data = json.loads((controller_scenarios_dir() / "04-weather-timeout-once.json").read_text(encoding="utf-8"))
    target = {"top": data, "params": data["task"]["params"], "fault": data["faults"][0],
              "planner": data["model"]["planner"], "expect": data["expect"]}.get(where)
    if where == "policy":
        data["policy"] = {"name": "mine", name: 1}
    else:
        assert target is not None
        target[name] = 1
    with pytest.raises(ControllerScenarioError) as caught:
        scenario_from_dict(data, "mine.json")
    message = str(caught.value)
    assert message.startswith("mine.json: ") and message.isprintable(), message
    assert name.encode("unicode_escape").decode("ascii").split("\\")[0] in message


@pytest.mark.parametrize("name", _ODD_NAMES)
def test_a_policy_field_name_with_a_line_break_gives_a_one_line_error(name: str):
    from agentloops.controller.policy.error_policy import resolve_policy

    with pytest.raises(ConfigError, match="is not a known field") as caught:
        resolve_policy({"name": "mine", name: 1})
    assert str(caught.value).isprintable() and "\\" in str(caught.value)
