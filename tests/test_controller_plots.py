"""Controller charts: drawn from runs, one colour per status, labelled, closed, and honest about the data."""

from __future__ import annotations

import subprocess
import sys

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

import agentloops.controller as ctl
from agentloops.controller.teaching import plots
from agentloops.controller.teaching.widgets import storm_rows, storm_runs
from agentloops.plots import OKABE_ITO, OTHER_COLOR


@pytest.fixture(scope="module")
def runs() -> dict[str, ctl.ControllerRun]:
    names = ("weather-normal", "weather-no-state", "weather-timeout-always", "research-parallel",
             "research-compaction-careless", "research-compaction-checked")
    return {name: ctl.run_scenario(name) for name in names}


@pytest.fixture(scope="module")
def charts(runs: dict[str, ctl.ControllerRun]) -> dict[str, Figure]:
    storm = storm_runs(2, 3)
    comparison = ctl.compare_loops(20, seed=0)
    return {
        "state": plots.state_chart({"with state": runs["weather-normal"], "without": runs["weather-no-state"]}),
        "budget": plots.budget_chart(runs["weather-timeout-always"]),
        "run": plots.run_chart(runs["weather-timeout-always"]),
        "retry": plots.retry_chart(storm),
        "storm": plots.storm_chart(storm_rows(2, 3)),
        "histograms": plots.loop_histograms(comparison, step_budget=6),
        "claims": plots.claims_chart({"naive": {"verified": 3, "unverified": 2}, "default": {"verified": 5}}),
        "gantt": plots.gantt_chart(runs["research-parallel"]),
        "context": plots.context_chart({"careless": runs["research-compaction-careless"],
                                        "checked": runs["research-compaction-checked"]}, budget=3000),
        "diff": plots.trace_diff_chart(ctl.replay(runs["weather-timeout-always"], policy="naive")),
    }


