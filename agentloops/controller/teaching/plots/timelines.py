"""Charts along time: parallel calls (15), the context sent per turn (16), two trajectories side by side (14)."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

from agentloops.controller.teaching.plots.style import (
    _DODGE,
    ACTION_COLORS,
    CALL_STATE_COLORS,
    DIFFERS_EDGE,
    RunsLike,
    _action_label,
    _labelled,
    _series_style,
    action_kind,
    status_color,
)
from agentloops.i18n import _
from agentloops.plots.style import (
    CAP_COLOR,
    OKABE_ITO,
    OTHER_COLOR,
    _done,
    _integer_ticks,
    _new_figure,
    _styled,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from agentloops.controller.persistence.result import ControllerRun
    from agentloops.controller.running.replaying import Replay, TraceDiff


@_styled
def gantt_chart(run: ControllerRun, *, title: str | None = None) -> Figure:
    """Every tool call of a run on the simulated timeline, coloured by its final state.

    A bar runs from the call's start to its end (its result, or its
    cancellation). A cancelled call whose result still arrived is drawn with
    a dotted line to that arrival and a triangle: recorded, not applied. A
    second delivery of the same result is a diamond. The dashed vertical line
    is the stop, in its status colour. Every marker is explained in the
    legend, outside the plot: no text sits on a bar.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    calls = list(run.calls)
    if not calls:
        raise ValueError(f"{run.label}: the run made no tool calls, so there is no timeline to draw")
    fig, (ax,) = _new_figure(12.0, max(3.2, 0.75 * len(calls) + 2.0))
    labels = []
    duplicates = [e for e in run.events if e.verdict == "duplicate"]
    for y, call in enumerate(calls):
        end = call.ended_at if call.ended_at is not None else run.stop.at_s
        color = CALL_STATE_COLORS.get(call.state, OTHER_COLOR)
        hatch = "//" if call.state in ("cancelled", "ignored") else None
        ax.barh(y, end - call.started_at, left=call.started_at, height=0.55, color=color, edgecolor="black",
                hatch=hatch, linewidth=1, zorder=2)
        if call.state == "ignored" and call.arrived_at is not None:
            ax.plot([end, call.arrived_at], [y, y], linestyle=":", color=CAP_COLOR, linewidth=2)
            ax.plot([call.arrived_at], [y], marker="v", color=OKABE_ITO["vermillion"], markersize=12, zorder=3)
        kind = "" if call.kind == "call" else f"{call.kind}:"
        labels.append(f"{kind}{call.tool}{_short_args(call.args)}\n{call.state}")
    for event in duplicates:
        y = next(i for i, c in enumerate(calls) if c.call_id == event.call_id)
        ax.plot([event.at_s], [y], marker="D", color=OKABE_ITO["reddish_purple"], markersize=10, zorder=4)
    ax.axvline(run.stop.at_s, color=status_color(run.status), linestyle="--", linewidth=2.5)
    ax.set_yticks(range(len(calls)), labels, fontsize=12)
    ax.invert_yaxis()
    ax.set_xlabel(_("simulated time (s)"))
    ax.set_ylabel(_("tool call and its final state"))
    ax.set_xlim(left=0)
    ax.margins(x=0.12)
    states = list(dict.fromkeys(c.state for c in calls))
    handles: list[Any] = [Patch(facecolor=CALL_STATE_COLORS.get(s, OTHER_COLOR), edgecolor="black",
                     hatch="//" if s in ("cancelled", "ignored") else None, label=_(s)) for s in states]
    if any(c.state == "ignored" for c in calls):
        handles.append(Line2D([], [], marker="v", linestyle=":", color=OKABE_ITO["vermillion"], markersize=10,
                              label=_("late: recorded, ignored")))
    if duplicates:
        handles.append(Line2D([], [], marker="D", linestyle="none", color=OKABE_ITO["reddish_purple"],
                              markersize=9, label=_("duplicate: applied once")))
    handles.append(Line2D([], [], color=status_color(run.status), linestyle="--", linewidth=2.5,
                          label=_("stop at {at} s: {status}").format(at=f"{run.stop.at_s:g}", status=run.status)))
    ax.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=11)
    fig.suptitle(title or _("Parallel calls of {label}: states, late and duplicate results").format(
        label=_(run.label)), fontsize=16,
                 fontweight="bold")
    return _done(fig)


