"""The agentloops command: JSON contract, formats, and one-line errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentloops.cli import main

RUN_KEYS = {"scenario", "criterion", "max_steps", "steps", "hit_cap", "tools_executed", "outcome", "error",
            "answer", "wasted_calls", "wasted_tool_runs", "context_tokens", "billed_prompt_tokens"}


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_json_gives_the_article_figures(capsys):
    code, out, _ = cli(capsys, "compare", "--format", "json",
                       "--scenarios", "normal,talk-and-call,truncated,talk-only")
    assert code == 0
    rows = {(r["scenario"], r["criterion"]): r for r in json.loads(out)}
    steps = {name: [rows[(name, c)]["steps"] for c in ("content", "finish_reason", "tool_calls", "correct")]
             for name in ("normal", "talk-and-call", "truncated", "talk-only")}
    assert steps == {"normal": [3, 3, 3, 3], "talk-and-call": [1, 2, 2, 2], "truncated": [8, 8, 1, 1],
                     "talk-only": [1, 1, 1, 1]}
    assert rows[("normal", "content")]["tools_executed"] == ["read_file", "count_lines"]
    assert rows[("talk-and-call", "content")]["tools_executed"] == ["read_file"]
    assert [rows[("truncated", c)]["hit_cap"] for c in ("content", "finish_reason", "tool_calls")] == [True, True, False]
    assert rows[("truncated", "correct")]["error"] == "truncated"
    assert all(set(r) >= RUN_KEYS for r in rows.values())


def test_run_json_is_one_record(capsys):
    code, out, _ = cli(capsys, "run", "truncated", "--criterion", "content", "--json")
    record = json.loads(out)
    assert code == 0 and set(record) >= RUN_KEYS
    assert (record["steps"], record["wasted_calls"], len(record["context_tokens"])) == (8, 7, 8)


def test_run_text_and_max_steps(capsys):
    code, out, _ = cli(capsys, "run", "long-chain", "--criterion", "correct", "--max-steps", "3")
    assert code == 0
    assert "raised max_steps at call 3" in out


def test_run_accepts_a_path(capsys, tmp_path: Path):
    source = Path(__file__).parents[1] / "data" / "scenarios" / "04-talk-only.json"
    target = tmp_path / "mine.json"
    target.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    code, out, _ = cli(capsys, "run", str(target), "--json")
    assert code == 0 and json.loads(out)["steps"] == 1


def test_scenarios_lists_names_and_titles(capsys):
    code, out, _ = cli(capsys, "scenarios")
    assert code == 0 and "talk-and-call" in out and "a round cut off by max_tokens" in out


@pytest.mark.parametrize("fmt", ["text", "markdown", "csv"])
def test_compare_formats(capsys, fmt):
    code, out, _ = cli(capsys, "compare", "--format", fmt, "--scenarios", "normal", "--criteria", "correct")
    assert code == 0 and "read_file" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "nope"], r"^agentloops: error: unknown scenario 'nope'"),
        (["run", "normal", "--criterion", "bogus"], r"^agentloops: error: unknown criterion 'bogus'"),
        (["run", "normal", "--max-steps", "0"], r"^agentloops: error: argument --max-steps: expected a whole number"),
        (["run", "normal", "--max-steps", "ten"], r"got 'ten'"),
        (["run", "missing.json"], r"^agentloops: error: missing\.json: no such file"),
        (["compare", "--format", "yaml"], r"argument --format: invalid choice: 'yaml'"),
        (["compare", "--criteria", "content,nope"], r"unknown criterion 'nope'"),
        (["frobnicate"], r"invalid choice: 'frobnicate'"),
        ([], r"required: command"),
        (["compare", "--scenarios", ","], r"compare needs at least one scenario"),
        (["run", "normal", "--max-steps", "5000"], r"max_steps must be a whole number from 1 to 1000"),
    ],
)
def test_user_mistakes_end_in_one_line_and_status_2(capsys, args, message):
    code, out, err = cli(capsys, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert re.search(message, err.strip())


def test_bad_scenario_file_is_one_line(capsys, tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "bad", "title": "t", "teaches": "x", "responses": [{"content": null}]}', encoding="utf-8")
    code, _, err = cli(capsys, "run", str(bad))
    assert code == 2
    assert err.strip() == f"agentloops: error: {bad}: responses[0].finish_reason: missing; this field is required"


def test_python_dash_m_entry_point():
    done = subprocess.run([sys.executable, "-m", "agentloops", "run", "talk-only", "--json"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["outcome"] == "answer"


@pytest.mark.parametrize(("uid", "allow_root"), [(0, True), (1000, False)])
def test_lab_opens_the_checkout_notebooks_and_allows_root_only_as_root(capsys, monkeypatch, uid, allow_root):
    import agentloops.lab as lab_module

    calls: list[list[str]] = []
    monkeypatch.setattr(lab_module.os, "geteuid", lambda: uid, raising=False)
    monkeypatch.setattr(lab_module.subprocess, "call", lambda command: calls.append(command) or 0)
    code, _, _ = cli(capsys, "lab", "--no-browser")
    assert code == 0
    (command,) = calls
    assert command[1:3] == ["lab", str(Path(__file__).parents[1] / "notebooks")]
    assert ("--allow-root" in command) is allow_root
