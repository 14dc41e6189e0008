"""The article's six pieces of evidence, each produced by one function call.

"If a project claims to have solved runaway loops, it should be able to show":

1. :func:`completion_conditions` — each task type's business completion condition;
2. :func:`budget_basis` — the budgets per task type with their basis; measured, each limit derived from the
   uncapped distribution of that task type's runs (:func:`derive_limits`, checked out of sample by
   :func:`limit_check`);
3. :func:`stop_statuses` — the stop status definitions;
4. :func:`repeated_call_trace` — a repeated-call trace that shows why the state did not change;
5. :func:`error_routing` — how empty, timeout, permission and argument errors are routed, by running them;
6. :func:`fault_regression` — a fault-injection regression set with before/after trajectory differences.

Each returns an object that prints as text and renders as HTML; the CLI
prints the same objects (``agentloops controller conditions|budgets|statuses|
repeat|routing|regression``).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentloops.controller.controller import Controller
from agentloops.controller.engine import new_trace_id
from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.policy.budgets import BUDGET_NAMES, Budget, BudgetName
from agentloops.controller.policy.error_policy import PolicyLike, resolve_policy
from agentloops.controller.running.replaying import Regression, regression
from agentloops.controller.sim.faults import Fault
from agentloops.controller.sim.planners import TaskPlanner
from agentloops.controller.stopping.status import STATUS_DEFINITIONS, status_table
from agentloops.controller.task.tasks import TASK_TYPES, Task, completion_table, make_task
from agentloops.controller.teaching.uncapped import UNCAPPED_FACTOR, Measured, measure_uncapped, uncapped
from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.controller.vocabulary.render import Table, clip
from agentloops.i18n import N_, Phrase, joined

HAPPY_PATHS: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "weather_compare": ({}, {}, {}),
    "order_status": ({"order_id": "A-1042"}, {}, {}),
    "refund": ({"granted": ["orders:read", "payments:refund"]}, {}, {"high_risk": "allow"}),
    "document_lookup": ({"document_id": "A"}, {}, {}),
    "recall_check": ({"product": "kettle-k2"}, {}, {}),
    "research": ({}, {"parallel": True}, {}),
}
"""Per task type: (task parameters, planner options, policy fields) of a fault-free run that succeeds."""


def happy_path(task_type: str, *, faults: Sequence[Fault] = (), budget: Budget | None = None) -> ControllerRun:
    """A fault-free run of the task type that succeeds: the baseline its budgets are sized from.

    ``faults`` and ``budget`` run the same baseline with a declared fault or other limits
    (:func:`one_failure_cost` uses both)."""
    params, planner, policy = HAPPY_PATHS[task_type]
    task = make_task(task_type, params)
    if budget is not None:
        task = Task(task.kind, budget)  # so ``run.task.budget`` says what the run was allowed
    return Controller(task, TaskPlanner(task, **planner), policy={"name": "happy-path", **policy}, faults=faults,
                      trace_id=new_trace_id(f"happy-{task_type}"), label=f"happy-{task_type}").run()


def completion_conditions() -> Table:
    """Evidence 1: the business completion condition of every task type."""
    return completion_table()


ONE_FAILURE: dict[str, tuple[Fault, ...]] = {
    "weather_compare": (Fault(tool="get_weather", kind="timeout", times=1, match={"city": "Beijing"}),),
    "order_status": (Fault(tool="lookup_order", kind="timeout", times=1),),
    "refund": (Fault(tool="issue_refund", kind="timeout", times=1),),
    "document_lookup": (Fault(tool="read_metadata", kind="timeout", times=1),),
    "recall_check": (Fault(tool="search_recalls", kind="timeout", times=1),),
    "research": tuple(Fault(tool="fetch", kind="timeout", times=1, match={"source_id": s}) for s in ("s1", "s2", "s3")),
}
"""Per task type: the one recoverable failure whose cost a limit leaves room for — one timeout, or for the
parallel research task one failed join (three of four fetches time out once, so the minimum of two is missed
and the next turn fetches again)."""

ROUNDING: dict[BudgetName, float] = {
    "steps": 1, "wall_time_s": 1, "model_calls": 1, "tool_calls": 1, "tokens": 100, "context_tokens": 50, "retries": 1,
}
"""Derived limits are rounded up to these units."""


def one_failure_cost(task_type: str) -> dict[str, float] | None:
    """What one recoverable failure adds to the happy path, per budget; ``None`` when the run does not
    recover from it (a refund is never retried: a timed-out write goes to a person)."""
    happy = happy_path(task_type)
    budget = uncapped(make_task(task_type, HAPPY_PATHS[task_type][0]).budget)
    failed = happy_path(task_type, faults=ONE_FAILURE[task_type], budget=budget)
    if failed.status != "succeeded":
        return None
    return {name: max(0.0, round(failed.usage[name] - happy.usage[name], 6)) for name in BUDGET_NAMES}


def each_budget_stops(task_type: str = "weather_compare") -> dict[BudgetName, ControllerRun]:
    """Every budget stopping a run: the happy path with its one recoverable failure (:data:`ONE_FAILURE`), rerun
    once per budget with that budget set just below what the run uses (one unit; half a second of wall time).
    Each run ends ``budget_exhausted`` naming that budget, before it would go past it. A budget the run does not
    use at all (no retries on a path without failures) has no "just below" and is left out."""
    faults = ONE_FAILURE[task_type]
    base = happy_path(task_type, faults=faults)
    budget = make_task(task_type, HAPPY_PATHS[task_type][0]).budget
    runs: dict[BudgetName, ControllerRun] = {}
    for name in BUDGET_NAMES:
        below = base.usage[name] - (0.5 if name == "wall_time_s" else 1)
        if below >= 0:
            runs[name] = happy_path(task_type, faults=faults, budget=budget.with_values(**{name: below}))
    return runs


def nearest_rank(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of ``values`` (at least one): the smallest value with ``fraction`` of them at or
    below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


@dataclass(frozen=True)
class DerivedLimit:
    """One budget of one task type, sized from its uncapped distribution.

    Attributes:
        task: the task type.
        budget: the budget.
        configured: the limit the task type ships with.
        shortest / median / p95 / max_ok: over the uncapped runs that succeeded.
        max_all: over every uncapped run (the long tail).
        one_failure: what one recoverable failure adds to the happy path (``None``: it does not recover).
        limit: the derived limit.
        rule: how ``limit`` was computed, in words, with the numbers.
        cut_ok / cut_failing: uncapped runs over ``limit`` that succeeded / did not.
        tail: why the runs over ``limit`` ran long (their stop codes, counted).
    """

    task: str
    budget: BudgetName
    configured: float | None
    shortest: float
    median: float
    p95: float
    max_ok: float
    max_all: float
    one_failure: float | None
    limit: float
    rule: str
    cut_ok: int
    cut_failing: int
    tail: str


def derive_limit(task: str, budget: BudgetName, runs: Sequence[Measured], one_failure: float | None,
                 configured: float | None) -> DerivedLimit:
    """The rule: the 95th percentile of the successful uncapped runs plus what one recoverable failure adds,
    rounded up. A configured 0 stays 0 (a policy, not a size)."""
    ok = [r.used(budget) for r in runs if r.succeeded] or [0.0]
    p95 = nearest_rank(ok, 0.95)
    unit = ROUNDING[budget]
    if configured == 0:
        limit, rule = 0.0, Phrase(N_("kept at 0: a policy (side effects), not a size"))
    else:
        extra = one_failure or 0.0
        limit = math.ceil(round((p95 + extra) / unit, 6)) * unit
        why = Phrase(N_("one failure adds") if one_failure is not None else N_("one failure is not recovered, adds"))
        rule = Phrase(N_("p95 of successful runs {p95:g} + {why} {extra:g} → {limit:g}"), p95=p95, why=why,
                      extra=extra, limit=limit)
    over = [r for r in runs if r.used(budget) > limit + 1e-6]
    tail = ", ".join(f"{code} ×{n}" for code, n in Counter(r.code for r in over).most_common(2)) or "-"
    return DerivedLimit(task, budget, configured, min(ok), statistics.median(ok), p95, max(ok),
                        max(r.used(budget) for r in runs), one_failure, limit, rule,
                        sum(r.succeeded for r in over), sum(not r.succeeded for r in over), tail)


def derive_limits(task: str, measure: int = 200, seed: int = 0) -> tuple[DerivedLimit, ...]:
    """Every budget of ``task``, derived from ``measure`` uncapped random runs (seeds ``seed…``)."""
    runs = measure_uncapped(task, measure, seed)
    cost = one_failure_cost(task)
    kind = TASK_TYPES[task]
    return tuple(derive_limit(task, name, runs, None if cost is None else cost[name], kind.budget.limit(name))
                 for name in BUDGET_NAMES)


def _task_names(task: str | None) -> list[str]:
    names = [task] if task is not None else list(TASK_TYPES)
    for name in names:
        if name not in TASK_TYPES:
            raise ConfigError(N_("unknown task type {name}; expected one of: {names}").format(
                name=repr(name), names=", ".join(TASK_TYPES)))
    return names


def budget_basis(task: str | None = None, *, measure: int = 0, seed: int = 0) -> Table:
    """Evidence 2: every budget of every task type (or one), its value and basis, and what runs use.

    Args:
        task: one task type name (default: all).
        measure: also run this many random cases of each task type with every budget lifted out of reach
            (:func:`~.teaching.uncapped.measure_uncapped`) and show, per budget, the distribution
            of the successful runs, what one recoverable failure adds, the limit derived from them, and how many
            of the uncapped runs that limit would have cut (and why those ran long).
        seed: first seed of the random cases.
    """
    names = _task_names(task)
    rows: list[tuple[Any, ...]] = []
    if not measure:
        for name in names:
            happy = happy_path(name)
            for budget in BUDGET_NAMES:
                limit = getattr(TASK_TYPES[name].budget, budget)
                rows.append((name, budget, str(limit), f"{happy.usage[budget]:g}", Phrase(limit.basis)))
        return Table.build(N_("Budgets per task type, with their basis"),
                           [N_("task"), N_("budget"), N_("limit"), N_("happy path uses"), N_("basis")], rows,
                           note=N_("Happy path: a fault-free run that succeeds (evidence.happy_path)."))
    for name in names:
        for d in derive_limits(name, measure, seed):
            rows.append((name, d.budget, Phrase(N_("off")) if d.configured is None else f"{d.configured:g}",
                         f"{d.shortest:g}", f"{d.median:g}", f"{d.p95:g}", f"{d.max_all:g}",
                         Phrase(N_("not recovered")) if d.one_failure is None else f"{d.one_failure:g}", f"{d.limit:g}",
                         d.cut_ok, d.cut_failing, d.tail, d.rule))
    headers = [N_("task"), N_("budget"), N_("configured"), N_("shortest"), N_("median"), "p95", N_("max (all runs)"),
               N_("one failure adds"), N_("derived"), N_("normal runs cut"), N_("failing runs cut"),
               N_("long tail (why)"), N_("rule")]
    note = Phrase(N_("Measured: {measure} random cases per task type (seeds {first}…{last}), every budget lifted "
                     "×{factor}. shortest, median, p95: over the runs that succeeded; one failure: one timeout on the "
                     "happy path (research: one failed join). Check the derived limits on fresh seeds with "
                     "limit_check()."), measure=measure, first=seed, last=seed + measure - 1,
                  factor=f"{UNCAPPED_FACTOR:g}")
    return Table.build(N_("Budgets per task type, derived from the uncapped distribution"), headers, rows, note=note)


def limit_check(measure: int = 200, seed: int = 0, fresh_seed: int = 10_000, task: str | None = None) -> Table:
    """Derive the limits from seeds ``seed…`` and count, on ``measure`` fresh uncapped runs from ``fresh_seed…``,
    how many normal (successful) runs each derived limit would cut — the test a limit must pass out of sample."""
    rows = []
    for name in _task_names(task):
        fresh = measure_uncapped(name, measure, fresh_seed)
        for d in derive_limits(name, measure, seed):
            over = [r for r in fresh if r.used(d.budget) > d.limit + 1e-6]
            rows.append((name, d.budget, f"{d.limit:g}", sum(r.succeeded for r in fresh),
                         sum(r.succeeded for r in over), sum(not r.succeeded for r in over)))
    title = Phrase(N_("Derived limits on {measure} fresh runs per task type (seeds {seed}…)"), measure=measure,
                   seed=fresh_seed)
    return Table.build(title, [N_("task"), N_("budget"), N_("derived"), N_("fresh normal runs"), N_("normal runs cut"),
                               N_("failing runs cut")], rows,
                       note=Phrase(N_("Limits derived from seeds {first}…{last}; checked on other seeds."), first=seed,
                                   last=seed + measure - 1))


def stop_statuses() -> Table:
    """Evidence 3: the stop status definitions, with the shipped scenarios that end in each."""
    from agentloops.controller.sim.scenario_files import list_controller_scenarios

    shown: dict[str, list[str]] = {s: [] for s in STATUS_DEFINITIONS}
    for scenario in list_controller_scenarios():
        shown[scenario.expect.status].append(scenario.name)
        if scenario.resume is not None:
            shown[scenario.resume.expect.status].append(Phrase(N_("{name} (after resume)"), name=scenario.name))
    base = status_table()
    rows = [(*row, joined(shown[row[0]]) if shown[row[0]] else "-") for row in base.rows]
    return Table.build(base.title, [*list(base.headers), N_("scenarios")], rows, note=base.note)


def repeated_call_trace(scenario: str = "weather-reask") -> Table:
    """Evidence 4: a trace of a repeated call, turn by turn, showing why the state did not change.

    Columns: the action's fingerprint as the controller computed it (tool, normalised
    arguments, progress version — which only facts, settled items and user inputs move), the
    state version before and after (every change moves it, failures included), the state
    delta — or, when nothing changed, why — and the decision.
    """
    from agentloops.controller.running.scenarios import run_scenario

    run = run_scenario(scenario, trace_id=new_trace_id(f"evidence:{scenario}"))  # the same table every time
    rows = []
    for turn in run.turns:
        for action in turn.actions or [{"label": turn.action, "tool": None}]:
            recorded = action.get("fingerprint")
            fp = "-" if not recorded else f"({recorded[0]}, {recorded[1]}, v{recorded[2]})"
            rows.append((turn.turn, action["label"], fp, f"v{turn.state_version}→v{turn.state_version_after}",
                         clip(turn.observation, 30), turn.delta_text(), turn.decision))
    title = Phrase(N_("Repeated-call trace: {scenario} ({trace_id})"), scenario=scenario, trace_id=run.trace_id)
    return Table.build(title, [N_("turn"), N_("action"), N_("fingerprint"), N_("state"), N_("observation"),
                               N_("state delta (or why unchanged)"), N_("decision")], rows,
                       note=Phrase(N_("stop: {status} ({code}): {reason}"), status=run.status, code=run.code,
                                   reason=run.stop.reason))


_PROBES: tuple[tuple[str, str, dict[str, Any], tuple[Fault, ...], dict[str, Any]], ...] = (
    (N_("none (baseline)"), "weather_compare", {}, (), {}),
    (N_("timeout once"), "weather_compare", {}, (Fault(tool="get_weather", kind="timeout", times=1,
                                                    match={"city": "Beijing"}),), {}),
    (N_("timeout always (+ fallback)"), "weather_compare", {}, (
        Fault(tool="get_weather", kind="timeout", match={"city": "Beijing"}),
        Fault(tool="weather_backup", kind="timeout", match={"city": "Beijing"})), {}),
    (N_("rate limited once"), "weather_compare", {}, (Fault(tool="get_weather", kind="rate_limited", times=1,
                                                         match={"city": "Beijing"}),), {}),
    (N_("empty, task needs data"), "weather_compare", {}, (
        Fault(tool="get_weather", kind="empty", match={"city": "Beijing"}),
        Fault(tool="weather_backup", kind="empty", match={"city": "Beijing"})), {}),
    (N_("empty, task accepts 'not found'"), "recall_check", {"product": "kettle-k9"}, (), {}),
    (N_("format change"), "weather_compare", {}, (Fault(tool="get_weather", kind="format_change",
                                                     match={"city": "Beijing"}),), {}),
    (N_("invalid arguments once"), "weather_compare", {}, (), {"bad_arguments": 1}),
    (N_("invalid arguments twice"), "weather_compare", {}, (), {"bad_arguments": 2}),
    (N_("service rejects arguments"), "weather_compare", {}, (Fault(tool="get_weather", kind="reject_arguments",
                                                                 match={"city": "Beijing"}),), {}),
    (N_("missing parameter"), "order_status", {}, (), {}),
    (N_("permission denied (gate)"), "refund", {}, (), {"alternative": ("db_write", {
        "table": "refunds", "values": {"order_id": "A-1042", "amount": 25.0}})}),
    (N_("permission denied (backend)"), "weather_compare", {}, (Fault(tool="get_weather", kind="permission_denied",
                                                                   match={"city": "Beijing"}),), {}),
    (N_("not found"), "document_lookup", {"document_id": "B"}, (), {}),
    (N_("permanent error, no usable fallback"), "document_lookup", {"document_id": "A"}, (
        Fault(tool="read_metadata", kind="permanent_error"),), {}),
)


def error_routing(policy: PolicyLike | None = None) -> Table:
    """Evidence 5: inject each fault, run the controller, and show the route taken and where it ended.

    Every row is a real run (stub tools, declared faults); the route column is
    what the policy decided for each tool result, in order.
    """
    chosen = resolve_policy(policy)
    rows = []
    for fault, task_type, params, faults, planner in _PROBES:
        task: Task = make_task(task_type, params)
        run = Controller(task, TaskPlanner(task, **planner), policy=chosen, faults=faults,
                         trace_id=new_trace_id(f"probe-{fault}"), label=fault).run()
        acted = [a for t in run.turns for a in t.actions if a.get("tool")]
        statuses = " → ".join(f"{a['status'] or 'not run'}" for a in acted)
        routes = " → ".join(f"{a['route']}" for a in acted)
        rows.append((fault, task_type, statuses, routes, f"{run.status} ({run.code})",
                     int(run.usage["retries"]), clip(" → ".join(run.actions), 80)))
    return Table.build(Phrase(N_("Error routing, run for real under policy {policy!r}"), policy=chosen.name),
                       [N_("fault"), N_("task"), N_("tool statuses"), N_("routes"), N_("stop"), N_("retries"),
                        N_("actions")], rows,
                       note=chosen.description)


def fault_regression(before: PolicyLike = "naive", after: PolicyLike = "default",
                     scenarios: Sequence[str] | None = None) -> Regression:
    """Evidence 6: the fault-injection regression set, recorded under ``before`` and replayed under ``after``."""
    return regression(before, after, scenarios)


EVIDENCE: dict[str, str] = {
    N_("completion conditions per task"): "completion_conditions()  |  agentloops controller conditions",
    N_("budget configuration with its basis"):
        "budget_basis(measure=200)  |  agentloops controller budgets --measure 200",
    N_("stop status definitions"): "stop_statuses()  |  agentloops controller statuses",
    N_("a repeated-call trace showing why state did not change"):
        "repeated_call_trace()  |  agentloops controller repeat",
    N_("routing of empty / timeout / permission / argument errors"):
        "error_routing()  |  agentloops controller routing",
    N_("fault-injection regression with before/after differences"): "fault_regression()  |  agentloops controller "
                                                                  "regression --before naive --after default",
}
"""Each piece of evidence and the one call (Python | CLI) that produces it."""


def evidence_index() -> Table:
    """The six pieces of evidence and how to produce each."""
    rows = [(i, Phrase(name), how.split("|")[0].strip(), how.split("|")[1].strip())
            for i, (name, how) in enumerate(EVIDENCE.items(), start=1)]
    return Table.build(N_("The six pieces of evidence"),
                       ["#", N_("evidence"), N_("Python (agentloops.controller)"), N_("CLI")], rows)
