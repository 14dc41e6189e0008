"""The command line in Chinese shows no unexplained English: every command's help, output and one-line errors.

Each command runs in-process with ``--lang zh``; what it prints (stdout and stderr) is read by the same check as the
Chinese notebooks' outputs (``tests/latin_words.py``): a Latin-letter word that is not code, an id, an API value, a
name the glossary keeps or a word of the glossary's allow-list fails the test. The command line's own names (its
commands, options, metavars and choices) are ids; a JSON document a command prints (the system record, ``--json``)
is data and is not read. A Western colon, semicolon or comma against Chinese text fails too. The allow-list scope ``cli`` covers every command, ``cli#<command line>`` one command.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentloops import doctor
from agentloops.cli import build_parser, main
from agentloops.i18n import speaking
from tests.latin_words import ROOT, Allowed, allowed_words, english_words

SCOPE = "cli"
"""The allow-list's name for the command line (a scope, like a notebook's path)."""


pytestmark = pytest.mark.usefixtures("no_language_from_the_environment")


def parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...],
                                                                                          argparse.ArgumentParser]]:
    """(command words, parser) for the command line and each of its subcommands, depth first."""
    yield path, parser
    for action in parser._actions:  # argparse keeps its subcommands here; there is no public walk
        if isinstance(action, argparse._SubParsersAction):
            for name, child in dict(action.choices).items():
                yield from parsers(child, (*path, name))


def cli_ids() -> frozenset[str]:
    """The command line's own names: commands, option names (``--max-steps``: max, steps), metavars (argparse's
    default one is the dest in capitals), dests and choices. Help and errors name them as code."""
    names: set[str] = set()
    for path, parser in parsers(build_parser()):
        names |= set(path)
        for action in parser._actions:
            words = [*action.option_strings, action.dest, action.dest.upper(), *(action.choices or ())]
            words += list(action.metavar) if isinstance(action.metavar, tuple) else [action.metavar or ""]
            names |= {part for word in words if isinstance(word, str) for part in re.split(r"[-_\s]+", word) if part}
    return frozenset(names)


def without_json(text: str) -> str:
    """``text`` without the JSON documents it prints (a line that is one, or the lines from a ``{`` or ``[`` to the
    ``}`` or ``]`` that closes it at the start of a line): they are data, English in every language."""
    lines, kept, i = text.split("\n"), [], 0
    while i < len(lines):
        end = _json_end(lines, i)
        if end is None:
            kept.append(lines[i])
        i = i + 1 if end is None else end + 1
    return "\n".join(kept)


def _json_end(lines: list[str], start: int) -> int | None:
    """The last line of the JSON document that begins at line ``start``, or ``None``."""
    if not lines[start].startswith(("{", "[")):
        return None
    for end in [start, *(j for j in range(start + 1, len(lines)) if lines[j] in ("}", "]"))]:
        try:
            json.loads("\n".join(lines[start:end + 1]))
        except ValueError:
            continue
        return end
    return None


def shown_words(argv: list[str], allowed: Allowed, cell: str | None = None) -> str:
    """The English words in what ``agentloops --lang zh *argv`` prints, help and errors included (``""``: none);
    ``cell``: its scope in the allow-list (default: the command line itself)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["--lang", "zh", *argv])
        except SystemExit as done:  # --help
            assert done.code == 0
    text = without_json(out.getvalue() + "\n" + err.getvalue())
    found = english_words(text, allowed.in_cell(cell or " ".join(argv))) + ascii_punctuation(text)
    return "\n".join(f"{word!r} in …{context}…" for word, context in found)


_WESTERN = re.compile(r"(?<=[\u4e00-\u9fff）」》])[:;,]|[:;,](?= ?[\u4e00-\u9fff（])")
"""A Western colon, semicolon or comma against a Chinese character (``位置参数:``, ``晴; Beijing``)."""


def ascii_punctuation(text: str) -> list[tuple[str, str]]:
    """(mark, context) for each Western colon, semicolon or comma written against Chinese text."""
    return [(m.group(), text[max(0, m.start() - 20):m.end() + 20].replace("\n", " ")) for m in _WESTERN.finditer(text)]


@pytest.fixture(scope="module")
def allowed() -> Allowed:
    base = allowed_words(SCOPE)
    return Allowed(base.exact | cli_ids(), base.caseless, base.cells)


HELP = [[*path, "--help"] for path, _parser in parsers(build_parser())]

COMMANDS = [
    ["scenarios"], ["run", "normal"], ["run", "truncated", "--criterion", "naive"],
    ["compare", "--scenarios", "normal,truncated"],
    ["controller", "list"], ["controller", "conditions"], ["controller", "statuses"], ["controller", "routing"],
    ["controller", "routing", "--table"], ["controller", "budgets"], ["controller", "repeat", "weather-reask"],
    ["controller", "check", "weather-normal", "weather-timeout-once"], ["controller", "regression"],
    ["controller", "compare", "--runs", "5"], ["controller", "evidence"],
    *(["controller", "run", name] for name in ("weather-timeout-once", "weather-early-claim", "weather-timeout-always",
                                               "weather-provider-outage", "order-missing-id", "refund-handoff",
                                               "document-not-found", "research-parallel",
                                               "research-compaction-checked")),
    ["controller", "run", "refund-handoff", "--resume"], ["controller", "run", "order-missing-id", "--resume"],
    ["diagnose", "data/diagnose/otel/pydantic-ai-step-cap.jsonl"], ["diagnose", "data/diagnose/pairs/anthropic.jsonl"],
    ["diagnose", "data/diagnose/heldout/openai-sdk-timeout.jsonl"], ["frameworks"],
]
"""Commands that succeed (or report a finding), on the shipped data."""

