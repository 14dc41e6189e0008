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

Sizing a budget from randomized runs of every task type, uncapped, is
:mod:`~agentloops.controller.teaching.uncapped`'s.
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
from agentloops.controller.policy.budgets import BUDGET_NAMES
from agentloops.controller.policy.error_policy import PolicyLike
from agentloops.controller.sim.executor import call_tool
from agentloops.controller.sim.faults import Fault, FaultInjector, FaultKind
from agentloops.controller.sim.planners import TaskPlanner
from agentloops.controller.task.state import Fact
from agentloops.controller.task.task_types import WEATHER_CITIES
from agentloops.controller.task.tasks import Task, make_task
from agentloops.controller.vocabulary.render import Table
from agentloops.controller.vocabulary.tools import ASK_USER, ToolResult
from agentloops.i18n import N_, Phrase, _
from agentloops.loop import run_loop
from agentloops.run_errors import RunError

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
