"""The agentloops command: JSON contract, formats, and one-line errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentloops.cli import build_parser, main
from agentloops.errors import ScenarioError
from agentloops.jsonfile import MAX_BYTES, MAX_MESSAGE
from agentloops.loop import MAX_STEPS_LIMIT
from agentloops.terminal import EXIT_BROKEN_PIPE

ROOT = Path(__file__).resolve().parents[1]

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
        (["run", "normal", "--max-steps", "5000"],
         rf"argument --max-steps: expected a whole number from 1 to {MAX_STEPS_LIMIT}; got 5000$"),
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
def test_lab_serves_the_learners_copy_and_allows_root_only_as_root(capsys, monkeypatch, tmp_path, uid, allow_root):
    import agentloops.lab as lab_module

    calls: list[list[str]] = []
    monkeypatch.setattr(lab_module.os, "geteuid", lambda: uid, raising=False)
    monkeypatch.setattr(lab_module, "serve", lambda command, cwd: calls.append(command) or 0)
    code, _, _ = cli(capsys, "lab", "--no-browser", "--dir", str(tmp_path))
    assert code == 0
    (command,) = calls
    assert command[1:3] == ["lab", str(tmp_path.resolve())]
    assert ("--allow-root" in command) is allow_root


# --- numbers on the command line ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["٣", "+3", " 3", "3 ", "3_0", "0x3", "3.0", "-3", "", "３", "²", "1e3"])
def test_max_steps_takes_only_plain_ascii_digits(capsys, text: str):
    code, out, err = cli(capsys, "run", "normal", "--max-steps", text)
    assert code == 2 and out == ""
    assert err == (f"agentloops: error: argument --max-steps: expected a whole number from 1 to {MAX_STEPS_LIMIT}, "
                   f"in digits 0-9; got {text!r}\n")


@pytest.mark.parametrize(("text", "steps"), [("1", 1), ("007", 7), (str(MAX_STEPS_LIMIT), MAX_STEPS_LIMIT)])
def test_max_steps_range_is_inclusive(text: str, steps: int):
    assert build_parser().parse_args(["run", "normal", "--max-steps", text]).max_steps == steps
    assert build_parser().parse_args(["compare", "--max-steps", text]).max_steps == steps


@pytest.mark.parametrize(("text", "shown"), [("0", "got 0"), (str(MAX_STEPS_LIMIT + 1), f"got {MAX_STEPS_LIMIT + 1}"),
                                             ("9" * 5000, "got a number with 5000 digits")])
def test_max_steps_out_of_range(capsys, text: str, shown: str):
    code, _, err = cli(capsys, "compare", "--max-steps", text)
    assert code == 2
    assert err == f"agentloops: error: argument --max-steps: expected a whole number from 1 to {MAX_STEPS_LIMIT}; {shown}\n"


@pytest.mark.parametrize("command", [["run", "normal"], ["compare"]])
def test_max_steps_range_is_shown_in_help(capsys, command: list[str]):
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"--max-steps MAX_STEPS model calls before the loop gives up, from 1 to {MAX_STEPS_LIMIT} (default: 8)" in help_text


def test_positive_int_options_of_the_controller_are_strict_too(capsys):
    code, _, err = cli(capsys, "controller", "compare", "--runs", "+5")
    assert code == 2 and err == "agentloops: error: argument --runs: expected a whole number of at least 1, in digits 0-9; got '+5'\n"


@pytest.mark.parametrize(("text", "message"), [("٨٠", "in digits 0-9; got '٨٠'"), ("65536", "; got 65536")])
def test_port_is_strict(capsys, text: str, message: str):
    code, _, err = cli(capsys, "app", "--port", text)
    assert code == 2 and err.startswith("agentloops: error: argument --port: expected a whole number from 1 to 65535")
    assert err.rstrip().endswith(message)


# --- scenario files that are not files ------------------------------------------------------------------------------

def _one_error_line(capsys, *args: str) -> str:
    code, out, err = cli(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("agentloops: error: ")
    return err.rstrip("\n").removeprefix("agentloops: error: ")


def test_run_a_fifo_is_refused_without_hanging(tmp_path: Path):
    fifo = tmp_path / "scenario.json"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "agentloops", "run", str(fifo)], capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"agentloops: error: {fifo}: is a FIFO, not a regular file; expected a scenario file\n"


def test_run_a_device(capsys):
    assert _one_error_line(capsys, "run", "/dev/null") == "/dev/null: is a device, not a regular file; expected a scenario file"


def test_run_a_directory(capsys, tmp_path: Path):
    assert _one_error_line(capsys, "run", str(tmp_path)) == f"{tmp_path}: is a directory; expected a scenario file"


def test_run_an_unreadable_file(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "secret.json"
    path.write_text("{}", encoding="utf-8")
    if os.geteuid() == 0:  # root reads anything: make the refusal the system's, as it would be for a user
        def denied(*args: object, **kwargs: object) -> int:
            raise PermissionError(13, "Permission denied")
        monkeypatch.setattr("agentloops.jsonfile.os.open", denied)
    else:
        path.chmod(0)
    assert _one_error_line(capsys, "run", str(path)) == f"{path}: permission denied; expected a readable scenario file"


def test_run_an_oversized_file_is_refused_before_reading(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(MAX_BYTES + 1)  # sparse: nothing to read, and nothing may be read
    monkeypatch.setattr("agentloops.jsonfile.os.open", lambda *a, **k: pytest.fail("opened an oversized file"))
    assert _one_error_line(capsys, "run", str(path)) == (
        f"{path}: is {MAX_BYTES + 1:,} bytes, larger than the {MAX_BYTES:,}-byte limit; expected a smaller scenario file")


@pytest.mark.parametrize(("text", "message"), [
    ("[" * 5000 + "]" * 5000, "nested deeper than 64 levels of arrays and objects (at column 65)"),
    ('{"name": 1' + "0" * 5000 + "}", "an integer with 5,001 digits; expected at most 20 (at column 10)"),
    ('{"name": NaN}', "NaN is not JSON; expected a finite number or null (at column 10)"),
    ('{"name": "\\ud800"}', "name: the string holds a lone surrogate (U+D800); expected valid Unicode text"),
    ('{"name": "a", "name": "b"}', "duplicate key 'name' in one object; expected each key once"),
    ('{"name": "a\\nb\\u001b", "title": "t", "teaches": "x", "responses": [{"content": "hi", "finish_reason": "stop"}]}',
     "name: String should match pattern '^[a-z0-9][a-z0-9-]*$'; got 'a\\nb\\x1b'"),
])
def test_json_oddities_in_a_scenario_file_are_one_line(capsys, tmp_path: Path, text: str, message: str):
    path = tmp_path / "odd.json"
    path.write_text(text, encoding="utf-8")
    assert _one_error_line(capsys, "run", str(path)) == f"{path}: {message}"


def test_an_error_line_is_capped_and_keeps_the_problem(capsys, tmp_path: Path):
    path = tmp_path / ("n" * 200 + ".json")
    path.write_text('{"' + "k" * 500 + '": 1, "' + "k" * 500 + '": 1}', encoding="utf-8")
    line = _one_error_line(capsys, "run", str(path))
    assert len(line) <= MAX_MESSAGE and line.count("…") == 2  # the path's middle and the key's end are cut
    assert line.startswith(str(tmp_path)[:20]) and "nnn.json: duplicate key 'kkk" in line
    assert line.endswith("in one object; expected each key once")


def test_a_bug_is_not_hidden(capsys, monkeypatch: pytest.MonkeyPatch):
    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("a genuine bug")
    monkeypatch.setattr("agentloops.cli.run", broken)
    with pytest.raises(ZeroDivisionError):
        main(["run", "normal"])


def test_a_refused_path_from_a_handler_is_one_line(capsys, monkeypatch: pytest.MonkeyPatch):
    def refused(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError(2, "No such file or directory", "/no/such/dir/trace.jsonl")
    monkeypatch.setattr("agentloops.cli.run", refused)
    assert _one_error_line(capsys, "run", "normal") == "/no/such/dir/trace.jsonl: No such file or directory"


def test_an_oserror_without_a_path_is_a_bug(monkeypatch: pytest.MonkeyPatch):
    def failing(*args: object, **kwargs: object) -> None:
        raise OSError("something internal")
    monkeypatch.setattr("agentloops.cli.run", failing)
    with pytest.raises(OSError, match="something internal"):
        main(["run", "normal"])


def test_package_errors_from_any_handler_are_one_line(capsys, monkeypatch: pytest.MonkeyPatch):
    def raising(*args: object, **kwargs: object) -> None:
        raise ScenarioError("first\nsecond")
    monkeypatch.setattr("agentloops.cli.run", raising)
    assert _one_error_line(capsys, "run", "normal") == "first\\nsecond"


# --- where the output goes ------------------------------------------------------------------------------------------

def _agentloops(*args: str, stdout: int | None = subprocess.PIPE, env: dict[str, str] | None = None
                ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "agentloops", *args], stdout=stdout, stderr=subprocess.PIPE,
                          env={**os.environ, **(env or {})}, cwd=ROOT, timeout=60, check=False)


@pytest.mark.parametrize(("args", "status"), [(["compare"], EXIT_BROKEN_PIPE), (["run", "normal", "--json"], EXIT_BROKEN_PIPE),
                                              (["controller", "list"], EXIT_BROKEN_PIPE),
                                              (["--help"], 0)])  # argparse itself ignores a failed help write
def test_output_into_a_closed_pipe_ends_quietly(args: list[str], status: int):
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `| head -1` that has already gone: every write fails with EPIPE
    try:
        done = _agentloops(*args, stdout=write_end)
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (status, b"")


@pytest.mark.parametrize("args", [["scenarios"], ["compare"], ["controller", "list"], ["controller", "run", "weather-normal"],
                                  ["--help"], ["controller", "run", "no-such-scenario"]])
def test_a_closed_standard_output_ends_quietly(args: list[str]):
    quoted = " ".join(f"'{a}'" for a in args)
    done = subprocess.run(f"'{sys.executable}' -m agentloops {quoted} >&-", shell=True, executable="/bin/bash",
                          capture_output=True, cwd=ROOT, timeout=60, check=False)
    assert b"Traceback" not in done.stderr
    if "no-such-scenario" in args:  # a user's mistake still says so on stderr, with status 2
        assert done.returncode == 2 and done.stderr.count(b"\n") == 1
    else:
        assert (done.returncode, done.stderr) == (0, b"")


def test_a_closed_standard_error_keeps_the_error_line_out_of_the_output():
    done = subprocess.run(f"'{sys.executable}' -m agentloops run no-such-scenario 2>&-", shell=True,
                          executable="/bin/bash", capture_output=True, cwd=ROOT, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (2, b"")  # print(file=None) once wrote the error into the output


def test_a_server_or_kernel_a_command_starts_finds_the_closed_streams_open():
    """``agentloops app >&-``: every kernel Voilà started died on the closed descriptor it inherited."""
    child = "import sys; sys.exit(sys.stdout is None or sys.stderr is None)"
    code = (f"import subprocess, sys; from agentloops import terminal; terminal.reopen_closed_streams(); "
            f"sys.exit(subprocess.run([sys.executable, '-c', {child!r}]).returncode)")
    done = subprocess.run(f"'{sys.executable}' -c \"{code}\" >&- 2>&-", shell=True, executable="/bin/bash",
                          capture_output=True, cwd=ROOT, timeout=60, check=False)
    assert done.returncode == 0


def test_output_into_head_ends_quietly():
    done = subprocess.run(f"'{sys.executable}' -m agentloops compare --format csv | head -c 10; exit ${{PIPESTATUS[0]}}",
                          shell=True, executable="/bin/bash", capture_output=True, cwd=ROOT, timeout=60, check=False)
    assert done.stderr == b"" and done.returncode in (0, EXIT_BROKEN_PIPE)


def test_output_onto_a_full_disk_is_one_line_and_status_2():
    with open("/dev/full", "wb") as full:
        done = _agentloops("scenarios", stdout=full.fileno())
    assert done.returncode == 2
    assert done.stderr == b"agentloops: error: cannot write the output (No space left on device)\n"


@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "latin-1"}, {"PYTHONIOENCODING": "ascii"},
                                 {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}])
def test_a_non_utf8_terminal_gets_escapes_not_a_crash(tmp_path: Path, env: dict[str, str]):
    path = tmp_path / "zh.json"
    path.write_text(json.dumps({"name": "zh", "title": "中文", "teaches": "x", "responses": [
        {"content": "答案是 42", "finish_reason": "stop"}]}, ensure_ascii=False), encoding="utf-8")
    done = _agentloops("run", str(path), "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.decode("ascii", "replace"))["answer"] in ("答案是 42", "\\u7b54\\u6848\\u662f 42")
    assert b"Traceback" not in done.stderr
    error = _agentloops("run", str(tmp_path / "缺.json"), env=env)
    assert error.returncode == 2 and error.stderr.count(b"\n") == 1 and b"Traceback" not in error.stderr
