"""The field catalogue: every case through the correct loop reaches its stated verdict; the files stay honest."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlparse

import pytest

from agentloops.errors import ScenarioError
from agentloops.providers.field import FIELD_HEADERS, LOOPS, field_cases, field_row, read_case, render_field_table

CASES = field_cases()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_correct_loop_reaches_every_cases_stated_verdict(case) -> None:
    row = field_row(case)
    assert row.verdict("correct") == case.expected, row.records["correct"].error_message
    if case.expected != "answer":
        assert row.records["correct"].rounds[-1].tools_run == ()  # the abnormal round's calls never run
    assert row.ours_right


def test_the_catalogue_is_as_wide_as_the_issue_asks() -> None:
    assert len(CASES) >= 12
    hosts = {urlparse(url).path.split("/")[1] if urlparse(url).netloc == "github.com" else urlparse(url).netloc
             for case in CASES for url in case.sources}
    assert len(hosts) >= 8, hosts
    assert sum(case.streamed for case in CASES) >= 5
    assert {case.scenario.format for case in CASES} >= {"openai-chat", "anthropic", "gemini", "ollama"}
    finishes = {r.raw_finish_reason for case in CASES for r in case.scenario.responses}
    assert {"tool", "abort", "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "max_tokens"} <= finishes


def test_the_article_loop_falls_short_where_the_field_says() -> None:
    short = {case.name for case in CASES if not field_row(case).article_right}
    assert {"vllm-stream-cut-call-says-tool-calls", "stream-without-finish-reason", "gemini-malformed-function-call",
            "tool-call-written-as-text-ollama", "reasoning-ate-the-budget-says-stop"} <= short
    assert "anthropic-max-tokens-inside-tool-use" not in short  # its two checks do catch a plain max_tokens


def test_the_rendered_table_has_every_loop_and_case() -> None:
    text = render_field_table()
    assert all(header in text.splitlines()[0] for header in FIELD_HEADERS)
    assert len(text.splitlines()) == len(CASES) + 2 and len(LOOPS) == 5


def test_a_malformed_case_is_one_line_naming_the_file(tmp_path: Path) -> None:
    data = json.loads(next(Path(__file__).parents[1].glob("data/field/01-*.json")).read_text())
    path = tmp_path / "case.json"
    path.write_text(json.dumps({**data, "sources": ["github.com/x"]}))
    with pytest.raises(ScenarioError, match=r"case\.json: sources.*expected an https:// URL"):
        read_case(path)
    path.write_text(json.dumps({**data, "expected": "fine"}))
    with pytest.raises(ScenarioError, match=r"case\.json: expected"):
        read_case(path)
    data["scenario"]["responses"] = [{"stream": 3}]
    path.write_text(json.dumps(data))
    with pytest.raises(ScenarioError, match=r"case\.json: scenario.*stream: expected a list of chunks"):
        read_case(path)


def test_a_cases_texts_and_answers_are_shown_in_chinese() -> None:
    from agentloops.i18n import shown, speaking
    from agentloops.providers.field import field_table

    first = field_cases()[0]
    row = next(r for r in field_table() if r.case.name == "filter-cuts-partial-text")
    with speaking("zh"):
        assert shown(first.server).startswith("vLLM（兼容 OpenAI")
        assert any("纪要里列了两项行动" in cell for cell in row.cells())
    assert first.server.startswith("vLLM (OpenAI-compatible")
    with speaking("en"):
        assert any("The notes list two" in cell for cell in row.cells())
