"""The six pieces of evidence: one call each, computed, and consistent with the configuration."""

from __future__ import annotations

import itertools
import math

import pytest

from agentloops.controller import (
    BUDGET_NAMES,
    STOP_STATUSES,
    TASK_TYPES,
    budget_basis,
    completion_conditions,
    error_routing,
    evidence_index,
    fault_regression,
    happy_path,
    repeated_call_trace,
    stop_statuses,
)
from agentloops.controller.teaching.evidence import (
    ONE_FAILURE,
    ROUNDING,
    derive_limit,
    each_budget_stops,
    limit_check,
    nearest_rank,
    one_failure_cost,
)
from agentloops.controller.teaching.uncapped import Measured, measure_uncapped
from agentloops.controller.vocabulary.errors import ConfigError


def test_completion_conditions_cover_every_task_type():
    table = completion_conditions()
    assert table.column("task") == list(TASK_TYPES)
    assert "at least 2 of the listed sources" in table.column("done when")[-1]


def test_budget_basis_without_measuring_lists_every_budget_with_its_basis():
    table = budget_basis()
    assert len(table.rows) == len(TASK_TYPES) * len(BUDGET_NAMES)
    weather = {r[1]: r for r in table.rows if r[0] == "weather_compare"}
    assert weather["steps"][2:4] == ("6", "3")
    assert table.headers == ("task", "budget", "limit", "happy path uses", "basis")


def test_budget_basis_measured_derives_every_limit_from_the_uncapped_runs():
    table = budget_basis(measure=40, seed=3)
    assert len(table.rows) == len(TASK_TYPES) * len(BUDGET_NAMES)
    col = table.headers.index
    for task in TASK_TYPES:
        runs = measure_uncapped(task, 40, 3)
        cost = one_failure_cost(task)
        for row in (r for r in table.rows if r[0] == task):
            budget = row[1]
            ok = sorted(r.usage[budget] for r in runs if r.succeeded)
            p95 = ok[math.ceil(0.95 * len(ok)) - 1]
            assert float(row[col("p95")]) == p95 and float(row[col("shortest")]) == ok[0], (task, budget)
            assert float(row[col("max (all runs)")]) == max(r.usage[budget] for r in runs)
            limit = float(row[col("derived")])
            if TASK_TYPES[task].budget.limit(budget) == 0:
                assert limit == 0
            else:
                extra = cost[budget] if cost else 0
                assert p95 + extra <= limit < p95 + extra + ROUNDING[budget] + 1e-9, (task, budget)
            over = [r for r in runs if r.usage[budget] > limit]
            assert row[col("normal runs cut")] == sum(r.succeeded for r in over)
            assert row[col("failing runs cut")] == sum(not r.succeeded for r in over)


def test_uncapped_runs_show_use_the_configured_limits_would_have_hidden():
    runs = measure_uncapped("weather_compare", 200)
    configured = TASK_TYPES["weather_compare"].budget
    assert max(r.usage["tool_calls"] for r in runs) > configured.limit("tool_calls")  # not censored by the cap
    assert max(r.usage["retries"] for r in runs) > configured.limit("retries")
    assert not any(r.code == "budget:steps" for r in runs)  # the lifted step budget is out of reach


def test_derive_limit_rule_on_known_runs():
    def run(steps: int, ok: bool = True, code: str = "completion_condition_met") -> Measured:
        usage = {name: 0.0 for name in BUDGET_NAMES} | {"steps": float(steps)}
        return Measured(0, "succeeded" if ok else "budget_exhausted", code if ok else "budget:retries", usage, "")

    runs = [run(s) for s in range(1, 21)] + [run(30, ok=False)]
    derived = derive_limit("weather_compare", "steps", runs, one_failure=1, configured=6)
    assert (derived.shortest, derived.p95, derived.max_all) == (1, 19, 30)  # nearest rank: the 19th of 20
    assert derived.limit == 20 and (derived.cut_ok, derived.cut_failing) == (0, 1)
    assert derived.tail == "budget:retries ×1"
    assert derive_limit("weather_compare", "steps", runs, one_failure=None, configured=6).limit == 19
    assert derive_limit("weather_compare", "steps", runs[:-1], 0, 6).cut_ok == 1  # the run at 20 is cut by 19
    assert derive_limit("refund", "steps", runs, 1, 0).limit == 0  # a configured 0 is a policy, kept
    tokens = derive_limit("weather_compare", "tokens", [Measured(0, "succeeded", "x", {"tokens": 901.0}, "")], 0, 1)
    assert tokens.limit == 1000  # rounded up to 100 tokens
    assert nearest_rank(list(range(1, 101)), 0.95) == 95 and nearest_rank([7], 0.95) == 7


