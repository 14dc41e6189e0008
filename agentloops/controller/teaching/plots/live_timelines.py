"""Live charts along time: the replay's diff, the parallel timeline and the context per turn."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

from agentloops.controller.teaching.plots.live import (
    CHART_DPI,
    LiveFigure,
)
from agentloops.controller.teaching.plots.style import (
    ACTION_COLORS,
    CALL_STATE_COLORS,
    DIFFERS_EDGE,
    LOOP_COLORS,
    _action_label,
    action_kind,
    status_color,
)
from agentloops.controller.teaching.plots.timelines import (
    _short_action,
    _short_args,
    diff_headline,
)
from agentloops.i18n import _
from agentloops.plots.style import (
    CAP_COLOR,
    OKABE_ITO,
    OTHER_COLOR,
    _integer_ticks,
)

if TYPE_CHECKING:

    from agentloops.controller.persistence.result import ControllerRun
    from agentloops.controller.running.replaying import Replay, TraceDiff


MAX_LANE_ACTIONS = 12
"""Actions a live trajectory lane shows (a longer trajectory is cut, and the title says so)."""


class LiveDiffChart:
    """The replay explorer's chart: the recorded and the replayed trajectory as lanes of actions.

    A box is one action, coloured by its kind; a thick black outline marks
    a position (or a stop) where the two lanes differ. When the replay matches
    the recording exactly, one lane is drawn and the title says so: two
    identical rows would only make the reader hunt for a difference.
    """

    def __init__(self, *, dpi: int = CHART_DPI) -> None:
        from matplotlib.patches import Patch, Rectangle

        n = MAX_LANE_ACTIONS
        self.live = LiveFigure(12.0, 3.8, dpi=dpi)
        with self.live.style():
            ax = self.live.figure.subplots()
            self.live.figure.subplots_adjust(left=0.16, right=0.99, bottom=0.3, top=0.84)
            self._boxes: list[list[Any]] = []
            self._texts: list[list[Any]] = []
            self._stops: list[Any] = []
            for y in (1, 0):
                self._boxes.append([ax.add_patch(Rectangle((i + 0.05, y - 0.34), 0.9, 0.68, zorder=2))
                                    for i in range(n)])
                self._texts.append([ax.text(i + 0.5, y, "", ha="center", va="center", fontsize=8, zorder=3)
                                    for i in range(n)])
                self._stops.append(ax.text(0, y, "", va="center", fontsize=10, zorder=3,
                                           bbox={"boxstyle": "round,pad=0.25", "facecolor": "white"}))
            ax.set_xlim(0, n + 2.6)
            ax.set_ylim(-0.6, 1.6)
            ax.set_xticks([i + 0.5 for i in range(n)], [str(i + 1) for i in range(n)], fontsize=11)
            ax.set_xlabel(_("action number"))
            ax.set_ylabel(_("trajectory"))
            ax.spines["left"].set_visible(False)
            handles = [Patch(facecolor=ACTION_COLORS[k], label=_action_label(k)) for k in ACTION_COLORS
                       if k not in ("held", "other")]
            handles.append(Patch(facecolor="white", edgecolor=DIFFERS_EDGE, linewidth=3, label=_("differs")))
            ax.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(-0.1, -0.22),
                      ncol=len(handles), fontsize=10)
            self._title = ax.set_title("", fontsize=13, loc="left")
        self._ax = ax
        self.live.moving(ax.yaxis, *(b for lane in self._boxes for b in lane),
                         *(t for lane in self._texts for t in lane), *self._stops, self._title)

    def update(self, diff: TraceDiff | Replay) -> bytes:
        """Redraw for a replay (or its diff); the PNG bytes."""
        if hasattr(diff, "diff"):
            diff = diff.diff
        lanes = [(diff.before_label, diff.before_actions, diff.before_stop),
                 (diff.after_label, diff.after_actions, diff.after_stop)]
        if diff.same:
            lanes = [(f"{diff.before_label}\n= {diff.after_label}", diff.before_actions, diff.before_stop)]
        stops_differ = diff.before_stop[:2] != diff.after_stop[:2]
        for row in range(2):
            shown = row < len(lanes)
            _unused, actions, stop = lanes[row] if shown else ("", (), ("", "", ""))
            other = lanes[1 - row][1] if len(lanes) == 2 else actions
            for i, (box, text) in enumerate(zip(self._boxes[row], self._texts[row], strict=True)):
                visible = shown and i < len(actions)
                box.set_visible(visible)
                text.set_visible(visible)
                if visible:
                    kind = action_kind(actions[i])
                    differs = i >= len(other) or other[i] != actions[i]
                    box.set_facecolor(ACTION_COLORS[kind])
                    box.set_edgecolor(DIFFERS_EDGE if differs else "white")
                    box.set_linewidth(3.5 if differs else 1)
                    text.set_text(_short_action(actions[i]))
                    text.set_color("white" if kind in ("call", "fallback", "blocked", "held") else "black")
            stop_text = self._stops[row]
            stop_text.set_visible(shown)
            stop_text.set_text(f"{stop[0]}\n({stop[1]})")
            stop_text.set_x(min(len(actions), MAX_LANE_ACTIONS) + 0.15)
            stop_text.get_bbox_patch().set_facecolor(status_color(stop[0]))
            stop_text.get_bbox_patch().set_edgecolor(DIFFERS_EDGE if stops_differ else "black")
            stop_text.get_bbox_patch().set_linewidth(3 if stops_differ else 1)
        self._ax.set_yticks([1, 0][: len(lanes)], [label for label, _unused, _unused in lanes], fontsize=11)
        cut = max(len(diff.before_actions), len(diff.after_actions)) > MAX_LANE_ACTIONS
        note = _(" (first {n} actions shown)").format(n=MAX_LANE_ACTIONS) if cut else ""
        self._title.set_text(textwrap.fill(diff_headline(diff) + note, 110))
        return self.live.render()


MAX_TIMELINE_CALLS = 8
"""Tool calls the live parallel timeline has rows for."""


class LiveGanttChart:
    """The parallel explorer's chart: every tool call on the simulated timeline, coloured by its final state.

    Late and duplicate results are markers explained in the legend, never text
    over a bar; the stop is a dashed line in its status colour.
    """

    def __init__(self, max_seconds: float = 16.0, *, dpi: int = CHART_DPI) -> None:
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch

        n = MAX_TIMELINE_CALLS
        self.live = LiveFigure(12.0, 4.2, dpi=dpi)
        with self.live.style():
            ax = self.live.figure.subplots()
            self.live.figure.subplots_adjust(left=0.15, right=0.75, bottom=0.15, top=0.88)
            self._bars = [ax.barh(y, 0, left=0, height=0.55, edgecolor="black", linewidth=1, zorder=2)[0]
                          for y in range(n)]
            self._late = [ax.plot([], [], linestyle=":", color=CAP_COLOR, linewidth=2)[0] for _unused in range(n)]
            (self._arrivals,) = ax.plot([], [], linestyle="none", marker="v", color=OKABE_ITO["vermillion"],
                                        markersize=12, zorder=3)
            (self._duplicates,) = ax.plot([], [], linestyle="none", marker="D", color=OKABE_ITO["reddish_purple"],
                                          markersize=10, zorder=4)
            self._stop = ax.axvline(0, linestyle="--", linewidth=2.5)
            ax.set_xlim(0, max_seconds)
            ax.set_xlabel(_("simulated time (s)"))
            ax.set_ylabel(_("tool call: final state"))
            handles: list[Any] = [Patch(facecolor=CALL_STATE_COLORS[s], edgecolor="black",
                                        hatch="//" if s in ("cancelled", "ignored") else None, label=_(s))
                                  for s in ("succeeded", "failed", "cancelled", "ignored")]
            handles += [Line2D([], [], marker="v", linestyle=":", color=OKABE_ITO["vermillion"], markersize=10,
                               label=_("late result: recorded, ignored")),
                        Line2D([], [], marker="D", linestyle="none", color=OKABE_ITO["reddish_purple"], markersize=9,
                               label=_("duplicate: applied once")),
                        Line2D([], [], linestyle="--", color=CAP_COLOR, label=_("the stop (in its status colour)"))]
            ax.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=11)
            self._title = ax.set_title("", fontsize=14, loc="left")
        self._ax = ax
        self.live.moving(ax.yaxis, *self._bars, *self._late, self._arrivals, self._duplicates, self._stop,
                         self._title)

    def update(self, run: ControllerRun) -> bytes:
        """Redraw for ``run``; the PNG bytes."""
        calls = list(run.calls)[:MAX_TIMELINE_CALLS]
        arrivals: list[tuple[float, int]] = []
        for y, (bar, late) in enumerate(zip(self._bars, self._late, strict=True)):
            call = calls[y] if y < len(calls) else None
            bar.set_visible(call is not None)
            late.set_data([], [])
            if call is None:
                continue
            end = call.ended_at if call.ended_at is not None else run.stop.at_s
            bar.set_x(call.started_at)
            bar.set_width(end - call.started_at)
            bar.set_facecolor(CALL_STATE_COLORS.get(call.state, OTHER_COLOR))
            bar.set_hatch("//" if call.state in ("cancelled", "ignored") else None)
            if call.state == "ignored" and call.arrived_at is not None:
                late.set_data([end, call.arrived_at], [y, y])
                arrivals.append((call.arrived_at, y))
        rows = {c.call_id: y for y, c in enumerate(calls)}
        duplicates = [(e.at_s, rows[e.call_id]) for e in run.events if e.verdict == "duplicate" and e.call_id in rows]
        self._arrivals.set_data([x for x, _unused in arrivals], [y for _unused, y in arrivals])
        self._duplicates.set_data([x for x, _unused in duplicates], [y for _unused, y in duplicates])
        self._stop.set_xdata([run.stop.at_s, run.stop.at_s])
        self._stop.set_color(status_color(run.status))
        self._ax.set_yticks(range(len(calls)), [f"{c.tool}{_short_args(c.args)}: {c.state}" for c in calls],
                            fontsize=11)
        self._ax.set_ylim(max(len(calls), 1) - 0.5, -0.5)  # no call yet (cancelled first): one empty row
        self._title.set_text(_("stop at {at} s: {status} ({code})").format(at=f"{run.stop.at_s:g}", status=run.status,
                                                                          code=run.code))
        return self.live.render()


class LiveContextChart:
    """The context explorer's chart: request size per turn, this configuration against no storage or compaction.

    The y axis is logarithmic and fixed: the uncontrolled baseline climbs to
    the context budget while a controlled run stays far below it, and on a
    linear scale the controlled run's own growth (and each compaction's drop)
    would be a flat line at the bottom.
    """

    def __init__(self, max_turns: int = 10, *, dpi: int = CHART_DPI) -> None:
        from matplotlib.lines import Line2D
        from matplotlib.ticker import FixedLocator, NullLocator

        self.live = LiveFigure(12.0, 4.2, dpi=dpi)
        with self.live.style():
            ax = self.live.figure.subplots()
            self.live.figure.subplots_adjust(left=0.08, right=0.7, bottom=0.15, top=0.88)
            (self._baseline,) = ax.plot([], [], color=OTHER_COLOR, linestyle="--", marker="s", linewidth=2.5,
                                        markersize=7, label=_("no storage, no compaction"))
            (self._run,) = ax.plot([], [], color=LOOP_COLORS["controller"], marker="o", linewidth=2.5, markersize=8,
                                   label=_("this configuration"), zorder=3)
            (self._compactions,) = ax.plot([], [], linestyle="none", marker="v", markersize=13,
                                           color=LOOP_COLORS["controller"], markeredgecolor="black", zorder=4)
            self._budget = ax.axhline(1, color=CAP_COLOR, linestyle=":", linewidth=2)
            ax.set_yscale("log")
            ax.set_ylim(60, 6000)
            ax.yaxis.set_major_locator(FixedLocator([100, 200, 500, 1000, 2000, 5000]))
            ax.yaxis.set_minor_locator(NullLocator())
            ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:,.0f}")
            ax.set_xlim(0.5, max_turns + 0.5)
            ax.xaxis.set_major_locator(_integer_ticks())
            ax.set_xlabel(_("turn"))
            ax.set_ylabel(_("request size (tokens, log scale)"))
            handles, _labels = ax.get_legend_handles_labels()
            handles += [Line2D([], [], linestyle="none", marker="v", markersize=11, color=LOOP_COLORS["controller"],
                               markeredgecolor="black", label=_("compaction before this request")),
                        Line2D([], [], color=CAP_COLOR, linestyle=":", linewidth=2, label=_("context budget"))]
            ax.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=11)
            self._title = ax.set_title("", fontsize=14, loc="left")
        self.live.moving(self._baseline, self._run, self._compactions, self._budget, self._title)

    def update(self, run: ControllerRun, baseline: ControllerRun, budget: float | None) -> bytes:
        """Redraw for the configured run, the baseline and the context budget; the PNG bytes."""
        for line, r in ((self._run, run), (self._baseline, baseline)):
            line.set_data([t.turn for t in r.turns if t.context_tokens], [t.context_tokens for t in r.turns
                                                                          if t.context_tokens])
        events = [(t.turn, t.context_tokens) for t in run.turns if t.compaction]
        self._compactions.set_data([x for x, _unused in events], [y for _unused, y in events])
        self._budget.set_visible(budget is not None)
        self._budget.set_ydata([budget or 1, budget or 1])
        peak = max((t.context_tokens for t in run.turns), default=0)
        self._title.set_text(_("this configuration: {status}, largest request {peak} tokens · baseline: "
                               "{baseline}").format(status=run.status, peak=f"{peak:,}", baseline=baseline.status))
        return self.live.render()
