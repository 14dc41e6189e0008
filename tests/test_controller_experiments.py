"""Randomized runs: reproducible cases, the cap-only baseline, and the comparison."""

from __future__ import annotations

from agentloops.controller import TaskPlanner, compare_loops, make_task, random_case, random_runs, run_cap_only
from agentloops.controller.experiments import case_dict


def test_a_seed_always_draws_the_same_case():
    assert case_dict(random_case(7)) == case_dict(random_case(7))
    assert case_dict(random_case(7)) != case_dict(random_case(8))
    runs = [r.actions for r in random_runs(3, seed=5)]
    assert runs == [r.actions for r in random_runs(3, seed=5)]


def test_the_cap_only_loop_takes_a_premature_claim_for_success_and_judges_it_afterwards():
    task = make_task("weather_compare")
    claim = run_cap_only(task, TaskPlanner(task, claim_early_after=1))
    assert (claim.outcome, claim.steps, claim.tool_calls) == ("answered_unverified", 2, 1)
    honest = run_cap_only(task, TaskPlanner(task))
    assert honest.outcome == "answered_verified"
    forgetful = run_cap_only(task, TaskPlanner(task, use_state=False, window=2), max_steps=8)
    assert (forgetful.outcome, forgetful.steps, forgetful.tool_calls) == ("hit_cap", 8, 8)


def test_compare_loops_runs_both_arms_on_the_same_cases():
    result = compare_loops(40, seed=0)
    frame = result.to_frame()
    assert len(frame) == 40 and {"cap_outcome", "ctl_status", "ctl_steps", "ctl_within_budget"} <= set(frame)
    summary = result.summary()
    assert summary["ctl_budget_violations"] == 0 and summary["ctl_unverified_success"] == 0
    assert summary["cap_hit_cap"] + summary["cap_false_success"] > 0  # the cap-only loop does go wrong
    assert summary["ctl_mean_steps"] < summary["cap_mean_steps"]
    counts = result.counts()
    assert sum(counts.column("runs")) == 80
    assert "controller" in str(result) and "<table>" in result._repr_html_()
