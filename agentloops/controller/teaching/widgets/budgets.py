"""Notebook 13: budgets over many randomized runs, against a cap-only loop."""


from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from agentloops.controller.policy.budgets import BUDGET_NAMES
from agentloops.controller.task.tasks import make_task
from agentloops.controller.teaching.experiments import (
    LoopComparison,
    random_case,
    run_cap_only,
    run_case,
)
from agentloops.controller.teaching.widgets.explorer import (
    SLIDER_BUDGETS,
)
from agentloops.controller.teaching.widgets.panel import (
    _STYLE,
    PREFIX,
    _chart_image,
    _classed,
    _Panel,
)
from agentloops.i18n import _


def budget_comparison(n: int = 100, seed: int = 0, *, cap: int | None = None,
                      between: Callable[[], None] | None = None, **budget: float | None) -> LoopComparison:
    """:func:`~agentloops.controller.teaching.experiments.compare_loops`, with the controller's budgets overridden.

    The cap-only loop gets ``cap`` (default: the ``steps`` budget, so both
    loops may take the same number of turns).

    Args:
        n: random cases.
        seed: first seed.
        cap: the cap-only loop's ``max_steps``.
        between: called before each case (the budget explorer's worker waits there while the learner is
            answered).
        budget: budget values for the controller (``steps``, ``retries``, …; ``None`` switches one off).
    """
    rows = []
    steps = budget.get("steps")
    cap = int(cap if cap is not None else (steps if steps is not None else 8))
    for i in range(n):
        if between is not None:
            between()
        case = random_case(seed + i)
        task = case.task()
        limits = task.budget.with_values(**budget) if budget else task.budget
        baseline = run_cap_only(task, case.model(task), case.faults, max_steps=cap)
        run = run_case(case, budget=limits)
        rows.append({
            "seed": case.seed, "case": case.describe(),
            "cap_outcome": baseline.outcome, "cap_steps": baseline.steps, "cap_tool_calls": baseline.tool_calls,
            "ctl_status": run.status, "ctl_code": run.code, "ctl_steps": run.steps,
            "ctl_tool_calls": int(run.usage["tool_calls"]), "ctl_retries": int(run.usage["retries"]),
            "ctl_wall_s": run.usage["wall_time_s"], "ctl_verified": run.stop.verified,
            "ctl_within_budget": all(run.within_budget.values()),
            **{f"ctl_used_{name}": run.usage[name] for name in BUDGET_NAMES},
        })
    return LoopComparison(cap, "default", tuple(rows))


@dataclass(frozen=True)
class BudgetState:
    """The budget explorer's settings and the comparison they produced."""

    budget: Mapping[str, float]
    comparison: LoopComparison

    def text(self) -> str:
        """The counts as text."""
        budget = ", ".join(f"{k}={v:g}" for k, v in self.budget.items())
        head = _("Budget explorer — controller budgets {budgets}; cap-only cap = steps").format(budgets=budget)
        return f"{head}\n{self.comparison}"


class BudgetExplorer(_Panel):
    """Choose the weather task's budgets; see how 100 randomized runs end, against a cap-only loop.

    A setting never shown before costs 2 × ``n`` runs (about half a second on a busy laptop), so the settings
    a learner is likely to pick next (the slider just moved, a few steps on and one back; every other slider
    one step either way; then the rest of the moved slider's range) are computed ahead, runs and chart, while
    the page is read (:mod:`~agentloops.controller.teaching.prewarm`; ``prewarm=False`` computes only what is
    shown).
    """

    def __init__(self, n: int = 100, seed: int = 0, *, prewarm: bool = True, **budget: int) -> None:
        from agentloops.controller.teaching.plots import LiveBudgetChart
        from agentloops.controller.teaching.prewarm import Prewarm

        self._state: BudgetState | None = None
        self.n, self.seed, self.prewarm = n, seed, prewarm
        defaults = make_task("weather_compare").budget
        self.sliders: dict[str, widgets.IntSlider] = {}
        for name, (low, high, step) in SLIDER_BUDGETS.items():
            value = budget.get(name, defaults.limit(name))  # type: ignore[arg-type]
            start = int(value if value is not None else high)
            self.sliders[name] = _classed(widgets.IntSlider(
                value=start, min=low, max=high, step=step, description=_("budget: {name}").format(name=name),
                style=_STYLE,
                continuous_update=False, layout=widgets.Layout(width="460px")),
                f"{PREFIX}-budget", f"{PREFIX}-budget-{name.replace('_', '-')}")
        self._chart = LiveBudgetChart(n, max_steps=self.sliders["steps"].max)
        self._settings = Prewarm(self._compute)
        self._moved: tuple[int, int] | None = None
        self.chart = _chart_image(self._chart)
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        self._wire(list(self.sliders.values()))
        super().__init__([*self.sliders.values(), self.chart, self.table])
        self.add_class(f"{PREFIX}-budget-explorer")
        self.refresh()

    def _compute(self, key: Hashable) -> tuple[LoopComparison, bytes, str]:
        """One setting's comparison, chart and table (in the kernel's thread, or ahead in the worker)."""
        from agentloops.controller.teaching.prewarm import RENDER_LOCK

        budget = dict(zip(self.sliders, key, strict=True))  # type: ignore[call-overload]
        comparison = budget_comparison(self.n, self.seed, between=self._settings.checkpoint, **budget)
        with RENDER_LOCK:
            png = self._chart.update(comparison)
        return comparison, png, comparison.counts()._repr_html_()

    def _on_change(self, change: Mapping[str, Any]) -> None:
        for index, slider in enumerate(self.sliders.values()):  # which slider moved, and which way: go on so
            if slider is change.get("owner"):
                self._moved = (index, 1 if change["new"] >= change["old"] else -1)
        super()._on_change(change)

    def refresh(self) -> BudgetState:
        """Show the comparison for the slider values (computed once per setting), then work ahead."""
        from agentloops.controller.teaching.prewarm import neighbours

        budget = {name: slider.value for name, slider in self.sliders.items()}
        key = tuple(budget.values())
        comparison, png, table = self._settings.get(key)
        with self._settings.answering():  # every worker waits until the page has what it shows
            self._state = BudgetState(budget, comparison)
            self.chart.value = png
            self.table.value = table
        if self.prewarm:
            sliders = list(self.sliders.values())
            moved, direction = self._moved if self._moved is not None else (None, 1)
            reach = max((s.max - s.min) // s.step for s in sliders)  # the slider just moved: to its ends
            self._settings.ahead(neighbours(key, [s.step for s in sliders], [s.min for s in sliders],
                                            [s.max for s in sliders], moved, direction, reach=reach, back=reach))
        return self._state


def budget_explorer(n: int = 100, seed: int = 0, *, prewarm: bool = True, **budget: int) -> BudgetExplorer:
    """Build the budget explorer (see :class:`BudgetExplorer`)."""
    return BudgetExplorer(n, seed, prewarm=prewarm, **budget)
