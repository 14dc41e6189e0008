"""Notebook 16: context offloading and compaction, turn by turn."""


from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from agentloops.controller.controller import Controller
from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.sim.planners import TaskPlanner
from agentloops.controller.task.context import ContextPolicy, careless_compactor, memory_from_state
from agentloops.controller.task.tasks import make_task
from agentloops.controller.teaching.widgets.panel import (
    _STYLE,
    PREFIX,
    _actions_html,
    _badge,
    _chart_image,
    _classed,
    _headers,
    _Panel,
    _View,
)
from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.controller.vocabulary.readback import read_back
from agentloops.controller.vocabulary.render import clip, html_table
from agentloops.i18n import N_, _
from agentloops.tables import text_table

RESEARCH_BUDGET: dict[str, Any] = {"steps": 10, "model_calls": 10, "tool_calls": 10, "wall_time_s": 100,
                                   "tokens": 30000}
"""The budgets of the compaction scenarios: six reads in a row fit, and the context budget stays the task's."""


def context_run(offload_over_tokens: int | None = 150, compact_over_tokens: int | None = None,
                keep_recent_turns: int = 1, compactor: str = "state", check_compaction: bool = True,
                send_state: bool = False, label: str | None = None) -> ControllerRun:
    """Read six sources one at a time, with the given context controls.

    The planner plans from what it can see (``use_state`` follows
    ``send_state``), so a memory that drops finished work sends it back to
    work it has done.

    Args:
        offload_over_tokens: store tool outputs larger than this outside the context (``None``: never).
        compact_over_tokens: compact requests larger than this (``None``: never).
        keep_recent_turns: turns a compaction keeps verbatim.
        compactor: ``state`` (the memory written from task state) or ``careless``.
        check_compaction: check every memory against the state and refuse one that drops something.
        send_state: send the TASK STATE block every turn.
        label: the run's label.
    """
    if compactor not in ("state", "careless"):
        raise ConfigError(_("unknown compactor {compactor!r}; expected one of: state, careless").format(
            compactor=compactor))
    task = make_task("research", sources=["s1", "s2", "s3", "s4", "s5", "s6"], minimum=6, budget=RESEARCH_BUDGET)
    context = ContextPolicy(offload_over_tokens=offload_over_tokens, compact_over_tokens=compact_over_tokens,
                            keep_recent_turns=keep_recent_turns, check_compaction=check_compaction)
    name = label or N_("this configuration")
    return Controller(task, TaskPlanner(task, use_state=send_state), context=context, send_state=send_state,
                      compactor=careless_compactor if compactor == "careless" else memory_from_state,
                      trace_id=name, label=name).run()


CONTEXT_HEADERS: tuple[str, ...] = (N_("turn"), N_("request tokens"), N_("compaction"), N_("action"),
                                    N_("state delta"))
"""Columns of :meth:`ContextState.rows`."""


@dataclass(frozen=True)
class ContextState:
    """The context explorer's run and the uncontrolled baseline."""

    settings: Mapping[str, Any]
    run: ControllerRun
    baseline: ControllerRun

    def rows(self) -> list[list[Any]]:
        """One row per turn: request size, compaction, action."""
        out = []
        for t in self.run.turns:
            comp = t.compaction
            note = "" if not comp else (
                _("compacted {turns} turn(s), {before}→{after} tokens, {used}").format(
                    turns=comp["turns_compacted"], before=comp["tokens_before"], after=comp["tokens_after"],
                    used=comp["used"])
                + ("" if comp["ok"] else _("; dropped {n} item(s)").format(n=len(comp["dropped"]))))
            out.append([t.turn, t.context_tokens, note, clip(read_back(t.action), 40), clip(t.delta_shown(), 50)])
        return out

    def text(self) -> str:
        """The run as text."""
        settings = ", ".join(f"{k}={v}" for k, v in self.settings.items())
        head = _("Context explorer — {settings}\nthis configuration: {run}\nbaseline (no storage, no compaction): "
                 "{baseline}").format(settings=settings, run=self.run.headline(), baseline=self.baseline.headline())
        return f"{head}\n" + text_table(_headers(CONTEXT_HEADERS), self.rows())


