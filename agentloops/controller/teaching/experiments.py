"""Many randomized runs: a cap-only loop against the controller, on the same models and faults.

A single run proves little about stop rules; a distribution does. Each
:class:`RandomCase` draws, from one seed, two cities, a few declared faults
and a planner with quirks (a short attention window, repeats, early claims,
bad arguments, forgetting the state). The same case then runs twice:

- **cap-only**: the core :func:`agentloops.run_loop` under the ``correct``
  criterion with ``max_steps`` as its only budget — no task state, no error
  policy, no completion check; a reply without tool calls ends it;
- **controller**: :class:`~agentloops.controller.controller.Controller` with the
  task's budgets, the policy and the completion condition.

The results turn into pandas (:meth:`LoopComparison.to_frame`) for histograms
of stop reasons and steps used.

To size a budget without circular reasoning, :func:`measure_uncapped` runs the
randomized cases of *every* task type (:func:`task_case`) with every limit
lifted far out of reach (:func:`uncapped`): a limit justified by runs that the
same limit cut off would only confirm itself.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from agentloops.controller.controller import Controller
from agentloops.controller.engine import new_trace_id
from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.policy.budgets import BUDGET_NAMES, Budget, BudgetName
from agentloops.controller.policy.error_policy import PolicyLike
from agentloops.controller.sim.executor import call_tool
from agentloops.controller.sim.faults import Fault, FaultInjector, FaultKind
from agentloops.controller.sim.planners import TaskPlanner
from agentloops.controller.task.state import Fact
from agentloops.controller.task.task_types import WEATHER_CITIES
from agentloops.controller.task.tasks import TASK_TYPES, Task, make_task
from agentloops.controller.vocabulary.render import Table
from agentloops.controller.vocabulary.tools import ASK_USER, ToolResult
from agentloops.errors import RunError
from agentloops.i18n import N_, Phrase, _
from agentloops.loop import run_loop

if TYPE_CHECKING:
    import pandas as pd

FAULT_MENU: tuple[tuple[FaultKind, int | None], ...] = (
    ("timeout", 1), ("timeout", 2), ("timeout", None), ("rate_limited", 1), ("empty", None),
    ("format_change", None), ("permanent_error", None),
)
"""(kind, times) pairs a random case draws its faults from (``None``: always)."""


NO_QUIRKS = N_("no quirks")
"""A case's planner quirks when it has none."""

@dataclass(frozen=True)
class RandomCase:
    """One reproducible random setting: task parameters, faults and planner quirks.

    Attributes:
        seed: the seed it was drawn from.
        cities: the two cities to compare.
        faults: declared faults.
        planner: keyword arguments of the :class:`TaskPlanner`.
    """

    seed: int
    cities: tuple[str, str]
    faults: tuple[Fault, ...]
    planner: dict[str, Any]

    def task(self) -> Task:
        """The task of this case."""
        return make_task("weather_compare", cities=list(self.cities))

    def model(self, task: Task | None = None) -> TaskPlanner:
        """A fresh planner with this case's quirks (models keep state, so each run needs its own)."""
        return TaskPlanner(task or self.task(), **self.planner)

    def describe(self) -> str:
        """One line: faults and quirks (in the language in use)."""
        faults = "; ".join(f.describe() for f in self.faults) or _("no faults")
        quirks = ", ".join(f"{k}={v}" for k, v in self.planner.items() if k != "seed" and v not in (0, 0.0, None))
        return f"{faults} | {quirks or _(NO_QUIRKS)}"


def random_case(seed: int) -> RandomCase:
    """Draw one case from ``seed`` (the same seed always gives the same case)."""
    rng = random.Random(seed)
    cities = tuple(rng.sample(WEATHER_CITIES, 2))
    faults = []
    for city in cities:
        if rng.random() < 0.35:
            kind, times = rng.choice(FAULT_MENU)
            faults.append(Fault(tool="get_weather", kind=kind, times=times, match={"city": city}))
            if kind in ("timeout", "empty", "permanent_error") and times is None and rng.random() < 0.5:
                faults.append(Fault(tool="weather_backup", kind=kind, times=None, match={"city": city}))
    planner = {
        "window": rng.choice([None, None, 4, 2]),
        "p_repeat": rng.choice([0.0, 0.0, 0.1, 0.3]),
        "p_early_claim": rng.choice([0.0, 0.0, 0.1, 0.25]),
        "p_bad_arguments": rng.choice([0.0, 0.0, 0.1]),
        "p_forget": rng.choice([0.0, 0.0, 0.2]),
        "seed": seed,
    }
    return RandomCase(seed, (cities[0], cities[1]), tuple(faults), planner)


