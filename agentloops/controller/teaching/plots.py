"""Charts for the controller notebooks (10–17): what a run changed, spent, waited for and repeated.

Each chart answers one question about measured runs, never about typed-in
numbers:

- :func:`state_chart` — does every turn change what is still missing?
- :func:`budget_chart` — which of the seven budgets did a run use, and which one stopped it?
- :func:`retry_chart` / :func:`storm_chart` — retries against one shared budget,
  against a budget per tool, and how the second grows with every fallback tool;
- :func:`loop_histograms` — how randomized runs end, and how many steps they use,
  for a cap-only loop against the controller;
- :func:`claims_chart` — how many "done" replies were verified;
- :func:`gantt_chart` — parallel calls on a timeline, with cancelled, late and duplicate results;
- :func:`context_chart` — request size per turn, with and without storage and compaction;
- :func:`trace_diff_chart` — two trajectories of the same trace, side by side.

They follow the rules of :mod:`agentloops.plots` and reuse its palette
(Okabe–Ito), projector-sized style and helpers, so a colour means the same
thing in every notebook: one colour (and a hatch, as a second cue) per stop
status, one per loop (cap-only / controller) and one per error policy.

matplotlib is imported inside the functions. Every function returns a
:class:`~matplotlib.figure.Figure` already closed in pyplot's registry: a
headless run accumulates no open figures, and a notebook still shows it.

The widgets draw with the ``Live…Chart`` classes instead: each lays its
figure out once (:class:`LiveFigure`) and a redraw only moves the data of
its artists, so a control change costs milliseconds, not a new figure.
Labels sit beside or above their bar, never on it or on a line; markers are
explained in legends outside the plot.

Titles, axis labels and legends speak the language in use (:mod:`agentloops.i18n`),
read when a chart is drawn (a live chart: when it is built); stop statuses, codes,
tool and budget names keep their code names in every language. The Chinese font is
the package's own (:mod:`agentloops.fonts`), through :func:`~agentloops.plots.chart_style`.
"""

from __future__ import annotations

import io
import textwrap
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union, cast

from agentloops.i18n import N_, _
from agentloops.plots.style import (
    CAP_COLOR,
    OKABE_ITO,
    OTHER_COLOR,
    WASTE_HATCH,
    _done,
    _integer_ticks,
    _new_figure,
    _styled,
    chart_style,
)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from agentloops.controller.persistence.replaying import Replay, TraceDiff
    from agentloops.controller.persistence.result import ControllerRun
    from agentloops.controller.teaching.experiments import LoopComparison

STATUS_COLORS: dict[str, str] = {
    "succeeded": OKABE_ITO["bluish_green"],
    "partially_completed": OKABE_ITO["sky_blue"],
    "waiting_for_user": OKABE_ITO["yellow"],
    "failed_unrecoverable": OKABE_ITO["vermillion"],
    "system_failure": OKABE_ITO["black"],
    "budget_exhausted": OKABE_ITO["orange"],
    "no_progress": OKABE_ITO["reddish_purple"],
    "cancelled": OTHER_COLOR,
    "handed_off": OKABE_ITO["blue"],
}
"""One colour per stop status, in every chart and widget of the controller notebooks."""

STATUS_HATCHES: dict[str, str] = {
    "succeeded": "",
    "partially_completed": "..",
    "waiting_for_user": "oo",
    "failed_unrecoverable": "xx",
    "system_failure": "**",
    "budget_exhausted": "//",
    "no_progress": "\\\\",
    "cancelled": "--",
    "handed_off": "++",
}
"""A hatch per stop status: a second cue for readers who cannot tell two colours apart."""

CAP_OUTCOME_COLORS: dict[str, str] = {
    "succeeded": OKABE_ITO["bluish_green"],
    "false success": OKABE_ITO["vermillion"],
    "hit the cap": CAP_COLOR,
}
"""How a cap-only run ended (see :data:`agentloops.controller.teaching.experiments.CAP_OUTCOME_STATUS`)."""

LOOP_COLORS: dict[str, str] = {"cap-only": CAP_COLOR, "controller": OKABE_ITO["blue"]}
"""The two loops of the randomized comparisons: the cap-only loop in the colour of the cap (black, as part 1
draws the step cap), the controller in blue (its lines and bars in every widget)."""

