"""Controller widgets, driven like a learner drives them: set a control, read what the widget shows."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from matplotlib.colors import to_hex

import agentloops.controller as ctl
from agentloops.controller.teaching import plots, widgets
from agentloops.controller.vocabulary.errors import ConfigError

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module", autouse=True)
def _no_working_ahead():
    """These tests read the charts' artists: no worker may draw other settings into a figure meanwhile (working
    ahead is tested in test_controller_prewarm.py)."""
    from agentloops.controller.teaching.widgets import panel

    before, panel.PREWARM = panel.PREWARM, False
    yield
    panel.PREWARM = before


@pytest.fixture(scope="module")
def explorer() -> widgets.ControllerExplorer:
    return widgets.controller_explorer()


@pytest.fixture
def fresh(explorer: widgets.ControllerExplorer) -> widgets.ControllerExplorer:
    """The shared explorer, back on its defaults (building one costs a chart)."""
    with explorer._sync():
        explorer.policy.value = widgets.SCENARIO_POLICY
        explorer.fault.value = "none"
        explorer.scenario.value = "weather-normal"
    explorer._load_budgets("weather-normal")
    explorer.refresh()
    return explorer


def _drawn(widget: widgets._Panel) -> widgets._Panel:
    """The widget with its chart drawn for the setting shown (a setting shown before is taken from the widget's
    views, drawn when it was first shown, so the figure may hold another setting since)."""
    widget._view(widget._key()[:-1])
    return widget


def test_importing_agentloops_does_not_import_the_widgets() -> None:
    code = ("import sys, agentloops, agentloops.controller; "
            "bad = [m for m in ('ipywidgets', 'matplotlib', 'agentloops.controller.teaching.widgets') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name", list(widgets.BUILDERS))
def test_every_widget_draws_once_and_degrades_to_text(name: str) -> None:
    widget = widgets.BUILDERS[name]()
    assert widget.state is not None
    bundle = widget._repr_mimebundle_()
    assert WIDGET_VIEW in bundle
    assert bundle["text/plain"] == widget.text() and len(widget.text()) > 100
    chart = getattr(widget, "chart", None)
    if chart is not None:
        assert bytes(chart.value).startswith(b"\x89PNG")


def test_controller_explorer_controls_carry_stable_css_classes(explorer: widgets.ControllerExplorer) -> None:
    for control, suffix in ((explorer.scenario, "scenario"), (explorer.policy, "policy"), (explorer.fault, "fault"),
                            (explorer.status, "status"), (explorer.table, "table"), (explorer.chart, "chart")):
        assert f"agentloops-ctl-{suffix}" in control._dom_classes
    assert all("agentloops-ctl-budget" in s._dom_classes for s in explorer.budgets.values())
    assert "agentloops-ctl-budget-wall-time-s" in explorer.budgets["wall_time_s"]._dom_classes
    assert "agentloops-ctl-explorer" in explorer._dom_classes


def test_defaults_show_the_normal_run_with_its_stop_rendered_twice(fresh: widgets.ControllerExplorer) -> None:
    run = fresh.state.run
    assert (run.label, run.status, fresh.state.fault) == ("weather-normal", "succeeded", "none")
    assert "succeeded" in fresh.status.value and "User message" in fresh.stop.value and "System record" in fresh.stop.value
    assert fresh.table.value.count("<tr") == len(run.turns) + 1
    assert "background:#fde9c9" in fresh.table.value  # turns that changed the state are highlighted
    assert {k: int(v) for k, v in fresh.state.budget.items()} == {"steps": 6, "tool_calls": 8, "retries": 3,
                                                                  "wall_time_s": 60}


def test_injecting_a_fault_changes_the_run_and_the_chart(fresh: widgets.ControllerExplorer) -> None:
    before = bytes(fresh.chart.value)
    fresh.fault.value = "timeout always"
    run = fresh.state.run
    assert (run.status, run.code) == ("budget_exhausted", "budget:retries")
    assert [f.kind for f in fresh.state.faults] == ["timeout", "timeout"]
    assert bytes(fresh.chart.value) != before
    assert "budget_exhausted" in fresh.text()
    fresh.policy.value = "degrade"
    assert fresh.state.run.status == "partially_completed" and fresh.state.policy == "degrade"


def test_budget_sliders_change_the_budget_the_run_spends(fresh: widgets.ControllerExplorer) -> None:
    fresh.fault.value = "timeout once"
    assert fresh.state.run.status == "succeeded"
    fresh.budgets["retries"].value = 0
    run = fresh.state.run
    assert (run.status, run.code) == ("budget_exhausted", "budget:retries") and run.usage["retries"] == 0


def test_picking_a_scenario_loads_its_budgets(fresh: widgets.ControllerExplorer) -> None:
    fresh.budgets["steps"].value = 2
    fresh.scenario.value = "order-missing-id"
    assert fresh.budgets["steps"].value == 4 and fresh.budgets["retries"].value == 2
    assert fresh.state.run.status == "waiting_for_user"


def test_every_stop_status_is_reachable_from_the_explorer(fresh: widgets.ControllerExplorer) -> None:
    seen = set()
    for scenario in ctl.controller_scenario_names():
        fresh.scenario.value = scenario
        seen.add(fresh.state.run.status)
    assert seen == set(ctl.STOP_STATUSES)


def test_the_explorer_says_which_argument_is_wrong() -> None:
    with pytest.raises(ConfigError, match="unknown scenario 'nope'; expected one of: weather-normal"):
        widgets.controller_explorer("nope")
    with pytest.raises(ConfigError, match="unknown fault 'flaky'"):
        widgets.controller_explorer(fault="flaky")
    with pytest.raises(ConfigError, match="unknown policy 'strict'"):
        widgets.controller_explorer(policy="strict")


@pytest.mark.parametrize("choice", widgets.SIX_FAULTS + widgets.OUR_FAULTS)
def test_each_of_the_six_faults_is_injected_into_the_last_item(choice: str) -> None:
    task = ctl.make_task("weather_compare")
    faults = widgets.inject(task, choice)
    assert faults and all(f.match == {"city": "Beijing"} for f in faults)
    run = ctl.Controller(task, ctl.TaskPlanner(task), faults=faults).run()
    assert run.stop.facts and run.stop.facts[0].item == "weather:Shanghai"  # the first city is kept
    assert run.status != "succeeded" or choice in ("timeout once", "format change")  # both recover


def test_the_six_faults_are_the_articles_and_ours_are_apart() -> None:
    kinds = [widgets.FAULT_CHOICES[name].kind for name in widgets.SIX_FAULTS]  # type: ignore[union-attr]
    # 一次超时、持续超时、空结果、参数错误、权限拒绝、格式变化
    assert kinds == ["timeout", "timeout", "empty", "reject_arguments", "permission_denied", "format_change"]
    assert [widgets.FAULT_CHOICES[n].times for n in widgets.SIX_FAULTS[:2]] == [1, None]  # type: ignore[union-attr]
    assert widgets.OUR_FAULTS == ("missing parameter",) and not set(widgets.OUR_FAULTS) & set(widgets.SIX_FAULTS)


def test_inject_knows_its_menu() -> None:
    task = ctl.make_task("weather_compare")
    assert widgets.inject(task, "none") == ()
    assert [f.tool for f in widgets.inject(task, "timeout always")] == ["get_weather", "weather_backup"]
    assert widgets.fault_target(ctl.make_task("order_status")) == ("lookup_order", {})
    with pytest.raises(ConfigError, match="unknown fault 'boom'; expected one of: none, timeout once"):
        widgets.inject(task, "boom")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenario=st.sampled_from(["weather-normal", "order-missing-id", "research-parallel", "recall-none-found",
                                 "document-not-found"]),
       fault=st.sampled_from(list(widgets.FAULT_CHOICES)), policy=st.sampled_from(list(ctl.POLICIES)),
       retries=st.integers(0, 4), steps=st.integers(1, 8))
def test_any_setting_ends_in_a_status_within_budget(scenario: str, fault: str, policy: str, retries: int,
                                                    steps: int) -> None:
    loaded = ctl.load_controller_scenario(scenario)
    task = loaded.build_task().with_budget(retries=retries, steps=steps)
    faults = widgets.inject(task, fault) + tuple(loaded.faults)
    from agentloops.controller.running.scenarios import build_controller

    run = build_controller(loaded, policy=policy, faults=faults, budget=task.budget).run()
    assert run.status in ctl.STOP_STATUSES
    assert run.usage["steps"] <= steps and (policy == "naive" or run.usage["retries"] <= retries)


def test_state_explorer_sending_the_state_makes_the_run_converge() -> None:
    explorer = widgets.state_explorer()
    assert explorer.state.run.status == "no_progress" and explorer.state.reference.status == "succeeded"
    explorer.state_block.value = True
    assert explorer.state.run.status == "succeeded" and explorer.state.run.steps == 3
    explorer.cities.value = 4
    assert explorer.state.run.steps == 5
    explorer.detect_repeats.value = False
    assert "fingerprint check off" in explorer.text()


def test_claim_counts_separate_verified_from_reported_success() -> None:
    honest = widgets.claim_counts(p_early_claim=0.0, n=10)
    assert honest["naive"] == {"verified": 10} and honest["default"] == {"verified": 10}
    eager = widgets.claim_counts(p_early_claim=0.8, premature_claims=0, n=20)
    assert eager["naive"]["unverified"] > 0 and "unverified" not in eager["default"]
    assert sum(eager["naive"].values()) == sum(eager["default"].values()) == 20


def test_claims_explorer_redraws_when_the_chance_changes() -> None:
    explorer = widgets.claims_explorer(n=10)
    before = dict(explorer.state.counts["naive"])
    explorer.p.value = 0.0
    assert explorer.state.counts["naive"] == {"verified": 10} != before


def test_storm_rows_count_every_tool_and_only_the_failing_city() -> None:
    rows = widgets.storm_rows(2, 3)
    assert [(r["fallbacks"], r["tools"]) for r in rows if r["scope"] == "shared"] == [(1, 2), (2, 3)]
    shared = widgets.storm_runs(2, 3)["one shared budget"]
    assert int(shared.usage["tool_calls"]) == 5  # Shanghai's one lookup + Beijing's four attempts
    assert plots.failing_attempts(shared) == 4 == next(r["attempts"] for r in rows if (r["tools"], r["scope"]) == (3, "shared"))
    assert plots.failing_attempts(shared, "get_weather") + plots.failing_attempts(shared, "weather_backup") \
        + plots.failing_attempts(shared, "weather_backup_2") == 4


def test_storm_per_tool_budgets_multiply_attempts() -> None:
    rows = widgets.storm_rows(3, 3)
    shared = [r["attempts"] for r in rows if r["scope"] == "shared"]
    per_tool = [r["attempts"] for r in rows if r["scope"] == "per_tool"]
    assert len(set(shared)) == 1 and per_tool == sorted(per_tool) and per_tool[0] > shared[0]
    assert all(r["retries"] <= 3 for r in rows if r["scope"] == "shared")
    with pytest.raises(ConfigError, match="at least 1 tool"):
        widgets.fallback_chain(0)


def test_storm_explorer_follows_its_sliders() -> None:
    explorer = widgets.storm_explorer(tools=1, retries=3)
    explorer.retries.value = 1
    assert all(int(r.usage["retries"]) <= 1 or "per tool" in label for label, r in explorer.state.runs.items())
    assert explorer.state.retries == 1


def test_budget_comparison_uses_the_budgets_it_was_given() -> None:
    comparison = widgets.budget_comparison(15, steps=3, retries=1)
    frame = comparison.to_frame()
    assert comparison.cap == 3 and frame.ctl_used_steps.max() <= 3 and frame.ctl_used_retries.max() <= 1
    assert frame.cap_steps.max() <= 3 and frame.ctl_within_budget.all()


def test_replay_explorer_replays_under_the_chosen_policy() -> None:
    explorer = widgets.replay_explorer()
    assert explorer.state.replay.run.policy.name == "degrade"
    explorer.replayed.value = "naive"
    assert explorer.state.replay.run.policy.name == "naive" and not explorer.state.replay.diff.same
    explorer.replayed.value = "default"
    assert explorer.state.replay.diff.same


def test_parallel_explorer_cancels_and_changes_the_join() -> None:
    explorer = widgets.parallel_explorer()
    assert explorer.state.run.status == "succeeded"
    explorer.cancel.value = 2.0
    assert explorer.state.run.status == "cancelled"
    explorer.cancel.value = 0.0
    explorer.minimum.value = 4
    assert explorer.state.run.status == "partially_completed"
    assert "late" in explorer.text()


def test_context_explorer_check_catches_the_careless_memory() -> None:
    explorer = widgets.context_explorer()
    assert explorer.state.run.status == "no_progress" and explorer.state.baseline.code == "budget:context_tokens"
    explorer.check.value = True
    assert explorer.state.run.status == "succeeded"
    with pytest.raises(ConfigError, match="unknown compactor 'lossy'"):
        widgets.context_run(compactor="lossy")


def _heights(bars: list) -> list[float]:
    return [round(b.get_height(), 6) for b in bars]


def test_the_practice_box_moved_to_the_interview_module() -> None:
    assert not hasattr(widgets, "practice") and "practice" not in widgets.BUILDERS


@pytest.mark.parametrize("name", list(widgets.BUILDERS))
def test_every_chart_is_shown_at_its_pixel_size(name: str) -> None:
    widget = widgets.BUILDERS[name]()
    from PIL import Image

    width, height = Image.open(io.BytesIO(bytes(widget.chart.value))).size
    assert (width, height) == widget._chart.live.size_px
    assert widget.chart.layout.width == f"{width}px" and widget.chart.layout.max_width == "100%"
    assert widget.chart.layout.height == "auto"  # shrinks with the page, never stretches past its pixels


def test_controller_explorer_chart_follows_the_run(fresh: widgets.ControllerExplorer) -> None:
    chart = fresh._chart
    fresh.fault.value = "timeout always"
    run = _drawn(fresh).state.run
    retries = chart._bars[ctl.BUDGET_NAMES.index("retries")]
    assert retries.get_width() == pytest.approx(100.0) and retries.get_hatch() == "//"
    assert chart._labels[ctl.BUDGET_NAMES.index("retries")].get_text() == "3 / 3"
    assert list(chart._progress.get_ydata()) == plots.progress_versions(run)
    fresh.budgets["retries"].value = 1
    _drawn(fresh)
    assert chart._labels[ctl.BUDGET_NAMES.index("retries")].get_text() == "1 / 1"
    assert chart._title.get_text().startswith(f"weather-normal [default]: {fresh.state.run.status}")


def test_the_controller_chart_is_flat_for_a_run_without_progress(fresh: widgets.ControllerExplorer) -> None:
    fresh.scenario.value = "weather-no-state"
    run = _drawn(fresh).state.run
    progress = list(fresh._chart._progress.get_ydata())
    stuck = [i for i, t in enumerate(run.turns, 1) if not t.progress]
    assert run.status == "no_progress" and stuck
    assert all(progress[i] == progress[i - 1] for i in stuck)  # flat wherever nothing progressed
    assert progress[-1] == sum(t.progress for t in run.turns) < len(run.turns)
    crosses = list(fresh._chart._idle.get_xdata())
    assert crosses == [t.turn for t in run.turns if not t.progress and any(a.get("tool") for a in t.actions)]


def test_a_cached_state_is_not_recomputed(fresh: widgets.ControllerExplorer) -> None:
    fresh.fault.value = "timeout once"
    first = fresh.state.run
    fresh.fault.value = "none"
    fresh.fault.value = "timeout once"
    assert fresh.state.run is first


def test_state_explorer_lines_move_and_never_cover_each_other() -> None:
    explorer = widgets.state_explorer()
    this, reference = explorer._chart._lines[0]
    assert list(this.get_ydata()) == [0, *(t.state_version_after for t in explorer.state.run.turns)]
    assert set(this.get_xdata()) & set(reference.get_xdata()) == set()  # shifted sideways: both visible
    assert to_hex(this.get_color()) == plots.status_color("no_progress").lower()
    explorer.cities.value = 4
    assert len(reference.get_xdata()) == len(explorer.state.reference.turns) + 1 == 6
    explorer.state_block.value = True
    assert to_hex(this.get_color()) == plots.status_color("succeeded").lower()
    assert len(explorer._chart._idle.get_xdata()) == 0


def test_claims_chart_bars_are_the_counts_and_labels_sit_above_them() -> None:
    explorer = widgets.claims_explorer(n=10)
    chart = explorer._chart
    explorer.p.value = 0.0
    verified = [row for row in chart._bars[0]]
    assert _heights(verified) == [10, 10] and [t.get_text() for t in chart._labels[0]] == ["10", "10"]
    explorer.p.value = 0.8
    bars = plots.claim_bars(explorer.state.counts["naive"])
    assert _heights([row[0] for row in chart._bars]) == [bars["verified"], bars["unverified"], bars["other"]]
    assert bars["unverified"] > 0
    _assert_labels_clear_of_bars(chart.live, [b for row in chart._bars for b in row],
                                 [t for row in chart._labels for t in row])


def test_storm_chart_counts_attempts_per_tool_and_keeps_both_lines_visible() -> None:
    explorer = widgets.storm_explorer(tools=1, retries=3)
    explorer.tools.value = 3
    shared, per_tool = explorer._chart._steps
    runs = list(explorer.state.runs.values())
    assert list(per_tool.get_ydata()) == [0, *plots.retries_spent(runs[1])]
    assert set(shared.get_xdata()) & set(per_tool.get_xdata()) == set()
    tools = list(dict.fromkeys(c.tool for r in runs for c in r.calls))
    assert len(tools) == 4
    assert _heights(explorer._chart._bars[1][:4]) == [sum(c.tool == t and "beijing" in c.args.casefold()
                                                          for c in runs[1].calls) for t in tools]
    explorer.retries.value = 1
    assert list(explorer._chart._budget.get_ydata()) == [1, 1]


def test_budget_chart_rows_are_the_comparison_counts() -> None:
    explorer = widgets.budget_explorer(n=20)
    chart = explorer._chart
    explorer.sliders["steps"].value = 3
    comparison = explorer.state.comparison
    from agentloops.controller.teaching.plots.live_many import _ends

    ends = {(loop, outcome): count for loop, outcome, count in _ends(comparison)}
    assert sum(v for (loop, _), v in ends.items() if loop == "controller") == 20
    assert [b.get_width() for b in chart._end_bars] == list(ends.values())
    ctl_steps = [r["ctl_steps"] for r in comparison.rows]
    assert _heights(chart._step_bars["controller"])[:13] == [ctl_steps.count(k) for k in range(13)]
    assert list(chart._cap.get_xdata()) == [3, 3]
    _assert_labels_clear_of_bars(chart.live, [*chart._end_bars, *chart._step_bars["cap-only"],
                                              *chart._step_bars["controller"]], chart._end_labels)


def test_budget_chart_draws_what_it_shows_once_with_the_pixels_of_a_chart_drawn_afresh() -> None:
    from dataclasses import replace

    tight, loose = widgets.budget_comparison(12, steps=3, retries=1), widgets.budget_comparison(12, steps=6)
    chart = plots.LiveBudgetChart(12)
    drawn: list[bytes] = []
    render = chart.live.render
    chart.live.render = lambda: drawn.append(render()) or drawn[-1]  # type: ignore[method-assign]
    first, other, again = chart.update(tight), chart.update(loose), chart.update(tight)
    assert len(drawn) == 2 and again is first and other != first  # the same counts: the PNG they gave
    same_counts = replace(tight, rows=tuple({**r, "ctl_used_tokens": r["ctl_used_tokens"] + 1} for r in tight.rows))
    assert chart.update(same_counts) is first and len(drawn) == 2
    assert plots.LiveBudgetChart(12).update(tight) == first  # bars of no height skipped: not a pixel differs
    assert plots.LiveBudgetChart(12).update(loose) == other


def test_replay_chart_draws_one_lane_when_nothing_changed() -> None:
    explorer = widgets.replay_explorer()
    chart = explorer._chart
    lanes = [[b for b in lane if b.get_visible()] for lane in chart._boxes]
    assert len(lanes[0]) == len(lanes[1]) == len(explorer.state.replay.diff.before_actions)
    assert "budget_exhausted → partially_completed" in " ".join(chart._title.get_text().split())
    explorer.replayed.value = "default"
    assert explorer.state.replay.diff.same
    assert not any(b.get_visible() for b in chart._boxes[1]) and not chart._stops[1].get_visible()
    assert "replays" in chart._title.get_text() and "exactly" in chart._title.get_text()
    explorer.replayed.value = "naive"
    diff = explorer.state.replay.diff
    rows = [tuple(t.get_text() for t, b in zip(chart._texts[r], chart._boxes[r], strict=True) if b.get_visible())
            for r in (0, 1)]
    assert rows[0] != rows[1] and not diff.same
    outlined = [b for lane in chart._boxes for b in lane if b.get_visible() and b.get_linewidth() > 3]
    assert outlined and diff.summary() not in chart._title.get_text()


def test_parallel_chart_moves_the_stop_and_marks_late_results() -> None:
    explorer = widgets.parallel_explorer()
    chart = explorer._chart
    assert list(chart._stop.get_xdata()) == [explorer.state.run.stop.at_s] * 2
    explorer.cancel.value = 2.0
    run = explorer.state.run
    assert list(chart._stop.get_xdata()) == [2.0, 2.0]
    assert to_hex(chart._stop.get_color()) == plots.status_color("cancelled").lower()
    late = sorted(c.arrived_at for c in run.calls if c.state == "ignored")
    assert sorted(chart._arrivals.get_xdata()) == late and len(late) == 2
    assert [t.get_text() for t in chart._ax.get_yticklabels()][-1].endswith(": ignored")
    assert not chart._ax.texts  # every marker is explained in the legend, none by text on the plot


def test_context_chart_follows_the_configuration() -> None:
    explorer = widgets.context_explorer()
    chart = explorer._chart
    assert chart._run.axes.get_yscale() == "log"
    explorer.compact.value = None
    assert list(chart._run.get_ydata()) == [t.context_tokens for t in explorer.state.run.turns if t.context_tokens]
    assert len(chart._compactions.get_xdata()) == 0
    explorer.compact.value = 300
    _drawn(explorer)
    assert list(chart._compactions.get_xdata()) == [t.turn for t in explorer.state.run.turns if t.compaction]
    assert list(chart._budget.get_ydata()) == [3000, 3000]


def _assert_labels_clear_of_bars(live: plots.LiveFigure, bars: list, labels: list) -> None:
    """No text label's box overlaps a bar it does not belong to (a label sits beside or above its bar)."""
    live.render()
    renderer = live.canvas.get_renderer()
    boxes = [b.get_window_extent(renderer) for b in bars if b.get_visible() and (b.get_height() and b.get_width())]
    for label in labels:
        if not label.get_text():
            continue
        extent = label.get_window_extent(renderer).shrunk(0.9, 0.9)
        overlapping = [b for b in boxes if extent.overlaps(b) and b.width > 1 and b.height > 1]
        assert not overlapping, f"label {label.get_text()!r} overlaps a bar"


def test_the_view_cache_keeps_the_most_recent_states() -> None:
    calls: list[str] = []
    from agentloops.controller.teaching.prewarm import Prewarm

    def compute(key: str) -> str:
        calls.append(key)
        return key.upper()

    cache = Prewarm(compute, size=2)
    for key in ("a", "b", "a", "c", "a", "b"):
        assert cache.get(key) == key.upper()
    # "a" was used again before "c" arrived, so "b" was the one dropped, and came back computed
    assert calls == ["a", "b", "c", "b"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_policy_menu_is_wide_enough_for_its_longest_label(lang: str) -> None:
    from agentloops.i18n import speaking
    from agentloops.tables import display_width

    with speaking(lang):
        built = widgets.controller_explorer()
        menu = built.policy
        label_px = int(menu.style.description_width.removesuffix("px"))
        width_px = int(menu.layout.width.removesuffix("px"))
        longest = max(display_width(label) for label, _value in menu.options)
    # about 8 px per column of text at the notebook's font size, plus the arrow and padding
    assert width_px - label_px >= 8 * longest + 40, (width_px, label_px, longest)