@dataclass(frozen=True)
class CapOnlyRun:
    """A cap-only run judged afterwards against the completion condition it never checked: its ``outcome``
    (``answered_verified`` / ``answered_unverified``: it answered, and the condition holds / does not;
    ``hit_cap``; or ``raised:<code>``), model calls (``steps``), tool executions (``tool_calls``) and the
    tool ``statuses`` in order."""

    outcome: str
    steps: int
    tool_calls: int
    statuses: tuple[str, ...]


def run_cap_only(task: Task, model: Any, faults: Sequence[Fault] = (), max_steps: int = 8, *,
                 feedback: str | None = None) -> CapOnlyRun:
    """The same task in the core loop with only a step cap (see the module docstring). ``feedback``: a text
    that replaces every result but ``ok`` (a system that flattens "empty", "timeout", "bad arguments" into one)."""
    injector = FaultInjector(faults)
    toolbox = task.toolbox()
    results: list[tuple[str, dict[str, Any], ToolResult]] = []

    def make(name: str) -> Any:
        def run(args: dict[str, Any]) -> str:
            result = call_tool(toolbox, name, args, injector=injector, granted=task.granted)
            results.append((name, args, result))
            if feedback is not None and result.status != "ok":
                return feedback
            return json.dumps(result.observation(name, args), ensure_ascii=False)
        return run

    tools: dict[str, Any] = {name: make(name) for name in toolbox.names()}
    tools[ASK_USER] = lambda args: json.dumps({"tool": ASK_USER, "status": "ok", "data": "(nobody answers)"})
    try:
        record = run_loop(model, tools, criterion="correct", max_steps=max_steps, prompt=task.prompt,
                          label="cap-only")
        outcome = "answered"
    except RunError as error:
        if error.record is None:
            raise
        record = error.record
        outcome = "hit_cap" if error.code == "max_steps" else f"raised:{error.code}"
    state = task.new_state()
    for name, args, result in results:
        item = task.kind.item_for(name, args)
        if item is None or result.status not in ("ok", "empty"):
            continue
        made = task.kind.fact(item, result)
        if isinstance(made, tuple) and (result.status == "ok" or task.kind.allows_not_found):
            state.add_fact(Fact(item, made[0], made[1], result.source or name, 0))
    if outcome == "answered":
        outcome = "answered_verified" if task.assess(state) == "complete" else "answered_unverified"
    steps = record.steps if record is not None else 0
    return CapOnlyRun(outcome, steps, len(results), tuple(r.status for _call, _args, r in results))


def run_case(case: RandomCase, *, policy: PolicyLike | None = None, **overrides: Any) -> ControllerRun:
    """Run one random case under the controller."""
    task = case.task()
    return Controller(task, case.model(task), policy=policy, faults=case.faults,
                      trace_id=new_trace_id(f"random-{case.seed}"), label=f"random-{case.seed}", **overrides).run()


def random_runs(n: int, seed: int = 0, *, policy: PolicyLike | None = None, **overrides: Any
                ) -> Iterator[ControllerRun]:
    """Controller runs over ``n`` random cases drawn from seeds ``seed … seed+n-1``."""
    for i in range(n):
        yield run_case(random_case(seed + i), policy=policy, **overrides)


CAP_OUTCOME_STATUS: dict[str, str] = {
    "answered_verified": "succeeded",
    "answered_unverified": Phrase(N_("false success")),
    "hit_cap": Phrase(N_("hit the cap")),
}


