"""compare(): the article's table, computed."""

from __future__ import annotations

import json

import pytest

from agentloops import UsageError, compare
from agentloops.comparison import compact


def test_default_compare_covers_article_and_extra_scenarios_under_four_criteria():
    table = compare()
    assert table.criteria == ("content", "finish_reason", "tool_calls", "correct")
    assert [s.group for s in table.scenarios][:4] == ["article"] * 4
    assert len(table.records) == 4 * len(table.scenarios)


def test_wide_table_reads_like_the_article():
    table = compare(["normal", "talk-and-call", "truncated", "talk-only"]).table()
    assert list(table.columns) == ["by content", "by finish_reason", "by tool_calls", "correct loop"]
    truncated = table.loc["a round cut off by max_tokens"]
    assert truncated["by content"] == "8 steps (cap)  tools[]  7 wasted calls"
    assert truncated["by tool_calls"] == "1 step  tools[]  empty answer"
    assert truncated["correct loop"] == "1 step  tools[]  raises truncated at call 1"
    assert table.loc["a round that talks and calls a tool"]["by content"].startswith("1 step  tools[read_file]")


@pytest.mark.parametrize("fmt", ["text", "markdown", "csv", "json"])
def test_every_format_renders(fmt):
    out = compare(["normal", "truncated"], ["content", "correct"]).render(fmt)
    assert ("raises truncated at call 1" in out) if fmt in ("text", "markdown") else ('"truncated"' in out
                                                                                     or ",truncated," in out)
    if fmt == "json":
        rows = json.loads(out)
        assert [(r["scenario"], r["criterion"], r["steps"]) for r in rows] == [
            ("normal", "content", 3), ("normal", "correct", 3), ("truncated", "content", 8), ("truncated", "correct", 1)]
    if fmt == "markdown":
        assert out.splitlines()[1] == "|---|---|---|"


def test_unknown_format():
    with pytest.raises(ValueError, match="unknown format 'yaml'"):
        compare(["normal"]).render("yaml")  # type: ignore[arg-type]


def test_custom_criterion_gets_its_own_column():
    def shouty(response):
        return bool(response.content) and response.finish_reason == "stop"

    table = compare(["talk-and-call"], ["content", shouty])
    assert table.criteria == ("content", "shouty")
    assert table.get("talk-and-call", "shouty").steps == 2


def test_long_form_frame_has_one_row_per_run():
    frame = compare(["normal", "truncated"]).to_frame()
    assert len(frame) == 8
    assert frame.set_index(["scenario", "criterion"]).loc[("truncated", "content"), "wasted_calls"] == 7


def test_compact_folds_runs():
    assert compact(["a", "a", "b", "a"]) == "a×2 b a"
    assert compact([]) == ""


@pytest.mark.parametrize(("scenarios", "criteria", "what"), [([], None, "scenario"), (None, [], "criterion")])
def test_empty_selections_are_usage_errors(scenarios, criteria, what):
    with pytest.raises(UsageError, match=f"compare needs at least one {what}"):
        compare(scenarios, criteria)


def test_a_comparison_of_one_run_renders_as_csv_and_as_indented_json():
    one = compare(["normal"], ["correct"])
    header, row = one.render("csv").splitlines()
    assert header.split(",")[:2] == list(one.records[0].to_dict(rounds=False))[:2] and row
    text = one.render("json")
    assert json.loads(text)[0]["scenario"] == "normal" and text.splitlines()[1].startswith("  {")
    assert not text.splitlines()[1].startswith("   ")
