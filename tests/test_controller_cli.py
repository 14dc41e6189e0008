"""``agentloops controller …``: outputs, JSON contracts, exit statuses and one-line errors."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from agentloops.cli import main
from agentloops.controller.sim.scenario_files import controller_scenarios_dir


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["controller", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_and_check(capsys):
    code, out, _ = cli(capsys, "list")
    assert code == 0 and "weather-timeout-always" in out and "budget_exhausted (budget:retries)" in out
    code, out, _ = cli(capsys, "check", "--format", "json")
    rows = json.loads(out)
    assert code == 0 and all(r["check"] == "ok" for r in rows) and len(rows) >= 16


def test_check_exits_1_when_a_scenario_misbehaves(capsys):
    code, out, _ = cli(capsys, "check", "weather-early-claim", "--policy", "naive")
    assert code == 1 and "FAILED" in out and "0 of 1 scenarios" in out


def test_run_prints_the_trace_the_stop_and_both_renderings(capsys, tmp_path: Path):
    trace = tmp_path / "t.jsonl"
    code, out, _ = cli(capsys, "run", "weather-timeout-once", "--trace", str(trace))
    assert code == 0
    assert "timeout→ok" in out and "--- user message ---" in out and "--- system record ---" in out
    assert f"trace written to {trace}" in out and trace.exists()
    code, out, _ = cli(capsys, "replay", str(trace), "--policy", "naive", "--json")
    diff = json.loads(out)
    assert code == 0 and diff["served_from_trace"] == 3 and diff["after"]["stop"][1] == "model_said_done"
    code, out, _ = cli(capsys, "show", str(trace))
    assert code == 0 and out.startswith("trace ") and "(weather-timeout-once, task weather_compare" in out and "stop: succeeded" in out


def test_run_json_contract(capsys):
    code, out, _ = cli(capsys, "run", "document-not-found", "--json")
    data = json.loads(out)
    assert code == 0 and (data["status"], data["code"]) == ("failed_unrecoverable", "not_found")
    assert data["actions"] == ["read_metadata(document_id=B)"] and "check the identifier" in data["user_message"]
    assert {"turns", "calls", "events", "usage", "within_budget", "stop"} <= set(data)


def test_waiting_run_saves_and_resumes(capsys, tmp_path: Path):
    saved = tmp_path / "saved.json"
    code, out, _ = cli(capsys, "run", "order-missing-id", "--save", str(saved))
    assert code == 0 and "I need one detail to continue" in out and saved.exists()
    code, out, _ = cli(capsys, "resume", str(saved), "--answer", "A-1042")
    assert code == 0 and "succeeded (completion_condition_met)" in out and "lookup_order(order_id=A-1042)" in out
    code, out, _ = cli(capsys, "run", "order-missing-id", "--resume")
    assert code == 0 and "the user answers 'A-1042'" in out


@pytest.mark.parametrize("command", [["conditions"], ["budgets", "--task", "order_status"], ["statuses"],
                                     ["repeat"], ["routing"], ["routing", "--table"], ["evidence"],
                                     ["regression", "--scenarios", "weather-normal,weather-early-claim"],
                                     ["compare", "--runs", "10"]])
def test_every_evidence_command_runs(capsys, command):
    code, out, err = cli(capsys, *command)
    assert code == 0 and out.strip() and not err


def test_evidence_in_markdown_and_json(capsys):
    code, out, _ = cli(capsys, "statuses", "--format", "markdown")
    assert code == 0 and out.startswith("**Stop statuses**") and "| waiting_for_user |" in out
    code, out, _ = cli(capsys, "conditions", "--format", "json")
    assert code == 0 and json.loads(out)[0]["task"] == "weather_compare"


def test_a_policy_can_come_from_a_file(capsys, tmp_path: Path):
    policy = tmp_path / "p.json"
    policy.write_text(json.dumps({"name": "mine", "on_retries_exhausted": "degrade"}), encoding="utf-8")
    code, out, _ = cli(capsys, "run", "weather-timeout-always", "--policy", str(policy), "--json")
    assert code == 0 and json.loads(out)["status"] == "partially_completed"


@pytest.mark.parametrize(("args", "message"), [
    (["run", "nope"], "unknown controller scenario 'nope'"),
    (["run", "weather-normal", "--policy", "strict"], "unknown policy 'strict'"),
    (["run", "weather-normal", "--answer", "x"], "--answer given, but weather-normal stopped as succeeded"),
    (["run", "weather-normal", "--policy", "missing.json"], "missing.json: no such file; expected a policy file"),
    (["replay", "missing.jsonl"], "missing.jsonl: no such file; expected a JSON Lines trace"),
    (["show", "missing.jsonl"], "missing.jsonl: no such file; expected a JSON Lines trace"),
    (["resume", "missing.json", "--answer", "x"], "missing.json: no such file; expected a saved-run file"),
    (["budgets", "--task", "poetry"], "unknown task type 'poetry'"),
    (["compare", "--runs", "0"], "expected a whole number of at least 1; got 0"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    ([], "the following arguments are required: COMMAND"),
])
def test_user_mistakes_end_in_one_line_and_status_2(capsys, args, message):
    code, out, err = cli(capsys, *args)
    assert code == 2 and not out
    assert err.startswith("agentloops: error: ") and message in err and err.count("\n") == 1
    assert "Traceback" not in err


def test_a_malformed_trace_is_a_user_mistake(capsys, tmp_path: Path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"kind": "start"}\n', encoding="utf-8")
    code, _, err = cli(capsys, "replay", str(path))
    assert code == 2 and err.startswith(f"agentloops: error: {path}:1: ")


def test_the_core_commands_still_work(capsys):
    code = main(["run", "normal", "--json"])
    out, _ = capsys.readouterr()
    assert code == 0 and json.loads(out)["steps"] == 3


def _edit(lines: list[dict], where: str) -> None:
    if where == "task":
        lines[0]["task"] = {"params": {}}
    elif where == "policy":
        lines[0]["policy"]["attempts_per_tool"] = 0
    elif where == "result":
        lines[2]["actions"][0]["result"]["status"] = "kaput"
    elif where == "response":
        lines[1]["response"]["tool_calls"] = [{"id": 1}]
    else:
        lines[-1]["record"] = {"status": "succeeded", "reason": "x"}


@pytest.mark.parametrize(("where", "message"), [
    ("task", ":1: task.type: missing; this field is required"),
    ("policy", ":1: policy.attempts_per_tool: expected greater than 0; got 0"),
    ("result", ":3: actions[0]: result.status: expected 'ok', "),
    ("response", ":2: response: tool_calls[0].id: expected a valid string; got 1"),
    ("stop", ":5: record: code: missing; this field is required"),
])
def test_a_trace_with_a_malformed_field_is_one_line_and_status_2(capsys, tmp_path: Path, where, message):
    path = tmp_path / "t.jsonl"
    cli(capsys, "run", "weather-timeout-once", "--trace", str(path))
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    _edit(lines, where)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    for command in ("replay", "show"):
        code, out, err = cli(capsys, command, str(path))
        assert code == 2 and not out and err.count("\n") == 1, err
        assert err.startswith(f"agentloops: error: {path}{message}"), err


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["task"].pop("type"), "task.type: missing; this field is required"),
    (lambda d: d["state"].pop("version"), "state.version: missing; this field is required"),
    (lambda d: d["meter"].update(used="lots"), "meter.used: expected an object; got str"),
    (lambda d: d["head"][0].update(role="robot"), "head[0].role: expected 'system', 'user', 'assistant' or 'tool'"),
    (lambda d: d["turns"][0].update(turn="first"), "turns[0].turn: expected a valid integer"),
    (lambda d: d["budget"]["steps"].update(value=-1), "budget.steps.value"),
    (lambda d: d.pop("paused_at_version"), "paused_at_version: missing; this field is required"),
])
def test_a_malformed_saved_run_is_one_line_and_status_2(capsys, tmp_path: Path, edit, message):
    saved = tmp_path / "saved.json"
    cli(capsys, "run", "order-missing-id", "--save", str(saved))
    data = json.loads(saved.read_text(encoding="utf-8"))
    edit(data)
    saved.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = cli(capsys, "resume", str(saved), "--answer", "A-1042")
    assert code == 2 and not out and err.count("\n") == 1, err
    assert err.startswith(f"agentloops: error: {saved}: {message}"), err


def test_resuming_the_same_saved_file_twice_is_refused(capsys, tmp_path: Path):
    saved = tmp_path / "saved.json"
    cli(capsys, "run", "order-missing-id", "--save", str(saved))
    code, out, _ = cli(capsys, "resume", str(saved), "--answer", "A-1042")
    assert code == 0 and "succeeded" in out
    code, out, err = cli(capsys, "resume", str(saved), "--answer", "A-1042")
    assert code == 2 and not out and "already resumed" in err and err.count("\n") == 1


def _another_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh process: the pause store that refuses a second resume in this one starts empty."""
    from agentloops.controller.persistence import saved

    monkeypatch.setattr(saved.RESUMED, "claims", {})


