"""Charts: drawn from the records, one colour per criterion, labelled, closed, readable."""

from __future__ import annotations

import subprocess
import sys

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.text import Text

import agentloops as al
from agentloops import plots, retry

ARTICLE = al.scenario_names(["article"])


@pytest.fixture(scope="module")
def article() -> al.Comparison:
    return al.compare(ARTICLE)


@pytest.fixture(scope="module")
def truncated_records() -> list[al.RunRecord]:
    return [al.run("truncated", c) for c in al.CRITERION_NAMES]


def _charts(article: al.Comparison, truncated_records: list[al.RunRecord]) -> dict[str, Figure]:
    return {
        "steps": plots.steps_chart(article),
        "wasted": plots.wasted_chart(article),
        "context": plots.context_chart(truncated_records),
        "billed": plots.billed_chart(truncated_records),
        "metric": plots.metric_chart(article, "billed_prompt_tokens"),
        "retry": plots.retry_chart(retry.compare_policies()),
    }


def test_importing_the_package_and_plots_does_not_import_matplotlib() -> None:
    code = ("import sys, agentloops, agentloops.plots, agentloops.retry; "
            "bad = [m for m in ('matplotlib', 'ipywidgets', 'pandas') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_one_okabe_ito_colour_per_criterion() -> None:
    assert list(plots.CRITERION_COLORS) == list(al.CRITERION_NAMES)
    assert set(plots.CRITERION_COLORS.values()) <= set(plots.OKABE_ITO.values())
    assert len(set(plots.CRITERION_COLORS.values())) == len(plots.CRITERION_COLORS)
    assert not set(plots.POLICY_COLORS.values()) & set(plots.CRITERION_COLORS.values())
    assert len({style for style, _ in plots.CRITERION_STYLES.values()}) == len(plots.CRITERION_STYLES)
    assert plots.criterion_color("my_own_test") == plots.OTHER_COLOR


def test_charts_are_figures_closed_in_pyplot(article: al.Comparison, truncated_records: list[al.RunRecord]) -> None:
    before = set(plt.get_fignums())
    charts = _charts(article, truncated_records)
    assert set(plt.get_fignums()) == before
    for name, fig in charts.items():
        assert isinstance(fig, Figure), name
        fig.canvas.draw()  # still drawable after being closed


def test_every_axes_is_labelled_and_every_chart_has_a_message(article: al.Comparison,
                                                             truncated_records: list[al.RunRecord]) -> None:
    for name, fig in _charts(article, truncated_records).items():
        titles = [ax.get_title() for ax in fig.axes] + [fig._suptitle.get_text() if fig._suptitle else ""]
        assert any(titles), name
        for ax in fig.axes:
            assert ax.get_ylabel(), f"{name}: a y axis without a label"
            assert ax.get_xlabel() or ax.get_xticklabels(), f"{name}: an x axis without labels"


def test_text_is_projector_sized(article: al.Comparison, truncated_records: list[al.RunRecord]) -> None:
    for name, fig in _charts(article, truncated_records).items():
        fig.canvas.draw()
        sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
        assert sizes and min(sizes) >= 11, f"{name}: smallest text {min(sizes)} pt"


def test_steps_chart_bars_are_the_records(article: al.Comparison) -> None:
    fig = plots.steps_chart(article)
    ax = fig.axes[0]
    # each (scenario, criterion) is a solid bar (useful calls) plus, when calls were wasted, a hatched one on top
    solid = [p for p in ax.patches if not p.get_hatch()]
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(solid) == len(article.records)
    assert sum(p.get_height() for p in hatched) == sum(r.wasted_calls for r in article.records)
    assert sum(p.get_height() for p in ax.patches) == sum(r.steps for r in article.records)
    colours = {to_hex(p.get_facecolor()) for p in solid}
    assert colours == {c.lower() for c in plots.CRITERION_COLORS.values()}
    cap_lines = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert [line.get_ydata()[0] for line in cap_lines] == [al.DEFAULT_MAX_STEPS]


def test_steps_chart_uses_each_criterions_colour_for_its_bars() -> None:
    records = [al.run("normal", c) for c in al.CRITERION_NAMES]
    ax = plots.steps_chart(records).axes[0]
    bars = sorted((p for p in ax.patches if not p.get_hatch()), key=lambda p: p.get_x())
    assert [to_hex(p.get_facecolor()) for p in bars] == [plots.CRITERION_COLORS[c].lower() for c in al.CRITERION_NAMES]


def test_context_chart_lines_follow_the_records(truncated_records: list[al.RunRecord]) -> None:
    ax = plots.context_chart(truncated_records).axes[0]
    lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
    for record in truncated_records:
        line = lines[record.criterion]
        assert list(line.get_ydata()) == list(record.context_tokens)
        assert to_hex(line.get_color()) == plots.CRITERION_COLORS[record.criterion].lower()
        assert line.get_linestyle() == plots.CRITERION_STYLES[record.criterion][0]
    crosses = [line for line in ax.get_lines() if line.get_marker() == "x" and line.get_label().startswith("_")]
    assert sum(len(line.get_xdata()) for line in crosses) == sum(r.wasted_calls for r in truncated_records)
    assert "wasted call" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_billed_chart_stacks_prompt_and_completion(truncated_records: list[al.RunRecord]) -> None:
    ax = plots.billed_chart(truncated_records).axes[0]
    heights = [p.get_height() for p in ax.patches]
    expected = [v for r in truncated_records for v in (r.billed_prompt_tokens, r.billed_completion_tokens)]
    assert heights == expected


def test_retry_chart_shows_calls_and_tokens_of_both_policies() -> None:
    policies = retry.compare_policies()
    fig = plots.retry_chart(policies)
    calls_ax, tokens_ax = fig.axes
    order = [(c, p) for p in ("blind_retry", "right_response") for c in policies.case_names()]
    assert [p.get_height() for p in calls_ax.patches] == [policies.get(c, p).calls for c, p in order]
    assert [p.get_height() for p in tokens_ax.patches] == [policies.get(c, p).tokens for c, p in order]
    failed = [p for p in calls_ax.patches if p.get_hatch()]
    assert len(failed) == sum(not r.succeeded for r in policies.results)


def test_custom_criterion_is_drawn_in_grey() -> None:
    record = al.run("normal", lambda response: not response.tool_calls)
    ax = plots.context_chart([record]).axes[0]
    assert to_hex(ax.get_lines()[0].get_color()) == plots.OTHER_COLOR


def test_bad_input_gets_one_clear_error(article: al.Comparison) -> None:
    with pytest.raises(ValueError, match="unknown metric 'speed'; expected one of: steps"):
        plots.metric_chart(article, "speed")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="nothing to plot: no run records were given"):
        plots.steps_chart([])
    with pytest.raises(TypeError, match=r"expected run records \(from agentloops.run or compare\); got str"):
        plots.context_chart(["truncated"])  # type: ignore[list-item]


