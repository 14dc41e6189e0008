"""Randomized runs: reproducible cases, the cap-only baseline, and the comparison."""

from __future__ import annotations

import pytest

from agentloops.controller import (
    BUDGET_NAMES,
    TASK_TYPES,
    TaskPlanner,
    compare_loops,
    make_task,
    random_case,
    random_runs,
    run_cap_only,
)
from agentloops.controller.teaching.experiments import case_dict
from agentloops.controller.teaching.uncapped import measure_uncapped, task_case, uncapped
from agentloops.controller.vocabulary.errors import ConfigError


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


def test_every_task_type_draws_reproducible_cases_that_can_succeed():
    for task_type in TASK_TYPES:
        assert task_case(task_type, 4) == task_case(task_type, 4)
        assert len({task_case(task_type, s).describe() for s in range(20)}) > 3, task_type  # the draws vary
        clean = next(task_case(task_type, s) for s in range(100) if not task_case(task_type, s).faults)
        assert clean.task().name == task_type
    weather = task_case("weather_compare", 7)
    assert weather.faults == random_case(7).faults and tuple(weather.params["cities"]) == random_case(7).cities
    with pytest.raises(ConfigError, match="unknown task type 'nope'"):
        task_case("nope", 1)


def test_uncapped_lifts_every_limit_but_keeps_a_policy_zero():
    weather = make_task("weather_compare").budget
    lifted = uncapped(weather, factor=10)
    for name in BUDGET_NAMES:
        assert lifted.limit(name) == 10 * weather.limit(name), name
    assert uncapped(make_task("refund").budget).limit("retries") == 0
    assert uncapped(weather.with_values(steps=None)).limit("steps") is None


def test_measure_uncapped_records_what_each_run_used():
    measured = measure_uncapped("order_status", 30, seed=2)
    assert [m.seed for m in measured] == list(range(2, 32))
    again = task_case("order_status", 2).run(budget=uncapped(make_task("order_status").budget))
    assert measured[0].usage == again.usage and measured[0].status == again.status
    assert any(m.succeeded for m in measured) and not all(m.succeeded for m in measured)
    assert all(set(m.usage) == set(BUDGET_NAMES) for m in measured)
