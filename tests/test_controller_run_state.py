"""One versioned run state: saved files, the trace's stop line and ``ControllerRun`` are views of it."""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentloops.cli import main
from agentloops.controller import Controller, ControllerRun, Fault, resume
from agentloops.controller.persistence.run_state import READABLE_SCHEMAS, RUN_STATE_SCHEMA, RunState
from agentloops.controller.persistence.saved import PauseStore, check_not_resumed, load_state, trace_prefix
from agentloops.controller.persistence.trace import TurnRecord, read_trace
from agentloops.controller.running.scenarios import build_controller
from agentloops.controller.sim.scenario_files import controller_scenario_names, load_controller_scenario
from agentloops.controller.stopping.progress import ProgressMonitor
from agentloops.controller.task.state import TaskState
from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.controller.vocabulary.ledger import CallRecord
from agentloops.messages import Message

FIXTURES = Path(__file__).parent / "fixtures" / "controller"
V1_SAVED = "order-paused-v1.json"
"""A saved run (and its trace) written by the code before the run-state model, at saved-run schema 1."""


def _waiting(trace: Path | None = None) -> ControllerRun:
    run = build_controller("order-missing-id", trace=trace).run()
    assert run.status == "waiting_for_user" and run.run_state is not None
    return run


def _outcome(run: ControllerRun) -> dict[str, Any]:
    return {"status": run.status, "code": run.code, "actions": run.actions, "usage": dict(run.usage),
            "record": run.system_record(), "lines": list(run.trace_lines)}


def _last_stop_line(lines: Any) -> dict[str, Any]:
    return [line for line in lines if line["kind"] == "stop"][-1]


# --- the three views agree ------------------------------------------------------------------------

def _agree(run: ControllerRun, file_lines: list[dict[str, Any]], saved: dict[str, Any]) -> None:
    """Status, code, facts, missing items, budgets used and the paused version: one answer, three places."""
    state = run.run_state
    assert state is not None
    stop_line = _last_stop_line(file_lines)
    assert stop_line == state.stop_line() == _last_stop_line(run.trace_lines)
    record = stop_line["record"]
    for key in ("status", "code", "facts", "missing", "budgets_used"):
        assert record[key] == run.system_record()[key] == saved["stop"][key], key
    assert record["status"] == run.status == saved["status"] == state.status
    assert record["code"] == run.code
    assert [f["item"] for f in record["facts"]] == [f.item for f in run.stop.facts]
    assert record["missing"] == [list(m) for m in run.stop.missing]
    assert record["budgets_used"] == {k: v for k, v in run.usage.items() if k in record["budgets_used"]}
    assert saved["paused_at_version"] == state.paused_at_version == record["state"]["version"] \
        == run.stop.state["version"]
    start = file_lines[0]
    for key in ("trace_id", "label", "task", "policy", "budget", "context", "send_state", "model_latency_s",
                "scenario"):
        assert start[key] == saved[key], key  # the configuration it rebuilds from is the one the trace records


@pytest.mark.parametrize("name", ["order-missing-id", "refund-handoff"])
def test_the_stop_line_the_saved_file_and_the_result_agree(tmp_path: Path, name: str):
    run = build_controller(name, trace=tmp_path / "t.jsonl").run()
    saved = json.loads(run.save(tmp_path / "saved.json").read_text()) if run.status == "waiting_for_user" \
        else json.loads(json.dumps(run.saved))
    lines = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert saved["schema_version"] == RUN_STATE_SCHEMA
    _agree(run, lines, saved)


def test_the_saved_dict_is_the_run_states_json_and_reloads_to_the_same_state():
    run = _waiting()
    assert run.run_state is not None and run.saved == run.run_state.to_saved()
    assert RunState.model_validate(json.loads(json.dumps(run.saved))) == run.run_state


