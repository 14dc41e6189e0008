"""Controller widgets, driven like a learner drives them: set a control, read what the widget shows."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentloops.controller as ctl
from agentloops.controller import widgets
from agentloops.controller.errors import ConfigError

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


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


def test_importing_agentloops_does_not_import_the_widgets() -> None:
    code = ("import sys, agentloops, agentloops.controller; "
            "bad = [m for m in ('ipywidgets', 'matplotlib', 'agentloops.controller.widgets') if m in sys.modules]; "
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


@pytest.mark.parametrize("choice", widgets.SIX_FAULTS)
def test_each_of_the_six_faults_is_injected_into_the_last_item(choice: str) -> None:
    task = ctl.make_task("weather_compare")
    faults = widgets.inject(task, choice)
    assert faults and all(f.match == {"city": "Beijing"} for f in faults)
    run = ctl.Controller(task, ctl.TaskPlanner(task), faults=faults).run()
    assert run.stop.facts and run.stop.facts[0].item == "weather:Shanghai"  # the first city is kept
    assert run.status != "succeeded" or choice == "timeout once"


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
    from agentloops.controller.scenarios import build_controller

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


def test_practice_box_grades_what_is_typed_and_what_is_clicked() -> None:
    box = widgets.practice()
    assert not box.state.grade.attempted and "heuristic" in box.result.value
    grade = box.check("Set max_steps to 10.")
    assert grade.cap_only and box.state.answer == "Set max_steps to 10."
    box.answer.value = "A completion condition checked over task state, with evidence; the model's claim is a signal."
    box.button.click()
    assert "completion" in box.state.grade.covered and "agentloops-practice-result" in box.result._dom_classes