POLICY_COLORS: dict[str, str] = {
    "naive": OKABE_ITO["vermillion"],
    "default": OKABE_ITO["blue"],
    "degrade": OKABE_ITO["sky_blue"],
}
"""The shipped error policies (naive is drawn like the blind retry of notebook 05)."""

CALL_STATE_LABELS: tuple[str, ...] = (N_("pending"), N_("running"), N_("succeeded"), N_("failed"), N_("cancelled"),
                                      N_("ignored"))
"""The call states as a legend names them (the states themselves stay English in traces and tables)."""

CALL_STATE_COLORS: dict[str, str] = {
    "pending": "#dddddd",
    "running": OKABE_ITO["yellow"],
    "succeeded": OKABE_ITO["bluish_green"],
    "failed": OKABE_ITO["vermillion"],
    "cancelled": OTHER_COLOR,
    "ignored": OTHER_COLOR,
}
"""Call states on the parallel timeline (an ignored call was cancelled, then its result arrived late)."""

ACTION_COLORS: dict[str, str] = {
    "call": OKABE_ITO["blue"],
    "retry": OKABE_ITO["orange"],
    "fallback": OKABE_ITO["reddish_purple"],
    "blocked": OKABE_ITO["vermillion"],
    "held": OKABE_ITO["vermillion"],
    "answer": OKABE_ITO["bluish_green"],
    "ask_user": OKABE_ITO["yellow"],
    "other": OTHER_COLOR,
}
"""Kinds of action in a trajectory (the prefix of an action label)."""

ACTION_LABELS: dict[str, str] = {"call": N_("call"), "retry": N_("retry"), "fallback": N_("fallback"),
                                  "blocked": N_("blocked"), "held": N_("held"), "answer": N_("answer"),
                                  "other": N_("other")}
"""The kinds of action as a legend names them (``ask_user`` keeps its code name)."""


def _action_label(kind: str) -> str:
    return _(ACTION_LABELS[kind]) if kind in ACTION_LABELS else kind


NO_CHANGE_COLOR = OKABE_ITO["vermillion"]
"""The cross that marks a turn whose state version did not move (vermillion: waste, as in part 1)."""

DIFFERS_EDGE = "black"
"""The thick outline of an action or stop where two trajectories differ (vermillion already means "blocked")."""

RunsLike = Union["ControllerRun", Sequence["ControllerRun"], Mapping[str, "ControllerRun"]]
"""One run, several runs (labelled by ``run.label``), or runs by label."""


def status_color(status: str) -> str:
    """The colour of a stop status (grey for anything else)."""
    return STATUS_COLORS.get(status, OTHER_COLOR)


def policy_color(name: str) -> str:
    """The colour of a policy; grey for a custom one."""
    return POLICY_COLORS.get(name, OTHER_COLOR)


def action_kind(label: str) -> str:
    """``retry``, ``fallback``, ``blocked``, ``held``, ``answer``, ``ask_user`` or ``call`` from an action label."""
    if label in ("answer", "ask_user"):
        return label
    prefix, sep, _rest = label.partition(":")
    if sep and prefix in ACTION_COLORS and "(" not in prefix:
        return prefix
    return "call" if "(" in label else "other"


def to_png(fig: Figure, dpi: int = 72) -> bytes:
    """The figure as PNG bytes (what a widget's ``Image`` shows)."""
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=dpi)
    return out.getvalue()


def _labelled(runs: RunsLike) -> list[tuple[str, ControllerRun]]:
    from agentloops.controller.persistence.result import ControllerRun

    if isinstance(runs, ControllerRun):
        pairs = [(runs.label, runs)]
    elif isinstance(runs, Mapping):
        pairs = [(str(k), v) for k, v in runs.items()]
    else:
        pairs = [(r.label, r) for r in runs]
    if not pairs:
        raise ValueError("nothing to plot: no controller runs were given")
    for label, run in pairs:
        if not isinstance(run, ControllerRun):
            raise TypeError(f"{label}: expected a ControllerRun (from run_scenario or Controller.run); "
                            f"got {type(run).__name__}")
    return pairs


_LINE_STYLES: tuple[tuple[str, str], ...] = (("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"))
_SERIES_COLORS: tuple[str, ...] = (OKABE_ITO["blue"], OKABE_ITO["vermillion"], OKABE_ITO["bluish_green"],
                                   OKABE_ITO["reddish_purple"], OKABE_ITO["orange"], OKABE_ITO["sky_blue"])


