"""Notebook 14: a recorded run replayed under another policy, and the diff."""


from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.policy.error_policy import POLICIES
from agentloops.controller.running.replaying import Replay, replay
from agentloops.controller.running.scenarios import build_controller
from agentloops.controller.sim.scenario_files import controller_scenario_names
from agentloops.controller.teaching.widgets.panel import (
    _STYLE,
    _WIDE,
    PREFIX,
    _badge,
    _chart_image,
    _check,
    _classed,
    _Panel,
    _View,
)
from agentloops.i18n import _


@dataclass(frozen=True)
class ReplayState:
    """A recorded run and its replay under another policy."""

    scenario: str
    recorded_policy: str
    replay_policy: str
    recorded: ControllerRun
    replay: Replay

    def text(self) -> str:
        """The replay and its diff as text."""
        head = _("Replay explorer — {scenario}: recorded under {recorded}, replayed under {replayed}").format(
            scenario=self.scenario, recorded=self.recorded_policy, replayed=self.replay_policy)
        return f"{head}\n{self.replay}"


class ReplayExplorer(_Panel):
    """Record a scenario under one policy, replay the same trace under another, and diff the trajectories."""

    def __init__(self, scenario: str = "weather-timeout-always", recorded: str = "default",
                 replayed: str = "degrade") -> None:
        names = controller_scenario_names()
        _check("scenario", scenario, names)
        _check("recorded policy", recorded, list(POLICIES))
        _check("replay policy", replayed, list(POLICIES))
        self._state: ReplayState | None = None
        self.scenario = _classed(widgets.Dropdown(options=names, value=scenario, description=_("scenario"),
                                                  style=_STYLE, layout=_WIDE), f"{PREFIX}-scenario")
        self.recorded = _classed(widgets.ToggleButtons(options=list(POLICIES), value=recorded,
                                                       description=_("recorded under"), style=_STYLE),
                                 f"{PREFIX}-recorded-policy")
        self.replayed = _classed(widgets.ToggleButtons(options=list(POLICIES), value=replayed,
                                                       description=_("replayed under"), style=_STYLE),
                                 f"{PREFIX}-policy")
        self.status = _classed(widgets.HTML(), f"{PREFIX}-status")
        from agentloops.controller.teaching.plots import LiveDiffChart

        self._chart = LiveDiffChart()
        self.chart = _chart_image(self._chart)
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        self._wire([self.scenario, self.recorded, self.replayed])
        super().__init__([self.scenario, self.recorded, self.replayed, self.status, self.chart, self.table])
        self.add_class(f"{PREFIX}-replay-explorer")
        self.refresh()

    def _view(self, key: tuple[Any, ...]) -> _View:
        """Record (scenario, recorded policy), replay it under the replayed policy, diff; chart and tables."""
        scenario, recorded_policy, replayed_policy = key
        recorded = build_controller(scenario, policy=recorded_policy).run()
        self._between()
        result = replay(recorded, policy=replayed_policy)
        served = _("{served} tool result(s) served from the recording, {live} ran live").format(
            served=result.served, live=result.diff.unrecorded)
        return _View(ReplayState(scenario, recorded_policy, replayed_policy, recorded, result),
                     self._draw(result), {
            "status": (f"<div style='font-size:15px'>{_badge(recorded.status)} → {_badge(result.run.status)}"
                       f" — {html.escape(result.diff.summary())}; {html.escape(served)}</div>"),
            "table": result.diff._repr_html_()})

    def refresh(self) -> ReplayState:
        """Show the record, the replay and their diff (computed once per setting) and work ahead."""
        return super().refresh()  # type: ignore[no-any-return]


def replay_explorer(scenario: str = "weather-timeout-always", recorded: str = "default",
                    replayed: str = "degrade") -> ReplayExplorer:
    """Build the replay explorer (see :class:`ReplayExplorer`)."""
    return ReplayExplorer(scenario, recorded, replayed)
