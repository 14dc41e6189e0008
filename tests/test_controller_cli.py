"""``agentloops controller …``: outputs, JSON contracts, exit statuses and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentloops.cli import main


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
    assert code == 0 and out.startswith("trace weather-timeout-once") and "stop: succeeded" in out


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
    (["run", "weather-normal", "--policy", "missing.json"], "missing.json: no such policy file"),
    (["replay", "missing.jsonl"], "missing.jsonl: no such trace file"),
    (["show", "missing.jsonl"], "missing.jsonl: no such trace file"),
    (["resume", "missing.json", "--answer", "x"], "missing.json: no such saved-run file"),
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