SETTINGS = ("offload_over_tokens", "compact_over_tokens", "keep_recent_turns", "compactor", "check_compaction",
            "send_state")
"""The explorer's controls, in order, as :func:`context_run`'s arguments."""


class ContextExplorer(_Panel):
    """Store big outputs outside the context, compact, check the memory: watch the request size and the path."""

    def __init__(self, offload_over_tokens: int | None = 150, compact_over_tokens: int | None = 300,
                 keep_recent_turns: int = 1, compactor: str = "careless", check_compaction: bool = False,
                 send_state: bool = False) -> None:
        self._state: ContextState | None = None
        def over(n: int) -> tuple[str, int]:
            return _("> {n} tokens").format(n=n), n

        self.offload = _classed(widgets.Dropdown(options=[(_("never"), None), over(150), over(400)],
                                                 value=offload_over_tokens, description=_("store outside"),
                                                 style=_STYLE), f"{PREFIX}-offload")
        self.compact = _classed(widgets.Dropdown(options=[(_("never"), None), over(300), over(600), over(1000)],
                                                 value=compact_over_tokens, description=_("compact when"),
                                                 style=_STYLE), f"{PREFIX}-compact")
        self.keep = _classed(widgets.IntSlider(value=keep_recent_turns, min=0, max=3,
                                               description=_("keep recent turns"), style=_STYLE,
                                               continuous_update=False), f"{PREFIX}-keep")
        self.compactor = _classed(widgets.ToggleButtons(options=["state", "careless"], value=compactor,
                                                        description=_("compactor"), style=_STYLE),
                                  f"{PREFIX}-compactor")
        self.check = _classed(widgets.Checkbox(value=check_compaction, description=_("check each memory"),
                                               style=_STYLE, indent=False), f"{PREFIX}-check")
        self.state_block = _classed(widgets.Checkbox(value=send_state, description=_("send the TASK STATE block"),
                                                    style=_STYLE, indent=False), f"{PREFIX}-send-state")
        self.status = _classed(widgets.HTML(), f"{PREFIX}-status")
        from agentloops.controller.teaching.plots import LiveContextChart

        self._chart = LiveContextChart(max_turns=int(RESEARCH_BUDGET["steps"]))
        self.chart = _chart_image(self._chart)
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        self._wire([self.offload, self.compact, self.keep, self.compactor, self.check, self.state_block])
        super().__init__([self.offload, self.compact, self.keep, self.compactor,
                          widgets.HBox([self.check, self.state_block]), self.status, self.chart, self.table])
        self.add_class(f"{PREFIX}-context-explorer")
        self.refresh()

    def _view(self, key: tuple[Any, ...]) -> _View:
        """The run for the settings (in the order of :data:`SETTINGS`) and the baseline; chart and tables."""
        settings = dict(zip(SETTINGS, key, strict=True))
        run = context_run(**settings)
        send = bool(settings["send_state"])
        self._between()
        baseline = context_run(None, None, send_state=send, label=N_("no storage, no compaction"))
        state = ContextState(settings, run, baseline)
        limit = run.task.budget.limit("context_tokens")
        return _View(state, self._draw(run, baseline, limit), {
            "status": (f"<div style='font-size:15px'>{_badge(run.status)} {html.escape(run.headline())}</div>"
                       f"<div style='font-size:14px'>{_actions_html(run)}</div>"),
            "table": html_table(_("Turn by turn"), _headers(CONTEXT_HEADERS), state.rows())})

    def refresh(self) -> ContextState:
        """Show the run against the baseline (computed once per setting) and work ahead."""
        return super().refresh()  # type: ignore[no-any-return]


def context_explorer(offload_over_tokens: int | None = 150, compact_over_tokens: int | None = 300,
                     keep_recent_turns: int = 1, compactor: str = "careless", check_compaction: bool = False,
                     send_state: bool = False) -> ContextExplorer:
    """Build the context explorer (see :class:`ContextExplorer`); it opens on the careless, unchecked compaction."""
    return ContextExplorer(offload_over_tokens, compact_over_tokens, keep_recent_turns, compactor, check_compaction,
                           send_state)
