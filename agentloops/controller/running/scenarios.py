"""Controller scenarios: a task, a model, faults and the expected stop — kept as data.

Each file under ``data/controller/`` is one regression case: which task, which
stub model (a scripted list of replies or a :class:`~agentloops.controller.sim.planners.TaskPlanner`
with quirks), which faults, which policy, and what must happen — the stop
status, the reason code and the exact action sequence (and, for a task that
waits for the user, the answer and what happens after it). Files are
validated on load; a malformed one fails with one line naming the file, the
field and what was expected.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentloops.controller.controller import Controller
from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.policy.budgets import BudgetCheck
from agentloops.controller.policy.error_policy import PolicyLike, Router
from agentloops.controller.running import resuming
from agentloops.controller.sim.planners import build_model
from agentloops.controller.sim.scenario_files import (
    Expectation,
    ScenarioLike,
    list_controller_scenarios,
    load_controller_scenario,
)
from agentloops.controller.sim.timeline import Controls
from agentloops.controller.stages import Completion, Stages
from agentloops.controller.stopping.progress import RepeatCheck
from agentloops.controller.task.context import COMPACTORS
from agentloops.controller.task.joins import JoinCheck
from agentloops.controller.task.task_types import Update
from agentloops.controller.vocabulary.render import Table, clip
from agentloops.i18n import N_, Said, _, speaking
from agentloops.stubs import Model

__all__ = ["ScenarioCheck", "build_controller", "check_scenario", "run_scenario", "scenario_table"]

def build_controller(scenario: ScenarioLike, *, policy: PolicyLike | None = None, trace: str | Path | None = None,
                     model: Model | None = None, trace_id: str | None = None, **overrides: Any) -> Controller:
    """A ready-to-run controller for a scenario (``policy``, ``model`` and other keywords override it).

    Each run gets its own trace id (pass ``trace_id=new_trace_id(seed)`` for a reproducible one);
    the scenario name is the run's ``label``.
    """
    loaded = load_controller_scenario(scenario)
    task = loaded.build_task()
    controls = Controls(**loaded.controls.model_dump()) if loaded.controls else None
    options: dict[str, Any] = {
        "policy": policy if policy is not None else loaded.policy,
        "faults": loaded.faults,
        "context": loaded.context,
        "compactor": COMPACTORS[loaded.compactor],
        "send_state": loaded.send_state,
        "controls": controls,
        "trace": trace,
        "trace_id": trace_id,  # None: a fresh random id per run; the scenario name is the label
        "label": loaded.name,
        "scenario": loaded.model_dump(mode="json"),
    }
    options.update(overrides)
    return Controller(task, model if model is not None else build_model(loaded, task), **options)


def run_scenario(scenario: ScenarioLike, *, policy: PolicyLike | None = None, trace: str | Path | None = None,
                 resume: bool = False, completion: Completion | None = None, update: Update | None = None,
                 route: Router | None = None, budget_check: BudgetCheck | None = None,
                 repeat: RepeatCheck | None = None, join: JoinCheck | None = None, **overrides: Any) -> ControllerRun:
    """Run a scenario; with ``resume=True`` a waiting run is resumed with the scenario's answer.

    ``completion``, ``update``, ``route``, ``budget_check``, ``repeat`` and ``join`` replace the package's
    stage of that name with your own function of the same shape (:mod:`~agentloops.controller.stages`).

    Example:
        >>> run_scenario("weather-normal").status
        'succeeded'
        >>> run_scenario("weather-early-claim", completion=lambda items, facts, need: "complete").status
        'succeeded'
    """
    loaded = load_controller_scenario(scenario)
    stages = Stages.of(completion=completion, update=update, route=route, budget_check=budget_check, repeat=repeat,
                       join=join)
    run = build_controller(loaded, policy=policy, trace=trace, stages=stages, **overrides).run()
    if resume and run.status == "waiting_for_user" and loaded.resume is not None:
        return resuming.resume(run, loaded.resume.answer, stages=stages)
    return run


@dataclass(frozen=True)
class ScenarioCheck:
    """Expected against actual for one scenario (and its resume).

    Attributes:
        name: the scenario.
        runs: the run, and the resumed run when there is one.
        problems: one line per mismatch (empty when everything matched).
    """

    name: str
    runs: tuple[ControllerRun, ...]
    problems: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """True when every expectation held."""
        return not self.problems

    def __str__(self) -> str:
        verdict = "ok" if self.ok else "FAILED: " + "; ".join(self.problems)
        return f"{self.name}: " + " → ".join(f"{r.status} ({r.code})" for r in self.runs) + f" — {verdict}"

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.ok else "#b35900"
        return f"<div style='color:{colour}'>{html.escape(str(self))}</div>"


def _compare(expect: Expectation, run: ControllerRun, actions: Sequence[str], where: str) -> list[str]:
    problems = []
    if run.status != expect.status:
        problems.append(f"{where}status: expected {expect.status}, got {run.status}")
    if run.code != expect.code:
        problems.append(f"{where}code: expected {expect.code}, got {run.code}")
    if list(actions) != list(expect.actions):
        problems.append(f"{where}actions: expected {list(expect.actions)}, got {list(actions)}")
    if expect.budget is not None and run.stop.budget != expect.budget:
        problems.append(f"{where}budget: expected {expect.budget}, got {run.stop.budget}")
    if expect.call_states:
        from agentloops.controller.vocabulary.tools import action_label

        states: dict[str, str] = {}
        for call in run.calls:
            args = json.loads(call.args) if call.args.startswith("{") else {}
            states[action_label(call.tool, args)] = call.state
        for label, state in expect.call_states.items():
            if states.get(label) != state:
                problems.append(f"{where}call {label}: expected {state}, got {states.get(label)}")
    if expect.events is not None:
        verdicts = [e.verdict for e in run.events]
        if verdicts != list(expect.events):
            problems.append(f"{where}events: expected {list(expect.events)}, got {verdicts}")
    return problems


def check_scenario(scenario: ScenarioLike, *, policy: PolicyLike | None = None, stages: Stages | None = None
                   ) -> ScenarioCheck:
    """Run a scenario (and its resume) and compare with what its file expects — with your own ``stages``
    in place of the package's, to see whether they pass the regression scenario."""
    loaded = load_controller_scenario(scenario)
    first = build_controller(loaded, policy=policy, stages=stages).run()
    problems = _compare(loaded.expect, first, first.actions, "")
    runs = [first]
    if loaded.resume is not None and first.status == "waiting_for_user":
        second = resuming.resume(first, loaded.resume.answer, stages=stages)
        runs.append(second)
        problems += _compare(loaded.resume.expect, second, second.new_actions, "after resume: ")
    return ScenarioCheck(loaded.name, tuple(runs), tuple(problems))


def scenario_table() -> Table:
    """The shipped scenarios: name, task, faults, expected stop."""
    rows = []
    for s in list_controller_scenarios():
        expected = f"{s.expect.status} ({s.expect.code})"
        if s.resume is not None:
            expected += f" → {s.resume.expect.status}"
        with speaking("en"):  # the table's data is English; the learner reads it in their language
            english = "; ".join(f.describe() for f in s.faults) or "-"
        faults = Said(clip(english, 48), clip(_("; ").join(f.describe() for f in s.faults) or "-", 48))
        rows.append((s.name, s.task.type, faults, expected, Said(clip(s.title, 60), clip(_(s.title), 60))))
    return Table.build(N_("Controller scenarios"),
                       [N_("name"), N_("task"), N_("faults"), N_("expected stop"), N_("title")], rows)