def _short_args(args: str) -> str:
    """``{"source_id":"s1"}`` → ``(s1)``: the argument values only."""
    import json

    try:
        data = json.loads(args)
    except ValueError:
        return f"({args})"
    if isinstance(data, dict):
        return "(" + ", ".join(str(v) for v in data.values()) + ")"
    return f"({data})"


@_styled
def context_chart(runs: RunsLike, *, budget: float | None = None, title: str | None = None) -> Figure:
    """Tokens of the request sent each turn, one line per run; a triangle marks a compaction.

    When one run climbs to many times the size of another (an uncontrolled
    run against a compacted one), the y axis is logarithmic: on a linear
    scale the smaller run's growth, and each compaction's drop, would be a
    flat line along the bottom. The budget is a dotted line named in the
    legend.

    Args:
        runs: the runs to compare (labelled).
        budget: the context budget to draw as a dotted line (default: none).
        title: the chart's message.
    """
    from matplotlib.lines import Line2D

    pairs = _labelled(runs)
    fig, (ax,) = _new_figure(13.0, 5.2)
    compacted = False
    peaks = []
    for i, (label, run) in enumerate(pairs):
        color, style, marker = _series_style(i, run.status)
        shift = _DODGE * (2 * i - (len(pairs) - 1))  # runs that send the same requests stay visible side by side
        turns = [t.turn + shift for t in run.turns if t.context_tokens]
        sizes = [t.context_tokens for t in run.turns if t.context_tokens]
        peaks.append(max(sizes, default=1))
        ax.plot(turns, sizes, linestyle=style, marker=marker, color=color, linewidth=2.5, markersize=8,
                label=f"{_(label)} → {run.status}", zorder=3)
        events = [(t.turn + shift, t.context_tokens) for t in run.turns if t.compaction]
        if events:
            compacted = True
            xs, ys = zip(*events, strict=True)
            ax.plot(xs, ys, linestyle="none", marker="v", markersize=13, color=color, markeredgecolor="black",
                    zorder=4)
    handles, _labels = ax.get_legend_handles_labels()
    if budget is not None:
        ax.axhline(budget, color=CAP_COLOR, linestyle=":", linewidth=2)
        handles.append(Line2D([], [], color=CAP_COLOR, linestyle=":", linewidth=2,
                              label=_("context budget = {budget}").format(budget=f"{budget:g}")))
    if compacted:
        handles.append(Line2D([], [], linestyle="none", marker="v", markersize=11, color="#bbbbbb",
                              markeredgecolor="black", label=_("compaction before this request")))
    ax.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=11)
    ax.set_xlabel(_("turn"))
    ax.xaxis.set_major_locator(_integer_ticks())
    if max([*peaks, budget or 0]) > LOG_SCALE_RATIO * min(peaks):
        _log_tokens(ax)
        ax.set_ylabel(_("request size (estimated tokens, log scale)"))
    else:
        ax.set_ylim(bottom=0)
        ax.set_ylabel(_("request size (estimated tokens)"))
    fig.suptitle(title or _("Context sent with each turn"), fontsize=16, fontweight="bold")
    return _done(fig)


LOG_SCALE_RATIO = 4.0
"""A context chart switches to a log scale when its largest value is this many times its smallest peak."""


def _log_tokens(ax: Axes) -> None:
    from matplotlib.ticker import FixedLocator, NullLocator

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(FixedLocator([50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000]))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:,.0f}")