def _series_style(i: int, status: str | None = None) -> tuple[str, str, str]:
    """Colour, line style and marker of the ``i``-th line; with ``status``, the colour is that stop status's
    (a line's colour then means how its run ended, as everywhere else), and the style tells the lines apart."""
    style, marker = _LINE_STYLES[i % len(_LINE_STYLES)]
    color = status_color(status) if status is not None else _SERIES_COLORS[i % len(_SERIES_COLORS)]
    return color, style, marker


# --------------------------------------------------------------------------- 10: state per turn


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


# --------------------------------------------------------------------------- budgets of one run


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
    data = run.trace.start.budget.get(name) if run.trace.start.budget else None
    if isinstance(data, Mapping):
        value = data.get("value")
        return None if value is None else float(value)
    return run.task.budget.limit(name)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- 12: retries


def retries_spent(run: ControllerRun) -> list[int]:
    """Cumulative retries after each tool attempt (a retry and a fallback switch each spend one)."""
    total, out = 0, []
    for call in run.calls:
        total += call.kind in ("retry", "fallback")
        out.append(total)
    return out


@_styled
def retry_chart(runs: RunsLike, *, title: str | None = None) -> Figure:
    """Retries spent, attempt by attempt, against the shared retry budget; and attempts per tool.

    Left: one step line per run of cumulative retries (a fallback switch counts
    as a retry), with the task's shared retry budget as a dashed line. Right:
    tool attempts per tool and run — with a budget per tool, each tool stays
    inside its own allowance while the task as a whole goes far past it.
    """
    pairs = _labelled(runs)
    fig, (left, right) = _new_figure(14.0, 5.0, ncols=2)
    budgets = set()
    for i, (label, run) in enumerate(pairs):
        color, style, marker = _series_style(i)
        spent = retries_spent(run)
        attempts = list(range(1, len(spent) + 1))
        shift = _DODGE * (2 * i - (len(pairs) - 1))  # the scopes agree until the budget runs out
        left.step([shift, *(a + shift for a in attempts)], [0, *spent], where="post", linestyle=style, color=color,
                  linewidth=2.5, label=_("{label}: {retries} retries, {attempts} attempts").format(
                      label=_(label), retries=spent[-1] if spent else 0, attempts=len(spent)))
        left.plot([a + shift for a in attempts], spent, linestyle="none", marker=marker, color=color, markersize=7)
        limit = _limit_of(run, "retries")
        if limit is not None:
            budgets.add(limit)
    for limit in sorted(budgets):
        left.axhline(limit, color=CAP_COLOR, linestyle=":", linewidth=2,
                     label=_("the task's retry budget = {limit}").format(limit=f"{limit:g}"))
    left.set_xlabel(_("tool attempt (in order)"))
    left.set_ylabel(_("retries spent so far"))
    left.xaxis.set_major_locator(_integer_ticks())
    left.yaxis.set_major_locator(_integer_ticks())
    left.set_ylim(bottom=0)
    left.margins(y=0.25)
    fig.legend(*left.get_legend_handles_labels(), frameon=False, loc="outside lower center", ncol=3, fontsize=11)
    left.set_title(_("Retries against the task's budget"), fontsize=14)

    tools = list(dict.fromkeys(c.tool for _unused, run in pairs for c in run.calls))
    width = 0.8 / len(pairs)
    for i, (label, run) in enumerate(pairs):
        color, _unused, _unused = _series_style(i)
        counts = [sum(1 for c in run.calls if c.tool == tool) for tool in tools]
        xs = [k - 0.4 + width * (i + 0.5) for k in range(len(tools))]
        bars = right.bar(xs, counts, width, color=color, edgecolor="white", label=_(label), zorder=2)
        right.bar_label(bars, padding=2, fontsize=11)
    right.set_xticks(range(len(tools)), [t.replace("_", "_\n") for t in tools], fontsize=11)
    right.set_xlabel(_("tool"))
    right.set_ylabel(_("attempts (calls, retries, fallbacks)"))
    right.yaxis.set_major_locator(_integer_ticks())
    right.margins(y=0.2)
    right.set_title(_("Attempts per tool"), fontsize=14)
    fig.suptitle(title or _("One shared retry budget bounds the task; a budget per tool does not"), fontsize=16,
                 fontweight="bold")
    return _done(fig)


