"""The controller explorer: a scenario, a policy, a fault and the budgets; the run, its turns and its stop."""


from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.policy.error_policy import POLICIES
from agentloops.controller.running.scenarios import build_controller
from agentloops.controller.sim.faults import Fault
from agentloops.controller.sim.scenario_files import controller_scenario_names, load_controller_scenario
from agentloops.controller.teaching.widgets.faults import (
    FAULT_CHOICES,
    inject,
)
from agentloops.controller.teaching.widgets.panel import (
    _MENU,
    _STYLE,
    _WIDE,
    PREFIX,
    _badge,
    _chart_image,
    _check,
    _classed,
    _error_html,
    _Panel,
    _View,
    stop_html,
    stop_text,
    turns_html,
    turns_text,
)
from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.controller.vocabulary.readback import read_back
from agentloops.i18n import N_, _

SLIDER_BUDGETS: dict[str, tuple[int, int, int]] = {
    "steps": (1, 12, 1),
    "tool_calls": (1, 16, 1),
    "retries": (0, 8, 1),
    "wall_time_s": (5, 120, 5),
}
"""Budgets the explorer offers as sliders: (min, max, step)."""

SCENARIO_POLICY = N_("as the scenario says")
"""The policy menu's first value: each scenario's own policy (the value stays English; its label is translated)."""


@dataclass(frozen=True)
class ControllerExplorerState:
    """What the controller explorer shows, as data.

    Attributes:
        scenario: the controller scenario's name.
        policy: the policy the run used (its name).
        fault: the injected fault's menu name.
        budget: the budget values of the sliders.
        faults: every fault of the run (the scenario's, after the injected ones).
        run: the run.
    """

    scenario: str
    policy: str
    fault: str
    budget: Mapping[str, float]
    faults: tuple[Fault, ...]
    run: ControllerRun

    def text(self) -> str:
        """Everything on screen, as plain text."""
        faults = "; ".join(f.describe() for f in self.faults) or _("none")
        budget = ", ".join(f"{k}={v:g}" for k, v in self.budget.items())
        head = _("Controller explorer — scenario {scenario} · policy {policy} · fault {fault}").format(
            scenario=self.scenario, policy=self.policy, fault=self.fault)
        lines = _("faults: {faults}\nbudgets: {budgets}").format(faults=faults, budgets=budget)
        return f"{head}\n{lines}\n{self.run.headline()}\n\n{turns_text(self.run)}\n\n{stop_text(self.run)}"


