"""Live charts of many runs: the state explorer's, the claims', the storm's and the budget explorer's."""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentloops.controller.teaching.plots.live import (
    CHART_DPI,
    LiveFigure,
    _fit,
)
from agentloops.controller.teaching.plots.many_runs import (
    CLAIM_KINDS,
    _end_tick,
    _ends_template,
    claim_bars,
    failing_attempts,
    retries_spent,
)
from agentloops.controller.teaching.plots.style import (
    _DODGE,
    CAP_OUTCOME_COLORS,
    LOOP_COLORS,
    NO_CHANGE_COLOR,
    STATUS_HATCHES,
    status_color,
)
from agentloops.i18n import N_, _
from agentloops.plots.style import (
    CAP_COLOR,
    OKABE_ITO,
    OTHER_COLOR,
    WASTE_HATCH,
    _integer_ticks,
)

if TYPE_CHECKING:

    from agentloops.controller.persistence.result import ControllerRun
    from agentloops.controller.teaching.experiments import LoopComparison


class LiveStateChart:
    """The state explorer's chart: state version and items still missing, this run against the reference.

    The two lines are shifted sideways by a fraction of a turn and drawn in
    different styles, so where they coincide both stay visible; each is
    coloured by how its run ended (the status colours of every chart).
    """

    SERIES: tuple[tuple[str, str, str, str], ...] = ((N_("this run"), CAP_COLOR, "-", "o"),
                                                     (N_("with state (reference)"), CAP_COLOR, "--", "s"))
    """(label, legend colour, line style, marker); a drawn line takes its run's stop-status colour."""

    def __init__(self, *, dpi: int = CHART_DPI) -> None:
        from matplotlib.lines import Line2D

        self.live = LiveFigure(12.0, 4.2, dpi=dpi)
        with self.live.style():
            self.axes = self.live.figure.subplots(1, 2)
            self.live.figure.subplots_adjust(left=0.06, right=0.98, bottom=0.15, top=0.76, wspace=0.25)
            self._lines: list[list[Any]] = []
            for ax in self.axes:
                lines = [ax.plot([], [], color=color, linestyle=style, marker=marker, linewidth=2.5, markersize=8,
                                 markerfacecolor="white" if i else color, zorder=3 + i, label=_(label))[0]
                         for i, (label, color, style, marker) in enumerate(self.SERIES)]
                self._lines.append(lines)
                ax.set_xlabel(_("turn"))
                ax.xaxis.set_major_locator(_integer_ticks())
                ax.yaxis.set_major_locator(_integer_ticks())
            (self._idle,) = self.axes[0].plot([], [], linestyle="none", marker="x", markersize=14, markeredgewidth=3,
                                              color=NO_CHANGE_COLOR, zorder=6)
            self.axes[0].set_ylabel(_("state version"))
            self.axes[0].set_title(_("State version after the turn"), fontsize=14)
            self.axes[1].set_ylabel(_("items still missing"))
            self.axes[1].set_title(_("What is still missing"), fontsize=14)
            handles, _labels = self.axes[0].get_legend_handles_labels()
            handles.append(Line2D([], [], linestyle="none", marker="x", markersize=11, markeredgewidth=2.5,
                                  color=NO_CHANGE_COLOR, label=_("this run: tool turn, state unchanged")))
            self.live.figure.legend(handles=handles, frameon=False, loc="upper left", ncol=3, fontsize=11,
                                    bbox_to_anchor=(0.0, 0.92))
            self._title = self.live.figure.suptitle("", fontsize=15, fontweight="bold", x=0.01, ha="left")
        self.live.moving(*(a for ax in self.axes for a in (ax.xaxis, ax.yaxis)), *self._lines[0], *self._lines[1],
                         self._idle, self._title)

    def update(self, run: ControllerRun, reference: ControllerRun) -> bytes:
        """Redraw for the configured run and the reference; the PNG bytes."""
        all_turns: list[float] = []
        tops: list[list[int]] = [[], []]
        for i, r in enumerate((run, reference)):
            shift = _DODGE * (i - 0.5) * 2
            turns = [0, *(t.turn for t in r.turns)]
            versions = [r.turns[0].state_version if r.turns else 0, *(t.state_version_after for t in r.turns)]
            still_open = [len(r.task.items), *(len(t.open_items) for t in r.turns)]
            for panel, values in enumerate((versions, still_open)):
                line = self._lines[panel][i]
                line.set_data([x + shift for x in turns], values)
                line.set_color(status_color(r.status))
                line.set_markeredgecolor(status_color(r.status))
                line.set_markerfacecolor("white" if i else status_color(r.status))
                tops[panel] += values
            all_turns += turns
        idle = [(t.turn - _DODGE, t.state_version_after) for t in run.turns
                if t.state_version_after == t.state_version and any(a.get("tool") for a in t.actions)]
        self._idle.set_data([x for x, _unused in idle], [y for _unused, y in idle])
        for ax, values in zip(self.axes, tops, strict=True):
            _fit(ax, all_turns, values)
        self._title.set_text(_("this run: {status} in {turns} turns · reference: {reference} in {reference_turns} "
                               "turns").format(status=run.status, turns=len(run.turns), reference=reference.status,
                                               reference_turns=len(reference.turns)))
        return self.live.render()