@dataclass(frozen=True)
class LoopComparison:
    """Cap-only loop and controller over the same random cases.

    Attributes:
        cap: the cap-only loop's ``max_steps``.
        policy: the controller's policy name.
        rows: one dict per case (see :meth:`to_frame` for the columns).
    """

    cap: int
    policy: str
    rows: tuple[dict[str, Any], ...]

    def to_frame(self) -> pd.DataFrame:
        """One row per case: seed, description, cap-only outcome and steps, controller status, code, steps,
        tool calls, retries, whether every budget held (imports pandas)."""
        import pandas as pd

        return pd.DataFrame(list(self.rows))

    def counts(self) -> Table:
        """How each arm ended, counted."""
        cap = Counter(CAP_OUTCOME_STATUS.get(r["cap_outcome"], r["cap_outcome"]) for r in self.rows)
        ctl = Counter(r["ctl_status"] for r in self.rows)
        cap_only, controller = Phrase(N_("cap-only")), Phrase(N_("controller"))
        rows = [(cap_only, k, v) for k, v in cap.most_common()] + [(controller, k, v) for k, v in ctl.most_common()]
        title = Phrase(N_("How {n} random runs ended (cap {cap} vs controller, policy {policy})"), n=len(self.rows),
                       cap=self.cap, policy=self.policy)
        return Table.build(title, [N_("loop"), N_("ended as"), N_("runs")], rows)  # data: records() reads them

    def summary(self) -> dict[str, float]:
        """Headline figures (computed, for notebooks to quote)."""
        n = len(self.rows)
        return {
            "runs": n,
            "cap_false_success": sum(r["cap_outcome"] == "answered_unverified" for r in self.rows),
            "cap_hit_cap": sum(r["cap_outcome"] == "hit_cap" for r in self.rows),
            "ctl_succeeded": sum(r["ctl_status"] == "succeeded" for r in self.rows),
            "ctl_unverified_success": sum(r["ctl_status"] == "succeeded" and not r["ctl_verified"] for r in self.rows),
            "cap_mean_steps": round(sum(r["cap_steps"] for r in self.rows) / n, 3) if n else 0.0,
            "ctl_mean_steps": round(sum(r["ctl_steps"] for r in self.rows) / n, 3) if n else 0.0,
            "ctl_budget_violations": sum(not r["ctl_within_budget"] for r in self.rows),
        }

    def __str__(self) -> str:
        return f"{self.counts()}\n{json.dumps(self.summary())}"

    def _repr_html_(self) -> str:
        return self.counts()._repr_html_()


def compare_loops(n: int = 200, seed: int = 0, *, cap: int = 8, policy: PolicyLike | None = None) -> LoopComparison:
    """Run ``n`` random cases through the cap-only loop and the controller."""
    rows = []
    policy_name = "default"
    for i in range(n):
        case = random_case(seed + i)
        task = case.task()
        baseline = run_cap_only(task, case.model(task), case.faults, max_steps=cap)
        run = run_case(case, policy=policy)
        policy_name = run.policy.name
        rows.append(comparison_row(case, baseline, run))
    return LoopComparison(cap, policy_name, tuple(rows))


def comparison_row(case: RandomCase, baseline: CapOnlyRun, run: ControllerRun) -> dict[str, Any]:
    """One case of a :class:`LoopComparison`: how the cap-only loop and the controller ended it."""
    return {**cap_only_columns(case, baseline), **controller_columns(run)}


def cap_only_columns(case: RandomCase, baseline: CapOnlyRun) -> dict[str, Any]:
    """The case's and the cap-only loop's columns of a :func:`comparison_row`."""
    return {"seed": case.seed, "case": case.describe(),
            "cap_outcome": baseline.outcome, "cap_steps": baseline.steps, "cap_tool_calls": baseline.tool_calls}


def controller_columns(run: ControllerRun) -> dict[str, Any]:
    """The controller's columns of a :func:`comparison_row`."""
    return {"ctl_status": run.status, "ctl_code": run.code, "ctl_steps": run.steps,
            "ctl_tool_calls": int(run.usage["tool_calls"]), "ctl_retries": int(run.usage["retries"]),
            "ctl_wall_s": run.usage["wall_time_s"], "ctl_verified": run.stop.verified,
            "ctl_within_budget": all(run.within_budget.values()),
            **{f"ctl_used_{name}": run.usage[name] for name in BUDGET_NAMES}}


def case_dict(case: RandomCase) -> dict[str, Any]:
    """A case as JSON (faults as dicts)."""
    data = asdict(case)
    data["faults"] = [f.model_dump(mode="json") for f in case.faults]
    return data


# -- every task type, uncapped -----------------------------------------------------------------

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
