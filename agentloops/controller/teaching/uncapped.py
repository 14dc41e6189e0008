"""Randomized runs of every task type with every limit lifted: what the runs need, to size the budgets from.

To size a budget without circular reasoning, :func:`measure_uncapped` runs the randomized cases of *every*
task type (:func:`task_case`) with every limit lifted far out of reach (:func:`uncapped`): a limit justified by
runs that the same limit cut off would only confirm itself. Weather's cases are those of
:func:`~agentloops.controller.teaching.experiments.random_case`.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from agentloops.controller.controller import Controller
from agentloops.controller.engine import new_trace_id
from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.policy.budgets import BUDGET_NAMES, Budget, BudgetName
from agentloops.controller.sim.faults import Fault
from agentloops.controller.sim.planners import TaskPlanner
from agentloops.controller.task.tasks import TASK_TYPES, Task, make_task
from agentloops.controller.teaching.experiments import FAULT_MENU, random_case
from agentloops.i18n import N_, _

UNCAPPED_FACTOR = 25
"""How far :func:`uncapped` lifts each limit: far past anything a run that converges would use."""

CASE_SPACE: dict[str, tuple[tuple[dict[str, Any], ...], dict[str, Any], dict[str, Any],
                            tuple[tuple[str, dict[str, Any]], ...]]] = {
    "order_status": (({"order_id": "A-1042"}, {"order_id": "B-2001"}), {}, {}, (("lookup_order", {}),)),
    "refund": (({"granted": ["orders:read", "payments:refund"]},), {}, {"high_risk": "allow"},
               (("issue_refund", {}),)),
    "document_lookup": (({"document_id": "A"}, {"document_id": "C"}), {}, {}, (("read_metadata", {}),)),
    "recall_check": (({"product": "kettle-k2"}, {"product": "kettle-k9"}), {}, {}, (("search_recalls", {}),)),
    "research": (({},), {"parallel": True}, {},
                 tuple(("fetch", {"source_id": s}) for s in ("s1", "s2", "s3", "s4"))),
}
"""Per task type other than weather: (parameter choices, fixed planner options, policy fields, the
(tool, match) places a fault may land). Every parameter choice can succeed when nothing fails."""


@dataclass(frozen=True)
class TaskCase:
    """One reproducible random setting of any task type.

    Attributes:
        task_type: the task type.
        seed: the seed it was drawn from.
        params: task parameters.
        faults: declared faults.
        planner: keyword arguments of the :class:`TaskPlanner`.
        policy: policy fields the task type needs (a refund is allowed to run here).
    """

    task_type: str
    seed: int
    params: dict[str, Any]
    faults: tuple[Fault, ...]
    planner: dict[str, Any]
    policy: dict[str, Any]

    def task(self) -> Task:
        """The task of this case."""
        return make_task(self.task_type, self.params)

    def run(self, budget: Budget | None = None) -> ControllerRun:
        """Run the case under the controller (``budget``: instead of the task type's)."""
        task = self.task()
        return Controller(task, TaskPlanner(task, **self.planner), policy={"name": "measured", **self.policy},
                          faults=self.faults, budget=budget, label=f"{self.task_type}-{self.seed}",
                          trace_id=new_trace_id(f"case-{self.task_type}-{self.seed}")).run()

    def describe(self) -> str:
        """One line: parameters, faults and quirks."""
        faults = "; ".join(f.describe() for f in self.faults) or _("no faults")
        quirks = ", ".join(f"{k}={v}" for k, v in self.planner.items()
                           if k not in ("seed", "parallel") and v not in (0, 0.0, None))
        return f"{json.dumps(self.params, ensure_ascii=False)} | {faults} | {quirks or 'no quirks'}"


def task_case(task_type: str, seed: int) -> TaskCase:
    """Draw one case of ``task_type`` from ``seed``; for weather, the same case as :func:`random_case`."""
    if task_type == "weather_compare":
        case = random_case(seed)
        return TaskCase(task_type, seed, {"cities": list(case.cities)}, case.faults, dict(case.planner), {})
    if task_type not in CASE_SPACE:
        from agentloops.controller.vocabulary.errors import ConfigError

        raise ConfigError(N_("unknown task type {name}; expected one of: {names}").format(
            name=repr(task_type), names=", ".join(TASK_TYPES)))
    choices, fixed, policy, places = CASE_SPACE[task_type]
    rng = random.Random(f"{task_type}:{seed}")
    params = dict(rng.choice(choices))
    faults = []
    for tool, match in places:
        if rng.random() < 0.35:
            kind, times = rng.choice(FAULT_MENU)
            faults.append(Fault(tool=tool, kind=kind, times=times, match=match))
    planner = {**fixed, "window": rng.choice([None, None, 4]), "p_repeat": rng.choice([0.0, 0.0, 0.1, 0.3]),
               "p_early_claim": rng.choice([0.0, 0.0, 0.1, 0.25]), "p_bad_arguments": rng.choice([0.0, 0.0, 0.1]),
               "p_forget": rng.choice([0.0, 0.0, 0.2]), "seed": seed}
    return TaskCase(task_type, seed, params, tuple(faults), planner, dict(policy))


def uncapped(budget: Budget, factor: float = UNCAPPED_FACTOR) -> Budget:
    """``budget`` with every limit raised ``factor``-fold, so the runs show what they need, not what they were
    allowed. A limit of 0 stays 0: that is a policy (a refund is never retried), not a size."""
    lifted: dict[str, Any] = {}
    for name in BUDGET_NAMES:
        value = budget.limit(name)
        if value is not None:
            lifted[name] = {"value": value * factor, "basis": f"lifted {factor:g}× to measure what runs need"}
    return budget.with_values(**lifted)


@dataclass(frozen=True)
class Measured:
    """What one uncapped run used: the case's ``seed``, how the run ended (``status``, stop ``code``), its
    ``usage`` of every budget, and the ``case`` in one line."""

    seed: int
    status: str
    code: str
    usage: dict[str, float]
    case: str

    @property
    def succeeded(self) -> bool:
        """True when the completion condition held."""
        return self.status == "succeeded"

    def used(self, name: BudgetName) -> float:
        """The run's use of one budget."""
        return self.usage[name]


def measure_uncapped(task_type: str, n: int, seed: int = 0) -> tuple[Measured, ...]:
    """Run ``n`` random cases of ``task_type`` (seeds ``seed … seed+n-1``) with every budget lifted
    (:func:`uncapped`) and record what each used: steps, wall time, model calls, tool calls, tokens, the
    largest request and retries."""
    out = []
    for i in range(n):
        case = task_case(task_type, seed + i)
        run = case.run(budget=uncapped(case.task().budget))
        out.append(Measured(case.seed, run.status, run.code, dict(run.usage), case.describe()))
    return tuple(out)