class LiveClaimsChart:
    """The claims explorer's chart: per policy, runs verified, falsely "done", and stopped otherwise.

    Bars stand side by side (never stacked), each count above its bar.
    """

    def __init__(self, policies: Sequence[str], n: int, *, dpi: int = CHART_DPI) -> None:
        from matplotlib.patches import Patch

        self.policies = tuple(policies)
        self.live = LiveFigure(11.0, 4.2, dpi=dpi)
        width = 0.8 / len(CLAIM_KINDS)
        with self.live.style():
            ax = self.live.figure.subplots()
            self.live.figure.subplots_adjust(left=0.08, right=0.62, bottom=0.15, top=0.85)
            self._bars: list[list[Any]] = []
            self._labels: list[list[Any]] = []
            for j, (_unused, _unused, color, hatch) in enumerate(CLAIM_KINDS):
                xs = [x - 0.4 + width * (j + 0.5) for x in range(len(self.policies))]
                bars = ax.bar(xs, [0] * len(xs), width, color="white" if hatch else color, edgecolor=color,
                              hatch=hatch, linewidth=1.5, zorder=2)
                self._bars.append(list(bars))
                self._labels.append([ax.annotate("", (x, 0), xytext=(0, 3), textcoords="offset points",
                                                 ha="center", va="bottom", fontsize=12) for x in xs])
            ax.set_xticks(range(len(self.policies)), [_("policy {name}").format(name=p) for p in self.policies])
            ax.set_xlim(-0.6, len(self.policies) - 0.4)
            ax.set_ylim(0, n * 1.15)
            ax.set_xlabel(_("error policy"))
            ax.set_ylabel(_("runs (of {n})").format(n=n))
            ax.legend(handles=[Patch(facecolor="white" if h else c, edgecolor=c, hatch=h, label=_(lab))
                               for _unused, lab, c, h in CLAIM_KINDS], frameon=False, loc="upper left",
                      bbox_to_anchor=(1.02, 1.0), fontsize=11)
            self._title = self.live.figure.suptitle("", fontsize=15, fontweight="bold", x=0.01, ha="left")
        self.live.moving(*(b for row in self._bars for b in row), *(t for row in self._labels for t in row),
                         self._title)

    def update(self, counts: Mapping[str, Mapping[str, int]]) -> bytes:
        """Redraw for policy → kind → runs; the PNG bytes."""
        for x, policy in enumerate(self.policies):
            bars = claim_bars(counts.get(policy, {}))
            for j, (kind, _label, _color, _hatch) in enumerate(CLAIM_KINDS):
                self._bars[j][x].set_height(bars[kind])
                label = self._labels[j][x]
                label.set_text(str(bars[kind]))
                label.xy = (label.xy[0], bars[kind])
        false = {p: claim_bars(counts.get(p, {}))["unverified"] for p in self.policies}
        self._title.set_text(_("A reply without tool calls is a claim. False successes: {counts}").format(
            counts=", ".join(f"{p} {v}" for p, v in false.items())))
        return self.live.render()


