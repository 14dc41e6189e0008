"""Notebook 15: parallel calls, a quorum and a join deadline."""


from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from agentloops.controller.controller import Controller
from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.sim.planners import TaskPlanner
from agentloops.controller.sim.scenario_files import load_controller_scenario
from agentloops.controller.sim.timeline import Controls
from agentloops.controller.task.tasks import make_task
from agentloops.controller.teaching.widgets.panel import (
    _STYLE,
    PREFIX,
    _badge,
    _chart_image,
    _classed,
    _headers,
    _Panel,
    _View,
)
from agentloops.i18n import N_, _, shown
from agentloops.tables import text_table


def parallel_run(minimum: int = 2, s3_latency: float = 2.5, s4_latency: float = 12.0,
                 cancel_at_s: float | None = None, join_timeout_s: float = 10.0) -> ControllerRun:
    """The research-parallel scenario with its join rule, latencies and cancellation changed.

    Four sources are fetched at once: s1 is delivered twice, s2 fails, s3 and
    s4 take the given latencies. ``minimum`` successes satisfy the join (1:
    any, 4: all).
    """
    base = load_controller_scenario("research-parallel")
    task = make_task("research", minimum=minimum, join_timeout_s=join_timeout_s)
    faults = []
    for fault in base.faults:
        source = fault.match.get("source_id")
        if fault.kind == "slow" and source in ("s3", "s4"):
            fault = fault.model_copy(update={"latency_s": s3_latency if source == "s3" else s4_latency})
        faults.append(fault)
    controls = Controls(cancel_at_s=cancel_at_s) if cancel_at_s else None
    return Controller(task, TaskPlanner(task, parallel=True), faults=faults, controls=controls,
                      trace_id="parallel", label="research-parallel").run()


def calls_text(run: ControllerRun) -> str:
    """The calls of a run as text: id, tool, arguments, kind, start, end, arrival, state (the kind and each refused
    delivery's note in the language in use)."""
    rows = [[c.call_id.rsplit("-", 1)[-1], c.tool, c.args, _(c.kind), f"{c.started_at:g}",
             "" if c.ended_at is None else f"{c.ended_at:g}", "" if c.arrived_at is None else f"{c.arrived_at:g}",
             c.state, c.deliveries] for c in run.calls]
    events = "".join("\n  " + _("{verdict} at {at} s: {call} — {note}").format(
        verdict=e.verdict, at=f"{e.at_s:g}", call=e.call_id.rsplit("-", 1)[-1], note=shown(e.note)) for e in run.events)
    refused = "\n" + _("refused deliveries:") + events if events else ""
    return text_table(_headers(CALL_HEADERS), rows) + refused


CALL_HEADERS: tuple[str, ...] = (N_("call"), N_("tool"), N_("args"), N_("kind"), N_("start s"), N_("end s"),
                                 N_("arrived s"), N_("state"), N_("deliveries"))
"""Columns of :func:`calls_text`."""


@dataclass(frozen=True)
class ParallelState:
    """The parallel explorer's settings and run."""

    minimum: int
    s3_latency: float
    s4_latency: float
    cancel_at_s: float | None
    run: ControllerRun

    def text(self) -> str:
        """The run as text."""
        cancel = _("never") if self.cancel_at_s is None else _("at {at} s").format(at=f"{self.cancel_at_s:g}")
        head = _("Parallel explorer — join needs {n} success(es); s3 takes {s3} s, s4 {s4} s; user cancels "
                 "{cancel}").format(n=self.minimum, s3=f"{self.s3_latency:g}", s4=f"{self.s4_latency:g}",
                                    cancel=cancel)
        return f"{head}\n{self.run.headline()}\n{calls_text(self.run)}"


class ParallelExplorer(_Panel):
    """Change the join rule, two latencies and a cancellation time; watch the timeline of parallel calls."""

    def __init__(self, minimum: int = 2, s3_latency: float = 2.5, s4_latency: float = 12.0,
                 cancel_at_s: float = 0.0) -> None:
        self._state: ParallelState | None = None
        self.minimum = _classed(widgets.IntSlider(value=minimum, min=1, max=4, description=_("successes needed"),
                                                  style=_STYLE, continuous_update=False), f"{PREFIX}-join")
        self.s3 = _classed(widgets.FloatSlider(value=s3_latency, min=0.5, max=14.0, step=0.5,
                                               description=_("s3 takes (s)"), style=_STYLE, continuous_update=False),
                           f"{PREFIX}-latency")
        self.s4 = _classed(widgets.FloatSlider(value=s4_latency, min=0.5, max=14.0, step=0.5,
                                               description=_("s4 takes (s)"), style=_STYLE, continuous_update=False),
                           f"{PREFIX}-latency")
        self.cancel = _classed(widgets.FloatSlider(value=cancel_at_s, min=0.0, max=12.0, step=0.5,
                                                   description=_("user cancels at (s; 0 = never)"), style=_STYLE,
                                                   continuous_update=False), f"{PREFIX}-cancel")
        self.status = _classed(widgets.HTML(), f"{PREFIX}-status")
        from agentloops.controller.teaching.plots import LiveGanttChart

        self._chart = LiveGanttChart(max_seconds=self.s4.max + 2)
        self.chart = _chart_image(self._chart)
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        self._wire([self.minimum, self.s3, self.s4, self.cancel])
        super().__init__([self.minimum, self.s3, self.s4, self.cancel, self.status, self.chart, self.table])
        self.add_class(f"{PREFIX}-parallel-explorer")
        self.refresh()

    def _view(self, key: tuple[Any, ...]) -> _View:
        """The run for (successes needed, s3 latency, s4 latency, cancel at), its chart and its calls."""
        minimum, s3, s4, cancel_at = key
        cancel = cancel_at or None
        run = parallel_run(minimum, s3, s4, cancel)
        return _View(ParallelState(minimum, s3, s4, cancel, run), self._draw(run), {
            "status": f"<div style='font-size:15px'>{_badge(run.status)} {html.escape(run.headline())}</div>",
            "table": f"<pre>{html.escape(calls_text(run))}</pre>"})

    def refresh(self) -> ParallelState:
        """Show the run for the current setting (computed once per setting) and work ahead."""
        return super().refresh()  # type: ignore[no-any-return]


def parallel_explorer(minimum: int = 2, s3_latency: float = 2.5, s4_latency: float = 12.0,
                      cancel_at_s: float = 0.0) -> ParallelExplorer:
    """Build the parallel-calls explorer (see :class:`ParallelExplorer`); ``cancel_at_s=0`` means never."""
    return ParallelExplorer(minimum, s3_latency, s4_latency, cancel_at_s)
