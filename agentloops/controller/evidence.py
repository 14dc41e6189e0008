"""The article's six pieces of evidence, each produced by one function call.

"If a project claims to have solved runaway loops, it should be able to show":

1. :func:`completion_conditions` — each task type's business completion condition;
2. :func:`budget_basis` — the budgets per task type with their basis, next to what runs use;
3. :func:`stop_statuses` — the stop status definitions;
4. :func:`repeated_call_trace` — a repeated-call trace that shows why the state did not change;
5. :func:`error_routing` — how empty, timeout, permission and argument errors are routed, by running them;
6. :func:`fault_regression` — a fault-injection regression set with before/after trajectory differences.

Each returns an object that prints as text and renders as HTML; the CLI
prints the same objects (``agentloops controller conditions|budgets|statuses|
repeat|routing|regression``).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from agentloops.controller.budgets import BUDGET_NAMES
from agentloops.controller.controller import Controller
from agentloops.controller.engine import new_trace_id
from agentloops.controller.faults import Fault
from agentloops.controller.planners import TaskPlanner
from agentloops.controller.policy import PolicyLike, resolve_policy
from agentloops.controller.render import Table, clip
from agentloops.controller.replaying import Regression, regression
from agentloops.controller.result import ControllerRun
from agentloops.controller.status import STATUS_DEFINITIONS, status_table
from agentloops.controller.tasks import TASK_TYPES, Task, completion_table, make_task

HAPPY_PATHS: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "weather_compare": ({}, {}, {}),
    "order_status": ({"order_id": "A-1042"}, {}, {}),
    "refund": ({"granted": ["orders:read", "payments:refund"]}, {}, {"high_risk": "allow"}),
    "document_lookup": ({"document_id": "A"}, {}, {}),
    "recall_check": ({"product": "kettle-k2"}, {}, {}),
    "research": ({}, {"parallel": True}, {}),
}
"""Per task type: (task parameters, planner options, policy fields) of a fault-free run that succeeds."""


def happy_path(task_type: str) -> ControllerRun:
    """A fault-free run of the task type that succeeds: the baseline its budgets are sized from."""
    params, planner, policy = HAPPY_PATHS[task_type]
    task = make_task(task_type, params)
    return Controller(task, TaskPlanner(task, **planner), policy={"name": "happy-path", **policy},
                      trace_id=new_trace_id(f"happy-{task_type}"), label=f"happy-{task_type}").run()


def completion_conditions() -> Table:
    """Evidence 1: the business completion condition of every task type."""
    return completion_table()


def budget_basis(task: str | None = None, *, measure: int = 0, seed: int = 0) -> Table:
    """Evidence 2: every budget of every task type (or one), its value, its basis, and what runs use.

    Args:
        task: one task type name (default: all).
        measure: for ``weather_compare``, also run this many random cases (faults and quirky
            models) and show the median, 95th percentile and maximum use, and how many runs
            stopped on each budget.
        seed: first seed of the random cases.
    """
    from agentloops.controller.experiments import random_runs

    names = [task] if task is not None else list(TASK_TYPES)
    for name in names:
        if name not in TASK_TYPES:
            from agentloops.controller.errors import ConfigError

            raise ConfigError(f"unknown task type {name!r}; expected one of: {', '.join(TASK_TYPES)}")
    measured: dict[str, list[float]] = {}
    stopped_by: Counter[str] = Counter()
    if measure and "weather_compare" in names:
        runs = list(random_runs(measure, seed))
        for name in BUDGET_NAMES:
            measured[name] = sorted(r.usage[name] for r in runs)
        stopped_by.update(r.stop.budget for r in runs if r.status == "budget_exhausted" and r.stop.budget)
    headers = ["task", "budget", "limit", "happy path uses", "basis"]
    if measured:
        headers[4:4] = ["median", "p95", "max", "runs stopped by it"]
    rows = []
    for name in names:
        happy = happy_path(name)
        kind = TASK_TYPES[name]
        for budget in BUDGET_NAMES:
            limit = getattr(kind.budget, budget)
            row: list[Any] = [name, budget, str(limit), f"{happy.usage[budget]:g}"]
            if measured:
                if name == "weather_compare":
                    values = measured[budget]
                    p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
                    row += [f"{statistics.median(values):g}", f"{p95:g}", f"{values[-1]:g}", stopped_by[budget]]
                else:
                    row += ["", "", "", ""]
            row.append(limit.basis)
            rows.append(row)
    note = "Happy path: a fault-free run that succeeds (evidence.happy_path)."
    if measured:
        note += (f" Measured: {measure} random weather cases (seeds {seed}…{seed + measure - 1}) under the default "
                 "policy.")
    return Table.build("Budgets per task type, with their basis", headers, rows, note=note)


def stop_statuses() -> Table:
    """Evidence 3: the stop status definitions, with the shipped scenarios that end in each."""
    from agentloops.controller.scenarios import list_controller_scenarios

    shown: dict[str, list[str]] = {s: [] for s in STATUS_DEFINITIONS}
    for scenario in list_controller_scenarios():
        shown[scenario.expect.status].append(scenario.name)
        if scenario.resume is not None:
            shown[scenario.resume.expect.status].append(f"{scenario.name} (after resume)")
    base = status_table()
    rows = [(*row, ", ".join(shown[row[0]]) or "-") for row in base.rows]
    return Table.build(base.title, [*list(base.headers), "scenarios"], rows, note=base.note)


def repeated_call_trace(scenario: str = "weather-reask") -> Table:
    """Evidence 4: a trace of a repeated call, turn by turn, showing why the state did not change.

    Columns: the action's fingerprint as the controller computed it (tool, normalised
    arguments, progress version — which only facts, settled items and user inputs move), the
    state version before and after (every change moves it, failures included), the state
    delta — or, when nothing changed, why — and the decision.
    """
    from agentloops.controller.scenarios import run_scenario

    run = run_scenario(scenario, trace_id=new_trace_id(f"evidence:{scenario}"))  # the same table every time
    rows = []
    for turn in run.turns:
        for action in turn.actions or [{"label": turn.action, "tool": None}]:
            recorded = action.get("fingerprint")
            fp = "-" if not recorded else f"({recorded[0]}, {recorded[1]}, v{recorded[2]})"
            rows.append((turn.turn, action["label"], fp, f"v{turn.state_version}→v{turn.state_version_after}",
                         clip(turn.observation, 30), turn.delta_text(), turn.decision))
    return Table.build(f"Repeated-call trace: {scenario} ({run.trace_id})",
                       ["turn", "action", "fingerprint", "state", "observation", "state delta (or why unchanged)",
                        "decision"], rows, note=f"stop: {run.status} ({run.code}): {run.stop.reason}")


_PROBES: tuple[tuple[str, str, dict[str, Any], tuple[Fault, ...], dict[str, Any]], ...] = (
    ("none (baseline)", "weather_compare", {}, (), {}),
    ("timeout once", "weather_compare", {}, (Fault(tool="get_weather", kind="timeout", times=1,
                                                    match={"city": "Beijing"}),), {}),
    ("timeout always (+ fallback)", "weather_compare", {}, (
        Fault(tool="get_weather", kind="timeout", match={"city": "Beijing"}),
        Fault(tool="weather_backup", kind="timeout", match={"city": "Beijing"})), {}),
    ("rate limited once", "weather_compare", {}, (Fault(tool="get_weather", kind="rate_limited", times=1,
                                                         match={"city": "Beijing"}),), {}),
    ("empty, task needs data", "weather_compare", {}, (
        Fault(tool="get_weather", kind="empty", match={"city": "Beijing"}),
        Fault(tool="weather_backup", kind="empty", match={"city": "Beijing"})), {}),
    ("empty, task accepts 'not found'", "recall_check", {"product": "kettle-k9"}, (), {}),
    ("format change", "weather_compare", {}, (Fault(tool="get_weather", kind="format_change",
                                                     match={"city": "Beijing"}),), {}),
    ("invalid arguments once", "weather_compare", {}, (), {"bad_arguments": 1}),
    ("invalid arguments twice", "weather_compare", {}, (), {"bad_arguments": 2}),
    ("service rejects arguments", "weather_compare", {}, (Fault(tool="get_weather", kind="reject_arguments",
                                                                 match={"city": "Beijing"}),), {}),
    ("missing parameter", "order_status", {}, (), {}),
    ("permission denied (gate)", "refund", {}, (), {"alternative": ("db_write", {
        "table": "refunds", "values": {"order_id": "A-1042", "amount": 25.0}})}),
    ("permission denied (backend)", "weather_compare", {}, (Fault(tool="get_weather", kind="permission_denied",
                                                                   match={"city": "Beijing"}),), {}),
    ("not found", "document_lookup", {"document_id": "B"}, (), {}),
    ("permanent error, no usable fallback", "document_lookup", {"document_id": "A"}, (
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
    return Table.build(f"Error routing, run for real under policy {chosen.name!r}",
                       ["fault", "task", "tool statuses", "routes", "stop", "retries", "actions"], rows,
                       note=chosen.description)


def fault_regression(before: PolicyLike = "naive", after: PolicyLike = "default",
                     scenarios: Sequence[str] | None = None) -> Regression:
    """Evidence 6: the fault-injection regression set, recorded under ``before`` and replayed under ``after``."""
    return regression(before, after, scenarios)


EVIDENCE: dict[str, str] = {
    "completion conditions per task": "completion_conditions()  |  agentloops controller conditions",
    "budget configuration with its basis": "budget_basis(measure=200)  |  agentloops controller budgets --measure 200",
    "stop status definitions": "stop_statuses()  |  agentloops controller statuses",
    "a repeated-call trace showing why state did not change": "repeated_call_trace()  |  agentloops controller repeat",
    "routing of empty / timeout / permission / argument errors": "error_routing()  |  agentloops controller routing",
    "fault-injection regression with before/after differences": "fault_regression()  |  agentloops controller "
                                                                  "regression --before naive --after default",
}
"""Each piece of evidence and the one call (Python | CLI) that produces it."""


def evidence_index() -> Table:
    """The six pieces of evidence and how to produce each."""
    rows = [(i, name, how.split("|")[0].strip(), how.split("|")[1].strip())
            for i, (name, how) in enumerate(EVIDENCE.items(), start=1)]
    return Table.build("The six pieces of evidence", ["#", "evidence", "Python (agentloops.controller)", "CLI"], rows)
