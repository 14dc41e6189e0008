"""Traces written as turns finish, survive a kill, read back strictly; replay diffs trajectories."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentloops.controller import (
    Controller,
    Fault,
    ProcessKilled,
    TaskPlanner,
    TraceError,
    make_task,
    read_trace,
    regression,
    replay,
    run_scenario,
)
from agentloops.controller.persistence.trace import TraceWriter
from agentloops.controller.running.resuming import resume
from agentloops.controller.sim.scenario_files import controller_scenario_names

TURN_FIELDS = {"trace_id", "turn", "state_version", "pending_goal", "action", "args_summary", "tool_status",
               "observation", "state_delta", "budget_left", "decision"}


def test_every_turn_is_a_structured_line(tmp_path: Path):
    path = tmp_path / "t.jsonl"
    run = run_scenario("weather-timeout-once", trace=path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [line["kind"] for line in lines] == ["start", "turn", "turn", "turn", "stop"]
    turns = [line for line in lines if line["kind"] == "turn"]
    assert all(set(t) >= TURN_FIELDS for t in turns)
    assert [t["tool_status"] for t in turns] == ["ok", "timeout→ok", "-"]
    assert turns[1]["state_delta"]["version_before"] == 1 and turns[1]["budget_left"]["retries"] == 2
    assert lines[-1]["record"]["status"] == "succeeded"
    assert read_trace(path).actions == run.actions


def test_a_kill_inside_a_tool_leaves_every_finished_turn_on_disk(tmp_path: Path):
    path = tmp_path / "killed.jsonl"
    task = make_task("research", sources=["s1", "s2", "s3", "s4"], minimum=4)
    controller = Controller(task, TaskPlanner(task), trace=path,
                            faults=[Fault(tool="fetch", kind="crash", match={"source_id": "s3"})])
    with pytest.raises(ProcessKilled):
        controller.run()
    trace = read_trace(path)
    assert not trace.complete and trace.stop is None and not trace.truncated_tail
    assert [t.turn for t in trace.turns] == [1, 2]
    assert trace.actions == ["fetch(source_id=s1)", "fetch(source_id=s2)"]
    assert trace.turns[-1].state_version_after == 2
    assert "did not finish" in str(trace)


KILLED_PROCESS = textwrap.dedent("""
    import os, sys
    from dataclasses import replace
    from agentloops.controller import Controller, TaskPlanner, Toolbox, make_task
    from agentloops.controller.task.world import TOOLS

    def fetch(args):
        if args["source_id"] == "s3":
            os._exit(137)  # like kill -9: no finally, no atexit, no buffer flush at exit
        return TOOLS["fetch"].handler(args)

    task = make_task("research", sources=["s1", "s2", "s3", "s4"], minimum=4)
    tools = Toolbox.of([replace(TOOLS["fetch"], handler=fetch)])
    Controller(task, TaskPlanner(task), tools=tools, trace=sys.argv[1]).run()
    print("not reached")