MISTAKES = [
    ["run", "no-such-scenario"], ["run", "normal", "--criterion", "no-such-criterion"], ["run", "{bad}"],
    ["compare", "--criteria", "no-such-criterion"], ["controller", "run", "no-such-scenario"],
    ["controller", "run", "weather-normal", "--policy", "no-such-policy"],
    ["controller", "run", "weather-normal", "--policy", "{policy}"], ["controller", "show", "{bad}"],
    ["controller", "replay", "{missing}"], ["controller", "resume", "{missing}", "--answer", "A-1042"],
    ["controller", "budgets", "--task", "no-such-task"], ["controller", "check", "no-such-scenario"],
    ["diagnose", "{bad}"], ["diagnose", "{missing}"], ["solutions"], ["no-such-command"],
]
"""A bad file, a bad field, an unknown name, a missing argument: one line each."""


@pytest.mark.parametrize("argv", HELP, ids=" ".join)
def test_the_help_of_every_command_is_chinese(argv: list[str], allowed: Allowed) -> None:
    assert shown_words(argv, allowed) == ""


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_what_a_command_shows_is_chinese(monkeypatch: pytest.MonkeyPatch, argv: list[str], allowed: Allowed) -> None:
    monkeypatch.chdir(ROOT)
    assert shown_words(argv, allowed) == ""


@pytest.mark.parametrize("argv", MISTAKES, ids=" ".join)
def test_a_mistake_is_told_in_chinese(capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str],
                                      allowed: Allowed) -> None:
    """One line on stderr, status 2, in Chinese (``{bad}``: a file that is not JSON; ``{policy}``: a policy file with
    an unknown field; ``{missing}``: no file)."""
    (tmp_path / "bad.json").write_text('{"policy": ', encoding="utf-8")
    (tmp_path / "policy.json").write_text('{"retries_max": 1}', encoding="utf-8")
    files = {"bad": tmp_path / "bad.json", "policy": tmp_path / "policy.json", "missing": tmp_path / "missing.json"}
    assert main(["--lang", "zh", *(arg.format(**files) if arg.startswith("{") else arg for arg in argv)]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1
    assert shown_words([arg.format(**files) if arg.startswith("{") else arg for arg in argv], allowed,
                       " ".join(argv)) == ""


def test_the_check_sees_english_in_a_command_s_output(capsys: pytest.CaptureFixture[str],
                                                     allowed: Allowed) -> None:
    """The check is not blind: the same command in English is full of words it counts."""
    main(["--lang", "en", "controller", "run", "weather-timeout-once"])
    found = {word for word, _context in english_words(without_json(capsys.readouterr().out), allowed)}
    assert {"Weather", "compared", "holds", "over", "Sources", "message"} <= found


def test_western_punctuation_against_chinese_is_seen() -> None:
    assert [mark for mark, _context in ascii_punctuation("位置参数:\n天气对比——Shanghai：24°C，晴; Beijing：18°C")] == [
        ":", ";"]
    assert ascii_punctuation("Shanghai：24°C，晴；Beijing: ok, fine") == []


def test_a_json_document_is_data_and_the_rest_is_read() -> None:
    text = 'head\n{\n "reason": "holds over state"\n}\n{"runs": 5}\ntail {"x": 1}\n[\nnot json'
    assert without_json(text) == 'head\ntail {"x": 1}\n[\nnot json'


def test_the_doctor_speaks_chinese(capsys: pytest.CaptureFixture[str], tmp_path: Path, allowed: Allowed) -> None:
    """The fonts it names are this machine's (their names are names); on a machine without a Chinese font for the
    browser, it names the command that installs one."""
    fonts = {word for family in [*doctor.font_families(), *(doctor.fontconfig_chinese_families() or [])]
             for word in family.split()}
    main(["--lang", "zh", "doctor", "--no-kernel", "--dir", str(tmp_path)])
    out, err = capsys.readouterr()
    here = allowed.in_cell("doctor")
    assert english_words(without_json(out + err), Allowed(here.exact | fonts, here.caseless)) == []


@pytest.mark.parametrize(("release", "command"), [
    *(({"ID": distros[0]}, command) for distros, command in doctor.LINUX_FONT_FIXES),
    ({"ID": "nixos"}, "sudo apt install fonts-noto-cjk"), ({}, "sudo dnf install google-noto-sans-cjk-fonts")])
def test_without_a_chinese_font_the_doctor_says_what_to_run_in_chinese(release: dict[str, str], command: str,
                                                                       allowed: Allowed) -> None:
    """Whatever this machine has: the check that fails on one without a font, on each kind of Linux (the last two
    unknown to the doctor, which then names the commands of the two commonest), names the command to run, in a
    Chinese sentence."""
    with speaking("zh"):
        finding = doctor.check_browser_font(families=lambda: [], system=lambda: "Linux", release=lambda: release)
    assert not finding.ok and command in finding.fix
    assert english_words(f"{finding.detail} — {finding.fix}", allowed.in_cell("doctor")) == []