@_styled
def storm_chart(rows: Iterable[Mapping[str, Any]], *, title: str | None = None) -> Figure:
    """Tool attempts against the number of tools in a fallback chain, per retry scope.

    Args:
        rows: dicts with ``tools`` (tools in the chain), ``scope`` (``shared`` or ``per_tool``)
            and ``attempts`` (tool executions of the run).
        title: the chart's message.
    """
    table = [dict(r) for r in rows]
    if not table:
        raise ValueError("nothing to plot: no storm rows were given")
    fig, (ax,) = _new_figure(9.0, 5.0)
    scopes = list(dict.fromkeys(r["scope"] for r in table))
    for i, scope in enumerate(scopes):
        color, style, marker = _series_style(i)
        points = sorted((r["tools"], r["attempts"]) for r in table if r["scope"] == scope)
        xs, ys = zip(*points, strict=True)
        label = _("one shared retry budget") if scope == "shared" else _("a retry budget per tool")
        ax.plot(xs, ys, linestyle=style, marker=marker, color=color, linewidth=2.5, markersize=9, label=label)
        for x, y in points:
            # up and to the left: the line comes from the lower left and leaves to the upper right
            ax.annotate(str(y), (x, y), xytext=(-7, 5), textcoords="offset points", ha="right", fontsize=12)
    ax.set_xlabel(_("tools in the fallback chain (all failing)"))
    ax.set_ylabel(_("tool attempts for one task"))
    ax.xaxis.set_major_locator(_integer_ticks())
    ax.yaxis.set_major_locator(_integer_ticks())
    ax.set_ylim(bottom=0)
    ax.margins(y=0.2)
    ax.legend(frameon=False, loc="upper left")
    ax.set_title(title or _("Per-tool retry budgets hide a storm behind every fallback switch"))
    return _done(fig)


# --------------------------------------------------------------------------- 11 and 13: many runs


def _frame(source: LoopComparison | pd.DataFrame) -> pd.DataFrame:
    from agentloops.controller.teaching.experiments import LoopComparison

    frame = source.to_frame() if isinstance(source, LoopComparison) else source
    for column in ("cap_outcome", "cap_steps", "ctl_status", "ctl_steps"):
        if column not in frame.columns:
            raise ValueError(f"expected the columns of LoopComparison.to_frame(); {column!r} is missing")
    return frame