def test_a_resumed_saved_file_is_marked_in_the_file_itself(capsys, tmp_path: Path, monkeypatch):
    saved = tmp_path / "saved.json"
    cli(capsys, "run", "order-missing-id", "--save", str(saved))
    assert "resumed" not in json.loads(saved.read_text(encoding="utf-8"))
    cli(capsys, "resume", str(saved), "--answer", "A-1042")
    assert json.loads(saved.read_text(encoding="utf-8"))["resumed"]["at_turn"] == 1
    _another_process(monkeypatch)
    code, _, err = cli(capsys, "resume", str(saved), "--answer", "A-1042")
    assert code == 2 and "already resumed" in err


def test_a_copy_resumed_later_is_refused_by_a_shared_trace(capsys, tmp_path: Path, monkeypatch):
    saved, trace = tmp_path / "saved.json", tmp_path / "shared.jsonl"
    cli(capsys, "run", "order-missing-id", "--save", str(saved), "--trace", str(trace))
    (tmp_path / "elsewhere").mkdir()
    copy = tmp_path / "elsewhere" / "copy.json"
    copy.write_text(saved.read_text(encoding="utf-8"), encoding="utf-8")  # taken before the resume
    code, out, _ = cli(capsys, "resume", str(saved), "--answer", "A-1042")
    assert code == 0 and "nobody can know" not in out
    _another_process(monkeypatch)
    code, out, err = cli(capsys, "resume", str(copy), "--answer", "A-1042", "--trace", str(trace))
    assert code == 2 and not out and "already continued after turn 1" in err and err.count("\n") == 1


