"""Notebook 13: budgets over many randomized runs, against a cap-only loop."""


from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from agentloops.controller.task.tasks import make_task
from agentloops.controller.teaching.experiments import (
    CapOnlyRun,
    LoopComparison,
    comparison_row,
    random_case,
    run_cap_only,
    run_case,
)
from agentloops.controller.teaching.widgets.budget_runs import KeptRuns
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
                      between: Callable[[], None] | None = None, baselines: Sequence[CapOnlyRun] | None = None,
                      **budget: float | None) -> LoopComparison:
    """:func:`~agentloops.controller.teaching.experiments.compare_loops`, with the controller's budgets overridden.

    The cap-only loop gets ``cap`` (default: the ``steps`` budget, so both
    loops may take the same number of turns). The budget explorer shows these rows, running again only the cases
    a setting can change (:class:`~agentloops.controller.teaching.widgets.budget_runs.KeptRuns`).

    Args:
        n: random cases.
        seed: first seed.
        cap: the cap-only loop's ``max_steps``.
        between: called before each case.
        baselines: the cap-only runs of these cases under this cap (:func:`cap_only_runs`), when already run.
        budget: budget values for the controller (``steps``, ``retries``, …; ``None`` switches one off).
    """
    steps = budget.get("steps")
    cap = int(cap if cap is not None else (steps if steps is not None else 8))
    if baselines is None:
        baselines = cap_only_runs(n, seed, cap, between)
    rows = []
    for i in range(n):
        if between is not None:
            between()
        case = random_case(seed + i)
        task = case.task()
        limits = task.budget.with_values(**budget) if budget else task.budget
        rows.append(comparison_row(case, baselines[i], run_case(case, budget=limits)))
    return LoopComparison(cap, "default", tuple(rows))


def cap_only_runs(n: int, seed: int, cap: int, between: Callable[[], None] | None = None,
                  kept: Mapping[int, Sequence[CapOnlyRun]] | None = None) -> tuple[CapOnlyRun, ...]:
    """The cap-only arm of :func:`budget_comparison` alone: it depends on the cap, not on the controller's
    budgets, so the budget explorer runs it once per cap. ``kept``: the runs under other caps, cap → runs; a run
    that answered within ``cap`` steps is this cap's too (the cap only ends a loop that would go on)."""
    others = tuple(kept.values()) if kept else ()
    runs = []
    for i in range(n):
        if between is not None:
            between()
        known = next((run[i] for run in others if run[i].outcome.startswith("answered") and run[i].steps <= cap),
                     None)
        if known is not None:
            runs.append(known)
            continue
        case = random_case(seed + i)
        task = case.task()
        runs.append(run_cap_only(task, case.model(task), case.faults, max_steps=cap))
    return tuple(runs)


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


CAP_ONLY = "cap-only"
"""A work-ahead key ``(CAP_ONLY, cap)``: the cap-only runs of one cap alone."""