def test_live_chart_redraws_what_changed() -> None:
    chart = plots.LiveChart()
    spin = {c: al.run("truncated", c) for c in al.CRITERION_NAMES}
    normal = {c: al.run("normal", c) for c in al.CRITERION_NAMES}
    first = chart.update(spin, 8, "content")
    assert first.startswith(b"\x89PNG")
    assert chart.update(spin, 8, "content") == first  # deterministic
    assert chart.update(normal, 8, "content") != first
    assert chart.update(spin, 8, "correct") != first  # the highlight moved
    assert chart.update(spin, 5, "content") != first  # the cap line moved
    chart.update(spin, 8, "content")
    useful = [bar.get_height() for bar in chart._useful]
    wasted = [bar.get_height() for bar in chart._wasted]
    assert [u + w for u, w in zip(useful, wasted, strict=True)] == [spin[c].steps for c in al.CRITERION_NAMES]
    assert wasted == [spin[c].wasted_calls for c in al.CRITERION_NAMES]


def test_live_chart_draws_missing_criteria_as_zero() -> None:
    chart = plots.LiveChart()
    chart.update({"content": al.run("normal", "content")}, 8)
    assert [bar.get_height() for bar in chart._useful][1:] == [0, 0, 0]


# --------------------------------------------------------------------------- what the Part-1 charts must never do