""")


def test_a_process_killed_inside_a_tool_leaves_every_finished_turn_on_disk(tmp_path: Path):
    # a real process that dies without unwinding: only lines flushed as each turn ended can survive
    path = tmp_path / "killed.jsonl"
    done = subprocess.run([sys.executable, "-c", KILLED_PROCESS, str(path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 137 and "not reached" not in done.stdout, done.stderr
    raw = path.read_text(encoding="utf-8")
    assert raw.endswith("\n") and all(json.loads(line) for line in raw.splitlines())  # every line is whole JSON
    trace = read_trace(path)
    assert not trace.complete and not trace.truncated_tail
    assert [t.turn for t in trace.turns] == [1, 2]
    assert trace.actions == ["fetch(source_id=s1)", "fetch(source_id=s2)"]
    assert trace.turns[-1].state_delta["changes"][0].startswith("+fact source:s2")


def test_a_line_cut_mid_write_is_skipped_and_flagged(tmp_path: Path):
    path = tmp_path / "t.jsonl"
    run_scenario("weather-normal", trace=path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text + '{"kind": "turn", "trace_id": "x", "tu', encoding="utf-8")
    trace = read_trace(path)
    assert trace.truncated_tail and trace.complete and len(trace.turns) == 3


@pytest.mark.parametrize(("content", "message"), [
    ("", r"bad\.jsonl: empty; a trace starts with a 'start' line"),
    ('{"kind": "start", "trace', r"bad\.jsonl: its only line is cut off mid-write; a trace starts with a 'start'"),
    ('{"kind": "turn"}\n', r":1: a trace starts with a 'start' line|:1: trace_id: missing"),
    ('not json\n{"kind": "stop"}\n', r":1: not valid JSON"),
    ('{"kind": "party"}\n', r":1: kind: expected one of start, turn, event, resume, stop; got 'party'"),
])
def test_bad_traces_fail_in_one_line(tmp_path: Path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(TraceError, match=message) as caught:
        read_trace(path)
    assert "\n" not in str(caught.value)


def test_missing_and_unwritable_trace_files(tmp_path: Path):
    with pytest.raises(TraceError, match=r"nope\.jsonl: no such file; expected a JSON Lines trace"):
        read_trace(tmp_path / "nope.jsonl")
    with pytest.raises(TraceError, match="cannot open for writing"):
        TraceWriter(tmp_path / "no-such-dir" / "t.jsonl")


def test_a_turn_line_with_a_wrong_field_names_line_and_field(tmp_path: Path):
    path = tmp_path / "t.jsonl"
    run_scenario("weather-normal", trace=path)
    lines = path.read_text(encoding="utf-8").splitlines()
    turn = json.loads(lines[1])
    turn["turn"] = "first"
    lines[1] = json.dumps(turn)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(TraceError, match=r"t\.jsonl:2: turn: expected a valid integer"):
        read_trace(path)


def test_trace_records_decisions_not_hidden_reasoning():
    run = run_scenario("weather-reask")
    turn = run.turns[1]
    assert turn.delta_text().startswith("no change: weather:Shanghai already known from turn 1")
    assert set(turn.response or {}) == {"content", "finish_reason", "tool_calls"}
    frame = run.to_frame()
    assert list(frame["state_version"]) == [0, 1, 1] and list(frame["progress"]) == [True, False, False]


def test_replay_with_the_same_policy_reproduces_the_run(tmp_path: Path):
    path = tmp_path / "t.jsonl"
    original = run_scenario("weather-timeout-always", trace=path)
    again = replay(path)
    assert again.diff.same, str(again.diff)
    assert again.served == 5 and again.diff.unrecorded == 0
    assert again.run.actions == original.actions


def test_replay_under_another_policy_reports_the_differences():
    result = replay(run_scenario("weather-timeout-always"), policy="degrade")
    diff = result.diff
    assert diff.first_divergence is None  # same actions …
    assert (diff.before_stop[0], diff.after_stop[0]) == ("budget_exhausted", "partially_completed")  # … other stop
    assert diff.delta_changes == ((2, "(nothing else)",
                                   "missing weather:Beijing: timeout: gave up after the retry budget was spent "
                                   "(timeout)"),)
    assert "partially_completed" in str(result)


def test_replay_shows_the_back_door_a_naive_policy_opens():
    result = replay(run_scenario("refund-permission-denied"), policy="naive")
    assert result.diff.first_divergence == 1
    assert result.run.actions[1].startswith("db_write(table=refunds")
    assert result.diff.after_stop[:2] == ("succeeded", "model_said_done")
    assert result.diff.unrecorded == 2  # the recording never ran these: they were simulated


def test_replay_without_a_scenario_plays_back_the_recorded_replies(tmp_path: Path):
    task = make_task("weather_compare")
    path = tmp_path / "custom.jsonl"
    Controller(task, TaskPlanner(task, claim_early_after=1), trace=path).run()
    result = replay(path, policy="naive")
    assert result.run.status == "succeeded" and not result.run.stop.verified
    assert result.run.actions == ["get_weather(city=Shanghai)", "answer"]


def test_regression_records_under_one_policy_and_replays_under_another():
    report = regression("naive", "default", ["weather-early-claim", "weather-normal", "document-not-found"])
    table = report.table()
    assert table.column("scenario") == ["weather-early-claim", "weather-normal", "document-not-found"]
    assert table.column("stop (naive)")[0] == "succeeded (model_said_done)"
    assert table.column("stop (default)")[0] == "partially_completed (premature_claim)"
    assert table.column("expected") == ["ok", "ok", "ok"] and report.ok
    assert table.note.startswith("3 of 3 trajectories changed")  # weather-normal: same actions, another stop code
    assert table.column("first divergence")[1] == "-"


def test_replay_feeds_the_recorded_answers_back_to_a_waiting_task(tmp_path: Path):
    path = tmp_path / "order.jsonl"
    run_scenario("order-missing-id", trace=path, resume=True)
    again = replay(path)
    assert again.run.status == "succeeded" and again.diff.same, str(again.diff)
    assert again.run.actions == ["lookup_order()", "lookup_order(order_id=A-1042)", "answer"]
    assert [line.answer for line in again.run.trace.resumes] == ["A-1042"]
    strict = replay(path, policy={"name": "hand-back", "missing_parameter": "return_to_model"})
    assert strict.diff.after_stop[0] != "waiting_for_user"  # never waited, so there was nothing to feed


def test_replay_without_a_scenario_feeds_the_answers_to_the_recorded_replies(tmp_path: Path):
    task = make_task("order_status")
    path = tmp_path / "custom.jsonl"
    resume(Controller(task, TaskPlanner(task, ask_for_inputs=True), trace=path).run(),
           "B-2001", model=TaskPlanner(task, ask_for_inputs=True))
    again = replay(path)
    assert again.run.status == "succeeded" and again.diff.same, str(again.diff)


@pytest.mark.parametrize("name", controller_scenario_names())
def test_every_shipped_scenario_replays_to_itself_under_its_own_policy(name: str):
    # the compaction scenarios need the recorded compactor: a careless one replayed with the default diverged
    replayed = replay(run_scenario(name))
    assert replayed.diff.same, f"{name}: {replayed.diff.rows()[:3]}"


def test_the_start_action_and_stop_lines_are_the_runtime_values_dumped(tmp_path: Path):
    from agentloops.controller.persistence.trace_lines import ACTION_JSON, Action
    from agentloops.controller.stopping.status import STOP_JSON

    path = tmp_path / "t.jsonl"
    run = run_scenario("weather-timeout-once", trace=path)
    trace = read_trace(path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    # the start line reads back as the run's own configuration values, and dumps to the line it was read from
    assert trace.start.policy == run.policy and trace.start.budget == run.task.budget
    assert (trace.start.task.type, trace.start.task.params) == (run.task.spec()["type"], run.task.spec()["params"])
    assert trace.start.to_dict() == lines[0]
    # a tool action is an Action dumped: read back, it is the same action, and dumps to the same line
    actions = [a for line in lines if line["kind"] == "turn" for a in line["actions"] if a["tool"] is not None]
    assert len(actions) >= 2 and all(isinstance(ACTION_JSON.validate_python(a), Action) for a in actions)
    assert [ACTION_JSON.dump_python(ACTION_JSON.validate_python(a), mode="json") for a in actions] == actions
    assert list(actions[0])[4:] == ["args_norm", "kind", "status", "route", "result", "fingerprint"]
    assert actions[0]["fingerprint"][0] == actions[0]["tool"]  # a row: [tool, args, version]
    assert lines[-1]["record"] == STOP_JSON.dump_python(run.stop, mode="json") == run.system_record()


@pytest.mark.parametrize(("row", "message"), [
    (["get_weather", "{}", "one"], r"fingerprint\.state_version: expected a valid integer"),
    (["get_weather", "{}"], r"fingerprint: expected a row \[tool, args, state_version\]; got \['get_weather'"),
    ("get_weather", r"fingerprint: expected a row \[tool, args, state_version\]; got 'get_weather'"),
])
def test_a_broken_fingerprint_in_an_action_is_one_line(tmp_path: Path, row, message):
    path = tmp_path / "t.jsonl"
    run_scenario("weather-timeout-once", trace=path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    lines[1]["actions"][0]["fingerprint"] = row
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(TraceError, match=r"t\.jsonl:2: actions\[0\]: " + message) as caught:
        read_trace(path)
    assert "\n" not in str(caught.value)