def test_a_copy_resumed_later_without_a_trace_says_it_cannot_know(capsys, tmp_path: Path, monkeypatch):
    saved, copy = tmp_path / "saved.json", tmp_path / "copy.json"
    cli(capsys, "run", "order-missing-id", "--save", str(saved))
    copy.write_text(saved.read_text(encoding="utf-8"), encoding="utf-8")
    code, out, _ = cli(capsys, "resume", str(saved), "--answer", "A-1042")
    assert code == 0 and "nobody can know whether a copy" in out
    _another_process(monkeypatch)
    code, out, _ = cli(capsys, "resume", str(copy), "--answer", "A-1042", "--json")
    assert code == 0 and "nobody can know whether a copy" in json.loads(out)["resume_unchecked"]


def test_compare_options_are_explained(capsys):
    with pytest.raises(SystemExit):
        main(["controller", "compare", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "how many random cases to draw" in out and "cases use seeds SEED … SEED+RUNS-1" in out


# -- issue 10: the controller CLI's file boundaries ------------------------------------------------------------

def test_run_resume_json_prints_exactly_one_json_document_with_the_run_keys(capsys):
    code, out, _ = cli(capsys, "run", "order-missing-id", "--resume", "--json")
    document = json.loads(out)  # raises if two documents were printed
    assert code == 0 and document["status"] == "waiting_for_user"
    assert {"status", "code", "actions", "usage", "stop", "user_message", "turns"} <= set(document)
    assert document["resumed"]["status"] == "succeeded"
    code, out, _ = cli(capsys, "run", "weather-normal", "--json")
    assert code == 0 and "resumed" not in json.loads(out)


@pytest.mark.parametrize(("where", "message"), [
    (lambda tmp: tmp / "no-such-folder" / "saved.json", "does not exist"),
    (lambda tmp: tmp, "is a folder; expected a file name for the saved run"),
])
def test_save_into_a_missing_folder_or_onto_a_folder_is_one_line_and_status_2(capsys, tmp_path: Path, where,
                                                                                message):
    target = where(tmp_path)
    code, out, err = cli(capsys, "run", "order-missing-id", "--save", str(target))
    assert code == 2 and not out and err.count("\n") == 1 and message in err, err
    assert str(target) in err


@pytest.mark.parametrize("value", ["0", "-3"])
def test_budgets_measure_of_zero_or_less_is_refused(capsys, value):
    code, out, err = cli(capsys, "budgets", "--measure", value)
    assert code == 2 and not out and err.count("\n") == 1
    assert "argument --measure: expected a whole number of at least 1" in err


def test_policy_file_errors_name_the_file(capsys, tmp_path: Path):
    bad_field = tmp_path / "p.json"
    bad_field.write_text('{"name": "x", "transient": "sometimes"}', encoding="utf-8")
    code, out, err = cli(capsys, "run", "weather-normal", "--policy", str(bad_field))
    assert code == 2 and not out and err.count("\n") == 1 and f"{bad_field}: policy: transient" in err, err
    not_an_object = tmp_path / "list.json"
    not_an_object.write_text("[1, 2]", encoding="utf-8")
    code, _, err = cli(capsys, "run", "weather-normal", "--policy", str(not_an_object))
    assert code == 2 and f"{not_an_object}: expected a JSON object of policy fields; got list" in err
    duplicated = tmp_path / "dup.json"
    duplicated.write_text('{"name": "a", "name": "b"}', encoding="utf-8")
    code, _, err = cli(capsys, "run", "weather-normal", "--policy", str(duplicated))
    assert code == 2 and str(duplicated) in err and err.count("\n") == 1


def test_a_saved_run_writes_its_trace_beside_itself_only(capsys, tmp_path: Path):
    saved, trace = tmp_path / "saved.json", tmp_path / "run.jsonl"
    cli(capsys, "run", "order-missing-id", "--save", str(saved), "--trace", str(trace))
    assert json.loads(saved.read_text(encoding="utf-8"))["trace_path"] == "run.jsonl"  # relative, beside it
    code, _, _ = cli(capsys, "resume", str(saved), "--answer", "A-1042")
    assert code == 0 and any('"kind": "resume"' in line for line in trace.read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize("recorded", ["/tmp/elsewhere.jsonl", "../elsewhere.jsonl", "sub/../../x.jsonl"])
def test_a_saved_file_cannot_choose_where_the_trace_goes(capsys, tmp_path: Path, recorded):
    saved = tmp_path / "saved.json"
    cli(capsys, "run", "order-missing-id", "--save", str(saved))
    data = json.loads(saved.read_text(encoding="utf-8"))
    data["trace_path"] = recorded
    saved.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = cli(capsys, "resume", str(saved), "--answer", "A-1042")
    assert code == 2 and not out and err.count("\n") == 1 and "must be relative to the saved file's folder" in err
    assert not Path(recorded).is_absolute() or not Path(recorded).exists()
    code, _, _ = cli(capsys, "resume", str(saved), "--answer", "A-1042", "--trace", str(tmp_path / "ok.jsonl"))
    assert code == 0 and (tmp_path / "ok.jsonl").exists()  # the command line chooses


def test_a_trace_outside_the_saved_files_folder_is_not_recorded(capsys, tmp_path: Path):
    (tmp_path / "saves").mkdir()
    saved, trace = tmp_path / "saves" / "saved.json", tmp_path / "run.jsonl"
    cli(capsys, "run", "order-missing-id", "--save", str(saved), "--trace", str(trace))
    assert json.loads(saved.read_text(encoding="utf-8"))["trace_path"] is None


# --- issue 26: the boundary cases -----------------------------------------------------------------------------------

def _start_edited(tmp_path: Path, edit) -> Path:
    trace = tmp_path / "recorded.jsonl"
    main(["controller", "run", "weather-timeout-once", "--trace", str(trace)])
    lines = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    edit(lines[0])
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return trace


@pytest.mark.parametrize(("edit", "message"), [
    (lambda s: s["task"].update(type="nope"), "unknown task type 'nope'"),
    (lambda s: s["task"]["params"].update(towns=1), r"params\.towns: is not a known field"),
    (lambda s: s["scenario"].update(colour=1), "scenario: colour: is not a known field"),
    (lambda s: s["scenario"]["task"].update(type="x"), "scenario: task: unknown task type 'x'"),
    (lambda s: s["scenario"].update(faults=[{"tool": "x", "kind": "timeout"}]), r"scenario: faults\[0\]\.tool 'x'"),
    (lambda s: s["scenario"].update(compactor="zz"), "scenario: compactor: expected 'state' or 'careless'"),
    (lambda s: s["scenario"].update(controls={"zz": 1}), r"scenario: controls\.zz: is not a known field"),
])
def test_replay_errors_name_the_file_and_its_line(capsys, tmp_path: Path, edit, message):
    trace = _start_edited(tmp_path, edit)
    capsys.readouterr()
    code, out, err = cli(capsys, "replay", str(trace))
    assert code == 2 and not out and err.count("\n") == 1
    assert re.match(rf"agentloops: error: {re.escape(str(trace))}:1: {message}", err), err


def _scenario_file(tmp_path: Path, **fault: object) -> Path:
    data = json.loads((controller_scenarios_dir() / "04-weather-timeout-once.json").read_text(encoding="utf-8"))
    data["faults"] = [{"tool": "get_weather", "match": {"city": "Beijing"}, **fault}]
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_crash_fault_is_one_line_naming_the_kept_trace_and_status_137(capsys, tmp_path: Path):
    scenario, trace = _scenario_file(tmp_path, kind="crash"), tmp_path / "kept.jsonl"
    code, out, err = cli(capsys, "run", str(scenario), "--trace", str(trace))
    assert (code, out) == (137, "") and err.count("\n") == 1
    assert err == (f"agentloops: the run was killed (simulated kill inside get_weather); its trace is kept in {trace}: "
                   f"agentloops controller show {trace}\n")
    code, out, _ = cli(capsys, "show", str(trace))  # the trace survived the kill, up to the turn before it
    assert code == 0 and "get_weather(city=Shanghai)" in out and "no stop line" in out
    code, out, err = cli(capsys, "run", str(scenario))
    assert (code, out) == (137, "") and err.endswith("no trace was kept (pass --trace to keep one)\n")


def test_a_replay_killed_again_names_its_own_option_for_keeping_a_trace(capsys, tmp_path: Path):
    scenario, trace, out_trace = _scenario_file(tmp_path, kind="crash"), tmp_path / "kept.jsonl", tmp_path / "r.jsonl"
    cli(capsys, "run", str(scenario), "--trace", str(trace))
    code, out, err = cli(capsys, "replay", str(trace))  # replay keeps its trace with --out: it has no --trace
    assert (code, out) == (137, "") and err.endswith("no trace was kept (pass --out to keep one)\n")
    code, out, err = cli(capsys, "replay", str(trace), "--out", str(out_trace))
    assert (code, out) == (137, "") and err.endswith(f"its trace is kept in {out_trace}: agentloops controller show "
                                                     f"{out_trace}\n")


def test_a_kill_in_a_command_that_keeps_no_trace_suggests_no_option(capsys):
    from agentloops.controller.teaching.cli import _killed
    from agentloops.controller.vocabulary.errors import ProcessKilled

    assert _killed(argparse.Namespace(controller_command="check"), ProcessKilled("a kill")) == ("", 137)
    assert capsys.readouterr().err == "agentloops: the run was killed (a kill); no trace was kept\n"


def test_a_scenario_file_declares_a_fault_not_retryable(capsys, tmp_path: Path):
    def actions(**fault: object) -> list[str]:
        code, out, _ = cli(capsys, "run", str(_scenario_file(tmp_path, kind="timeout", times=1, **fault)), "--json")
        assert code == 0
        return json.loads(out)["actions"]

    retried = ["get_weather(city=Shanghai)", "get_weather(city=Beijing)", "retry:get_weather(city=Beijing)", "answer"]
    assert actions() == actions(retryable=True) == retried
    assert actions(retryable=False) == ["get_weather(city=Shanghai)", "get_weather(city=Beijing)",
                                        "fallback:weather_backup(city=Beijing)", "answer"]


def test_retryable_on_a_kind_that_does_not_fail_is_refused(capsys, tmp_path: Path):
    code, _, err = cli(capsys, "run", str(_scenario_file(tmp_path, kind="slow", latency_s=1, retryable=False)))
    assert code == 2 and err.count("\n") == 1 and "retryable applies to a kind that replaces the tool's result" in err