def test_the_run_state_holds_the_runtime_records_themselves_and_its_turns_are_the_trace_lines(tmp_path: Path):
    """No mirror copy: the saved parts are the runtime's own classes, so a saved turn is its trace line exactly
    (a mirror model once turned the budgets left into floats: 3.0 in the saved run where the trace says 3)."""
    path = tmp_path / "t.jsonl"
    run = _waiting(trace=path)
    state = run.run_state
    assert state is not None
    assert isinstance(state.state, TaskState) and isinstance(state.monitor, ProgressMonitor)
    assert all(isinstance(t, TurnRecord) for t in state.turns) and state.turns == run.turns
    assert all(isinstance(c, CallRecord) for c in state.calls) and state.calls == run.calls
    assert all(isinstance(m, Message) for m in state.head)
    on_disk = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    saved = json.loads(json.dumps(run.saved))
    as_text = [json.dumps(line) for line in on_disk if line["kind"] == "turn"]  # as text: 3.0 == 3 in Python
    assert [json.dumps(t) for t in saved["turns"]] == as_text == \
        [json.dumps(line) for line in saved["trace_lines"] if line["kind"] == "turn"]
    assert saved["head"][0] == {"role": "user", "content": state.head[0].content, "tool_calls": [],
                                "tool_call_id": None, "name": None}  # a message by field name, as before
    back = RunState.model_validate(saved)
    assert back.state == state.state and back.state.open_items() == state.state.open_items() and back.monitor == state.monitor


def test_a_rebuilt_controller_captures_exactly_the_state_it_was_built_from():
    run = _waiting()
    state = run.run_state
    assert state is not None
    again = Controller.from_state(state, model=lambda messages: None).capture(run.stop)  # type: ignore[arg-type]
    mine, theirs = state.to_saved(), again.to_saved()
    assert mine.pop("pause_id") != theirs.pop("pause_id")  # a new capture is a new pause
    mine.pop("trace_lines"), theirs.pop("trace_lines")  # the rebuilt one has not written any yet
    assert theirs == mine


def test_every_counter_survives_a_rebuild():
    run = _waiting()
    assert run.run_state is not None
    distinct = {"claims_rejected": 2, "consecutive_failures": 1, "call_counter": 7, "repairs": {"lookup_order:x": 2},
                "repairs_used": 2, "failed_calls": [["lookup_order", "{}"]], "clock": 12.5, "turn": 4,
                "store": {"ref:1": {"data": [1, 2]}}, "injector": {"0": 3}}
    state = RunState.model_validate({**run.run_state.to_saved(), **distinct})
    again = Controller.from_state(state, model=lambda messages: None).capture(run.stop).to_saved()  # type: ignore
    assert {k: again[k] for k in distinct} == {k: state.to_saved()[k] for k in distinct}


def test_the_failed_calls_are_a_set_at_run_time_and_a_sorted_list_on_disk():
    run = _waiting()
    assert run.run_state is not None
    calls = {(f"tool_{i % 3}", f'{{"n":{i}}}') for i in range(9)}
    state = RunState.model_validate({**run.run_state.to_saved(), "failed_calls": [list(c) for c in calls]})
    assert state.failed_calls == calls  # the run's own shape
    assert state.to_saved()["failed_calls"] == sorted([list(c) for c in calls])  # the same file whatever the hash


def test_a_run_state_resumes_once_per_store_although_it_carries_no_mark():
    run = _waiting()
    assert run.run_state is not None
    store = PauseStore()
    assert resume(run.run_state, "A-1042", store=store).status == "succeeded"
    with pytest.raises(ConfigError, match=r"already resumed from its pause at state v\d+ \(the same pause"):
        resume(run.run_state, "A-1042", store=store)
    assert run.saved is not None and "resumed" not in run.saved  # the frozen value was never the witness


# --- round trip: memory and file resume the same way ---------------------------------------------

KINDS = ("timeout", "rate_limited", "permanent_error", "empty", "not_found", "format_change", "slow")
drawn_faults = st.lists(st.tuples(st.integers(0, 3), st.sampled_from(KINDS), st.one_of(st.none(), st.integers(1, 2)),
                                  st.integers(0, 1)), max_size=2)