@_styled
def loop_histograms(source: LoopComparison | pd.DataFrame, *, cap: int | None = None,
                    step_budget: float | None = None, title: str | None = None) -> Figure:
    """How randomized runs ended and how many steps they used: cap-only loop against the controller.

    Args:
        source: a :class:`~agentloops.controller.teaching.experiments.LoopComparison` or its ``to_frame()``.
        cap: the cap-only loop's step cap (a dashed line on the steps histogram).
        step_budget: the controller's step budget (a dotted line).
        title: the chart's message.
    """
    from agentloops.controller.stopping.status import STOP_STATUSES
    from agentloops.controller.teaching.experiments import CAP_OUTCOME_STATUS

    frame = _frame(source)
    if cap is None and hasattr(source, "cap"):
        cap = int(source.cap)
    fig, (ends, steps) = _new_figure(15.0, 5.6, ncols=2)
    cap_counts = frame["cap_outcome"].map(lambda o: CAP_OUTCOME_STATUS.get(o, o)).value_counts()
    ctl_counts = frame["ctl_status"].value_counts()
    rows: list[tuple[str, str, int, str, str]] = []
    for outcome in ("succeeded", "false success", "hit the cap"):
        rows.append(("cap-only", outcome, int(cap_counts.get(outcome, 0)), CAP_OUTCOME_COLORS[outcome],
                     WASTE_HATCH if outcome == "false success" else ""))
    for extra in cap_counts.index:
        if extra not in CAP_OUTCOME_COLORS:
            rows.append(("cap-only", str(extra), int(cap_counts[extra]), OTHER_COLOR, ""))
    for status in STOP_STATUSES:
        if ctl_counts.get(status, 0):
            rows.append(("controller", status, int(ctl_counts[status]), status_color(status),
                         STATUS_HATCHES[status]))
    for y, (_unused, outcome, count, color, hatch) in enumerate(rows):
        solid = hatch == "" or outcome != "false success"
        ends.barh(y, count, color=color if solid else "white", edgecolor=color if not solid else "white",
                  hatch=hatch or None, linewidth=1.5, zorder=2)
        ends.annotate(str(count), (count, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize=12)
    ends.set_yticks(range(len(rows)), [_end_tick(loop, outcome) for loop, outcome, *_unused in rows], fontsize=12)
    ends.invert_yaxis()
    ends.set_xlabel(_("runs (of {n})").format(n=len(frame)))
    ends.set_ylabel(_("loop: how it ended"))
    ends.margins(x=0.15)
    ends.set_title(_("How the runs ended"), fontsize=14)

    _draw_steps(steps, frame, cap, step_budget)
    fig.suptitle(title or _("{n} randomized runs: a cap stops runs, the controller says why").format(n=len(frame)),
                 fontsize=16, fontweight="bold")
    return _done(fig)


def _draw_steps(ax: Axes, frame: pd.DataFrame, cap: int | None, step_budget: float | None) -> None:
    """Runs per step count, the two loops side by side; the cap and the step budget are legend entries."""
    from matplotlib.lines import Line2D

    top = int(max(frame["cap_steps"].max(), frame["ctl_steps"].max(), cap or 0)) + 1
    width = 0.4
    for i, (loop, column) in enumerate((("cap-only", "cap_steps"), ("controller", "ctl_steps"))):
        counts = frame[column].value_counts()
        xs = list(range(top + 1))
        ax.bar([x + (i - 0.5) * width for x in xs], [int(counts.get(x, 0)) for x in xs], width,
               color=LOOP_COLORS[loop], edgecolor="white", zorder=2,
               label=_("{loop} (mean {mean})").format(loop=_(loop), mean=f"{frame[column].mean():.2f}"))
    handles, _labels = ax.get_legend_handles_labels()
    same = cap is not None and step_budget is not None and float(cap) == float(step_budget)
    cap_label = _("cap-only cap = controller step budget") if same else _("cap-only cap")
    for value, style, label in ((cap, "--", cap_label), (None if same else step_budget, ":",
                                                         _("controller step budget"))):
        if value is not None:
            ax.axvline(value, color=CAP_COLOR, linestyle=style, linewidth=1.5, zorder=1)
            handles.append(Line2D([], [], color=CAP_COLOR, linestyle=cast(Any, style), label=f"{label} = {value:g}"))
    ax.set_xlabel(_("model calls (steps) used"))
    ax.set_ylabel(_("runs"))
    ax.xaxis.set_major_locator(_integer_ticks())
    ax.margins(y=0.1)
    ax.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=11)
    ax.set_title(_("Steps used"), fontsize=14)


@_styled
def claims_chart(counts: Mapping[str, Mapping[str, int]], *, title: str | None = None) -> Figure:
    """Per policy, side by side: verified success, unverified ("false") success, and every other stop.

    Args:
        counts: policy → {``verified``, ``unverified``, and any stop statuses} → runs (the statuses are
            counted together as "stopped otherwise"; the widget's table lists them one by one).
        title: the chart's message.
    """
    if not counts:
        raise ValueError("nothing to plot: no policies were given")
    from matplotlib.patches import Patch

    fig, (ax,) = _new_figure(max(10.0, 2.6 * len(counts) + 6), 5.2)
    width = 0.8 / len(CLAIM_KINDS)
    for x, by_kind in enumerate(counts.values()):
        bars = claim_bars(by_kind)
        for j, (kind, _unused, color, hatch) in enumerate(CLAIM_KINDS):
            xj = x - 0.4 + width * (j + 0.5)
            ax.bar(xj, bars[kind], width, color="white" if hatch else color, edgecolor=color, hatch=hatch,
                   linewidth=1.5, zorder=2)
            ax.annotate(str(bars[kind]), (xj, bars[kind]), xytext=(0, 3), textcoords="offset points", ha="center",
                        va="bottom", fontsize=12)
    ax.set_xticks(range(len(counts)), [_("policy {name}").format(name=p) for p in counts])
    ax.set_xlabel(_("error policy"))
    ax.set_ylabel(_("runs"))
    ax.yaxis.set_major_locator(_integer_ticks())
    ax.margins(y=0.15)
    ax.legend(handles=[Patch(facecolor="white" if h else c, edgecolor=c, hatch=h, label=_(lab))
                       for _unused, lab, c, h in CLAIM_KINDS], frameon=False, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), fontsize=11)
    fig.suptitle(title or _("A reply without tool calls is a claim: how many were true?"), fontsize=16,
                 fontweight="bold")
    return _done(fig)


