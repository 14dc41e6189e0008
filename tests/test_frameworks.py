"""The framework table: shipped data that renders without the extra, recomputed when the extra is installed."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from agentloops.frameworks import (
    REFERENCE,
    RUNNERS,
    SCENARIOS,
    SLOW,
    FrameworksError,
    FrameworkTable,
    Outcome,
    add_commands,
    compute_table,
    installed,
    langgraph_cap_behaviour,
    merge_slow,
    shipped_table,
)
from agentloops.frameworks.table import CAP_SWEEP_LIMITS, cell, reference_outcome


def essentials(outcome: Outcome) -> tuple[object, ...]:
    """What must not drift: calls, tools, what the caller got, and which exception (not its wording)."""
    kind = outcome.detail.split(":")[0] if outcome.got == "exception" else outcome.got
    return (outcome.framework, outcome.limit, outcome.scenario, outcome.model_calls, outcome.tools_run, outcome.got,
            kind)


def test_the_shipped_table_has_every_framework_at_two_caps_on_every_scenario_with_its_version() -> None:
    table = shipped_table()
    assert table.scenarios == SCENARIOS
    assert table.frameworks() == [REFERENCE, *RUNNERS]
    for name in RUNNERS:
        limits = table.limits(name)
        assert len(limits) == 2 and limits[0] == "default" and "=" in limits[1]
        for limit in limits:
            for scenario in SCENARIOS:
                outcome = table.get(name, scenario, limit)
                assert outcome is not None and outcome.version
    for row, (name, limit) in zip(table.rows(), table.setups()):
        suffix = "" if limit == "default" else f" [{limit}]"
        assert row[0] == f"{name} {table.get(name, 'normal', limit).version}{suffix}"  # type: ignore[union-attr]
        assert "(not computed)" not in row


def test_every_framework_agrees_on_the_normal_run() -> None:
    table = shipped_table()
    for name, limit in table.setups():
        normal = table.get(name, "normal", limit)
        assert normal is not None
        assert (normal.model_calls, normal.tools_run, normal.got) == (3, ("read_file", "count_lines"), "answer")


def test_the_prebuilt_agents_cap_raises_at_some_limits_and_answers_at_others() -> None:
    table = shipped_table()
    assert [int(o.limit.split("=")[1]) for o in table.cap_sweep] == list(CAP_SWEEP_LIMITS)
    behaviour = langgraph_cap_behaviour(table)
    assert behaviour.raises_at and behaviour.answers_at
    assert set(behaviour.raises_at) | set(behaviour.answers_at) == set(CAP_SWEEP_LIMITS)
    assert behaviour.error == "GraphRecursionError"
    assert 10 in behaviour.answers_at and behaviour.answer == repr("Sorry, need more steps to process this request.")
    small = table.get("LangGraph prebuilt agent", "repeat-forever", "recursion_limit=10")
    assert small is not None and small.got == "answer" and small.detail == behaviour.answer
    sentence = behaviour.sentence()
    assert "GraphRecursionError" in sentence and "recursion_limit" in sentence and behaviour.version in sentence


def test_the_cap_behaviour_needs_a_sweep() -> None:
    empty = shipped_table().model_copy(update={"cap_sweep": ()})
    with pytest.raises(FrameworksError, match="no cap sweep"):
        langgraph_cap_behaviour(empty)


def test_a_table_without_the_slow_runs_keeps_the_shipped_cells_in_place() -> None:
    shipped = shipped_table()
    fast = shipped.model_copy(update={"outcomes": tuple(
        o for o in shipped.outcomes if not ((o.framework, o.scenario) in SLOW and o.limit == "default"))})
    assert len(fast.outcomes) == len(shipped.outcomes) - len(SLOW)
    assert merge_slow(fast, shipped) == shipped


def test_the_reference_row_is_recomputed_without_the_extra() -> None:
    shipped = shipped_table()
    for scenario in SCENARIOS:
        expected = shipped.get(REFERENCE, scenario)
        assert expected is not None
        assert essentials(reference_outcome(scenario)) == essentials(expected)


@pytest.mark.parametrize("framework", list(RUNNERS))
def test_the_shipped_row_matches_a_fresh_run_of_the_framework(framework: str) -> None:
    version = installed(framework)
    if version is None:
        pytest.skip(f"{framework} is not installed: pip install 'agentloops[frameworks]' to recompute its row")
    shipped = shipped_table()
    shipped_version = shipped.get(framework, "normal").version  # type: ignore[union-attr]
    if version != shipped_version:
        pytest.skip(f"{framework} {version} is installed but the table was computed with {shipped_version}; "
                    "run agentloops frameworks --recompute --save")
    fresh = compute_table([framework])  # without the slow default-cap runs of SLOW
    computed = [o for o in fresh.outcomes if o.framework == framework]
    assert len(computed) == 2 * len(SCENARIOS) - sum(name == framework for name, _ in SLOW)
    for outcome in computed:
        assert essentials(outcome) == essentials(shipped.get(framework, outcome.scenario, outcome.limit))  # type: ignore[arg-type]
    assert [essentials(o) for o in fresh.cap_sweep] == [essentials(o) for o in shipped.cap_sweep
                                                       if o.framework == framework]


def test_a_framework_that_is_unknown_or_missing() -> None:
    with pytest.raises(FrameworksError, match="unknown framework 'CrewAI'"):
        compute_table(["CrewAI"])
    missing = [name for name in RUNNERS if installed(name) is None]
    if missing:
        with pytest.raises(FrameworksError, match=r"is not installed; pip install 'agentloops\[frameworks\]'"):
            compute_table(missing[:1])


def test_cells_say_calls_tools_and_what_the_caller_got() -> None:
    base = {"framework": "F", "version": "1", "scenario": "s", "tools_run": ("read_file",)}
    assert cell(Outcome(**base, model_calls=1, got="empty answer", detail="''")) == \
        "1 call  tools[read_file]  empty answer"
    assert cell(Outcome(**base, model_calls=2, got="exception", detail="MaxTurnsExceeded: Max turns (10)")) == \
        "2 calls  tools[read_file]  raises MaxTurnsExceeded"
    assert cell(None) == "(not computed)"
    spin = Outcome(**{**base, "tools_run": ("read_file",) * 5004}, model_calls=5004, got="exception",
                   detail="GraphRecursionError: Recursion limit of 10007 reached")
    assert cell(spin) == "5004 calls  tools[read_file×5004]  raises GraphRecursionError"


def test_render_formats() -> None:
    table = shipped_table()
    assert table.render("markdown").startswith("| framework | normal | truncated |")
    assert FrameworkTable.model_validate_json(table.render("json")) == table
    assert len(table.to_frame()) == len(table.outcomes) == len(SCENARIOS) * (2 * len(RUNNERS) + 1)


def test_a_malformed_results_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text("{")
    with pytest.raises(FrameworksError, match=r"results\.json: not valid JSON"):
        shipped_table(path)
    data = json.loads(shipped_table().render("json"))
    data["outcomes"][0]["got"] = "maybe"
    path.write_text(json.dumps(data))
    with pytest.raises(FrameworksError, match=r"results\.json: outcomes\[0\]\.got: expected 'answer'"):
        shipped_table(path)
    with pytest.raises(FrameworksError, match="cannot read the framework results"):
        shipped_table(tmp_path / "missing.json")


def _cli(argv: list[str]) -> str:
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers())
    args = parser.parse_args(argv)
    return str(args.handler(args))


def test_cli_prints_the_shipped_table() -> None:
    text = _cli(["frameworks"])
    for name in RUNNERS:
        assert name in text
    assert _cli(["frameworks", "--format", "markdown"]).startswith("| framework |")


def test_cli_save_needs_recompute() -> None:
    with pytest.raises(FrameworksError, match="--save needs --recompute"):
        _cli(["frameworks", "--save"])
    with pytest.raises(FrameworksError, match="--full needs --recompute"):
        _cli(["frameworks", "--full"])


def test_the_table_in_chinese_with_its_json_in_english(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentloops.i18n import set_language

    for name in ("AGENTLOOPS_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        monkeypatch.delenv(name, raising=False)
    set_language("zh")
    try:
        base = {"framework": "F", "version": "1", "scenario": "s", "tools_run": ("read_file",)}
        assert cell(Outcome(**base, model_calls=1, got="empty answer", detail="''")) == "1 个调用  工具[read_file]  空回复"
        assert cell(Outcome(**base, model_calls=2, got="exception", detail="MaxTurnsExceeded: Max turns (10)")) == \
            "2 个调用  工具[read_file]  抛出 MaxTurnsExceeded"
        assert cell(Outcome(**base, model_calls=3, got="answer", detail="'42'")).endswith("回答")
        assert cell(None) == "（未计算）"
        table = shipped_table()
        assert table.render().startswith("框架") and table.render("markdown").startswith("| 框架 | normal | truncated |")
        assert FrameworkTable.model_validate_json(table.render("json")) == table
        assert max(table.render("json")) < "\u4e00", "the JSON stays English"
        assert _cli(["frameworks"]).startswith("框架")
        with pytest.raises(FrameworksError, match="--save 需要配合 --recompute"):
            _cli(["frameworks", "--save"])
        with pytest.raises(FrameworksError, match="未知的框架 'Haystack'"):
            compute_table(["Haystack"])
    finally:
        set_language(None)


def test_the_frames_got_is_the_english_value_shown_in_chinese() -> None:
    from agentloops.frameworks import shipped_table
    from agentloops.i18n import shown_frame, speaking

    frame = shipped_table().to_frame()
    assert set(frame["got"]) <= {"answer", "empty answer", "exception"}
    with speaking("zh"):
        shown = shown_frame(frame)
    assert {"回答", "抛出异常"} <= set(shown["拿到的结果"])