STORM_SERIES: tuple[tuple[str, str, str, str], ...] = ((N_("one shared budget"), LOOP_COLORS["controller"], "-", "o"),
                                                       (N_("a budget per tool"), OKABE_ITO["vermillion"], "--", "s"))
"""The two retry scopes of the storm explorer: (label, colour, line style, marker)."""


class LiveStormChart:
    """The storm explorer's chart: retries spent attempt by attempt, and attempts per tool, for both scopes."""

    def __init__(self, max_tools: int = 6, *, dpi: int = CHART_DPI) -> None:
        from matplotlib.lines import Line2D

        self.max_tools = max_tools
        self.live = LiveFigure(12.0, 4.4, dpi=dpi)
        width = 0.8 / len(STORM_SERIES)
        with self.live.style():
            left, right = self.live.figure.subplots(1, 2)
            self.live.figure.subplots_adjust(left=0.06, right=0.98, bottom=0.2, top=0.78, wspace=0.25)
            self._steps = [left.step([], [], where="post", color=c, linestyle=s, marker=m, linewidth=2.5,
                                     markersize=7, label=_(lab))[0] for lab, c, s, m in STORM_SERIES]
            self._budget = left.axhline(0, color=CAP_COLOR, linestyle=":", linewidth=2)
            left.set_xlabel(_("tool attempt (in order)"))
            left.set_ylabel(_("retries spent so far"))
            left.set_title(_("Retries against the task's budget"), fontsize=14)
            left.xaxis.set_major_locator(_integer_ticks())
            left.yaxis.set_major_locator(_integer_ticks())
            self._bars, self._labels = [], []
            for i, (_unused, color, _unused, _unused) in enumerate(STORM_SERIES):
                xs = [k - 0.4 + width * (i + 0.5) for k in range(max_tools)]
                self._bars.append(list(right.bar(xs, [0] * max_tools, width, color=color, edgecolor="white",
                                                 zorder=2)))
                self._labels.append([right.annotate("", (x, 0), xytext=(0, 2), textcoords="offset points",
                                                    ha="center", va="bottom", fontsize=11) for x in xs])
            right.set_xlim(-0.6, max_tools - 0.4)
            right.set_xlabel(_("tool"))
            right.set_ylabel(_("attempts"))
            right.set_title(_("Attempts at the failing city, per tool"), fontsize=14)
            handles, _labels = left.get_legend_handles_labels()
            handles.append(Line2D([], [], color=CAP_COLOR, linestyle=":", linewidth=2,
                                  label=_("the task's retry budget")))
            self.live.figure.legend(handles=handles, frameon=False, loc="upper left", ncol=3, fontsize=11,
                                    bbox_to_anchor=(0.0, 0.92))
            self._title = self.live.figure.suptitle("", fontsize=15, fontweight="bold", x=0.01, ha="left")
        self._axes = (left, right)
        self.live.moving(left.xaxis, left.yaxis, right.xaxis, right.yaxis, *self._steps, self._budget,
                         *(b for row in self._bars for b in row), *(t for row in self._labels for t in row),
                         self._title)

    def update(self, runs: Mapping[str, ControllerRun], retries: int) -> bytes:
        """Redraw for the two runs (labelled as in :data:`STORM_SERIES`) under a ``retries`` budget."""
        left, right = self._axes
        pairs = list(runs.values())
        tools = list(dict.fromkeys(c.tool for run in pairs for c in run.calls))[: self.max_tools]
        longest, top = 1, retries
        for i, (line, bars, labels, run) in enumerate(zip(self._steps, self._bars, self._labels, pairs, strict=True)):
            spent = retries_spent(run)
            shift = _DODGE * (2 * i - 1)  # the scopes agree until the shared budget runs out: keep both visible
            line.set_data([x + shift for x in range(len(spent) + 1)], [0, *spent])
            longest, top = max(longest, len(spent)), max(top, *spent) if spent else top
            for k, (bar, label) in enumerate(zip(bars, labels, strict=True)):
                count = failing_attempts(run, tools[k]) if k < len(tools) else 0
                bar.set_height(count)
                label.set_text(str(count) if k < len(tools) else "")
                label.xy = (label.xy[0], count)
        self._budget.set_ydata([retries, retries])
        left.set_xlim(-0.3, longest + 0.5)
        left.set_ylim(0, top * 1.3 + 0.5)
        right.set_xticks(range(len(tools)), [t.replace("_", "_\n", 1) for t in tools], fontsize=10)
        right.set_ylim(0, max(1, *(b.get_height() for row in self._bars for b in row)) * 1.3)
        self._title.set_text("; ".join(_("{label}: {attempts} attempts at the failing city, {retries} retries").format(
            label=_(label), attempts=failing_attempts(r), retries=int(r.usage["retries"]))
            for label, r in runs.items()))
        return self.live.render()


