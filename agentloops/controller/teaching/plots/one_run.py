"""Charts of one run or a few: the state per turn (10), the budgets spent (13)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentloops.controller.teaching.plots.style import (
    _DODGE,
    LOOP_COLORS,
    NO_CHANGE_COLOR,
    STATUS_HATCHES,
    RunsLike,
    _labelled,
    _series_style,
    status_color,
)
from agentloops.i18n import N_, _
from agentloops.plots.style import (
    CAP_COLOR,
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


@_styled
def state_chart(runs: RunsLike, *, title: str | None = None) -> Figure:
    """State version and items still missing after each turn, one line per run.

    A turn that called a tool and left the state version where it was is
    marked with a vermillion cross (the colour of waste in both parts): the
    loop went round without learning anything. Lines are shifted sideways by
    a fraction of a turn, so where two runs coincide both stay visible; each
    run's stop status is in the legend, never on the lines.
    """
    from matplotlib.lines import Line2D

    pairs = _labelled(runs)
    fig, (version_ax, open_ax) = _new_figure(13.0, 4.8, ncols=2)
    for i, (label, run) in enumerate(pairs):
        color, style, marker = _series_style(i, run.status)
        shift = _DODGE * (2 * i - (len(pairs) - 1))
        turns = [shift, *(t.turn + shift for t in run.turns)]
        versions = [run.turns[0].state_version if run.turns else 0, *(t.state_version_after for t in run.turns)]
        still_open = [len(run.task.items), *(len(t.open_items) for t in run.turns)]
        for ax, values in ((version_ax, versions), (open_ax, still_open)):
            ax.plot(turns, values, linestyle=style, marker=marker, color=color, linewidth=2.5, markersize=8,
                    markerfacecolor="white" if i else color, markeredgewidth=2, label=f"{_(label)} → {run.status}",
                    zorder=3 + i)
        idle = _idle_turns(run)
        if idle:
            xs, ys = zip(*idle, strict=True)
            version_ax.plot([x + shift for x in xs], ys, linestyle="none", marker="x", markersize=15,
                            markeredgewidth=3, color=NO_CHANGE_COLOR, zorder=20)
    version_ax.set_ylabel(_("state version after the turn"))
    version_ax.set_title(_("State version (a cross: nothing changed)"), fontsize=14)
    open_ax.set_ylabel(_("items still missing"))
    open_ax.set_title(_("What is still missing"), fontsize=14)
    for ax in (version_ax, open_ax):
        ax.set_xlabel(_("turn"))
        ax.xaxis.set_major_locator(_integer_ticks())
        ax.yaxis.set_major_locator(_integer_ticks())
        ax.set_ylim(bottom=0)
        ax.margins(x=0.08, y=0.15)
    handles, _labels = version_ax.get_legend_handles_labels()
    handles.append(Line2D([], [], linestyle="none", marker="x", markersize=11, markeredgewidth=2.5,
                          color=NO_CHANGE_COLOR, label=_("tool turn without a state change")))
    fig.legend(handles=handles, frameon=False, loc="outside lower center", ncol=len(handles), fontsize=11)
    fig.suptitle(title or _("Each useful turn moves the state and shrinks what is missing"), fontsize=16,
                 fontweight="bold")
    return _done(fig)


@_styled
def budget_chart(run: ControllerRun, *, title: str | None = None) -> Figure:
    """What the run used of each of the seven budgets, as a share of its limit.

    The budget that stopped the run (``budget_exhausted``) is drawn in the
    status colour and hatched; a budget switched off is listed as ``off``.
    Every bar is labelled ``used / limit``.
    """
    fig, (ax,) = _new_figure(10.0, 4.8)
    _draw_budgets(ax, run)
    stopped_by = run.stop.budget if run.status == "budget_exhausted" else None
    why = (_("stopped by the {budget} budget").format(budget=stopped_by) if stopped_by
           else _("{status}; no budget ran out").format(status=run.status))
    ax.set_title(title or _("Budgets used: {why}").format(why=why))
    return _done(fig)


def _draw_budgets(ax: Axes, run: ControllerRun, *, fontsize: int = 12) -> None:
    from agentloops.controller.policy.budgets import BUDGET_LABELS, BUDGET_NAMES

    stopped_by = run.stop.budget if run.status == "budget_exhausted" else None
    names = list(BUDGET_NAMES)
    for y, name in enumerate(names):
        limit = _limit_of(run, name)
        used = run.usage.get(name, 0)
        if limit is None:
            ax.barh(y, 0, color=OTHER_COLOR)
            ax.annotate(_("{used} used · off").format(used=f"{used:g}"), (0, y), xytext=(4, 0),
                        textcoords="offset points", va="center",
                        fontsize=fontsize, color=OTHER_COLOR)
            continue
        share = 100.0 * used / limit if limit else (100.0 if used else 0.0)
        color = status_color("budget_exhausted") if name == stopped_by else LOOP_COLORS["controller"]
        ax.barh(y, min(share, 130.0), color=color, edgecolor="white", zorder=2,
                hatch=STATUS_HATCHES["budget_exhausted"] if name == stopped_by else None)
        ax.annotate(f"{used:g} / {limit:g}", (min(share, 130.0), y), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=fontsize)
    ax.axvline(100, color=CAP_COLOR, linestyle="--", linewidth=1.5)
    ax.set_yticks(range(len(names)), [_budget_tick(n, BUDGET_LABELS[n]) for n in names], fontsize=fontsize - 1)
    ax.invert_yaxis()
    ax.set_xlim(0, 150)
    ax.set_xlabel(_("share of the limit used (%; dashed: the limit)"))
    ax.set_ylabel(_("budget"))


BUDGET_SHORT_LABELS: tuple[str, ...] = (N_("turns of the loop"), N_("simulated wall time"), N_("model calls"),
                                        N_("tool executions"), N_("tokens billed"), N_("largest single request"))
"""The budgets' names as the budget chart's ticks show them (the part of each label before its parenthesis)."""


def _budget_tick(name: str, label: str) -> str:
    """``tool_calls`` over its name for people, in the language in use (``retries`` says it is shared)."""
    if name == "retries":
        return _("retries\n(shared by all tools)")
    return "{name}\n({label})".format(name=name, label=_(label.split(" (")[0]))


@_styled
def run_chart(run: ControllerRun, *, title: str | None = None) -> Figure:
    """One run at a glance (the controller explorer's chart, drawn once): progress per turn, and budgets used.

    Left: the progress version (it moves only with progress, so a run that
    makes none is flat) and the items still missing; a vermillion cross marks
    a tool turn that made no progress. Right: the seven budgets as in
    :func:`budget_chart`.
    """
    from matplotlib.lines import Line2D

    fig, (left, right) = _new_figure(14.0, 4.6, ncols=2)
    turns = [0, *(t.turn for t in run.turns)]
    progress = progress_versions(run)
    still_open = [len(run.task.items), *(len(t.open_items) for t in run.turns)]
    left.plot(turns, progress, color=LOOP_COLORS["controller"], marker="o", linewidth=2.5, markersize=8,
              label=_("progress version"))
    left.plot(turns, still_open, color=OTHER_COLOR, linestyle="--", marker="s", linewidth=2.5, markersize=8,
              label=_("items still missing"))
    idle = [(t.turn, progress[i + 1]) for i, t in enumerate(run.turns) if _idle(t)]
    if idle:
        xs, ys = zip(*idle, strict=True)
        left.plot(xs, ys, linestyle="none", marker="x", markersize=14, markeredgewidth=3, color=NO_CHANGE_COLOR,
                  zorder=5)
    left.set_xlabel(_("turn"))
    left.set_ylabel(_("count"))
    left.xaxis.set_major_locator(_integer_ticks())
    left.yaxis.set_major_locator(_integer_ticks())
    left.set_ylim(bottom=0)
    left.margins(x=0.1, y=0.15)
    handles, _labels = left.get_legend_handles_labels()
    handles.append(Line2D([], [], linestyle="none", marker="x", markersize=11, markeredgewidth=2.5,
                          color=NO_CHANGE_COLOR, label=_("tool turn, no progress")))
    fig.legend(handles=handles, frameon=False, loc="outside lower center", ncol=3, fontsize=11)
    left.set_title(_("Progress per turn"), fontsize=14)
    _draw_budgets(right, run, fontsize=11)
    right.set_title(_("Budgets used"), fontsize=14)
    fig.suptitle(title or f"{_(run.label)}: {run.status} ({run.code})", fontsize=16, fontweight="bold")
    return _done(fig)


def _idle_turns(run: ControllerRun) -> list[tuple[int, int]]:
    """(turn, version) of turns that acted on a tool and left the state version where it was."""
    return [(t.turn, t.state_version_after) for t in run.turns
            if t.state_version_after == t.state_version and any(a.get("tool") for a in t.actions)]


def _limit_of(run: ControllerRun, name: str) -> float | None:
    """The limit the run ran under (the start line of its trace records the budget actually used)."""
    return run.trace.start.budget.limit(name)  # type: ignore[arg-type]


def progress_versions(run: ControllerRun) -> list[int]:
    """Progress version after each turn, from 0: it moves only when a turn added a fact, settled an item
    or recorded a user input, so a run that makes no progress draws a flat line."""
    out = [0]
    for turn in run.turns:
        out.append(out[-1] + bool(turn.progress))
    return out


def _idle(turn: Any) -> bool:
    """A turn that acted on a tool and made no progress (the answer turn is not idle)."""
    return not turn.progress and any(a.get("tool") for a in turn.actions)
