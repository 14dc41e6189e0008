"""The budget explorer's kept runs: reused only where running again gives the same rows."""

from __future__ import annotations

import pytest

from agentloops.controller.teaching.experiments import random_case, run_case
from agentloops.controller.teaching.widgets import budget_runs, budgets
from agentloops.controller.teaching.widgets.budget_runs import KeptRuns

N = 24

WALK = [  # a learner's moves, one slider at a time, across every kind of edge a kept run must respect
    {"steps": 6, "tool_calls": 8, "retries": 3, "wall_time_s": 60},
    {"retries": 2}, {"retries": 1}, {"retries": 0}, {"retries": 1}, {"retries": 5},  # refused retries, then allowed
    {"steps": 3}, {"steps": 2}, {"steps": 5}, {"steps": 9}, {"steps": 10}, {"steps": 12},  # a digit more left
    {"tool_calls": 2}, {"tool_calls": 3}, {"tool_calls": 9}, {"tool_calls": 10}, {"tool_calls": 16},
    {"wall_time_s": 5}, {"wall_time_s": 10}, {"wall_time_s": 20}, {"wall_time_s": 95}, {"wall_time_s": 100},
    {"steps": 4, "retries": 0}, {"tool_calls": 4},
]


def _walk() -> list[dict[str, int]]:
    setting: dict[str, int] = {}
    out = []
    for move in WALK:
        setting = {**setting, **move}
        out.append(setting)
    return out


@pytest.fixture(scope="module")
def walked() -> tuple[KeptRuns, list[tuple[dict[str, int], int, object, object]]]:
    kept, seen = KeptRuns(N, 0), []
    for setting in _walk():
        cap = setting["steps"]
        baselines = budgets.cap_only_runs(N, 0, cap)
        before = kept.runs
        seen.append((setting, kept.runs - before, kept.comparison(cap, setting, baselines),
                     budgets.budget_comparison(N, 0, baselines=baselines, **setting)))
        seen[-1] = (setting, kept.runs - before, *seen[-1][2:])
    return kept, seen


def test_every_setting_of_the_walk_gets_the_rows_running_every_case_again_gives(walked) -> None:
    _kept, seen = walked
    for setting, _ran, reused, fresh in seen:
        assert reused == fresh, setting


def test_most_cases_are_reused_and_a_move_that_changes_runs_runs_them_again(walked) -> None:
    kept, seen = walked
    assert seen[0][1] == N  # nothing kept yet: every case runs
    assert kept.runs < N * len(seen) / 2  # then most are reused, on a walk made of edges
    changed = [ran for setting, ran, *_ in seen[1:] if ran]
    assert any(0 < ran < N // 2 for ran in changed)  # only the cases a move can change run again
    assert any(ran == 0 for _setting, ran, *_ in seen[1:])


def test_a_run_stopped_by_a_budget_holds_only_while_that_budget_would_stop_it_again() -> None:
    case = next(c for c in map(random_case, range(50))
                if run_case(c, budget=c.task().budget.with_values(retries=0)).code == "budget:retries")
    kept = KeptRuns(1, case.seed)
    baselines = budgets.cap_only_runs(1, case.seed, 6)
    kept.comparison(6, {"retries": 0}, baselines)
    run = kept._kept[0][0]
    assert run.columns["ctl_code"] == "budget:retries"
    limits = case.task().budget.limits
    assert not run.holds_for({**limits, "retries": 1})  # a retry is now allowed: another run
    assert run.refused["retries"] and run.holds_for({**limits, "retries": 0})


def test_a_limit_below_what_a_run_spent_does_not_hold() -> None:
    kept = KeptRuns(1, 0)
    kept.comparison(6, {"tool_calls": 9}, budgets.cap_only_runs(1, 0, 6))
    run = kept._kept[0][0]
    used = int(run.columns["ctl_tool_calls"])
    limits = {**random_case(0).task().budget.limits, "tool_calls": 9}
    assert run.holds_for({**limits, "tool_calls": used}) and not run.holds_for({**limits, "tool_calls": used - 1})


def test_a_number_left_that_gains_a_digit_holds_only_when_the_token_estimate_is_unchanged(monkeypatch) -> None:
    kept = KeptRuns(1, 0)
    kept.comparison(9, {"steps": 9, "tool_calls": 16}, budgets.cap_only_runs(1, 0, 9))
    run = kept._kept[0][0]
    limits = {**random_case(0).task().budget.limits, "steps": 9, "tool_calls": 16}
    wider = {**limits, "steps": 10}
    assert run.holds_for(limits)
    estimate = budget_runs.estimate_tokens
    monkeypatch.setattr(budget_runs, "estimate_tokens", lambda text: estimate(text) + len(text))  # one char more
    assert not run.holds_for(wider)  # now costs a token more: another run


def test_cap_only_runs_reuse_a_run_that_answered_within_the_cap() -> None:
    calls: list[int] = []
    real = budgets.run_cap_only

    def counted(*args, **kwargs):
        calls.append(kwargs["max_steps"])
        return real(*args, **kwargs)

    kept = {6: budgets.cap_only_runs(N, 0, 6)}
    budgets.run_cap_only = counted
    try:
        for cap in (7, 4, 12):
            assert budgets.cap_only_runs(N, 0, cap, kept=kept) == budgets.cap_only_runs(N, 0, cap)
            again = len([c for c in calls if c == cap])
            reused = [r for r in kept[6] if r.outcome.startswith("answered") and r.steps <= cap]
            assert reused and again == 2 * N - len(reused)  # the plain call runs every case
            kept[cap] = budgets.cap_only_runs(N, 0, cap)
            calls.clear()
    finally:
        budgets.run_cap_only = real


def test_a_number_gaining_a_digit_costs_as_much_only_in_a_text_the_controller_would_write() -> None:
    def text(body: str) -> str:
        return budget_runs.STATE_HEADER + body

    padded = next(text(f'{{"goal": "{"x" * k}", "budget_left": {{"steps": 9}}}}') for k in range(8)
                  if budget_runs.estimate_tokens(text(f'{{"goal": "{"x" * k}", "budget_left": {{"steps": 10}}}}'))
                  == budget_runs.estimate_tokens(text(f'{{"goal": "{"x" * k}", "budget_left": {{"steps": 9}}}}')))
    assert budget_runs._costs_as_much(padded, {"steps": 10})
    other = next(text(f'{{"goal":"{"x" * k}", "budget_left": {{"steps": 9}}}}') for k in range(8)  # two chars short
                 if budget_runs.estimate_tokens(text(f'{{"goal": "{"x" * k}", "budget_left": {{"steps": 10}}}}'))
                 == budget_runs.estimate_tokens(text(f'{{"goal":"{"x" * k}", "budget_left": {{"steps": 9}}}}')))
    assert not budget_runs._costs_as_much(other, {"steps": 10})  # written otherwise: what it would cost is not known
    crossing = next(text(f'{{"goal": "{"x" * k}", "budget_left": {{"steps": 9}}}}') for k in range(8)
                    if budget_runs.estimate_tokens(text(f'{{"goal": "{"x" * k}", "budget_left": {{"steps": 10}}}}'))
                    != budget_runs.estimate_tokens(text(f'{{"goal": "{"x" * k}", "budget_left": {{"steps": 9}}}}')))
    assert not budget_runs._costs_as_much(crossing, {"steps": 10})