def _ends(comparison: LoopComparison) -> list[tuple[str, str, int]]:
    """(loop, how it ended, runs) for every way a cap-only run or a controller run can end, zeros included."""
    from agentloops.controller.stopping.status import STOP_STATUSES
    from agentloops.controller.teaching.experiments import CAP_OUTCOME_STATUS

    cap = Counter(CAP_OUTCOME_STATUS.get(r["cap_outcome"], r["cap_outcome"]) for r in comparison.rows)
    ctl = Counter(r["ctl_status"] for r in comparison.rows)
    return ([("cap-only", o, cap.get(o, 0)) for o in CAP_OUTCOME_COLORS]
            + [("controller", s, ctl.get(s, 0)) for s in STOP_STATUSES])


def _end_style(loop: str, outcome: str) -> tuple[str, str, str | None]:
    """(face, edge, hatch) of a bar of the "how the runs ended" panel."""
    if loop == "cap-only":
        color = CAP_OUTCOME_COLORS.get(outcome, OTHER_COLOR)
        return ("white", color, WASTE_HATCH) if outcome == "false success" else (color, "white", None)
    return status_color(outcome), "white", STATUS_HATCHES.get(outcome) or None


DRAWN = 64
"""PNGs the budget explorer's chart keeps, by what they show (some 50 kB each), least recently used dropped."""


