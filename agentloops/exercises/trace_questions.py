"""A question answered from a trace: which turn first spent a call on something the run already knew?

Reviewing a run (notebook 14) starts with the turns that changed nothing. The learner writes
``first_wasted_turn(trace) -> int | None`` over a :class:`~agentloops.controller.Trace`: the number of the
first turn whose tool call succeeded (status ``ok``) yet added nothing to the task state (``progress`` false),
or ``None`` when no turn did. Each case is the trace of one regression scenario, recorded by running it in the
notebook's process; the learner's function reads it in the checker's worker, and the verdict names the scenario
and that turn.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from typing import Any

from agentloops.controller.persistence.trace import Trace
from agentloops.controller.running.scenarios import run_scenario
from agentloops.exercises import outputs
from agentloops.exercises.checking import Case, LearnerError, Verdict
from agentloops.i18n import N_, _

SCENARIOS = ("weather-normal", "weather-reask", "weather-no-state", "weather-timeout-always", "weather-early-claim",
             "research-compaction-careless", "research-open-ended")
"""Traces where the answer is a turn in the middle, a late one, or none at all (an error is not waste; nor is
the turn that answers)."""

HINTS = (
    N_("Walk trace.turns in order. Each turn record says what its call returned (tool_status) and whether the "
       "state moved (progress)."),
    N_("A failed call is not waste (it told the run something: retry, switch, give up), and the turn that answers "
       "calls no tool (tool_status '-'). Return the turn's own number (turn.turn), not its index."),
    N_("return next((t.turn for t in trace.turns if t.tool_status == 'ok' and not t.progress), None)"),
)


@cache
def trace_of(scenario: str) -> Trace:
    """The scenario's trace, run with the package's stages (our code only, in the notebook's process)."""
    return run_scenario(scenario).trace


def expected(scenario: str) -> int | None:
    """The answer for ``scenario``'s trace."""
    return next((t.turn for t in trace_of(scenario).turns if t.tool_status == "ok" and not t.progress), None)


def _say(turn: int | None, scenario: str) -> str:
    if turn is None:
        return _("None (no such turn)")
    record = next(t for t in trace_of(scenario).turns if t.turn == turn)
    return _("turn {turn} ({action}, {status}, progress {progress})").format(
        turn=turn, action=record.action, status=record.tool_status, progress=record.progress)


def judge(raw: Any, scenario: str) -> Verdict:
    """The learner's answer against :func:`expected` (an int turn number or ``None``)."""
    right = expected(scenario)
    if raw is not None and type(raw) is not int:
        raise LearnerError(_("in {scenario}, first_wasted_turn returned {value}; expected a turn number (int) or "
                             "None").format(scenario=scenario, value=outputs.show(raw)))
    numbers = [t.turn for t in trace_of(scenario).turns]
    if raw is not None and raw not in numbers:
        return False, _("in {scenario}, you answered turn {yours}, but the trace has turns {first}–{last}; the "
                        "answer is {right}").format(scenario=scenario, yours=raw, first=numbers[0], last=numbers[-1],
                                                    right=_say(right, scenario))
    if raw != right:
        return False, _("in {scenario}, you answered {yours}, but the first call that brought nothing new "
                        "is {right}").format(scenario=scenario, yours=_say(raw, scenario), right=_say(right, scenario))
    return True, _("in {scenario}: {right}").format(scenario=scenario, right=_say(right, scenario))


def _call(function: Callable[[Trace], Any], scenario: str) -> Any:
    return function(trace_of(scenario))


def cases(function: Callable[[Trace], Any]) -> list[Case]:
    """One case per scenario's trace (recorded here, before the worker starts)."""
    for scenario in SCENARIOS:
        trace_of(scenario)
    return [Case(scenario, partial(_call, function, scenario), partial(judge, scenario=scenario))
            for scenario in SCENARIOS]


__all__ = ["HINTS", "SCENARIOS", "cases", "expected", "judge", "trace_of"]
