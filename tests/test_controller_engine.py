"""The engine's per-turn shortcuts: each is checked against the slow, obvious computation it replaces."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from agentloops.controller import Controller, Fault, TaskPlanner, make_task, run_scenario
from agentloops.controller.persistence.trace import TraceSink, TraceWriter
from agentloops.controller.policy.budgets import BudgetMeter, within
from agentloops.controller.stages import Stages
from agentloops.controller.task.joins import JoinRule
from agentloops.controller.vocabulary.ledger import ARRIVAL_ORDER, Arrival
from agentloops.controller.vocabulary.tools import RESULT_JSON, ToolResult
from agentloops.stubs import ScriptedModel

WEATHER = make_task("weather_compare", cities=["Shanghai", "Beijing"])
REPLIES = [
    {"content": None, "tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"city": "Shanghai"}}],
     "finish_reason": "tool_calls"},
    {"content": None, "tool_calls": [{"id": "c2", "name": "get_weather", "arguments": {"city": " Beijing"}}],
     "finish_reason": "tool_calls"},
    {"content": "Shanghai 24°C sunny, Beijing 18°C cloudy.", "finish_reason": "stop"},
]


def test_turn_lines_are_built_when_read_and_equal_the_turn_records():
    run = run_scenario("weather-timeout-once")
    turn_lines = [line for line in run.trace_lines if line["kind"] == "turn"]
    assert all(type(line) is dict for line in run.trace_lines)
    assert turn_lines == [record.to_dict() for record in run.turns]
    assert [line["kind"] for line in run.trace_lines] == ["start", "turn", "turn", "turn", "stop"]


def test_with_a_file_open_every_line_is_on_disk_before_the_run_ends(tmp_path):
    path = tmp_path / "t.jsonl"
    record = run_scenario("weather-normal").turns[0]
    sink = TraceSink(TraceWriter(path))
    sink.write({"kind": "start"})
    sink.write(record)
    on_disk = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]  # not closed yet
    assert on_disk == [{"kind": "start"}, json.loads(json.dumps(record.to_dict(), default=str))]
    assert sink.lines == [{"kind": "start"}, record.to_dict()]
    sink.close()


def test_a_sink_keeps_a_copy_of_each_dict_line():
    sink = TraceSink()
    line = {"kind": "event", "n": 1}
    sink.write(line)
    line["n"] = 2
    assert sink.lines == [{"kind": "event", "n": 1}]


def test_a_tool_result_as_json_has_every_field_and_reads_back():
    result = ToolResult("timeout", data={"a": 1}, error="slow", source="svc", retryable=True, retry_after_s=2.0,
                        latency_s=5.0, hint="later", ran=False, deliveries=2, detail="d", question="q",
                        parameter="p")
    assert list(RESULT_JSON.dump_python(result)) == list(ToolResult.__dataclass_fields__)
    assert RESULT_JSON.validate_python(RESULT_JSON.dump_python(result, mode="json")) == result


def test_budgets_left_keep_whole_numbers_whole_and_round_the_rest():
    budget = WEATHER.budget.with_values(tokens=1000, wall_time_s=10.0, steps=5)
    meter = BudgetMeter(budget)
    meter.spend("steps")
    meter.spend("tokens", 0.12345)
    meter.spend("wall_time_s", 1.23456)
    left = meter.left()
    assert left["steps"] == 4 and type(left["steps"]) is int
    assert left["tokens"] == 999.877
    assert left["wall_time_s"] == round(10.0 - round(meter.now, 6), 3)
    assert meter.remaining("wall_time_s") == 10.0 - round(meter.now, 6)
    assert meter.remaining("tokens") == 1000 - 0.12345


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["c1", "c2", "c3"]), st.integers(1, 2)),
                min_size=1, max_size=12))
def test_a_batch_takes_arrivals_in_time_then_call_then_delivery_order(keys):
    arrivals = [Arrival(float(at), call_id, ToolResult("ok"), delivery) for at, call_id, delivery in keys]
    out = [(a.at, a.call_id, a.delivery) for a in sorted(arrivals, key=ARRIVAL_ORDER)]
    assert out == sorted((float(a), c, d) for a, c, d in keys)


def test_a_minimum_join_waits_only_for_what_the_task_still_needs():
    assert JoinRule(kind="minimum", minimum=2).needed(3, still_needed=1) == 1
    assert JoinRule(kind="minimum", minimum=2).needed(3, still_needed=2) == 2  # one success of two is not enough
    assert JoinRule(kind="all").needed(2, still_needed=1) == 2  # "all" is not capped by what the task needs


def test_one_call_is_normalised_once_however_many_stages_read_it():
    calls: list[object] = []
    from agentloops.controller import attempts

    original = attempts.normalize_args

    def counting(args, params=None):
        calls.append(args)
        return original(args, params)

    attempts.normalize_args = counting
    try:
        run = Controller(WEATHER, ScriptedModel(REPLIES), trace_id="t").run()
    finally:
        attempts.normalize_args = original
    assert run.status == "succeeded" and run.actions == ["get_weather(city=Shanghai)", "get_weather(city= Beijing)",
                                                         "answer"]
    assert len(calls) == 2  # one per call: the label, fingerprint, ledger and trace share it
    assert run.turns[1].args_summary == '{"city":"beijing"}'  # normalised as the city parameter declares


def test_every_route_has_a_name_for_tables_and_traces():
    from typing import get_args

    from agentloops.controller.policy.routes import _ROUTE_NAMES, Degrade, Retry, Route, StopRun, route_name

    assert set(get_args(Route)) == set(_ROUTE_NAMES) | {StopRun}  # a new route needs a name here
    assert route_name(StopRun("handed_off", "x", "why")) == "stop:handed_off"
    assert route_name(Retry(1.0, "why")) == "retry" and route_name(Degrade("empty", "why")) == "degrade"


def test_no_engine_module_is_over_400_lines_and_no_function_over_50():
    import ast
    from pathlib import Path

    import agentloops.controller as controller

    too_long = []
    for path in sorted(Path(controller.__file__).parent.rglob("*.py")):
        if "teaching" in path.parts:  # the teaching UI (and its subpackages) is not the engine
            continue
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > 400:
            too_long.append(f"{path.name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 50:
                too_long.append(f"{path.name}: {node.name} has {node.end_lineno - node.lineno + 1} lines")
    assert not too_long, too_long


def test_a_call_looks_up_its_task_item_once(monkeypatch):
    kind = type(WEATHER.kind)
    original = kind.item_for
    seen: list[object] = []

    def counting(self, tool, args):
        seen.append(args)
        return original(self, tool, args)

    monkeypatch.setattr(kind, "item_for", counting)
    run = Controller(WEATHER, ScriptedModel(REPLIES), trace_id="t").run()
    assert run.status == "succeeded"
    assert len(seen) == 2 and seen[0] is not seen[1]  # once per call, each call its own


def test_the_tools_are_described_once_per_task_not_once_per_run():
    task = make_task("weather_compare", cities=["Shanghai", "Beijing"])
    first = Controller(task, ScriptedModel(REPLIES), trace_id="a")
    second = Controller(task, ScriptedModel(REPLIES), trace_id="b")
    assert first.toolbox is second.toolbox is task.toolbox()
    assert first.system.content == second.system.content
    assert first.system.content is not None and "- get_weather(city): " in first.system.content
    assert make_task("weather_compare", cities=["A", "B"]).toolbox() is not task.toolbox()  # per task, not global


def test_retries_reserved_by_earlier_calls_of_a_batch_are_not_offered_twice():
    from collections import Counter

    task = WEATHER.with_budget(retries=2)
    shared = Controller(task, ScriptedModel(REPLIES), trace_id="t").current.meter
    assert shared.retries_left("get_weather") == 2
    assert shared.retries_left("get_weather", Counter()) == 2
    assert shared.retries_left("get_weather", Counter({"weather_backup": 1, "get_weather": 1})) == 0
    per_tool = Controller(task, ScriptedModel(REPLIES), trace_id="t",
                          policy={"name": "p", "retry_scope": "per_tool"}).current.meter
    assert per_tool.retries_left("get_weather", Counter({"weather_backup": 2})) == 2
    assert per_tool.retries_left("get_weather", Counter({"get_weather": 1})) == 1
    assert Controller(WEATHER.with_budget(retries=None), ScriptedModel(REPLIES)).current.meter.retries_left(
        "get_weather") is None


def test_a_turn_is_one_function_call_per_stage_over_one_run_value():
    from agentloops.controller import turn
    from agentloops.controller.controller import Controller as Shell
    from agentloops.controller.engine import Run

    controller = Shell(WEATHER, ScriptedModel(REPLIES), trace_id="t")
    assert isinstance(controller.current, Run) and Shell.__mro__ == (Shell, object)  # no mixin chain
    run = controller.current
    assert turn.play(run) is None and turn.play(run) is None  # two lookups: the run goes on
    stop = turn.play(run)  # the answer: the completion condition holds
    assert stop is not None and stop.status == "succeeded"
    assert [t.record().action for t in run.turns] == ["get_weather(city=Shanghai)", "get_weather(city= Beijing)",
                                                      "answer"]


def test_the_stop_a_run_ends_with_is_the_stage_s_stop_plus_its_state_snapshot():
    from dataclasses import fields, replace

    from agentloops.controller.stopping.status import Stop

    assert fields(Stop)[-1].name == "state"  # finish() rebuilds a stop from every field but the last
    run = run_scenario("weather-timeout-once")
    assert run.stop == replace(run.stop, state=run.stop.state) and run.stop.state["finished"] == "succeeded"


def test_each_turn_record_lists_the_items_still_open_and_those_given_up():
    task = make_task("research", sources=["s1", "s2", "s3"], minimum=2)
    run = Controller(task, TaskPlanner(task), faults=[Fault(tool="fetch", kind="permanent_error",
                                                            match={"source_id": "s2"})]).run()
    items = [(t.to_dict()["open_items"], t.to_dict()["missing_items"]) for t in run.turns[:3]]
    assert items == [(["source:s2", "source:s3"], []), (["source:s3"], ["source:s2"]), ([], ["source:s2"])]


def test_call_ids_count_from_one_within_a_run():
    run = run_scenario("weather-normal")
    first = run.turns[0].to_dict()["actions"][0]["call_id"]
    assert first == f"{run.trace_id}-c1"


def test_a_wall_time_stop_says_whether_time_ran_out_while_waiting_or_would_run_out_on_the_next_step():
    def lenient(name: str, used: float, amount: float, limit: float | None) -> bool:
        return name == "wall_time_s" or within(name, used, amount, limit)  # a tool may outlast the wall budget

    task = make_task("research", sources=["s1", "s2", "s3", "s4"], minimum=4).with_budget(wall_time_s=10)
    slow = [Fault(tool="fetch", kind="slow", match={"source_id": "s2"}, latency_s=12.0)]
    waited = Controller(task, TaskPlanner(task, parallel=True), faults=slow, stages=Stages.of(budget_check=lenient)).run()
    assert (waited.code, waited.stop.reason) == (
        "budget:wall_time_s", "the wall-time budget ran out while waiting: 10 s of the 10 s allowed are used")
    short = make_task("weather_compare").with_budget(wall_time_s=0.4)  # a step under a second still "would run out"
    ahead = Controller(short, TaskPlanner(short), model_latency_s=0.5).run()
    assert (ahead.code, ahead.stop.reason) == (
        "budget:wall_time_s", "the wall-time budget would run out: 0 s used + 0.5 s for the next step > 0.4 s allowed")


def test_a_turn_that_stops_before_asking_the_model_records_no_request():
    run = run_scenario("weather-normal", budget=WEATHER.budget.with_values(steps=2))
    last = run.turns[-1].to_dict()
    assert run.code == "budget:steps" and (last["turn"], last["context_tokens"]) == (3, 0)
    assert all(t.to_dict()["context_tokens"] > 0 for t in run.turns[:-1])


def test_the_runs_html_table_puts_context_tokens_before_the_decision_and_marks_turns_that_changed_state():
    run = run_scenario("weather-timeout-once")
    page = run._repr_html_()
    heads = re.findall(r"<th style='text-align:left'>([^<]*)</th>", page)
    assert heads[:2] == ["turn", "state"] and heads[5:] == ["state delta", "context tokens", "decision"]
    marked = re.findall(r"<tr( style='background:#fde9c9')?><td", page)
    assert [bool(m) for m in marked] == [t.state_version_after != t.state_version for t in run.turns]
    assert any(marked) and not all(marked)