@_styled
def trace_diff_chart(diff: TraceDiff | Replay, *, title: str | None = None) -> Figure:
    """Two trajectories of the same trace as lanes of actions; positions that differ are outlined.

    Each box is one action, coloured by its kind (call, retry, fallback,
    blocked, answer…); a thick black outline marks a position, or a
    stop, where the two sides differ. A replay that matches its recording
    exactly is drawn as one lane, and the title says what changed in words.
    """
    from matplotlib.patches import Patch, Rectangle

    if hasattr(diff, "diff"):
        diff = diff.diff  # a Replay
    lanes: tuple[tuple[str, tuple[str, ...], tuple[str, str, str]], ...] = (
        (diff.before_label, diff.before_actions, diff.before_stop),
        (diff.after_label, diff.after_actions, diff.after_stop))
    if diff.same:  # two identical rows would only send the reader hunting for a difference
        lanes = ((f"{diff.before_label}\n= {diff.after_label}", diff.before_actions, diff.before_stop),)
    n = max(len(diff.before_actions), len(diff.after_actions), 1)
    fig, (ax,) = _new_figure(min(16.0, max(9.0, 1.25 * n + 5)), 4.2)
    kinds_seen: list[str] = []
    stops_differ = diff.before_stop[:2] != diff.after_stop[:2]
    for row, (_unused, actions, stop) in enumerate(lanes):
        y = 1 - row
        for i, label in enumerate(actions):
            kind = action_kind(label)
            kinds_seen.append(kind)
            other = lanes[1 - row][1] if len(lanes) == 2 else actions
            differs = i >= len(other) or other[i] != label
            ax.add_patch(Rectangle((i + 0.05, y - 0.32), 0.9, 0.64, facecolor=ACTION_COLORS[kind],
                                   edgecolor=DIFFERS_EDGE if differs else "white",
                                   linewidth=3.5 if differs else 1, zorder=2))
            ax.annotate(_short_action(label), (i + 0.5, y), ha="center", va="center", fontsize=9,
                        color="white" if kind in ("call", "fallback", "blocked", "held") else "black", zorder=3)
        ax.annotate(f"{stop[0]}\n({stop[1]})", (len(actions) + 0.15, y), va="center", fontsize=12,
                    bbox={"boxstyle": "round,pad=0.25", "facecolor": status_color(stop[0]),
                          "edgecolor": DIFFERS_EDGE if stops_differ else "black",
                          "linewidth": 3 if stops_differ else 1})
    ax.set_xlim(0, n + 3.2)
    ax.set_ylim(0.4 if len(lanes) == 1 else -0.6, 1.6)
    ax.set_yticks([1, 0][: len(lanes)], [label for label, _unused, _unused in lanes])
    ax.set_xticks([i + 0.5 for i in range(n)], [str(i + 1) for i in range(n)])
    ax.set_xlabel(_("action number"))
    ax.set_ylabel(_("trajectory"))
    ax.spines["left"].set_visible(False)
    handles = [Patch(facecolor=ACTION_COLORS[k], label=_action_label(k)) for k in dict.fromkeys(kinds_seen)]
    handles.append(Patch(facecolor="white", edgecolor=DIFFERS_EDGE, linewidth=3, label=_("differs")))
    ax.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(0.0, -0.22), ncol=len(handles),
              fontsize=11)
    fig.suptitle(title or textwrap.fill(diff_headline(diff), 100), fontsize=14, fontweight="bold")
    return _done(fig)


def _short_action(label: str) -> str:
    """``retry:get_weather(city=Beijing)`` → ``retry\\nget_weather\\nBeijing`` (fits a box)."""
    kind = action_kind(label)
    body = label.split(":", 1)[1] if kind in ("retry", "fallback", "blocked", "held") else label
    tool, _paren, args = body.partition("(")
    values = ", ".join(part.split("=", 1)[-1] for part in args.rstrip(")").split(", ") if part)
    head = f"{kind}\n" if kind not in ("call", "answer", "ask_user", "other") else ""
    if len(tool) > 8 and "_" in tool:
        tool = tool.replace("_", "_\n", 1)
    return f"{head}{tool}" + (f"\n{values[:12]}" if values else "")


def diff_headline(diff: TraceDiff) -> str:
    """What a replay changed, as a sentence (a chart title; never the raw diff summary)."""
    before, after = diff.before_label, diff.after_label
    n_before, n_after = len(diff.before_actions), len(diff.after_actions)
    if diff.first_divergence is None:
        actions = _("the same {n} actions").format(n=n_before)
    else:
        actions = _("the actions part at action {at} ({before} → {after} actions)").format(
            at=diff.first_divergence + 1, before=n_before, after=n_after)
    if diff.before_stop[:2] == diff.after_stop[:2]:
        stop = _("the same stop ({status})").format(status=diff.before_stop[0])
    else:
        stop = _("a different stop ({before} → {after})").format(before=diff.before_stop[0], after=diff.after_stop[0])
    if diff.same:
        return _("{after} replays {before} exactly: {actions}, {stop}").format(after=after, before=before,
                                                                              actions=actions, stop=stop)
    return _("{before} vs {after}: {actions}, {stop}").format(before=before, after=after, actions=actions, stop=stop)