class BudgetExplorer(_Panel):
    """Choose the weather task's budgets; see how 100 randomized runs end, against a cap-only loop.

    A setting costs up to 2 × ``n`` runs and a chart. Little of it is new after the first: the cap-only half is
    run once per cap (and reuses every run that answered within the cap); a controller run is reused for every
    setting it provably holds for (:mod:`~agentloops.controller.teaching.widgets.budget_runs`: a move of one
    slider runs again only the cases it can change); and a chart already drawn for the same counts is the PNG
    it gave. The settings a learner is likely to pick next (the slider just moved, a few steps on and one back;
    every other slider one step either way; then the rest of the moved slider's range; then every setting one
    slider's move away; last, the cap-only runs of every cap, which every setting with that cap shares) are
    computed ahead, runs and chart, while the page is read (:mod:`~agentloops.controller.teaching.prewarm`;
    ``prewarm=False`` computes only what is shown). What is shown is what running every case again shows.
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
        self._runs = KeptRuns(n, seed)  # the controller runs, each reused for every setting it holds for
        self._settings = Prewarm(self._compute)
        self._cap_only: dict[int, tuple[CapOnlyRun, ...]] = {}  # cap → the cap-only runs: one per steps position
        self._moved: tuple[int, int] | None = None
        self.chart = _chart_image(self._chart)
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        self._wire(list(self.sliders.values()), prewarm=prewarm)
        super().__init__([*self.sliders.values(), self.chart, self.table])
        self.add_class(f"{PREFIX}-budget-explorer")
        self.refresh()

    def _baselines(self, cap: int) -> tuple[CapOnlyRun, ...]:
        """The cap-only runs under ``cap``, run once per cap."""
        if cap not in self._cap_only:
            self._cap_only[cap] = cap_only_runs(self.n, self.seed, cap, self._settings.checkpoint, self._cap_only)
        return self._cap_only[cap]

    def _compute(self, key: Hashable) -> Any:
        """One setting's comparison, chart and table (in the kernel's thread, or ahead in the worker); for a key
        ``(CAP_ONLY, cap)``, only that cap's cap-only runs (worked ahead: every setting with that cap shares them)."""
        from agentloops.controller.teaching.prewarm import RENDER_LOCK

        if key[0] == CAP_ONLY:  # type: ignore[index]
            return self._baselines(key[1])  # type: ignore[index]
        budget = dict(zip(self.sliders, key, strict=True))  # type: ignore[call-overload]
        baselines = self._baselines(int(budget["steps"]))
        comparison = self._runs.comparison(int(budget["steps"]), budget, baselines, self._settings.checkpoint)
        self._settings.checkpoint()  # the runs are done: in the worker, the learner's answer first, then the chart
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
        budget = {name: slider.value for name, slider in self.sliders.items()}
        key = tuple(budget.values())
        comparison, png, table = self._settings.get(key)
        with self._settings.answering():  # every worker waits until the page has what it shows
            self._state = BudgetState(budget, comparison)
            self.chart.value = png
            self.table.value = table
        if self.prewarm:
            self._settings.ahead(self._ahead_of(key))
        return self._state

    def _ahead_of(self, key: tuple[int, ...]) -> list[Hashable]:
        """What the worker computes next: the slider just moved, three steps on and one back, and every other
        slider one step either way; then the moved slider to its ends; then every setting one slider's move away;
        last, the cap-only runs of every cap not run yet, nearest first (a setting never computed then costs only
        its controller runs and its chart; any earlier, they held up likelier settings: measured in the page with
        a learner reading 0.5 s between changes)."""
        from agentloops.controller.teaching.prewarm import neighbours, one_move

        sliders = list(self.sliders.values())
        grid = [s.step for s in sliders], [s.min for s in sliders], [s.max for s in sliders]
        moved, direction = self._moved if self._moved is not None else (None, 1)
        close = neighbours(key, *grid, moved, direction)
        steps = self.sliders["steps"]
        shown = dict(zip(self.sliders, key, strict=True))["steps"]
        caps = sorted(range(steps.min, steps.max + 1, steps.step), key=lambda c: (abs(c - shown), c))
        reach = max((s.max - s.min) // s.step for s in sliders)  # the slider just moved: to its ends
        near = neighbours(key, *grid, moved, direction, reach=reach, back=reach)
        at = tuple((value - s.min) // s.step for value, s in zip(key, sliders, strict=True))
        lengths = [(s.max - s.min) // s.step + 1 for s in sliders]  # then every setting one slider's move away
        far = [tuple(s.min + i * s.step for s, i in zip(sliders, found, strict=True))
               for found in one_move(at, lengths)]
        return list(dict.fromkeys([*close, *near, *far,
                                   *((CAP_ONLY, cap) for cap in caps if cap not in self._cap_only)]))


def budget_explorer(n: int = 100, seed: int = 0, *, prewarm: bool = True, **budget: int) -> BudgetExplorer:
    """Build the budget explorer (see :class:`BudgetExplorer`)."""
    return BudgetExplorer(n, seed, prewarm=prewarm, **budget)
