"""agentloops diagnose on logs produced by running code: the package's loop, provider request logs, Pydantic AI spans.

The fixtures under data/diagnose/ come from scripts/make_diagnose_fixtures.py;
expected.json records what each run was built to show (the planted bugs), so
these tests compare diagnose with the plan, not with its own earlier output.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from agentloops import run
from agentloops.diagnose import (
    LOG_FORMATS,
    LogError,
    detected_format,
    diagnose,
    findings_frame,
    iter_findings,
    iter_runs,
)
from agentloops.diagnose.cli import add_commands
from agentloops.diagnose.detectors import find
from agentloops.providers import FORMATS
from agentloops.resources import data_dir

FIXTURES = data_dir() / "diagnose"
EXPECTED: dict[str, list[list[str]]] = json.loads((FIXTURES / "expected.json").read_text())


def kinds_per_run(path: Path) -> list[list[str]]:
    return [sorted({f.kind for f in find(r)}) for r in iter_runs(path)]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_planted_bug_is_found_and_healthy_runs_stay_clean(name: str) -> None:
    assert kinds_per_run(FIXTURES / name) == [sorted(set(k)) for k in EXPECTED[name]]


def test_the_fixtures_cover_every_format_and_every_kind() -> None:
    formats = {detected_format(FIXTURES / name) for name in EXPECTED}
    assert {"record", "otel", *FORMATS} <= formats
    planted = {k for runs in EXPECTED.values() for kinds in runs for k in kinds}
    assert planted == {"reasked", "abnormal_answer", "premature_answer", "repeated_tool_call", "ping_pong",
                       "failure_streak", "cap_returned_last", "work_pending"}
    healthy = [name for name, runs in EXPECTED.items() if name.startswith("otel/") and runs == [[]]]
    assert {"otel/pydantic-ai-polling.jsonl", "otel/pydantic-ai-transient-retry.jsonl",
            "otel/pydantic-ai-healthy-multi-tool.jsonl"} <= set(healthy)


def test_the_articles_tell_counts_the_repeats_and_their_tokens() -> None:
    record = run("truncated", criterion="content")
    report = diagnose(FIXTURES / "recordings" / "truncated.content.json")
    reasked = [f for f in report.findings if f.kind == "reasked"]
    assert len(reasked) == 1
    assert reasked[0].count == record.wasted_calls == 7
    assert reasked[0].calls == "2-8"
    assert reasked[0].tokens == sum(record.context_tokens[1:])


def test_a_provider_log_reports_what_the_provider_billed() -> None:
    report = diagnose(FIXTURES / "pairs" / "openai-chat.jsonl")
    lines = (FIXTURES / "pairs" / "openai-chat.jsonl").read_text().splitlines()
    spin = [json.loads(line) for line in lines if json.loads(line)["run"].startswith("03-truncated.content")]
    usage = [row["response"]["usage"] for row in spin[1:]]
    reasked = next(f for f in report.findings if f.kind == "reasked")
    assert reasked.count == len(spin) - 1 == 7
    assert reasked.tokens == sum(u["prompt_tokens"] + u["completion_tokens"] for u in usage)


def test_the_report_counts_runs_and_calls() -> None:
    report = diagnose(FIXTURES / "pairs" / "anthropic.jsonl")
    rows = (FIXTURES / "pairs" / "anthropic.jsonl").read_text().splitlines()
    assert report.calls == len(rows)
    assert report.runs == len({json.loads(r)["run"] for r in rows}) == 6
    assert report.stopped is None and not report.healthy


def test_runs_without_ids_are_split_where_a_request_stops_continuing(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (FIXTURES / "pairs" / "openai-chat.jsonl").read_text().splitlines()]
    keep = [r for r in rows if r["run"].split(".")[0] in ("01-normal", "03-truncated")]
    log = tmp_path / "no-ids.jsonl"
    log.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "run"}) + "\n" for r in keep))
    # normal (3 calls), normal again (3), truncated spin (8), truncated once (1): each starts from the prompt alone
    assert [len(r.turns) for r in iter_runs(log)] == [3, 3, 8, 1]


def test_findings_frame_has_one_row_per_finding() -> None:
    frame = findings_frame(FIXTURES / "recordings" / "runs.jsonl")
    planted = sum(len(k) for k in EXPECTED["recordings/runs.jsonl"])
    assert len(frame) == planted
    assert list(frame.columns) == ["kind", "run", "where", "calls", "count", "tokens", "detail"]
    assert set(frame["run"]) >= {"truncated × content", "long-chain × content"}


def test_iter_findings_streams_the_same_findings() -> None:
    path = FIXTURES / "recordings" / "runs.jsonl"
    assert list(iter_findings(path)) == list(diagnose(path).findings)


def test_text_json_and_html_outputs(tmp_path: Path) -> None:
    report = diagnose(FIXTURES / "otel" / "pydantic-ai-repeated-call.jsonl")
    text = str(report)
    assert "1 run(s), 6 model call(s), 1 finding" in text
    assert "repeated_tool_call" in text and 'read_file({"path":"notes.txt"})' in text
    data = json.loads(json.dumps(report.to_dict()))
    assert data["counts"]["repeated_tool_call"] == 1 and data["findings"][0]["count"] == 4
    page = report.to_html()
    assert page.startswith("<!doctype html>") and "<svg" in page and "repeated_tool_call" in page
    assert "<table>" in report._repr_html_() and "<svg" in report._repr_html_()
    assert repr(report) == text
    assert report.findings[0].run.startswith("repeated-call (trace ")


def test_a_healthy_report_says_so() -> None:
    report = diagnose(FIXTURES / "otel" / "pydantic-ai-polling.jsonl")
    assert report.healthy
    assert "no stop bug found" in str(report)
    assert "<table>" not in report._repr_html_() and "<svg" not in report._repr_html_()
    assert "<svg" in report.to_html()  # the page always has its chart, all bars at zero


def _cli(argv: list[str]) -> tuple[str, int]:
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers())
    args = parser.parse_args(argv)
    output = args.handler(args)
    return output if isinstance(output, tuple) else (output, 0)


def test_cli_exit_status_says_findings_or_clean(tmp_path: Path) -> None:
    text, status = _cli(["diagnose", str(FIXTURES / "pairs" / "tools-repeated-call.jsonl")])
    assert status == 1 and "repeated_tool_call" in text
    text, status = _cli(["diagnose", str(FIXTURES / "pairs" / "tools-polling.jsonl")])
    assert status == 0 and "no stop bug found" in text


def test_cli_json_and_html(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    text, status = _cli(["diagnose", str(FIXTURES / "pairs" / "gemini.jsonl"), "--json", "--html", str(out)])
    assert status == 1
    assert json.loads(text)["format"] == "gemini"
    assert "<svg" in out.read_text()


def test_cli_format_choices_and_max_steps() -> None:
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers())
    assert set(LOG_FORMATS) == {"record", "scenario", "otel", "pairs", *FORMATS}
    with pytest.raises(SystemExit):
        parser.parse_args(["diagnose", "x", "--max-steps", "0"])
    with pytest.raises(SystemExit):
        parser.parse_args(["diagnose", "x", "--format", "yaml"])


def test_cli_html_target_that_cannot_be_written(tmp_path: Path) -> None:
    with pytest.raises(LogError, match="cannot write the HTML report"):
        _cli(["diagnose", str(FIXTURES / "pairs" / "gemini.jsonl"), "--html", str(tmp_path / "no" / "r.html")])


def test_a_scenario_file_is_read_as_the_responses_of_one_run() -> None:
    path = data_dir() / "scenarios" / "providers" / "openai-chat-03-truncated.json"
    report = diagnose(path)
    assert report.format == "scenario" and report.calls == 1
    assert [f.kind for f in report.findings] == ["abnormal_answer"]
    assert "no exception logged" in report.findings[0].detail
    healthy = diagnose(data_dir() / "scenarios" / "providers" / "anthropic-01-normal.json")
    assert healthy.healthy and healthy.calls == 3


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("make_diagnose_fixtures", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "make_diagnose_fixtures.py"


@pytest.mark.skipif(not SCRIPT.is_file(), reason="the fixture generator ships with the source checkout only")
def test_the_package_made_fixtures_regenerate_with_the_same_planted_bugs(tmp_path: Path) -> None:
    generator = _generator()
    generator.OUT = tmp_path
    made = {**generator.make_records(), **generator.make_pairs()}
    assert made == {name: runs for name, runs in EXPECTED.items()
                    if not name.startswith("otel/") and name not in HELDOUT}
    for name, runs in made.items():
        assert kinds_per_run(tmp_path / name) == [sorted(set(k)) for k in runs], name


HELDOUT = ("heldout/pydantic-ai-repeated-json.jsonl", "heldout/openai-sdk-timeout.jsonl",
           "heldout/openai-sdk-step-cap.jsonl")


@pytest.mark.skipif(not SCRIPT.is_file(), reason="the fixture generator ships with the source checkout only")
def test_the_held_out_style_logs_regenerate_from_real_sdk_and_framework_code(tmp_path: Path) -> None:
    for module in ("openai", "pydantic_ai", "opentelemetry.sdk"):
        pytest.importorskip(module)
    generator = _generator()
    generator.OUT = tmp_path
    made = generator.make_heldout()
    assert set(made) == set(HELDOUT) and made == {name: EXPECTED[name] for name in HELDOUT}
    for name, runs in made.items():
        assert kinds_per_run(tmp_path / name) == [sorted(set(k)) for k in runs], name
    assert len(diagnose(tmp_path / "heldout" / "openai-sdk-timeout.jsonl").failed_attempts) == 1


def test_the_public_surface_is_what_all_says() -> None:
    import agentloops.diagnose as module

    public = {name for name in vars(module) if not name.startswith("_") and not isinstance(vars(module)[name],
                                                                                         type(module))}
    assert set(module.__all__) <= public
    assert {"diagnose", "findings_frame", "iter_findings", "Report", "Finding", "LogError"} <= set(module.__all__)


def test_the_findings_frame_keeps_english_details_and_shows_the_reports_sentences() -> None:
    from agentloops.i18n import shown_frame, speaking

    with speaking("zh"):
        report = diagnose(FIXTURES / "recordings" / "truncated.content.json")
        shown = shown_frame(report.to_frame())
    frame = report.to_frame()
    assert list(frame["detail"]) == [f.detail for f in report.findings]  # English: the JSON's detail
    assert list(shown["详情"]) == [f.shown for f in report.findings] and all(f.shown != f.detail for f in report.findings)
