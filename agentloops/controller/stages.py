"""The stages of a turn that a learner can replace: what the task still needs (completion, update), what may
still be spent (route, budget check), whether anything progressed (repeat), and when parallel calls have joined.

Each stage is a plain function — plain values in, one value out — and the package's own is the
production version of the same shape, defined in the layer it belongs to:

============  =====================================================  ===========================================
stage         shape                                                  the package's (layer)
============  =====================================================  ===========================================
completion    ``(items, facts, need) -> "complete" | "incomplete"    :func:`~.task.state.assess` (task & state)
              | "impossible"``
update        ``(item, result) -> (value, summary) | why not``       the task type's ``fact`` (task & state)
route         ``(result, ctx) -> Route``                             :func:`~.policy.error_policy.route` under the
                                                                     run's policy (budgets & error policy)
budget_check  ``(name, used, amount, limit) -> bool``                :func:`~.policy.budgets.within` (budgets)
repeat        ``(fingerprint, last sighting or None) -> bool``       :func:`~.stopping.progress.is_repeat`
                                                                     (progress & stopping)
join          ``(succeeded, finished, total, needed) -> bool``       :func:`~.task.joins.joined` (task & state)
============  =====================================================  ===========================================

Pass your own with ``run_scenario(name, completion=my_check)`` (or ``update=``, ``route=``,
``budget_check=``, ``repeat=``, ``join=``; :class:`Stages` holds them for
:class:`~agentloops.controller.controller.Controller`).
A stage passed in is guarded: if it raises, or returns a value of the wrong type, the run ends with
one :class:`~agentloops.controller.vocabulary.errors.StageError` that names the stage and the function.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_args

from agentloops.controller.policy.budgets import BudgetCheck, within
from agentloops.controller.policy.error_policy import Router
from agentloops.controller.policy.routes import Route
from agentloops.controller.stopping.progress import RepeatCheck, is_repeat
from agentloops.controller.task.joins import JoinCheck, joined
from agentloops.controller.task.state import assess
from agentloops.controller.task.task_types import Update
from agentloops.controller.vocabulary.errors import StageError

Completion = Callable[..., str]
"""The completion stage's shape: (items by status, facts by item, items needed) → an assessment."""

ASSESSMENTS = ("complete", "incomplete", "impossible")
_ROUTES = get_args(Route)


@dataclass(frozen=True)
class Stages:
    """The replaceable stages of a run; a field left out keeps the package's stage.

    Attributes:
        completion: is the task done? (``complete`` / ``incomplete`` / ``impossible``)
        update: the fact a tool result establishes for its item, or why its data cannot be used;
            ``None``: the task type's own.
        route: what to do with one tool result (a route value: accept, retry, ask the user, stop…);
            ``None``: the run's error policy decides.
        budget_check: may this much more of a budget be spent? (Asked before every spend; a retry
            is allowed when one more may be spent.)
        repeat: is this action a repeat that cannot bring anything new?
        join: may a batch of parallel calls stop waiting (what is still running is then cancelled)?
    """

    completion: Completion = assess
    update: Update | None = None
    route: Router | None = None
    budget_check: BudgetCheck = within
    repeat: RepeatCheck = is_repeat
    join: JoinCheck = joined

    @classmethod
    def of(cls, *, completion: Completion | None = None, update: Update | None = None, route: Router | None = None,
           budget_check: BudgetCheck | None = None, repeat: RepeatCheck | None = None,
           join: JoinCheck | None = None) -> Stages:
        """Stages where ``None`` keeps the package's (the keywords ``run_scenario`` takes)."""
        return cls(completion or assess, update, route, budget_check or within, repeat or is_repeat, join or joined)

    def guarded(self) -> Stages:
        """The same stages, each one passed in wrapped so that an exception or a wrong value becomes one
        :class:`StageError` naming it (the package's own run as they are)."""
        return Stages(
            completion=self.completion if self.completion is assess else
            _guarded("completion", self.completion, lambda v: v in ASSESSMENTS, "one of " + ", ".join(ASSESSMENTS)),
            update=None if self.update is None else
            _guarded("update", self.update, _is_update, "a (value, summary) pair, or a text saying why not"),
            route=None if self.route is None else
            _guarded("route", self.route, lambda v: isinstance(v, _ROUTES), "a route value (Accept(), Retry(…), …)"),
            budget_check=self.budget_check if self.budget_check is within else
            _guarded("budget_check", self.budget_check, lambda v: isinstance(v, bool), "True or False"),
            repeat=self.repeat if self.repeat is is_repeat else
            _guarded("repeat", self.repeat, lambda v: isinstance(v, bool), "True or False"),
            join=self.join if self.join is joined else
            _guarded("join", self.join, lambda v: isinstance(v, bool), "True or False"))


def _is_update(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str))


def _guarded(stage: str, function: Callable[..., Any], valid: Callable[[Any], bool], expected: str
             ) -> Callable[..., Any]:
    """``function`` as the ``stage`` stage: its exceptions and wrong values become one :class:`StageError`."""
    name = getattr(function, "__qualname__", None) or repr(function)

    def stage_call(*args: Any) -> Any:
        try:
            value = function(*args)
        except Exception as exc:
            raise StageError(stage, name, "raised", f"{type(exc).__name__}: {exc}{_where(exc)}", expected) from None
        if not valid(value):
            raise StageError(stage, name, "returned", repr(value), expected)
        return value

    return stage_call


def _where(exc: BaseException) -> str:
    """`` (at file:line)`` of the innermost frame, which is the learner's code."""
    frames = traceback.extract_tb(exc.__traceback__)
    return f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
