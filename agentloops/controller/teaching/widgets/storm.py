"""Notebook 12: the retry storm — one shared retry budget against a budget per tool."""


from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from dataclasses import replace as dc_replace
from typing import Any

import ipywidgets as widgets

from agentloops.controller.controller import Controller
from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.sim.faults import Fault
from agentloops.controller.sim.planners import TaskPlanner
from agentloops.controller.task.tasks import make_task
from agentloops.controller.task.world import TOOLS
from agentloops.controller.teaching.plots.many_runs import failing_attempts
from agentloops.controller.teaching.widgets.panel import (
    _STYLE,
    PREFIX,
    _chart_image,
    _classed,
    _headers,
    _Panel,
    _View,
)
from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.controller.vocabulary.render import html_table
from agentloops.controller.vocabulary.tools import Toolbox
from agentloops.i18n import N_, _
from agentloops.tables import text_table


def fallback_chain(tools: int) -> Toolbox:
    """The weather tools with a chain of ``tools`` fallback providers (each on its own backend).

    ``get_weather`` falls back to ``weather_backup``, which falls back to
    ``weather_backup_2``, and so on: the routing layer a team grows one
    incident at a time.
    """
    if tools < 1:
        raise ConfigError(_("a fallback chain needs at least 1 tool; got {tools}").format(tools=tools))
    names = ["weather_backup", *(f"weather_backup_{i}" for i in range(2, tools + 1))]
    specs = [dc_replace(TOOLS["get_weather"], fallback=names[0])]
    for i, name in enumerate(names):
        specs.append(dc_replace(TOOLS["weather_backup"], name=name, fallback=names[i + 1] if i + 1 < len(names)
                                else None, backend=f"provider-{i + 1}"))
    return Toolbox.of(specs)


def storm_runs(tools: int = 2, retries: int = 3, between: Callable[[], None] | None = None
               ) -> dict[str, ControllerRun]:
    """Beijing's weather with every tool of a ``tools``-long fallback chain timing out, under both retry scopes.

    Only the retry budget is under study: the tool-call and wall-time budgets
    are switched off so that they do not stop the per-tool run first. ``between`` is called before each
    run (the explorer's worker waits there while the learner is answered).
    """
    task = make_task("weather_compare", budget={"retries": retries, "tool_calls": None, "wall_time_s": None})
    box = fallback_chain(tools)
    faults = [Fault(tool=name, kind="timeout", match={"city": "Beijing"}) for name in box.names()]
    out = {}
    for scope, label in zip(("shared", "per_tool"), STORM_LABELS, strict=True):
        if between is not None:
            between()
        policy = {"name": f"{scope.replace('_', '-')} retries", "retry_scope": scope}
        out[label] = Controller(task, TaskPlanner(task), tools=box, policy=policy, faults=faults,
                                trace_id=f"storm-{scope}", label=label).run()
    return out


def storm_rows(max_tools: int = 4, retries: int = 3) -> list[dict[str, Any]]:
    """Attempts at the failing city, for 1 … ``max_tools`` fallbacks and both scopes (for :func:`storm_chart`).

    ``tools`` counts every tool of the chain (the main one and its fallbacks: ``fallbacks + 1``);
    ``attempts`` counts the failing city's attempts only, not the first city's successful lookup.
    """
    rows = []
    for fallbacks in range(1, max_tools + 1):
        for label, run in storm_runs(fallbacks, retries).items():
            rows.append({"tools": fallbacks + 1, "fallbacks": fallbacks,
                         "scope": "shared" if label.startswith("one") else "per_tool",
                         "attempts": failing_attempts(run), "retries": int(run.usage["retries"]),
                         "status": run.status, "code": run.code})
    return rows


STORM_HEADERS: tuple[str, ...] = (N_("retry budget"), N_("attempts at Beijing"), N_("retries"), N_("simulated s"),
                                  N_("stop"))
"""Columns of :meth:`StormState.rows` (shown translated)."""

STORM_LABELS: tuple[str, ...] = (N_("one shared budget"), N_("a budget per tool"))
"""The two retry scopes' labels (the keys of :func:`storm_runs`; shown translated)."""


@dataclass(frozen=True)
class StormState:
    """The two runs of the retry-storm explorer."""

    tools: int
    retries: int
    runs: Mapping[str, ControllerRun]

    def rows(self) -> list[list[Any]]:
        """One row per run: attempts, retries, stop."""
        return [[_(label), failing_attempts(r), int(r.usage["retries"]), f"{r.usage['wall_time_s']:g}",
                 f"{r.status} ({r.code})"] for label, r in self.runs.items()]

    def text(self) -> str:
        """The runs as a text table."""
        head = _("Retry storm — {n} fallback tool(s) behind the main one, retry budget {retries}").format(
            n=self.tools, retries=self.retries)
        return f"{head}\n" + text_table(_headers(STORM_HEADERS), self.rows())


class StormExplorer(_Panel):
    """Grow the fallback chain and the retry budget; compare one shared budget with a budget per tool."""

    def __init__(self, tools: int = 2, retries: int = 3) -> None:
        self._state: StormState | None = None
        self.tools = _classed(widgets.IntSlider(value=tools, min=1, max=5, description=_("fallback tools"),
                                                style=_STYLE, continuous_update=False), f"{PREFIX}-chain")
        self.retries = _classed(widgets.IntSlider(value=retries, min=0, max=6, description=_("retry budget"),
                                                  style=_STYLE, continuous_update=False), f"{PREFIX}-retries")
        from agentloops.controller.teaching.plots import LiveStormChart

        self._chart = LiveStormChart(max_tools=self.tools.max + 1)
        self.chart = _chart_image(self._chart)
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        self._wire([self.tools, self.retries])
        super().__init__([self.tools, self.retries, self.chart, self.table])
        self.add_class(f"{PREFIX}-storm-explorer")
        self.refresh()

    def _view(self, key: tuple[Any, ...]) -> _View:
        """Both scopes run for (tools, retries), the chart and the table."""
        tools, retries = key
        state = StormState(tools, retries, storm_runs(tools, retries, self._between))
        return _View(state, self._draw(state.runs, retries),
                     {"table": html_table(_("Both scopes, same faults"), _headers(STORM_HEADERS), state.rows())})

    def refresh(self) -> StormState:
        """Show both scopes for the current setting (computed once per setting) and work ahead."""
        return super().refresh()  # type: ignore[no-any-return]


def storm_explorer(tools: int = 2, retries: int = 3) -> StormExplorer:
    """Build the retry-storm explorer (see :class:`StormExplorer`)."""
    return StormExplorer(tools, retries)