PAUSING = ("order-missing-id", "refund-handoff")
"""The shipped scenarios that stop with a run state (drawn more often, so the resume branch is exercised)."""


def _with_faults(name: str, drawn: list[tuple[int, str, int | None, int]]) -> Controller:
    scenario = load_controller_scenario(name)
    tools = build_controller(scenario).toolbox.names()
    faults = [Fault(tool=tools[i % len(tools)], kind=kind, times=times, after=after,  # type: ignore[arg-type]
                    latency_s=30.0 if kind == "slow" else None) for i, kind, times, after in drawn]
    return build_controller(scenario, faults=[*scenario.faults, *faults])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PAUSING) | st.sampled_from(controller_scenario_names()), drawn_faults)
def test_resuming_from_the_saved_file_equals_resuming_in_memory(name: str, drawn: list[Any]):
    run = _with_faults(name, drawn).run()
    if run.run_state is None:
        assert run.status not in ("waiting_for_user", "handed_off") and run.saved is None
        return
    assert run.run_state.stop_line() == _last_stop_line(run.trace_lines)
    assert run.run_state.stop == run.system_record()
    if run.status != "waiting_for_user":
        return
    answer = load_controller_scenario(name).resume.answer if load_controller_scenario(name).resume else "A-1042"
    with tempfile.TemporaryDirectory() as folder:
        path = run.save(Path(folder) / "saved.json")
        state = load_state(path)
        assert state.model_copy(update={"trace_path": None}) == run.run_state.model_copy(update={"trace_path": None})
        from_file = resume(path, answer, store=PauseStore())
    in_memory = resume(copy.deepcopy(run.saved or {}), answer, store=PauseStore())
    assert _outcome(from_file) == _outcome(in_memory)
    assert from_file.turns == in_memory.turns and from_file.calls == in_memory.calls


# --- older files still load and behave the same --------------------------------------------------