class LiveBudgetChart:
    """The budget explorer's chart: how randomized runs ended, and the steps they used, for both loops.

    Every way a run can end has its row (zeros included), so the layout never
    moves; the step counts are side-by-side bars per loop, never drawn over
    each other, and the cap is a legend entry, not a label on the bars.
    """

    def __init__(self, n: int, max_steps: int = 12, *, dpi: int = CHART_DPI) -> None:
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch

        self.n, self.max_steps = n, max_steps
        self.live = LiveFigure(12.0, 5.0, dpi=dpi)
        with self.live.style():
            ends, steps = self.live.figure.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.2]})
            self.live.figure.subplots_adjust(left=0.2, right=0.98, bottom=0.12, top=0.8, wspace=0.2)
            rows = _ends_template()
            self._end_bars = []
            for y, (loop, outcome) in enumerate(rows):
                face, edge, hatch = _end_style(loop, outcome)
                self._end_bars.append(ends.barh(y, 0, color=face, edgecolor=edge, hatch=hatch, linewidth=1.5,
                                                zorder=2)[0])
            self._end_labels = [ends.annotate("", (0, y), xytext=(4, 0), textcoords="offset points", va="center",
                                              fontsize=11) for y in range(len(rows))]
            ends.set_yticks(range(len(rows)), [_end_tick(loop, outcome) for loop, outcome in rows], fontsize=10)
            ends.invert_yaxis()
            ends.set_xlim(0, n * 1.2)
            ends.set_xlabel(_("runs (of {n})").format(n=n))
            ends.set_ylabel(_("loop: how it ended"))
            ends.set_title(_("How the runs ended"), fontsize=14)
            width = 0.4
            xs = range(max_steps + 2)
            self._step_bars = {loop: list(steps.bar([x + (i - 0.5) * width for x in xs], [0] * len(xs), width,
                                                    color=LOOP_COLORS[loop], edgecolor="white", zorder=2))
                               for i, loop in enumerate(LOOP_COLORS)}
            self._cap = steps.axvline(0, color=CAP_COLOR, linestyle="--", linewidth=1.5, zorder=1)
            steps.set_xlim(-0.6, max_steps + 1.6)
            steps.xaxis.set_major_locator(_integer_ticks())
            steps.set_xlabel(_("model calls (steps) used"))
            steps.set_ylabel(_("runs"))
            steps.set_title(_("Steps used"), fontsize=14)
            self.live.figure.legend(handles=[
                *(Patch(facecolor=c, label=_("{loop} loop").format(loop=_(loop))) for loop, c in LOOP_COLORS.items()),
                Line2D([], [], color=CAP_COLOR, linestyle="--", label=_("cap-only cap = controller step budget"))],
                frameon=False, loc="upper left", ncol=3, fontsize=11, bbox_to_anchor=(0.0, 0.92))
            self._title = self.live.figure.suptitle("", fontsize=15, fontweight="bold", x=0.01, ha="left")
        self._steps_ax = steps
        self._drawn: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()  # what was shown → its PNG
        self.live.moving(steps.yaxis, self._cap, *self._end_bars, *self._end_labels,
                         *(b for bars in self._step_bars.values() for b in bars), self._title)

    def update(self, comparison: LoopComparison) -> bytes:
        """Redraw for a comparison whose cap is also the controller's step budget; the PNG bytes. What the chart
        shows is counted first: counts drawn before give the PNG they gave (many settings end their runs alike)."""
        shown = self._shown(comparison)
        if shown not in self._drawn:
            self._drawn[shown] = self._draw(*shown)
            while len(self._drawn) > DRAWN:
                self._drawn.popitem(last=False)
        self._drawn.move_to_end(shown)
        return self._drawn[shown]

    def _shown(self, comparison: LoopComparison) -> tuple[Any, ...]:
        """What the chart shows: how the runs ended, the steps each loop used (as many bars as drawn), the cap and
        the title."""
        ends = tuple(count for _loop, _outcome, count in _ends(comparison))
        used = tuple(tuple(Counter(min(int(r[column]), self.max_steps + 1) for r in comparison.rows).get(x, 0)
                           for x in range(self.max_steps + 2)) for column in ("cap_steps", "ctl_steps"))
        means = {loop: sum(r[c] for r in comparison.rows) / max(1, len(comparison.rows))
                 for loop, c in (("cap-only", "cap_steps"), ("controller", "ctl_steps"))}
        title = _("{n} randomized runs, cap = step budget = {cap}: mean steps {means}").format(
            n=len(comparison.rows), cap=comparison.cap,
            means=", ".join(f"{_(loop)} {m:.2f}" for loop, m in means.items()))
        return ends, used, comparison.cap, title

    def _draw(self, ends: Sequence[int], used: Sequence[Sequence[int]], cap: int, title: str) -> bytes:
        for bar, label, count in zip(self._end_bars, self._end_labels, ends, strict=True):
            bar.set_width(count)
            label.set_text(str(count))
            label.xy = (count, label.xy[1])
        for bars, heights in zip(self._step_bars.values(), used, strict=True):
            for bar, height in zip(bars, heights, strict=True):
                bar.set_height(height)
                bar.set_visible(height > 0)  # a bar of no height draws not a pixel: skip it (a third of the bars)
        self._steps_ax.set_ylim(0, max(1, *used[0], *used[1]) * 1.15)
        self._cap.set_xdata([cap, cap])
        self._title.set_text(title)
        return self.live.render()