class ControllerExplorer(_Panel):
    """Pick a controller scenario, a policy, a fault to inject and budgets; see how the run ends.

    Shows the stop status, the user message next to the system record, the
    per-turn table with state deltas (turns that changed the state
    highlighted) and a chart: state per turn, and the seven budgets used.

    Args:
        scenario: a shipped controller scenario's name.
        policy: ``"as the scenario says"`` or a shipped policy name.
        fault: a :data:`FAULT_CHOICES` name, injected on top of the scenario's own faults.
        budget: slider values to start from (default: the scenario's budgets).
    """

    def __init__(self, scenario: str = "weather-normal", policy: str = SCENARIO_POLICY, fault: str = "none",
                 budget: Mapping[str, float] | None = None) -> None:
        names = controller_scenario_names()
        _check("scenario", scenario, names)
        _check("policy", policy, [SCENARIO_POLICY, *POLICIES])
        _check("fault", fault, list(FAULT_CHOICES))
        self._state: ControllerExplorerState | None = None
        self.scenario = _classed(widgets.Dropdown(
            options=[(f"{s.name} — {_(s.title)}", s.name) for s in map(load_controller_scenario, names)],
            value=scenario, description=_("scenario"), style=_STYLE, layout=_WIDE), f"{PREFIX}-scenario")
        self.policy = _classed(widgets.Dropdown(
            options=[(_(SCENARIO_POLICY), SCENARIO_POLICY), *((p, p) for p in POLICIES)], value=policy,
            description=_("error policy"), style=_STYLE, layout=_MENU), f"{PREFIX}-policy")
        self.fault = _classed(widgets.Dropdown(
            options=[(_("{name} — {note}").format(name=_(k), note=_(v.note)) if v else _("none"), k)
                     for k, v in FAULT_CHOICES.items()], value=fault,
            description=_("inject a fault"), style=_STYLE, layout=_WIDE), f"{PREFIX}-fault")
        self.budgets: dict[str, widgets.IntSlider] = {}
        for name, (low, high, step) in SLIDER_BUDGETS.items():
            self.budgets[name] = _classed(widgets.IntSlider(
                min=low, max=high, step=step, value=low, description=_("budget: {name}").format(name=name),
                style=_STYLE, continuous_update=False, layout=widgets.Layout(width="460px")),
                f"{PREFIX}-budget", f"{PREFIX}-budget-{name.replace('_', '-')}")
        self.status = _classed(widgets.HTML(), f"{PREFIX}-status")
        self.stop = _classed(widgets.HTML(), f"{PREFIX}-stop")
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        from agentloops.controller.teaching.plots import LiveRunChart

        self._chart = LiveRunChart()
        self.chart = _chart_image(self._chart)
        self.note = _classed(widgets.HTML(), f"{PREFIX}-note")
        self._scenario_budgets: dict[str, dict[str, int]] = {}  # a scenario's own budgets, on the sliders' grid
        self._wire([self.policy, self.fault, *self.budgets.values()],
                   [self.scenario, self.policy, self.fault, *self.budgets.values()])
        self.scenario.observe(self._on_scenario, names="value")
        super().__init__([self.scenario, self.policy, self.fault, *self.budgets.values(), self.note, self.status,
                          self.chart, self.stop, self.table])
        self.add_class(f"{PREFIX}-explorer")
        self._load_budgets(scenario, budget)
        self.refresh()

    def _budgets_of(self, scenario: str, values: Mapping[str, float] | None = None) -> dict[str, int]:
        """The slider values a scenario starts from: ``values``, else its own budgets, within the sliders' ranges."""
        if not values and scenario in self._scenario_budgets:
            return self._scenario_budgets[scenario]
        task = load_controller_scenario(scenario).build_task()
        found = {}
        for name, slider in self.budgets.items():
            value = (values or {}).get(name, task.budget.limit(name))  # type: ignore[arg-type]
            found[name] = int(min(slider.max, max(slider.min, value if value is not None else slider.max)))
        if not values:
            self._scenario_budgets[scenario] = found
        return found

    def _load_budgets(self, scenario: str, values: Mapping[str, float] | None = None) -> None:
        found = self._budgets_of(scenario, values)
        with self._sync():
            for name, slider in self.budgets.items():
                slider.value = found[name]

    def _on_scenario(self, change: Mapping[str, Any]) -> None:
        if self._syncing:
            return
        self._load_budgets(change["new"])
        self.refresh()

    def refresh(self) -> ControllerExplorerState:
        """Show the run of the scenario with the chosen policy, fault and budgets (run once per setting), then
        work ahead."""
        try:
            state = super().refresh()
        except ConfigError as exc:  # a combination the controls allowed but the controller refuses: say so
            self.note.value = _error_html(exc)
            if self._state is None:
                raise
            return self._state
        self.note.value = ""
        return state  # type: ignore[no-any-return]

    def _view(self, key: tuple[Any, ...]) -> _View:
        """The run for (scenario, policy, fault, *budgets), its chart, stop and turns."""
        scenario, policy, fault, *values = key
        budget = dict(zip(self.budgets, values, strict=True))
        faults, run = self._run(scenario, policy, fault, budget)
        state = ControllerExplorerState(scenario, run.policy.name, fault, budget, faults, run)
        return _View(state, self._draw(run), {
            "status": (f"<div style='font-size:16px'>{_badge(run.status)} <code>{html.escape(run.code)}"
                       f"</code> — {html.escape(read_back(run.stop.reason))}</div>"
                       f"<div style='font-size:14px'>{html.escape(run.headline())}</div>"),
            "stop": stop_html(run), "table": turns_html(run)})

    def _next_keys(self, key: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """As every panel's, but another scenario comes with its own budgets (picking it loads them)."""
        return [found if found[0] == key[0] else (*found[:3], *self._budgets_of(str(found[0])).values(), found[-1])
                for found in super()._next_keys(key)]

    @staticmethod
    def _run(scenario: str, policy: str, fault: str, budget: Mapping[str, float]
             ) -> tuple[tuple[Fault, ...], ControllerRun]:
        """The faults and the run for these controls."""
        loaded = load_controller_scenario(scenario)
        task = loaded.build_task().with_budget(**budget)
        faults = inject(task, fault) + tuple(loaded.faults)
        chosen = None if policy == SCENARIO_POLICY else policy
        return faults, build_controller(loaded, policy=chosen, faults=faults, budget=task.budget).run()

    @property
    def run(self) -> ControllerRun:
        """The run on screen."""
        assert self._state is not None
        return self._state.run


def controller_explorer(scenario: str = "weather-normal", policy: str = SCENARIO_POLICY, fault: str = "none",
                        **budget: float) -> ControllerExplorer:
    """Build the controller explorer (see :class:`ControllerExplorer`); it draws once before it is returned.

    Example:
        >>> ex = controller_explorer("weather-normal", fault="timeout always")  # doctest: +SKIP
        >>> ex.state.run.status  # doctest: +SKIP
        'budget_exhausted'
    """
    return ControllerExplorer(scenario, policy, fault, budget or None)
