"""The provider explorer: draws once with defaults, redraws on change, degrades to text tables."""

from __future__ import annotations

import pytest

from agentloops.providers import FORMATS
from agentloops.providers.widgets import (
    ProviderReport,
    criteria_rows,
    provider_explorer,
    provider_scenarios,
    report_html,
    report_text,
    rounds_rows,
)
from agentloops.scenario import load_scenario


def plain_text(widget) -> str:
    bundle = widget._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    return data["text/plain"]


def test_every_format_has_scenarios_to_pick():
    for format in FORMATS:
        assert [s.format for s in provider_scenarios(format)] == [format] * len(provider_scenarios(format))
        assert len(provider_scenarios(format)) >= 5


def test_rounds_show_the_raw_value_beside_the_normalised_one():
    rows = rounds_rows(load_scenario("anthropic-pause-turn"))
    assert [(r[1], r[2]) for r in rows] == [("pause_turn", "pause"), ("tool_use", "tool_calls"), ("end_turn", "stop")]
    assert rounds_rows(load_scenario("gemini-normal"))[0][4] == 'read_file({"path": "notes.txt"})'


def test_criteria_rows_are_computed_by_running_the_loop():
    rows = {r[0]: r for r in criteria_rows(load_scenario("gemini-normal"))}
    assert rows["finish_reason"][1:] == ["1", "read_file", "premature answer"]
    assert rows["correct"][1:] == ["3", "read_file count_lines", "answer"]
    assert criteria_rows(load_scenario("ollama-truncated"))[0][1] == "8 (cap)"


def test_the_explorer_draws_once_and_its_text_form_is_the_report():
    widget = provider_explorer()
    assert widget.scenario.name == "gemini-normal"
    text = plain_text(widget)
    assert text == report_text(load_scenario("gemini-normal"))
    assert "finish_reason  1      read_file              premature answer" in text
    assert "gemini-normal" in widget.children[1].value or "Gemini" in widget.children[1].value


def test_changing_provider_and_scenario_redraws():
    widget = provider_explorer("ollama")
    provider, picker = widget.children[0].children
    provider.value = "anthropic"
    assert widget.scenario.format == "anthropic" and widget.scenario.name == picker.value
    picker.value = "anthropic-refusal"
    assert "raises refusal" in widget.report() and "raises refusal" in widget.children[1].value
    round_pick, raw_view = widget.children[2], widget.children[3]
    assert "&quot;stop_reason&quot;: &quot;refusal&quot;" in raw_view.value
    assert list(round_pick.options) == [("round 1", 0)]


def test_a_scenario_given_by_name_opens_its_own_provider():
    widget = provider_explorer(scenario="openai-responses-failed")
    assert widget.children[0].children[0].value == "openai-responses"
    assert "raises provider_error" in widget.report()


def test_report_without_widgets_renders_text_and_html():
    report = ProviderReport(load_scenario("openai-chat-refusal"))
    assert str(report) == report_text(report.scenario) and repr(report) == str(report)
    assert report._repr_html_() == report_html(report.scenario)
    assert "<table>" in report._repr_html_() and "raises refusal" in report._repr_html_()


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"unknown provider format 'bard'"):
        provider_explorer("bard")