def _v1_copy(tmp_path: Path) -> Path:
    for name in (V1_SAVED, V1_SAVED + "l"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    return tmp_path / V1_SAVED


def test_a_schema_1_saved_file_loads_and_resumes_as_it_did_when_written(tmp_path: Path, capsys):
    expected = json.loads((FIXTURES / "order-paused-v1.resumed.json").read_text())
    saved = _v1_copy(tmp_path)
    state = load_state(saved)
    assert state.schema_version == 1 and state.stop is None and state.stop_line() is None
    code = main(["controller", "resume", str(saved), "--answer", expected["answer"], "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert (out["status"], out["code"], out["actions"], out["usage"]) == \
        (expected["status"], expected["code"], expected["actions"], expected["usage"])
    assert sorted(out) == expected["json_keys"]
    trace = read_trace(tmp_path / (V1_SAVED + "l"))
    assert [line["kind"] for line in map(json.loads, trace.path.read_text().splitlines())] == expected["trace_kinds"]
    assert json.loads(saved.read_text())["resumed"]["from_version"] == state.paused_at_version
    assert "stop" not in json.loads(saved.read_text())  # marked, and still a schema-1 file


def test_a_schema_1_saved_file_continues_once(tmp_path: Path):
    saved = _v1_copy(tmp_path)
    resume(saved, "A-1042", store=PauseStore())
    with pytest.raises(ConfigError, match="already resumed"):
        resume(saved, "A-1042", store=PauseStore())


def test_a_trace_written_beside_a_schema_1_file_shows_and_replays_to_itself(capsys):
    trace = str(FIXTURES / (V1_SAVED + "l"))
    code = main(["controller", "show", trace])
    out = capsys.readouterr().out
    assert code == 0 and "waiting_for_user" in out and "lookup_order" in out
    code = main(["controller", "replay", trace, "--json"])
    diff = json.loads(capsys.readouterr().out)
    assert code == 0 and diff["same"] and diff["after"]["stop"][:2] == ["waiting_for_user", "missing_parameter"]


# --- a damaged file: one line naming the file and the field --------------------------------------

def _written(tmp_path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_waiting().save(tmp_path / "good.json").read_text())
    return data


def _broken(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("version", [0, max(READABLE_SCHEMAS) + 1, 7])
def test_an_unknown_schema_version_is_one_line(tmp_path: Path, version: int):
    path = _broken(tmp_path, {**_written(tmp_path), "schema_version": version})
    with pytest.raises(ConfigError, match=rf"^{path}: schema_version: expected one of 1, 2 .*; got {version}$"):
        load_state(path)


def test_a_missing_field_an_extra_field_and_a_missing_stop_record_are_each_one_line(tmp_path: Path):
    data = _written(tmp_path)
    cases = {
        "clock": ({k: v for k, v in data.items() if k != "clock"}, "clock: missing"),
        "extra": ({**data, "colour": "red"}, "colour: is not a known field"),
        "stop": ({k: v for k, v in data.items() if k != "stop"}, "stop: missing; a schema-2 saved run keeps"),
        "stop.status": ({**data, "stop": {**data["stop"], "status": "succeeded"}},
                        "stop.status: expected 'waiting_for_user'"),
        "stop.code": ({**data, "stop": {k: v for k, v in data["stop"].items() if k != "code"}}, "stop: code: missing"),
        "stop.reason": ({**data, "stop": {**data["stop"], "reason": "edited"}},
                        "stop: expected the record of the last stop line in trace_lines"),
    }
    for field, (broken, message) in cases.items():
        path = _broken(tmp_path, broken)
        with pytest.raises(ConfigError) as caught:
            load_state(path)
        text = str(caught.value)
        assert text.startswith(f"{path}: ") and message in text and "\n" not in text, (field, text)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["state"].update(colour="red"), "state.colour: is not a known field"),
    (lambda d: d["state"].update(facts="x"), "state.facts: expected a list of facts; got str"),
    (lambda d: d["state"].update(failures=[{"tool": "t"}]), "state.failures[0].status: missing"),
    (lambda d: d["monitor"].update(sightings=[["t", "{}", "v1", 1, "ok", True, "new"]]),
     "monitor.sightings: [0][2]: expected a valid integer"),
    (lambda d: d["monitor"].update(sightings={"x": 1}),  # once passed as the monitor's own mapping: a traceback later
     "monitor.sightings: (top level): expected a list; got dict"),
    (lambda d: d.update(calls=[{"call_id": "c9"}]), "calls[0].turn: missing"),
])
def test_a_broken_runtime_record_in_a_saved_file_is_one_line_naming_it(tmp_path: Path, edit, message):
    """The saved parts are the runtime's own records, and each still names the field that is wrong."""
    data = _written(tmp_path)
    edit(data)
    path = _broken(tmp_path, data)
    with pytest.raises(ConfigError) as caught:
        load_state(path)
    text = str(caught.value)
    assert text.startswith(f"{path}: {message}") and "\n" not in text, text


@pytest.mark.parametrize(("recorded", "reason"), [("[" * 2400, "File name too long"), ("a\0b", "embedded null byte"),
                                                  ("bad.json/trace.jsonl", "Not a directory")])
def test_a_trace_path_the_system_refuses_names_the_saved_file(tmp_path: Path, capsys, recorded: str, reason: str):
    path = _broken(tmp_path, {**_written(tmp_path), "trace_path": recorded})
    code = main(["controller", "resume", str(path), "--answer", "A-1042"])
    out, err = capsys.readouterr()
    assert (code, out, err.count("\n")) == (2, "", 1)
    assert err.startswith(f"agentloops: error: {path}: trace_path ") and f"not a usable file name ({reason})" in err


def test_a_schema_1_file_needs_no_stop_record_but_a_schema_2_file_does(tmp_path: Path):
    data = {k: v for k, v in _written(tmp_path).items() if k != "stop"}
    assert load_state(_broken(tmp_path, {**data, "schema_version": 1})).stop is None
    with pytest.raises(ConfigError, match="stop: missing"):
        load_state(_broken(tmp_path, {**data, "schema_version": 2}))


def test_the_cli_reports_a_bad_saved_file_in_one_line_with_exit_2(tmp_path: Path, capsys):
    path = _broken(tmp_path, {**_written(tmp_path), "schema_version": 9})
    code = main(["controller", "resume", str(path), "--answer", "A-1042"])
    out, err = capsys.readouterr()
    assert code == 2 and not out and err.count("\n") == 1 and f"{path}: schema_version" in err


def test_a_resume_into_an_empty_trace_file_writes_the_whole_run_from_its_start(tmp_path: Path):
    run = _waiting()
    path = tmp_path / "resumed.jsonl"
    path.touch()  # an empty file holds nothing to continue: it is filled like a new one
    resumed = resume(run.run_state, "A-1042", trace=path, store=PauseStore())
    kinds = [json.loads(line)["kind"] for line in path.read_text().splitlines()]
    assert resumed.status == "succeeded" and kinds[0] == "start" and kinds.count("turn") == len(resumed.turns)
    assert [json.loads(line) for line in path.read_text().splitlines()] == list(resumed.trace_lines)


def _copy_resumed_once(path: Path) -> dict[str, Any]:
    """A copy of a waiting run's saved state, taken before the run itself was resumed into ``path``."""
    run = _waiting(trace=path)
    copied = copy.deepcopy(run.saved or {})
    assert resume(copy.deepcopy(copied), "A-1042", store=PauseStore()).status == "succeeded"
    return copied


def test_the_trace_refuses_a_copy_of_a_pause_that_already_continued(tmp_path: Path):
    path = tmp_path / "t.jsonl"
    copied = _copy_resumed_once(path)
    with pytest.raises(ConfigError, match=r"shows run \S+ already continued after turn 1"):
        resume(copy.deepcopy(copied), "A-1042", store=PauseStore())  # a new store: only the trace can tell
    # ... also when the run died just after writing its resume line (no later turn reached the file)
    lines = path.read_text().splitlines()
    cut = [json.loads(line)["kind"] for line in lines].index("resume") + 1
    path.write_text("\n".join(lines[:cut]) + "\n")
    with pytest.raises(ConfigError, match="already continued after turn 1"):
        resume(copy.deepcopy(copied), "A-1042", store=PauseStore())


def test_another_runs_trace_is_no_witness_against_a_resume(tmp_path: Path):
    other = tmp_path / "other.jsonl"
    _copy_resumed_once(other)  # a continued run of its own, with a different trace id
    run = _waiting()
    assert run.saved is not None and json.loads(other.read_text().splitlines()[0])["trace_id"] != run.trace_id
    check_not_resumed(run.saved, "saved.json", other)  # does not raise
    assert trace_prefix(run.saved, other) == run.saved["trace_lines"]  # its lines are not this run's history


def test_a_trace_holding_only_its_start_line_is_the_resumed_runs_history(tmp_path: Path):
    run = _waiting()
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(run.trace_lines[0]) + "\n")
    assert trace_prefix(run.saved or {}, path) == [run.trace_lines[0]]


def test_a_pause_delivered_twice_is_refused_naming_the_run_and_the_version():
    run, store = _waiting(), PauseStore()
    store.claim(run.saved or {}, "saved.json")
    with pytest.raises(ConfigError, match=rf"^saved\.json: run {run.trace_id} was already resumed from its pause at "
                                          rf"state v{(run.saved or {})['paused_at_version']} "):
        store.claim(run.saved or {}, "saved.json")


def test_a_resumed_runs_new_actions_start_at_the_turn_after_the_pause():
    run = _waiting()
    resumed = resume(run, "A-1042", store=PauseStore())
    assert resumed.resumed_at_turn == run.turns[-1].turn + 1
    assert resumed.new_actions == resumed.actions[len(run.actions):] and resumed.new_actions
    assert run.new_actions == run.actions  # a fresh run's actions are all new
