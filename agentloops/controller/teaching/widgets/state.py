"""Notebook 10: what the loop updates — a run with and without state sent, with a window on the messages."""


from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from agentloops.controller.controller import Controller
from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.sim.planners import TaskPlanner
from agentloops.controller.task.tasks import make_task
from agentloops.controller.teaching.widgets.panel import (
    _STYLE,
    PREFIX,
    _actions_html,
    _badge,
    _chart_image,
    _classed,
    _Panel,
    _View,
    turns_html,
    turns_text,
)
from agentloops.i18n import N_, _


@dataclass(frozen=True)
class StateExplorerState:
    """The state explorer's runs: the configured one, and the reference with task state.

    Attributes:
        send_state: whether the TASK STATE block was sent (and read).
        window: messages of the transcript the model can see (``None``: all).
        cities: how many cities the task compares.
        detect_repeats: whether the fingerprint check was on.
        run: the configured run.
        reference: the same task with task state and a full view.
    """

    send_state: bool
    window: int | None
    cities: int
    detect_repeats: bool
    run: ControllerRun
    reference: ControllerRun

    def text(self) -> str:
        """Everything on screen as text."""
        view = (_("all messages") if self.window is None
                else _("the last {n} message(s)").format(n=self.window))
        sent = _("sent") if self.send_state else _("not sent")
        check = _("on") if self.detect_repeats else _("off")
        head = _("State explorer — TASK STATE {sent} · the model sees {view} · {cities} cities · fingerprint check "
                 "{check}").format(sent=sent, view=view, cities=self.cities, check=check)
        runs = _("this run: {run}\nreference (with state): {reference}").format(
            run=self.run.headline(), reference=self.reference.headline())
        return f"{head}\n{runs}\n\n{turns_text(self.run)}"


CITY_ORDER: tuple[str, ...] = ("Shanghai", "Beijing", "Guangzhou", "Chengdu")


def state_run(send_state: bool = True, window: int | None = None, cities: int = 2, detect_repeats: bool = True,
              label: str | None = None) -> ControllerRun:
    """The weather task over ``cities`` cities, with or without task state, with a limited view or not."""
    task = make_task("weather_compare", cities=list(CITY_ORDER[:cities]))
    model = TaskPlanner(task, use_state=send_state, window=window)
    policy = {"name": "default" if detect_repeats else "no-fingerprints", "detect_repeats": detect_repeats}
    name = label or f"{'with' if send_state else 'without'} state"
    return Controller(task, model, send_state=send_state, policy=policy, trace_id=name, label=name).run()


class StateExplorer(_Panel):
    """Send the task state or not, narrow what the model can see, add cities: does the loop still converge?"""

    def __init__(self, send_state: bool = False, window: int | None = 2, cities: int = 2,
                 detect_repeats: bool = True) -> None:
        self._state: StateExplorerState | None = None
        self.state_block = _classed(widgets.Checkbox(value=send_state, description=_("send the TASK STATE block"),
                                                    style=_STYLE, indent=False), f"{PREFIX}-send-state")
        self.window = _classed(widgets.Dropdown(
            options=[(_("all messages"), None), *((_("last {n}").format(n=n), n) for n in (1, 2, 3, 4, 6))],
            value=window, description=_("model sees"), style=_STYLE), f"{PREFIX}-window")
        self.cities = _classed(widgets.IntSlider(value=cities, min=1, max=len(CITY_ORDER), description=_("cities"),
                                                 style=_STYLE, continuous_update=False), f"{PREFIX}-cities")
        self.detect_repeats = _classed(widgets.Checkbox(value=detect_repeats, description=_("fingerprint check"),
                                                        style=_STYLE, indent=False), f"{PREFIX}-fingerprints")
        from agentloops.controller.teaching.plots import LiveStateChart

        self._chart = LiveStateChart()
        self.chart = _chart_image(self._chart)
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        self.status = _classed(widgets.HTML(), f"{PREFIX}-status")
        self._wire([self.state_block, self.window, self.cities, self.detect_repeats])
        super().__init__([widgets.HBox([self.state_block, self.detect_repeats]), self.window, self.cities,
                          self.status, self.chart, self.table])
        self.add_class(f"{PREFIX}-state-explorer")
        self.refresh()

    def _view(self, key: tuple[Any, ...]) -> _View:
        """The configured loop and the reference for (TASK STATE, window, cities, fingerprints); chart, tables."""
        send_state, window, cities, detect_repeats = key
        run = state_run(send_state, window, cities, detect_repeats, label=N_("this run"))
        self._between()
        reference = state_run(True, None, cities, True, label="with state (reference)")
        state = StateExplorerState(send_state, window, cities, detect_repeats, run, reference)
        return _View(state, self._draw(run, reference), {
            "status": (f"<div style='font-size:15px'>{_badge(run.status)} {html.escape(run.headline())}</div>"
                       f"<div style='font-size:14px'>{_actions_html(run)}</div>"),
            "table": turns_html(run)})

    def refresh(self) -> StateExplorerState:
        """Show the configured loop against the reference (computed once per setting) and work ahead."""
        return super().refresh()  # type: ignore[no-any-return]


def state_explorer(send_state: bool = False, window: int | None = 2, cities: int = 2,
                   detect_repeats: bool = True) -> StateExplorer:
    """Build the state explorer (see :class:`StateExplorer`); it opens on the run without state."""
    return StateExplorer(send_state, window, cities, detect_repeats)
