"""Two of the article's four root causes of a loop that never stops, run instead of told.

Each is a shipped scenario, run twice on the same stub model and tools: in a cap-only loop
(:func:`~agentloops.controller.teaching.experiments.run_cap_only`: the step cap is its only exit)
and under the controller. A cap-only loop that spins to its cap while the controller stops early,
for a reason it can name, is the claim measured rather than asserted.

- **an open-ended goal** ("find as much as you can", root cause 1): ``research-open-ended``, whose
  planner never judges that it has enough;
- **ambiguous tool feedback** (root cause 2): ``recall-no-result-try-again``, where the cap-only
  system flattens every result but a success into :data:`NO_RESULT_TRY_AGAIN`, as the article
  warns, while the controller sends the result's status, retryability and source.

The two others (state the model cannot see, an error policy that only retries) already run in
``weather-no-state`` and the fault scenarios.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.running.scenarios import run_scenario
from agentloops.controller.sim.planners import build_model
from agentloops.controller.sim.scenario_files import load_controller_scenario
from agentloops.controller.teaching.experiments import CapOnlyRun, run_cap_only

NO_RESULT_TRY_AGAIN = "no result, please try again"
"""What a careless system feeds back for every result but a success (the article's 没有结果，请重试)."""

ROOT_CAUSES: dict[str, tuple[str, str | None]] = {
    "open-ended goal": ("research-open-ended", None),
    "ambiguous tool feedback": ("recall-no-result-try-again", NO_RESULT_TRY_AGAIN),
}
"""Root cause -> (shipped scenario, what the cap-only arm feeds back instead of a failed result)."""


@dataclass(frozen=True)
class LoopPair:
    """One scenario under a cap-only loop and under the controller.

    Attributes:
        cause: the root cause (a key of :data:`ROOT_CAUSES`).
        scenario: the shipped scenario's name.
        feedback: the text the cap-only arm sent back for every result but a success (``None``: structured).
        cap_only: the cap-only run, judged afterwards against the completion condition.
        controller: the controller's run.
    """

    cause: str
    scenario: str
    feedback: str | None
    cap_only: CapOnlyRun
    controller: ControllerRun


def loop_pair(cause: str, *, max_steps: int = 8, structured: bool = False) -> LoopPair:
    """Run one root cause's scenario both ways (``structured``: the cap-only arm gets structured results too,
    to show what the flattened feedback alone costs).

    Raises:
        KeyError: ``cause`` is not a key of :data:`ROOT_CAUSES`.
    """
    name, default_feedback = ROOT_CAUSES[cause]
    scenario = load_controller_scenario(name)
    task = scenario.build_task()
    sent = None if structured else default_feedback
    cap = run_cap_only(task, build_model(scenario, task), scenario.faults, max_steps=max_steps, feedback=sent)
    return LoopPair(cause, name, sent, cap, run_scenario(scenario))


def root_cause_pairs(max_steps: int = 8) -> tuple[LoopPair, ...]:
    """Every root cause of :data:`ROOT_CAUSES`, run both ways."""
    return tuple(loop_pair(cause, max_steps=max_steps) for cause in ROOT_CAUSES)