def _legend_texts(ax) -> list[str]:  # type: ignore[no-untyped-def]
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


def test_steps_chart_legend_holds_only_what_the_chart_draws() -> None:
    happy = plots.steps_chart(al.compare(["normal", "talk-only"])).axes[0]
    assert "wasted calls" not in _legend_texts(happy) and "raised an error (n!)" not in _legend_texts(happy)
    assert "step cap = 8" in _legend_texts(happy)
    everything = plots.steps_chart(al.compare()).axes[0]
    assert {"wasted calls", "raised an error (n!)", "step cap = 8"} <= set(_legend_texts(everything))


def test_steps_chart_tells_raised_from_answered_and_labels_no_cap_inside_the_plot() -> None:
    comparison = al.compare()
    ax = plots.steps_chart(comparison).axes[0]
    raised = [comparison.get(s.name, c) for s in comparison.scenarios for c in comparison.criteria
              if comparison.get(s.name, c).error is not None]
    marked = [t for t in ax.texts if t.get_text().endswith("!")]
    assert raised and len(marked) == len(raised)
    outlined = [p for p in ax.patches if not p.get_hatch() and to_hex(p.get_edgecolor()) == "#000000"]
    assert len(outlined) == len(raised)
    assert not [t for t in ax.texts if "cap" in t.get_text()], "a cap label inside the axes collides with bars"


def test_wasted_chart_draws_no_empty_panel() -> None:
    only_tool_runs = plots.wasted_chart(al.compare(["talk-and-call", "tool-call-with-stop"]))
    assert [ax.get_title() for ax in only_tool_runs.axes] == ["Tool results never sent back"]
    both = plots.wasted_chart(al.compare(["talk-and-call", "truncated"]))
    assert len(both.axes) == 2
    nothing = plots.wasted_chart(al.compare(["normal"]))
    assert [ax.get_title() for ax in nothing.axes] == ["No run wasted a call or a tool result"]


def test_context_chart_keeps_coinciding_runs_side_by_side(truncated_records: list[al.RunRecord]) -> None:
    assert truncated_records[0].context_tokens == truncated_records[1].context_tokens  # content and finish_reason
    ax = plots.context_chart(truncated_records).axes[0]
    lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
    xs = {c: tuple(lines[c].get_xdata()) for c in al.CRITERION_NAMES}
    assert len({x[0] for x in xs.values()}) == 4, "four runs drawn at the same x hide each other"
    assert all(abs(x[0] - 1) < 0.5 for x in xs.values())  # still at call 1
    one = plots.context_chart(truncated_records[:1]).axes[0].get_lines()[0]
    assert list(one.get_xdata()) == list(range(1, truncated_records[0].steps + 1))  # a single run is not shifted


def test_live_chart_legend_sits_outside_every_panel() -> None:
    chart = plots.LiveChart()
    assert all(ax.get_legend() is None for ax in chart.figure.axes)
    assert len(chart.figure.legends) == 1


def test_chart_fonts_exist_and_chinese_text_draws_without_a_warning() -> None:
    from matplotlib import font_manager

    present = {entry.name for entry in font_manager.fontManager.ttflist}
    assert set(plots.installed_fonts()) <= present | {"DejaVu Sans"}
    if not any("CJK" in family for family in plots.installed_fonts()):
        pytest.skip("no CJK font installed (Debian: apt-get install fonts-noto-cjk; .ci/run installs it)")
    figure = plots.steps_chart(al.compare(["normal"]), title="终止判据 · 步数上限")
    figure.canvas.draw()  # warnings are errors: a missing glyph fails here