def test_importing_the_module_does_not_import_matplotlib_or_pandas() -> None:
    code = ("import sys, agentloops.controller.teaching.plots; "
            "bad = [m for m in ('matplotlib', 'pandas', 'ipywidgets') if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_stop_status_has_its_own_colour_and_hatch() -> None:
    assert set(plots.STATUS_COLORS) == set(ctl.STOP_STATUSES) == set(plots.STATUS_HATCHES)
    assert len(set(plots.STATUS_COLORS.values())) == len(plots.STATUS_COLORS)
    assert set(plots.STATUS_COLORS.values()) <= {*OKABE_ITO.values(), OTHER_COLOR}
    assert len(set(plots.STATUS_HATCHES.values())) == len(plots.STATUS_HATCHES)
    assert plots.status_color("something else") == OTHER_COLOR
    assert set(plots.POLICY_COLORS) == set(ctl.POLICIES)


def test_charts_are_figures_closed_in_pyplot(runs: dict[str, ctl.ControllerRun]) -> None:
    before = set(plt.get_fignums())
    figures = [plots.state_chart(runs["weather-normal"]), plots.gantt_chart(runs["research-parallel"])]
    assert set(plt.get_fignums()) == before
    assert all(isinstance(f, Figure) for f in figures)


def test_every_chart_has_labelled_axes_and_a_projector_sized_title(charts: dict[str, Figure]) -> None:
    for name, fig in charts.items():
        assert isinstance(fig, Figure), name
        titles = [fig._suptitle.get_text()] if fig._suptitle is not None else []
        titles += [ax.get_title() for ax in fig.axes]
        assert any(titles), f"{name} has no title"
        for ax in fig.axes:
            assert ax.get_xlabel() and ax.get_ylabel(), f"{name}: an axis without a label"
        sizes = [ax.title.get_fontsize() for ax in fig.axes if ax.get_title()]
        if fig._suptitle is not None:
            sizes.append(fig._suptitle.get_fontsize())
        assert max(sizes) >= 14, name


def test_state_chart_draws_the_measured_versions_and_missing_items(runs: dict[str, ctl.ControllerRun]) -> None:
    fig = plots.state_chart({"without state": runs["weather-no-state"]})
    version_ax, open_ax = fig.axes
    versions = list(version_ax.lines[0].get_ydata())
    assert versions == [0, *(t.state_version_after for t in runs["weather-no-state"].turns)] == [0, 1, 2, 2, 2, 2]
    assert list(open_ax.lines[0].get_ydata()) == [2, 1, 0, 0, 0, 0]
    crosses = [line for line in version_ax.lines if line.get_marker() == "x"]
    assert list(crosses[0].get_xdata()) == [3, 4, 5]
    assert to_hex(version_ax.lines[0].get_color()) == plots.status_color("no_progress").lower()


def test_state_chart_lines_never_hide_each_other(runs: dict[str, ctl.ControllerRun]) -> None:
    fig = plots.state_chart({"with state": runs["weather-normal"], "without state": runs["weather-no-state"]})
    for ax in fig.axes:
        first, second = (line for line in ax.lines if line.get_marker() != "x")
        assert set(first.get_xdata()) & set(second.get_xdata()) == set()  # shifted sideways
        assert first.get_linestyle() != second.get_linestyle()
    assert not fig.axes[0].texts and not fig.axes[1].texts  # statuses are in the legend, not on the lines
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "with state → succeeded" in legend and "without state → no_progress" in legend


def test_run_chart_plots_the_progress_version(runs: dict[str, ctl.ControllerRun]) -> None:
    run = runs["weather-no-state"]
    line = plots.run_chart(run).axes[0].lines[0]
    assert list(line.get_ydata()) == plots.progress_versions(run) == [0, 1, 2, 2, 2, 2]
    assert plots.progress_versions(runs["weather-normal"])[-1] == 2


def test_idle_crosses_skip_the_accepted_answer(runs: dict[str, ctl.ControllerRun]) -> None:
    fig = plots.state_chart(runs["weather-normal"])
    assert not [line for line in fig.axes[0].lines if line.get_marker() == "x"]


def test_budget_chart_marks_the_budget_that_stopped_the_run(runs: dict[str, ctl.ControllerRun]) -> None:
    fig = plots.budget_chart(runs["weather-timeout-always"])
    ax = fig.axes[0]
    bars = ax.patches
    retries = bars[ctl.BUDGET_NAMES.index("retries")]
    assert retries.get_width() == pytest.approx(100.0)
    assert to_hex(retries.get_facecolor()) == plots.STATUS_COLORS["budget_exhausted"].lower()
    assert "retries budget" in ax.get_title()
    labels = [t.get_text() for t in ax.texts]
    assert "3 / 3" in labels and "5 / 8" in labels


def test_budget_chart_uses_the_budget_the_run_ran_under() -> None:
    run = ctl.run_scenario("weather-normal", budget=ctl.make_task("weather_compare").budget.with_values(steps=4))
    labels = [t.get_text() for t in plots.budget_chart(run).axes[0].texts]
    assert "3 / 4" in labels


def test_retries_spent_counts_retries_and_fallback_switches(runs: dict[str, ctl.ControllerRun]) -> None:
    spent = plots.retries_spent(runs["weather-timeout-always"])
    assert spent == [0, 0, 1, 2, 3]
    assert spent[-1] == runs["weather-timeout-always"].usage["retries"]


def test_retry_chart_draws_the_shared_budget_and_both_scopes() -> None:
    storm = storm_runs(2, 3)
    fig = plots.retry_chart(storm)
    left = fig.axes[0]
    assert any(list(line.get_ydata()) == [3, 3] for line in left.lines)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("3 retries" in t for t in legend) and "the task's retry budget = 3" in legend and any("7 retries" in t for t in legend)


def test_storm_chart_needs_rows() -> None:
    with pytest.raises(ValueError, match="no storm rows"):
        plots.storm_chart([])


def _text_over_bars(fig: Figure) -> list[str]:
    """Texts whose box overlaps a bar that is not their own (a label belongs beside or above its bar)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    bad = []
    for ax in fig.axes:
        bars = [p.get_window_extent(renderer) for p in ax.patches if p.get_width() and p.get_height()]
        for text in ax.texts:
            box = text.get_window_extent(renderer).shrunk(0.9, 0.9)
            if any(box.overlaps(b) and b.width > 1 and b.height > 1 for b in bars):
                bad.append(text.get_text())
    return bad


def test_no_label_sits_on_a_bar(charts: dict[str, Figure]) -> None:
    for name in ("histograms", "claims", "gantt", "budget", "retry"):
        assert _text_over_bars(charts[name]) == [], name


def test_loop_histograms_draw_both_loops_side_by_side() -> None:
    comparison = ctl.compare_loops(20, seed=0)
    fig = plots.loop_histograms(comparison, step_budget=comparison.cap)
    steps = fig.axes[1]
    assert not steps.texts  # the cap is a legend entry
    legend = [t.get_text() for t in steps.get_legend().get_texts()]
    assert any("= controller step budget" in t for t in legend)  # one line when cap and budget coincide
    frame = comparison.to_frame()
    bars = sorted(((p.get_x(), p.get_height()) for p in steps.patches), key=lambda xy: xy[0])
    cap_only = [h for x, h in bars if (x + 0.2) % 1 > 0.5]
    assert sum(cap_only) == len(frame) and sum(h for _, h in bars) == 2 * len(frame)


def test_loop_histograms_accepts_a_comparison_or_its_frame_and_rejects_other_frames() -> None:
    import pandas as pd

    comparison = ctl.compare_loops(10, seed=3)
    assert isinstance(plots.loop_histograms(comparison.to_frame(), cap=8), Figure)
    with pytest.raises(ValueError, match="'ctl_status' is missing"):
        plots.loop_histograms(pd.DataFrame({"cap_outcome": [], "cap_steps": [], "ctl_steps": []}))


def test_gantt_chart_shows_states_late_and_duplicate_results(runs: dict[str, ctl.ControllerRun]) -> None:
    fig = plots.gantt_chart(runs["research-parallel"])
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks == ["fetch(s1)\nsucceeded", "fetch(s2)\nfailed", "fetch(s3)\nsucceeded", "fetch(s4)\nignored"]
    assert not ax.texts, "no text on the timeline: the markers are explained in the legend"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"late: recorded, ignored", "duplicate: applied once", "stop at 4.5 s: succeeded"} <= set(legend)
    stop = [line for line in ax.lines if list(line.get_xdata()) == [4.5, 4.5]]
    assert stop, "the stop line is at the stop time"


def test_gantt_chart_of_a_run_without_tool_calls_says_so() -> None:
    with pytest.raises(ValueError, match="made no tool calls"):
        plots.gantt_chart(ctl.run_scenario("refund-handoff"))


def test_context_chart_switches_to_a_log_scale_when_one_run_dwarfs_another() -> None:
    from agentloops.controller.teaching.widgets import context_run

    small = context_run(150, 300, label="compaction")
    big = context_run(None, None, label="no storage")
    assert max(t.context_tokens for t in big.turns) > plots.LOG_SCALE_RATIO * max(t.context_tokens
                                                                                   for t in small.turns)
    assert plots.context_chart({"a": small, "b": big}).axes[0].get_yscale() == "log"
    assert plots.context_chart({"a": small}).axes[0].get_yscale() == "linear"
    assert plots.context_chart({"a": small}, budget=3000).axes[0].get_yscale() == "log"


def test_context_chart_marks_compactions(runs: dict[str, ctl.ControllerRun]) -> None:
    fig = plots.context_chart({"checked": runs["research-compaction-checked"]})
    triangles = [line for line in fig.axes[0].lines if line.get_marker() == "v" and len(line.get_xdata())]
    assert list(triangles[0].get_xdata()) == [c.turn for c in runs["research-compaction-checked"].compactions]


def test_trace_diff_chart_of_an_exact_replay_has_one_lane(runs: dict[str, ctl.ControllerRun]) -> None:
    same = ctl.replay(runs["weather-timeout-always"], policy="default")
    assert same.diff.same
    fig = plots.trace_diff_chart(same)
    ax = fig.axes[0]
    assert len(ax.get_yticks()) == 1
    assert len(ax.patches) == len(same.diff.before_actions)
    assert "exactly" in fig._suptitle.get_text() and same.diff.summary() not in fig._suptitle.get_text()


def test_trace_diff_title_says_what_changed_in_words(runs: dict[str, ctl.ControllerRun]) -> None:
    degraded = ctl.replay(runs["weather-timeout-always"], policy="degrade")
    title = " ".join(plots.trace_diff_chart(degraded)._suptitle.get_text().split())
    assert "the same 5 actions" in title and "budget_exhausted → partially_completed" in title
    assert degraded.diff.summary() not in title
    naive = ctl.replay(runs["weather-timeout-always"], policy="naive")
    assert f"part at action {naive.diff.first_divergence + 1}" in plots.diff_headline(naive.diff)


def test_trace_diff_chart_outlines_the_positions_that_differ(runs: dict[str, ctl.ControllerRun]) -> None:
    replayed = ctl.replay(runs["weather-timeout-always"], policy="naive")
    fig = plots.trace_diff_chart(replayed)
    boxes = [p for p in fig.axes[0].patches if p.get_linewidth() > 3]
    a, b = replayed.diff.before_actions, replayed.diff.after_actions
    differing = sum(1 for i, x in enumerate(a) if i >= len(b) or b[i] != x) + sum(
        1 for i, x in enumerate(b) if i >= len(a) or a[i] != x)
    assert differing > 0 and len(boxes) == differing


@pytest.mark.parametrize(("label", "kind"), [
    ("get_weather(city=Beijing)", "call"), ("retry:get_weather(city=Beijing)", "retry"),
    ("fallback:weather_backup(city=Beijing)", "fallback"), ("blocked:fetch(source_id=s1)", "blocked"),
    ("answer", "answer"), ("ask_user", "ask_user"), ("db_write(table=refunds, values={\"a\": 1})", "call"),
])
def test_action_kind(label: str, kind: str) -> None:
    assert plots.action_kind(label) == kind


def test_labelled_runs_need_controller_runs() -> None:
    with pytest.raises(ValueError, match="no controller runs"):
        plots.state_chart([])
    with pytest.raises(TypeError, match="expected a ControllerRun"):
        plots.state_chart({"oops": "weather-normal"})  # type: ignore[dict-item]


def test_live_chart_redraws_in_place_and_returns_a_png(runs: dict[str, ctl.ControllerRun]) -> None:
    chart = plots.LiveRunChart()
    first = chart.update(runs["weather-normal"])
    second = chart.update(runs["weather-timeout-always"])
    assert first.startswith(b"\x89PNG") and second.startswith(b"\x89PNG") and first != second
    assert chart.figure.texts[0].get_text().startswith("weather-timeout-always [default]: budget_exhausted")
    assert chart.update(runs["weather-normal"]) == first  # deterministic: the same run draws the same picture
    assert plots.to_png(plots.state_chart(runs["weather-normal"])).startswith(b"\x89PNG")