# --------------------------------------------------------------------------- 15: parallel calls


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


# --------------------------------------------------------------------------- 16: context


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


# --------------------------------------------------------------------------- 14: trajectories


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


# --------------------------------------------------------------------------- live charts (the widgets)


CHART_DPI = 80
"""Pixels per inch of a widget chart; the widget shows the PNG at exactly its pixel size."""


class LiveFigure:
    """A widget's figure, laid out once: a redraw moves data and redraws only the artists that move.

    Building, laying out and saving a figure costs a few hundred milliseconds
    on a 2-core machine; restoring a saved background and drawing a handful of
    artists costs a few. Artists handed to :meth:`moving` stay out of the
    background and are drawn on every :meth:`render`; everything else (titles,
    legends, fixed axes) is drawn once. The figure lives on its own Agg canvas,
    never in pyplot's registry.

    Args:
        width: inches.
        height: inches.
        dpi: pixels per inch of the PNG (its pixel size is what the widget displays).
    """

    def __init__(self, width: float, height: float, *, dpi: int = CHART_DPI) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure as MplFigure

        with self.style():
            self.figure = MplFigure(figsize=(width, height), dpi=dpi)
        self.canvas = FigureCanvasAgg(self.figure)
        self._moving: list[Any] = []
        self._background: Any = None
        self.png = b""

    @staticmethod
    def style() -> Any:
        """The package's rc settings (text reads them when created, hatches when drawn)."""
        import matplotlib

        return matplotlib.rc_context(cast(Any, chart_style()))

    @property
    def size_px(self) -> tuple[int, int]:
        """(width, height) of the PNG in pixels."""
        width, height = self.canvas.get_width_height()
        return int(width), int(height)

    def moving(self, *artists: Any) -> None:
        """Redraw these artists on every render (and keep them out of the background)."""
        for artist in artists:
            artist.set_animated(True)
            self._moving.append(artist)

    def render(self) -> bytes:
        """Blit the moving artists onto the background; the PNG bytes."""
        from PIL import Image

        with self.style():
            if self._background is None:
                self.canvas.draw()
                self._background = self.canvas.copy_from_bbox(self.figure.bbox)
            else:
                self.canvas.restore_region(self._background)
            for artist in self._moving:
                if artist.get_visible():
                    (artist.axes or self.figure).draw_artist(artist)
        width, height = self.size_px
        image = Image.frombuffer("RGBA", (width, height), self.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        out = io.BytesIO()
        image.convert("RGB").save(out, format="png", compress_level=1)
        self.png = out.getvalue()
        return self.png


def progress_versions(run: ControllerRun) -> list[int]:
    """Progress version after each turn, from 0: it moves only when a turn added a fact, settled an item
    or recorded a user input, so a run that makes no progress draws a flat line."""
    out = [0]
    for turn in run.turns:
        out.append(out[-1] + bool(turn.progress))
    return out


def _fit(ax: Axes, xs: Sequence[float], ys: Sequence[float], *, x_min: float = 0, y_pad: float = 1.25) -> None:
    """Axis limits that hold ``xs``/``ys`` with room (the axes are moving artists, redrawn with the data)."""
    ax.set_xlim(x_min - 0.5, max([x_min + 1, *xs]) + 0.5)
    ax.set_ylim(0, max([1, *ys]) * y_pad + 0.3)


class LiveRunChart:
    """The controller explorer's chart: progress per turn, and the seven budgets used.

    Left: the progress version (it moves only with progress, so a stuck run is
    flat) and the items still missing; a vermillion cross marks a tool turn
    that made no progress. Right: each budget's share of its limit, the one
    that stopped the run in the ``budget_exhausted`` colour and hatch.
    """

    def __init__(self, *, dpi: int = CHART_DPI) -> None:
        from matplotlib.lines import Line2D

        from agentloops.controller.policy.budgets import BUDGET_NAMES

        self.names = list(BUDGET_NAMES)
        self.live = LiveFigure(12.0, 4.2, dpi=dpi)
        with self.live.style():
            left, right = self.live.figure.subplots(1, 2)
            self.live.figure.subplots_adjust(left=0.06, right=0.98, bottom=0.15, top=0.78, wspace=0.45)
            (self._progress,) = left.plot([], [], color=LOOP_COLORS["controller"], marker="o", linewidth=2.5,
                                          markersize=8, label=_("progress version"))
            (self._open,) = left.plot([], [], color=OTHER_COLOR, linestyle="--", marker="s", linewidth=2.5,
                                      markersize=8, label=_("items still missing"))
            (self._idle,) = left.plot([], [], linestyle="none", marker="x", markersize=14, markeredgewidth=3,
                                      color=NO_CHANGE_COLOR, zorder=5)
            left.set_xlabel(_("turn"))
            left.set_ylabel(_("count"))
            left.set_title(_("Progress per turn"), fontsize=14)
            left.xaxis.set_major_locator(_integer_ticks())
            left.yaxis.set_major_locator(_integer_ticks())
            handles, _labels = left.get_legend_handles_labels()
            handles.append(Line2D([], [], linestyle="none", marker="x", markersize=11, markeredgewidth=2.5,
                                  color=NO_CHANGE_COLOR, label=_("tool turn, no progress")))
            self.live.figure.legend(handles=handles, frameon=False, loc="upper left", ncol=3, fontsize=11,
                                    bbox_to_anchor=(0.0, 0.93))
            self._bars = right.barh(range(len(self.names)), [0] * len(self.names), color=LOOP_COLORS["controller"],
                                    edgecolor="white", zorder=2)
            self._labels = [right.annotate("", (0, y), xytext=(4, 0), textcoords="offset points", va="center",
                                           fontsize=11) for y in range(len(self.names))]
            right.axvline(100, color=CAP_COLOR, linestyle="--", linewidth=1.5)
            right.set_yticks(range(len(self.names)), self.names, fontsize=11)
            right.invert_yaxis()
            right.set_xlim(0, 150)
            right.set_xlabel(_("share of the limit used (%; dashed: the limit)"))
            right.set_ylabel(_("budget"))
            right.set_title(_("Budgets used"), fontsize=14)
            self._title = self.live.figure.suptitle("", fontsize=15, fontweight="bold", x=0.01, ha="left")
        self._left = left
        self.live.moving(left.xaxis, left.yaxis, self._progress, self._open, self._idle, *self._bars,
                         *self._labels, self._title)

    @property
    def figure(self) -> Figure:
        """The matplotlib figure (for tests and notebooks)."""
        return self.live.figure

    @property
    def png(self) -> bytes:
        """The last PNG drawn."""
        return self.live.png

    def update(self, run: ControllerRun) -> bytes:
        """Redraw for ``run`` and return the PNG bytes."""
        turns = [0, *(t.turn for t in run.turns)]
        progress = progress_versions(run)
        still_open = [len(run.task.items), *(len(t.open_items) for t in run.turns)]
        self._progress.set_data(turns, progress)
        self._open.set_data(turns, still_open)
        idle = [(t.turn, progress[i + 1]) for i, t in enumerate(run.turns) if _idle(t)]
        self._idle.set_data([x for x, _unused in idle], [y for _unused, y in idle])
        _fit(self._left, turns, [*progress, *still_open])
        stopped_by = run.stop.budget if run.status == "budget_exhausted" else None
        for name, bar, label in zip(self.names, self._bars, self._labels, strict=True):
            limit, used = _limit_of(run, name), run.usage.get(name, 0)
            share = 0.0 if limit is None else min(130.0, 100.0 * used / limit if limit else (100.0 if used else 0.0))
            bar.set_width(share)
            stopped = name == stopped_by
            bar.set_facecolor(status_color("budget_exhausted") if stopped else LOOP_COLORS["controller"])
            bar.set_hatch(STATUS_HATCHES["budget_exhausted"] if stopped else None)
            label.set_text(_("{used} used · off").format(used=f"{used:g}") if limit is None
                           else f"{used:g} / {limit:g}")
            label.xy = (share, label.xy[1])
        self._title.set_text(f"{_(run.label)} [{run.policy.name}]: {run.status} ({run.code})")
        return self.live.render()


def _idle(turn: Any) -> bool:
    """A turn that acted on a tool and made no progress (the answer turn is not idle)."""
    return not turn.progress and any(a.get("tool") for a in turn.actions)


_DODGE = 0.09
"""Sideways shift between two lines of one panel, so the line drawn first is never hidden."""


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


CLAIM_KINDS: tuple[tuple[str, str, str, str | None], ...] = (
    ("verified", N_("succeeded, condition verified"), STATUS_COLORS["succeeded"], None),
    ("unverified", N_("reported success, condition NOT met"), OKABE_ITO["vermillion"], WASTE_HATCH),
    ("other", N_("stopped otherwise (budget, no progress…)"), OTHER_COLOR, None),
)
"""The three bars of a claims chart: verified, false ("unverified") success, and every other stop."""


def claim_bars(by_kind: Mapping[str, int]) -> dict[str, int]:
    """Counts by kind (see :data:`CLAIM_KINDS`): stop statuses other than a verified or false success are "other"."""
    known = {"verified", "unverified"}
    return {"verified": int(by_kind.get("verified", 0)), "unverified": int(by_kind.get("unverified", 0)),
            "other": int(sum(v for k, v in by_kind.items() if k not in known))}


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
            right.set_title(_("Attempts per tool"), fontsize=14)
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
                count = sum(1 for c in run.calls if k < len(tools) and c.tool == tools[k])
                bar.set_height(count)
                label.set_text(str(count) if k < len(tools) else "")
                label.xy = (label.xy[0], count)
        self._budget.set_ydata([retries, retries])
        left.set_xlim(-0.3, longest + 0.5)
        left.set_ylim(0, top * 1.3 + 0.5)
        right.set_xticks(range(len(tools)), [t.replace("_", "_\n", 1) for t in tools], fontsize=10)
        right.set_ylim(0, max(1, *(b.get_height() for row in self._bars for b in row)) * 1.3)
        self._title.set_text("; ".join(_("{label}: {attempts} attempts, {retries} retries").format(
            label=_(label), attempts=int(r.usage["tool_calls"]), retries=int(r.usage["retries"]))
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
        self.live.moving(steps.yaxis, self._cap, *self._end_bars, *self._end_labels,
                         *(b for bars in self._step_bars.values() for b in bars), self._title)

    def update(self, comparison: LoopComparison) -> bytes:
        """Redraw for a comparison whose cap is also the controller's step budget; the PNG bytes."""
        for bar, label, (_loop, _outcome, count) in zip(self._end_bars, self._end_labels, _ends(comparison),
                                                         strict=True):
            bar.set_width(count)
            label.set_text(str(count))
            label.xy = (count, label.xy[1])
        top = 1
        for loop, column in (("cap-only", "cap_steps"), ("controller", "ctl_steps")):
            used = Counter(min(int(r[column]), self.max_steps + 1) for r in comparison.rows)
            for x, bar in enumerate(self._step_bars[loop]):
                bar.set_height(used.get(x, 0))
                top = max(top, used.get(x, 0))
        self._steps_ax.set_ylim(0, top * 1.15)
        self._cap.set_xdata([comparison.cap, comparison.cap])
        means = {loop: sum(r[c] for r in comparison.rows) / max(1, len(comparison.rows))
                 for loop, c in (("cap-only", "cap_steps"), ("controller", "ctl_steps"))}
        self._title.set_text(_("{n} randomized runs, cap = step budget = {cap}: mean steps {means}").format(
            n=len(comparison.rows), cap=comparison.cap,
            means=", ".join(f"{_(loop)} {m:.2f}" for loop, m in means.items())))
        return self.live.render()


LOOP_LABELS: tuple[str, ...] = (N_("cap-only"), N_("controller"))
"""The two loops' names as the charts show them."""

CAP_OUTCOME_LABELS: tuple[str, ...] = (N_("false success"), N_("hit the cap"))
"""How a cap-only run ended, as the charts show it (a stop status keeps its code name)."""


def _end_tick(loop: str, outcome: str) -> str:
    """``cap-only: hit the cap``, ``controller: no_progress`` (stop statuses keep their code names)."""
    shown = _(outcome) if outcome in CAP_OUTCOME_LABELS else outcome
    return f"{_(loop)}: {shown}"


def _ends_template() -> list[tuple[str, str]]:
    from agentloops.controller.stopping.status import STOP_STATUSES

    return [("cap-only", o) for o in CAP_OUTCOME_COLORS] + [("controller", s) for s in STOP_STATUSES]


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
        self._ax.set_ylim(len(calls) - 0.5, -0.5)
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