def test_one_failure_costs_what_the_happy_path_with_one_timeout_adds():
    weather = one_failure_cost("weather_compare")
    assert weather is not None and weather["retries"] == 1 and weather["tool_calls"] == 1
    research = one_failure_cost("research")
    assert research is not None and research["steps"] == 1 and research["tool_calls"] == 3  # one failed join
    assert one_failure_cost("refund") is None  # a timed-out write is handed to a person, not retried


def test_derived_limits_hold_on_fresh_seeds():
    table = limit_check(100, seed=0, fresh_seed=5000)
    col = table.headers.index
    for row in table.rows:
        assert row[col("normal runs cut")] <= 0.06 * row[col("fresh normal runs")], row


def test_unknown_task_type_is_a_usage_error():
    with pytest.raises(ConfigError, match="unknown task type 'nope'; expected one of: weather_compare"):
        budget_basis("nope", measure=5)


def test_every_happy_path_succeeds_well_inside_its_budgets():
    for name, kind in TASK_TYPES.items():
        run = happy_path(name)
        assert run.status == "succeeded", name
        for budget in ("steps", "tool_calls", "context_tokens"):
            assert run.usage[budget] <= 0.75 * kind.budget.limit(budget), (name, budget)


def test_the_weather_basis_matches_what_the_happy_path_uses():
    # the basis text says: happy path 3 turns, wall ≈4 s, requests start at ≈240 and grow ≈70 per turn, largest ≈380
    run = happy_path("weather_compare")
    assert run.steps == 3 and 3.5 <= run.usage["wall_time_s"] <= 4.5
    sizes = [t.context_tokens for t in run.turns]
    assert 200 <= sizes[0] <= 280 and 300 <= sizes[-1] <= 420
    assert all(40 <= b - a <= 100 for a, b in itertools.pairwise(sizes))


def test_stop_statuses_name_the_scenarios_that_end_in_each():
    table = stop_statuses()
    assert table.column("status") == list(STOP_STATUSES)
    assert all(cell != "-" for cell in table.column("scenarios"))


def test_repeated_call_trace_shows_why_state_did_not_change():
    table = repeated_call_trace()
    fingerprints = table.column("fingerprint")
    assert fingerprints[1] == fingerprints[2] == '(get_weather, {"city":"shanghai"}, v1)'
    assert table.column("state")[1:] == ["v1→v1", "v1→v1"]
    assert "already known from turn 1" in table.column("state delta (or why unchanged)")[1]
    assert table.column("decision")[-1] == "stop:no_progress (repeated_action)"


def test_error_routing_runs_each_fault_for_real():
    table = error_routing()
    rows = {r[0]: r for r in table.rows}
    assert rows["timeout once"][3] == "accept → retry → accept"
    assert rows["timeout always (+ fallback)"][4] == "budget_exhausted (budget:retries)"
    assert rows["empty, task accepts 'not found'"][4] == "succeeded (completion_condition_met)"
    assert rows["empty, task needs data"][4] == "partially_completed (items_unobtainable)"
    assert rows["permission denied (gate)"][4] == "failed_unrecoverable (permission_denied)"
    assert rows["invalid arguments once"][4].startswith("succeeded")
    assert rows["invalid arguments twice"][4] == "failed_unrecoverable (invalid_arguments_repeated)"
    assert rows["missing parameter"][4] == "waiting_for_user (missing_parameter)"
    naive = {r[0]: r for r in error_routing("naive").rows}
    assert naive["permission denied (gate)"][4].startswith("succeeded")  # routed around through db_write


def test_fault_regression_and_the_index():
    report = fault_regression(scenarios=["weather-timeout-always", "refund-permission-denied"])
    assert report.ok and len(report.replays) == 2
    assert "recorded under 'naive', replayed under 'default'" in str(report)
    index = evidence_index()
    assert len(index.rows) == 6 and index.column("CLI")[0] == "agentloops controller conditions"


def test_each_budget_stops_a_run_and_names_itself():
    base = happy_path("weather_compare", faults=ONE_FAILURE["weather_compare"])
    assert base.status == "succeeded" and base.usage["retries"] == 1
    runs = each_budget_stops()
    assert list(runs) == list(BUDGET_NAMES)
    for name, run in runs.items():
        assert (run.status, run.code, run.stop.budget) == ("budget_exhausted", f"budget:{name}", name), name
        assert all(run.within_budget.values()) and run.usage[name] < base.usage[name], name  # stopped before it
        assert run.task.budget.limit(name) < base.usage[name], name
        assert run.stop.facts, name  # what was verified is kept
