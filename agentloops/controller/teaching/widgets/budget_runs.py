"""The budget explorer's controller runs, each kept and reused for every setting it provably holds for.

A controller run depends on its budgets in two ways only: the answers of its budget checks (asked before each
spend: may ``used + amount`` still be spent?) and the size of its requests (each ends with a TASK STATE that
shows what is left of every budget, and the token budgets count it). So a run kept with the largest spend its
checks allowed and the smallest they refused, per budget, is the run of every setting that answers those two
alike, keeps the same budgets within their limits and sends requests that cost as many tokens (the numbers
left differ, but the package's estimate counts a digit as any other character: only a number that gains or
loses a digit needs counting again). A learner's next setting moves one slider, and most cases are far from
that slider's limit: only those it can change run again — the rows are those of
:func:`~agentloops.controller.teaching.widgets.budgets.budget_comparison`, which runs every case
(``tests/test_controller_budget_runs.py``). The controller is not touched: the run is recorded through its
budget stage and its tokenizer, both passed in.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.policy.budgets import within
from agentloops.controller.stages import Stages
from agentloops.controller.teaching.experiments import (
    CapOnlyRun,
    LoopComparison,
    cap_only_columns,
    controller_columns,
    random_case,
    run_case,
)
from agentloops.tokens import estimate_tokens

STATE_HEADER = "TASK STATE\n"
"""How the TASK STATE sent each turn begins (:meth:`~agentloops.controller.task.state.TaskState.for_model`)."""

KEPT_PER_CASE = 16
"""Runs kept per case, newest first (a case behaves alike over wide ranges of each budget: a few cover most)."""


class _Recorder:
    """One run's budget stage and tokenizer: they answer as the package's do, and keep what the run asked."""

    def __init__(self) -> None:
        self.allowed: dict[str, tuple[float, float]] = {}  # budget → (used, amount) of the largest spend allowed
        self.refused: dict[str, tuple[float, float]] = {}  # … and of the smallest refused
        self.states: list[str] = []

    def check(self, name: str, used: float, amount: float, limit: float | None) -> bool:
        answer = within(name, used, amount, limit)
        kept = self.allowed if answer else self.refused
        before = kept.get(name)
        if before is None or (used + amount > sum(before) if answer else used + amount < sum(before)):
            kept[name] = (used, amount)
        return answer

    def tokens(self, text: str) -> int:
        if text.startswith(STATE_HEADER):
            self.states.append(text)
        return estimate_tokens(text)


def _state_text(view: Mapping[str, Any]) -> str:
    """A TASK STATE as the controller writes it."""
    return STATE_HEADER + json.dumps(view, ensure_ascii=False)


def _left(value: float) -> float:
    """What is left of a budget, as the meter rounds it for the model (:meth:`BudgetMeter.left`)."""
    return value if type(value) is int else round(value, 3)


class KeptRun:
    """A case's controller run under some budgets: its columns, and the bounds within which it holds."""

    def __init__(self, run: ControllerRun, limits: Mapping[str, float | None], recorder: _Recorder) -> None:
        self.limits = dict(limits)
        self.columns = controller_columns(run)
        self.allowed, self.refused = recorder.allowed, recorder.refused
        self.usage, self.within = dict(run.usage), dict(run.within_budget)
        self._states = list(dict.fromkeys(recorder.states))  # each TASK STATE sent
        self._lefts: list[dict[str, float]] = []

    def holds_for(self, limits: Mapping[str, float | None]) -> bool:
        """Would the run under ``limits`` be this one: every check answered alike, every budget within its limit
        alike, every TASK STATE as many tokens?"""
        changed = [name for name, limit in limits.items() if limit != self.limits[name]]
        for name in changed:
            limit = limits[name]
            if name in self.allowed and not within(name, *self.allowed[name], limit):
                return False
            if name in self.refused and within(name, *self.refused[name], limit):
                return False
            if within(name, self.usage[name], 0, limit) != self.within[name]:
                return False
        return self._as_costly(changed, limits)

    def _as_costly(self, changed: Sequence[str], limits: Mapping[str, float | None]) -> bool:
        if len(self._lefts) != len(self._states):  # read once, when first needed
            self._lefts = [json.loads(text[len(STATE_HEADER):])["budget_left"] for text in self._states]
        shown = [name for name in changed if name != "context_tokens"]  # (a limit, not a quantity left: not sent)
        for text, left in zip(self._states, self._lefts, strict=True):
            now, grown = {}, 0
            for name in shown:
                before, after = self.limits[name], limits[name]
                if name not in left or before is None or after is None:  # switched on or off: not the same text
                    return False
                now[name] = _left(after - (before - left[name]))
                grown += len(json.dumps(now[name])) - len(json.dumps(left[name]))
            if grown and not _costs_as_much(text, now):  # as long: as many tokens; else count again
                return False
        return True


def _costs_as_much(text: str, left: Mapping[str, float]) -> bool:
    """Does the TASK STATE ``text``, with these numbers left instead, cost as many tokens? (Never, when the text
    is not what the controller writes for what it holds.)"""
    view = json.loads(text[len(STATE_HEADER):])
    if _state_text(view) != text:
        return False
    return estimate_tokens(_state_text({**view, "budget_left": {**view["budget_left"], **left}})) == \
        estimate_tokens(text)


class KeptRuns:
    """The controller runs of ``n`` random cases from ``seed``, kept per case (see the module docstring)."""

    def __init__(self, n: int, seed: int) -> None:
        self.cases = [random_case(seed + i) for i in range(n)]
        self._kept: list[list[KeptRun]] = [[] for _ in self.cases]
        self.runs = 0
        """Controller runs made so far (the rest were reused)."""

    def comparison(self, cap: int, budget: Mapping[str, float], baselines: Sequence[CapOnlyRun],
                   between: Callable[[], None] | None = None) -> LoopComparison:
        """:func:`~agentloops.controller.teaching.widgets.budgets.budget_comparison` of these cases under these
        budgets, from the cap-only ``baselines``; ``between`` is called before each case."""
        rows = []
        for case, kept, baseline in zip(self.cases, self._kept, baselines, strict=True):
            if between is not None:
                between()
            limits = case.task().budget.with_values(**budget)
            found = next((run for run in list(kept) if run.holds_for(limits.limits)), None)
            if found is None:
                recorder = _Recorder()
                run = run_case(case, budget=limits, stages=Stages.of(budget_check=recorder.check),
                               tokenizer=recorder.tokens)
                found = KeptRun(run, limits.limits, recorder)
                kept.insert(0, found)
                del kept[KEPT_PER_CASE:]
                self.runs += 1
            rows.append({**cap_only_columns(case, baseline), **found.columns})
        return LoopComparison(cap, "default", tuple(rows))
