"""The six pieces of evidence: one call each, computed, and consistent with the configuration."""

from __future__ import annotations

import itertools

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


def test_completion_conditions_cover_every_task_type():
    table = completion_conditions()
    assert table.column("task") == list(TASK_TYPES)
    assert "at least 2 of the listed sources" in table.column("done when")[-1]


def test_budget_basis_lists_every_budget_with_measured_use():
    table = budget_basis(measure=30)
    assert len(table.rows) == len(TASK_TYPES) * len(BUDGET_NAMES)
    weather = {r[1]: r for r in table.rows if r[0] == "weather_compare"}
    assert weather["steps"][2:4] == ("6", "3")
    for name, row in weather.items():
        limit = float(row[2])
        assert float(row[table.headers.index("max")]) <= limit, name  # the max measured use never exceeds the limit
    assert table.headers[-1] == "basis"


def test_every_happy_path_succeeds_well_inside_its_budgets():
    for name, kind in TASK_TYPES.items():
        run = happy_path(name)
        assert run.status == "succeeded", name
        for budget in ("steps", "tool_calls", "context_tokens"):
            assert run.usage[budget] <= 0.75 * kind.budget.limit(budget), (name, budget)


def test_the_weather_basis_matches_what_runs_measure():
    # the basis text says: happy path 3 turns; wall ≈4 s; worst recoverable case ≈25 s; requests well under 1 k
    run = happy_path("weather_compare")
    assert run.steps == 3 and 3.5 <= run.usage["wall_time_s"] <= 4.5
    sizes = [t.context_tokens for t in run.turns]
    assert 200 <= sizes[0] <= 280 and 300 <= sizes[-1] <= 420  # "start at ≈240", "largest ≈380"
    assert all(40 <= b - a <= 100 for a, b in itertools.pairwise(sizes))  # "grow ≈70 per turn"
    table = budget_basis("weather_compare", measure=200)
    wall_max = float(next(r for r in table.rows if r[1] == "wall_time_s")[table.headers.index("max")])
    assert 20 <= wall_max <= 30 <= 60 / 2  # "the worst recoverable case ≈25 s; 60 s is about twice that"
    tokens_max = float(next(r for r in table.rows if r[1] == "tokens")[table.headers.index("max")])
    context_max = float(next(r for r in table.rows if r[1] == "context_tokens")[table.headers.index("max")])
    assert tokens_max <= 3000 and 500 <= context_max <= 700  # "≈2.5 k over 6 turns", "a 6-turn run's ≈600"


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
