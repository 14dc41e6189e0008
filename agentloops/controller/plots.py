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
headless run accumulates no open figures, a notebook still shows it, and a
widget turns it into a PNG with :func:`to_png`.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union, cast

from agentloops.plots import CAP_COLOR, OKABE_ITO, OTHER_COLOR, WASTE_HATCH, _done, _integer_ticks, _new_figure, _styled

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from agentloops.controller.experiments import LoopComparison
    from agentloops.controller.replaying import Replay, TraceDiff
    from agentloops.controller.result import ControllerRun

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
"""How a cap-only run ended (see :data:`agentloops.controller.experiments.CAP_OUTCOME_STATUS`)."""

LOOP_COLORS: dict[str, str] = {"cap-only": OKABE_ITO["vermillion"], "controller": OKABE_ITO["blue"]}
"""The two loops of the randomized comparisons."""

POLICY_COLORS: dict[str, str] = {
    "naive": OKABE_ITO["vermillion"],
    "default": OKABE_ITO["blue"],
    "degrade": OKABE_ITO["sky_blue"],
}
"""The shipped error policies (naive is drawn like the blind retry of notebook 05)."""

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

NO_CHANGE_COLOR = OKABE_ITO["vermillion"]
"""The cross that marks a turn whose state version did not move."""

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
    prefix, sep, _ = label.partition(":")
    if sep and prefix in ACTION_COLORS and "(" not in prefix:
        return prefix
    return "call" if "(" in label else "other"


def to_png(fig: Figure, dpi: int = 72) -> bytes:
    """The figure as PNG bytes (what a widget's ``Image`` shows)."""
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=dpi)
    return out.getvalue()


def _labelled(runs: RunsLike) -> list[tuple[str, ControllerRun]]:
    from agentloops.controller.result import ControllerRun

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


def _series_style(i: int) -> tuple[str, str, str]:
    style, marker = _LINE_STYLES[i % len(_LINE_STYLES)]
    return _SERIES_COLORS[i % len(_SERIES_COLORS)], style, marker


def _stop_note(ax: Axes, x: float, y: float, status: str, color: str, offset: int = 0) -> None:
    ax.annotate(status, (x, y), xytext=(6, 6 - 24 * offset), textcoords="offset points", fontsize=11, color="black",
                bbox={"boxstyle": "round,pad=0.2", "facecolor": status_color(status), "edgecolor": color,
                      "alpha": 0.85})


# --------------------------------------------------------------------------- 10: state per turn


@_styled
def state_chart(runs: RunsLike, *, title: str | None = None) -> Figure:
    """State version and items still missing after each turn, one line per run.

    A turn whose state version did not move is marked with a cross: the loop
    went round without learning anything. The last point of each line is
    labelled with the run's stop status.
    """
    from matplotlib.lines import Line2D

    pairs = _labelled(runs)
    fig, (version_ax, open_ax) = _new_figure(13.0, 4.8, ncols=2)
    for i, (label, run) in enumerate(pairs):
        color, style, marker = _series_style(i)
        turns = [0, *(t.turn for t in run.turns)]
        versions = [run.turns[0].state_version if run.turns else 0, *(t.state_version_after for t in run.turns)]
        still_open = [len(run.task.items), *(len(t.open_items) for t in run.turns)]
        for ax, values in ((version_ax, versions), (open_ax, still_open)):
            # the first run is drawn wide with hollow markers, later ones narrow on top: overlaps stay visible
            ax.plot(turns, values, linestyle=style, marker=marker, color=color, linewidth=max(1.8, 5.5 - 2 * i),
                    markersize=max(6, 13 - 3 * i), markerfacecolor="white" if i == 0 else color,
                    markeredgewidth=2, label=label, zorder=3 + i)
            _stop_note(ax, turns[-1], values[-1], run.status, color, offset=i)
        idle = _idle_turns(run)
        if idle:
            xs, ys = zip(*idle, strict=True)
            version_ax.plot(xs, ys, linestyle="none", marker="x", markersize=15, markeredgewidth=3,
                            color=CAP_COLOR, zorder=20)
    version_ax.set_ylabel("state version after the turn")
    version_ax.set_title("State version (a cross: nothing changed)", fontsize=14)
    open_ax.set_ylabel("items still missing")
    open_ax.set_title("What is still missing", fontsize=14)
    for ax in (version_ax, open_ax):
        ax.set_xlabel("turn")
        ax.xaxis.set_major_locator(_integer_ticks())
        ax.yaxis.set_major_locator(_integer_ticks())
        ax.set_ylim(bottom=0)
        ax.margins(x=0.12, y=0.2)
    handles, _ = version_ax.get_legend_handles_labels()
    handles.append(Line2D([], [], linestyle="none", marker="x", markersize=11, markeredgewidth=2.5,
                          color=CAP_COLOR, label="turn without a state change"))
    open_ax.legend(handles=handles, frameon=False, loc="upper right", fontsize=11)
    fig.suptitle(title or "Each useful turn moves the state and shrinks what is missing", fontsize=16,
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
    why = f"stopped by the {stopped_by} budget" if stopped_by else f"{run.status}; no budget ran out"
    ax.set_title(title or f"Budgets used: {why}")
    return _done(fig)


def _draw_budgets(ax: Axes, run: ControllerRun, *, fontsize: int = 12) -> None:
    from agentloops.controller.budgets import BUDGET_LABELS, BUDGET_NAMES

    stopped_by = run.stop.budget if run.status == "budget_exhausted" else None
    names = list(BUDGET_NAMES)
    for y, name in enumerate(names):
        limit = _limit_of(run, name)
        used = run.usage.get(name, 0)
        if limit is None:
            ax.barh(y, 0, color=OTHER_COLOR)
            ax.annotate(f"{used:g} used · off", (0, y), xytext=(4, 0), textcoords="offset points", va="center",
                        fontsize=fontsize, color=OTHER_COLOR)
            continue
        share = 100.0 * used / limit if limit else (100.0 if used else 0.0)
        color = status_color("budget_exhausted") if name == stopped_by else OKABE_ITO["blue"]
        ax.barh(y, min(share, 130.0), color=color, edgecolor="white", zorder=2,
                hatch=STATUS_HATCHES["budget_exhausted"] if name == stopped_by else None)
        ax.annotate(f"{used:g} / {limit:g}", (min(share, 130.0), y), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=fontsize)
    ax.axvline(100, color=CAP_COLOR, linestyle="--", linewidth=1.5)
    ax.annotate("limit", xy=(100, 1), xycoords=("data", "axes fraction"), xytext=(3, -14),
                textcoords="offset points", fontsize=fontsize)
    ax.set_yticks(range(len(names)), [f"{n}\n({BUDGET_LABELS[n].split(' (')[0]})" if n != "retries" else
                                      "retries\n(shared by all tools)" for n in names], fontsize=fontsize - 1)
    ax.invert_yaxis()
    ax.set_xlim(0, 145)
    ax.set_xlabel("share of the limit used (%)")
    ax.set_ylabel("budget")


@_styled
def run_chart(run: ControllerRun, *, title: str | None = None) -> Figure:
    """One run at a glance (the controller explorer's chart): state per turn, and budgets used.

    Left: state version and items still missing after each turn (a cross: a
    turn that called a tool and changed nothing). Right: the seven budgets as
    in :func:`budget_chart`.
    """
    from matplotlib.lines import Line2D

    fig, (left, right) = _new_figure(14.0, 4.6, ncols=2)
    turns = [0, *(t.turn for t in run.turns)]
    versions = [run.turns[0].state_version if run.turns else 0, *(t.state_version_after for t in run.turns)]
    still_open = [len(run.task.items), *(len(t.open_items) for t in run.turns)]
    left.plot(turns, versions, color=OKABE_ITO["blue"], marker="o", linewidth=2.5, markersize=8,
              label="state version")
    left.plot(turns, still_open, color=OKABE_ITO["vermillion"], linestyle="--", marker="s", linewidth=2.5,
              markersize=8, label="items still missing")
    idle = _idle_turns(run)
    if idle:
        xs, ys = zip(*idle, strict=True)
        left.plot(xs, ys, linestyle="none", marker="x", markersize=14, markeredgewidth=3, color=CAP_COLOR, zorder=5)
    _stop_note(left, turns[-1], versions[-1], run.status, OKABE_ITO["blue"])
    left.set_xlabel("turn")
    left.set_ylabel("count")
    left.xaxis.set_major_locator(_integer_ticks())
    left.yaxis.set_major_locator(_integer_ticks())
    left.set_ylim(bottom=0)
    left.margins(x=0.15, y=0.25)
    handles, _ = left.get_legend_handles_labels()
    handles.append(Line2D([], [], linestyle="none", marker="x", markersize=11, markeredgewidth=2.5, color=CAP_COLOR,
                          label="tool turn, no state change"))
    left.legend(handles=handles, frameon=False, loc="upper left", fontsize=11)
    left.set_title("State per turn", fontsize=14)
    _draw_budgets(right, run, fontsize=11)
    right.set_title("Budgets used", fontsize=14)
    fig.suptitle(title or f"{run.label}: {run.status} ({run.code})", fontsize=16, fontweight="bold")
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
        left.step([0, *attempts], [0, *spent], where="post", linestyle=style, color=color, linewidth=2.5,
                  label=f"{label}: {spent[-1] if spent else 0} retries, {len(spent)} attempts")
        left.plot(attempts, spent, linestyle="none", marker=marker, color=color, markersize=7)
        limit = _limit_of(run, "retries")
        if limit is not None:
            budgets.add(limit)
    for limit in sorted(budgets):
        left.axhline(limit, color=CAP_COLOR, linestyle="--", linewidth=1.5)
        left.annotate(f"shared retry budget = {limit:g}", xy=(0, limit), xycoords=("axes fraction", "data"),
                      xytext=(4, 4), textcoords="offset points", fontsize=12)
    left.set_xlabel("tool attempt (in order)")
    left.set_ylabel("retries spent so far")
    left.xaxis.set_major_locator(_integer_ticks())
    left.yaxis.set_major_locator(_integer_ticks())
    left.set_ylim(bottom=0)
    left.margins(y=0.25)
    left.legend(frameon=False, loc="upper left", bbox_to_anchor=(0.0, 0.92), fontsize=11)
    left.set_title("Retries against the task's budget", fontsize=14)

    tools = list(dict.fromkeys(c.tool for _, run in pairs for c in run.calls))
    width = 0.8 / len(pairs)
    for i, (label, run) in enumerate(pairs):
        color, _, _ = _series_style(i)
        counts = [sum(1 for c in run.calls if c.tool == tool) for tool in tools]
        xs = [k - 0.4 + width * (i + 0.5) for k in range(len(tools))]
        bars = right.bar(xs, counts, width, color=color, edgecolor="white", label=label, zorder=2)
        right.bar_label(bars, padding=2, fontsize=11)
    right.set_xticks(range(len(tools)), [t.replace("_", "_\n") for t in tools], fontsize=11)
    right.set_xlabel("tool")
    right.set_ylabel("attempts (calls, retries, fallbacks)")
    right.yaxis.set_major_locator(_integer_ticks())
    right.margins(y=0.2)
    right.set_title("Attempts per tool", fontsize=14)
    fig.suptitle(title or "One shared retry budget bounds the task; a budget per tool does not", fontsize=16,
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
        label = "one shared retry budget" if scope == "shared" else "a retry budget per tool"
        ax.plot(xs, ys, linestyle=style, marker=marker, color=color, linewidth=2.5, markersize=9, label=label)
        for x, y in points:
            ax.annotate(str(y), (x, y), xytext=(0, 6), textcoords="offset points", ha="center", fontsize=12)
    ax.set_xlabel("tools in the fallback chain (all failing)")
    ax.set_ylabel("tool attempts for one task")
    ax.xaxis.set_major_locator(_integer_ticks())
    ax.yaxis.set_major_locator(_integer_ticks())
    ax.set_ylim(bottom=0)
    ax.margins(y=0.2)
    ax.legend(frameon=False, loc="upper left")
    ax.set_title(title or "Per-tool retry budgets hide a storm behind every fallback switch")
    return _done(fig)


# --------------------------------------------------------------------------- 11 and 13: many runs


def _frame(source: LoopComparison | pd.DataFrame) -> pd.DataFrame:
    from agentloops.controller.experiments import LoopComparison

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
        source: a :class:`~agentloops.controller.experiments.LoopComparison` or its ``to_frame()``.
        cap: the cap-only loop's step cap (a dashed line on the steps histogram).
        step_budget: the controller's step budget (a dotted line).
        title: the chart's message.
    """
    from agentloops.controller.experiments import CAP_OUTCOME_STATUS
    from agentloops.controller.status import STOP_STATUSES

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
    for y, (_, outcome, count, color, hatch) in enumerate(rows):
        solid = hatch == "" or outcome != "false success"
        ends.barh(y, count, color=color if solid else "white", edgecolor=color if not solid else "white",
                  hatch=hatch or None, linewidth=1.5, zorder=2)
        ends.annotate(str(count), (count, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize=12)
    ends.set_yticks(range(len(rows)), [f"{loop}: {outcome}" for loop, outcome, *_ in rows], fontsize=12)
    ends.invert_yaxis()
    ends.set_xlabel(f"runs (of {len(frame)})")
    ends.set_ylabel("loop: how it ended")
    ends.margins(x=0.15)
    ends.set_title("How the runs ended", fontsize=14)

    top = int(max(frame["cap_steps"].max(), frame["ctl_steps"].max(), cap or 0)) + 1
    bins = [b - 0.5 for b in range(0, top + 2)]
    for loop, column in (("cap-only", "cap_steps"), ("controller", "ctl_steps")):
        steps.hist(frame[column], bins=bins, histtype="step", linewidth=2.5, color=LOOP_COLORS[loop],
                   linestyle="-" if loop == "controller" else "--", label=f"{loop} (mean {frame[column].mean():.2f})")
    if cap is not None:
        steps.axvline(cap, color=CAP_COLOR, linestyle="--", linewidth=1.5)
        steps.annotate(f"cap = {cap}", xy=(cap, 0.62), xycoords=("data", "axes fraction"), xytext=(-4, 0),
                       textcoords="offset points", ha="right", fontsize=12)
    if step_budget is not None:
        steps.axvline(step_budget, color=CAP_COLOR, linestyle=":", linewidth=1.5)
        steps.annotate(f"step budget = {step_budget:g}", xy=(step_budget, 0.55), xycoords=("data", "axes fraction"),
                       xytext=(-4, 0), textcoords="offset points", ha="right", fontsize=12)
    steps.set_xlabel("model calls (steps) used")
    steps.set_ylabel("runs")
    steps.xaxis.set_major_locator(_integer_ticks())
    steps.legend(frameon=False, loc="upper left", fontsize=12)
    steps.set_title("Steps used", fontsize=14)
    fig.suptitle(title or f"{len(frame)} randomized runs: a cap stops runs, the controller says why",
                 fontsize=16, fontweight="bold")
    return _done(fig)


@_styled
def claims_chart(counts: Mapping[str, Mapping[str, int]], *, title: str | None = None) -> Figure:
    """Stacked bars, one per policy: verified success, unverified ("false") success, and the other stops.

    Args:
        counts: policy → {``verified``, ``unverified``, and any stop statuses} → runs.
        title: the chart's message.
    """
    if not counts:
        raise ValueError("nothing to plot: no policies were given")
    fig, (ax,) = _new_figure(max(10.0, 2.6 * len(counts) + 6), 5.2)
    categories: list[str] = ["verified", "unverified"]
    for by_kind in counts.values():
        categories += [k for k in by_kind if k not in categories]
    colors = {"verified": STATUS_COLORS["succeeded"], "unverified": OKABE_ITO["vermillion"]}
    labels = {"verified": "succeeded, condition verified", "unverified": "reported success, condition NOT met"}
    for x, by_kind in enumerate(counts.values()):
        bottom = 0
        for kind in categories:
            value = int(by_kind.get(kind, 0))
            if not value:
                continue
            color = colors.get(kind, status_color(kind))
            hatch = WASTE_HATCH if kind == "unverified" else STATUS_HATCHES.get(kind, "") or None
            ax.bar(x, value, 0.6, bottom=bottom, color="white" if kind == "unverified" else color, edgecolor=color,
                   hatch=hatch, linewidth=1.5, zorder=2, label=labels.get(kind, kind))
            ax.annotate(str(value), (x, bottom + value / 2), ha="center", va="center", fontsize=12,
                        bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})
            bottom += value
    ax.set_xticks(range(len(counts)), [f"policy {p}" for p in counts])
    ax.set_xlabel("error policy")
    ax.set_ylabel("runs")
    ax.yaxis.set_major_locator(_integer_ticks())
    handles, names = ax.get_legend_handles_labels()
    unique = dict(zip(names, handles, strict=False))
    ax.legend(unique.values(), unique.keys(), frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=11)
    fig.suptitle(title or "A reply without tool calls is a claim: how many were true?", fontsize=16,
                 fontweight="bold")
    return _done(fig)


# --------------------------------------------------------------------------- 15: parallel calls


@_styled
def gantt_chart(run: ControllerRun, *, title: str | None = None) -> Figure:
    """Every tool call of a run on the simulated timeline, coloured by its final state.

    A bar runs from the call's start to its end (its result, or its
    cancellation). A cancelled call whose result still arrived is drawn with
    a dotted line to that arrival and a ``late`` marker: recorded, not applied.
    A second delivery of the same result is marked ``duplicate``. The dashed
    vertical line is the stop, labelled with the status.
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
            ax.annotate("late: recorded, ignored", (call.arrived_at, y), xytext=(0, 10),
                        textcoords="offset points", ha="right", fontsize=11)
        kind = "" if call.kind == "call" else f"{call.kind}:"
        labels.append(f"{kind}{call.tool}{_short_args(call.args)}\n{call.state}")
    for event in duplicates:
        y = next(i for i, c in enumerate(calls) if c.call_id == event.call_id)
        ax.plot([event.at_s], [y], marker="D", color=OKABE_ITO["reddish_purple"], markersize=10, zorder=4)
        ax.annotate("duplicate: applied once", (event.at_s, y), xytext=(0, -16), textcoords="offset points",
                    fontsize=11)
    ax.axvline(run.stop.at_s, color=status_color(run.status), linestyle="--", linewidth=2.5)
    ax.annotate(f"stop: {run.status}", xy=(run.stop.at_s, 1), xycoords=("data", "axes fraction"), xytext=(4, -14),
                textcoords="offset points", fontsize=12, fontweight="bold")
    ax.set_yticks(range(len(calls)), labels, fontsize=12)
    ax.invert_yaxis()
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("tool call and its final state")
    ax.set_xlim(left=0)
    ax.margins(x=0.12)
    states = list(dict.fromkeys(c.state for c in calls))
    handles: list[Any] = [Patch(facecolor=CALL_STATE_COLORS.get(s, OTHER_COLOR), edgecolor="black",
                     hatch="//" if s in ("cancelled", "ignored") else None, label=s) for s in states]
    if any(c.state == "ignored" for c in calls):
        handles.append(Line2D([], [], marker="v", linestyle="none", color=OKABE_ITO["vermillion"], markersize=10,
                              label="late result"))
    if duplicates:
        handles.append(Line2D([], [], marker="D", linestyle="none", color=OKABE_ITO["reddish_purple"],
                              markersize=9, label="duplicate delivery"))
    ax.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=11)
    fig.suptitle(title or f"Parallel calls of {run.label}: states, late and duplicate results", fontsize=16,
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

    Args:
        runs: the runs to compare (labelled).
        budget: the context budget to draw as a dashed line (default: none).
        title: the chart's message.
    """
    from matplotlib.lines import Line2D

    pairs = _labelled(runs)
    fig, (ax,) = _new_figure(13.0, 5.2)
    compacted = False
    for i, (label, run) in enumerate(pairs):
        color, style, marker = _series_style(i)
        turns = [t.turn for t in run.turns if t.context_tokens]
        sizes = [t.context_tokens for t in run.turns if t.context_tokens]
        ax.plot(turns, sizes, linestyle=style, marker=marker, color=color, linewidth=2.5, markersize=8,
                label=f"{label} → {run.status}", zorder=3)
        events = [(t.turn, t.context_tokens) for t in run.turns if t.compaction]
        if events:
            compacted = True
            xs, ys = zip(*events, strict=True)
            ax.plot(xs, ys, linestyle="none", marker="v", markersize=13, color=color, markeredgecolor="black",
                    zorder=4)
    if budget is not None:
        ax.axhline(budget, color=CAP_COLOR, linestyle="--", linewidth=1.5)
        ax.annotate(f"context budget = {budget:g}", xy=(0, budget), xycoords=("axes fraction", "data"),
                    xytext=(4, 4), textcoords="offset points", fontsize=12)
    handles, _ = ax.get_legend_handles_labels()
    if compacted:
        handles.append(Line2D([], [], linestyle="none", marker="v", markersize=11, color="#bbbbbb",
                              markeredgecolor="black", label="compaction before this request"))
    ax.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=11)
    ax.set_xlabel("turn")
    ax.set_ylabel("request size (estimated tokens)")
    ax.xaxis.set_major_locator(_integer_ticks())
    ax.set_ylim(bottom=0)
    fig.suptitle(title or "Context sent with each turn", fontsize=16, fontweight="bold")
    return _done(fig)


# --------------------------------------------------------------------------- 14: trajectories


@_styled
def trace_diff_chart(diff: TraceDiff | Replay, *, title: str | None = None) -> Figure:
    """Two trajectories of the same trace as lanes of actions; positions that differ are outlined.

    Each box is one action, coloured by its kind (call, retry, fallback,
    blocked, answer…); a thick vermillion outline marks a position where the
    two sides differ. The end of each lane names its stop status.
    """
    from matplotlib.patches import Patch, Rectangle

    if hasattr(diff, "diff"):
        diff = diff.diff  # a Replay
    lanes = ((diff.before_label, diff.before_actions, diff.before_stop),
             (diff.after_label, diff.after_actions, diff.after_stop))
    n = max(len(diff.before_actions), len(diff.after_actions), 1)
    fig, (ax,) = _new_figure(min(16.0, max(9.0, 1.25 * n + 5)), 4.2)
    kinds_seen: list[str] = []
    for row, (_, actions, stop) in enumerate(lanes):
        y = 1 - row
        for i, label in enumerate(actions):
            kind = action_kind(label)
            kinds_seen.append(kind)
            other = lanes[1 - row][1]
            differs = i >= len(other) or other[i] != label
            ax.add_patch(Rectangle((i + 0.05, y - 0.32), 0.9, 0.64, facecolor=ACTION_COLORS[kind],
                                   edgecolor=NO_CHANGE_COLOR if differs else "white",
                                   linewidth=3.5 if differs else 1, zorder=2))
            ax.annotate(_short_action(label), (i + 0.5, y), ha="center", va="center", fontsize=9,
                        color="white" if kind in ("call", "fallback", "blocked", "held") else "black", zorder=3)
        ax.annotate(f"{stop[0]}\n({stop[1]})", (len(actions) + 0.15, y), va="center", fontsize=12,
                    bbox={"boxstyle": "round,pad=0.25", "facecolor": status_color(stop[0]), "alpha": 0.85})
    ax.set_xlim(0, n + 3.2)
    ax.set_ylim(-0.6, 1.6)
    ax.set_yticks([1, 0], [diff.before_label, diff.after_label])
    ax.set_xticks([i + 0.5 for i in range(n)], [str(i + 1) for i in range(n)])
    ax.set_xlabel("action number")
    ax.set_ylabel("trajectory")
    ax.spines["left"].set_visible(False)
    handles = [Patch(facecolor=ACTION_COLORS[k], label=k) for k in dict.fromkeys(kinds_seen)]
    handles.append(Patch(facecolor="white", edgecolor=NO_CHANGE_COLOR, linewidth=3, label="differs"))
    ax.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(0.0, -0.22), ncol=len(handles),
              fontsize=11)
    fig.suptitle(title or textwrap.fill(diff.summary(), 100), fontsize=14, fontweight="bold")
    return _done(fig)


def _short_action(label: str) -> str:
    """``retry:get_weather(city=Beijing)`` → ``retry\\nget_weather\\nBeijing`` (fits a box)."""
    kind = action_kind(label)
    body = label.split(":", 1)[1] if kind in ("retry", "fallback", "blocked", "held") else label
    tool, _, args = body.partition("(")
    values = ", ".join(part.split("=", 1)[-1] for part in args.rstrip(")").split(", ") if part)
    head = f"{kind}\n" if kind not in ("call", "answer", "ask_user", "other") else ""
    if len(tool) > 11 and "_" in tool:
        tool = tool.replace("_", "_\n", 1)
    return f"{head}{tool}" + (f"\n{values[:12]}" if values else "")


# --------------------------------------------------------------------------- the explorer's live chart


class LiveRunChart:
    """:func:`run_chart` kept as one figure and updated in place: the controller explorer's chart.

    Building a figure, laying it out and saving it costs several hundred
    milliseconds on a small machine; moving the data of a figure that already
    exists costs a fraction of that. The figure is a plain
    :class:`~matplotlib.figure.Figure` on an Agg canvas (never registered with
    pyplot), drawn once here and redrawn by :meth:`update`.

    Args:
        dpi: pixels per inch of the PNG.
    """

    def __init__(self, *, dpi: int = 72) -> None:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure as MplFigure
        from matplotlib.lines import Line2D

        from agentloops.controller.budgets import BUDGET_NAMES
        from agentloops.plots import STYLE

        self.names = list(BUDGET_NAMES)
        with matplotlib.rc_context(cast(Any, STYLE)):
            fig = MplFigure(figsize=(14, 4.6), dpi=dpi)
            self.canvas = FigureCanvasAgg(fig)
            left, right = fig.subplots(1, 2)
            fig.subplots_adjust(left=0.05, right=0.97, bottom=0.14, top=0.84, wspace=0.42)
            (self._version,) = left.plot([], [], color=OKABE_ITO["blue"], marker="o", linewidth=2.5, markersize=8,
                                         label="state version")
            (self._open,) = left.plot([], [], color=OKABE_ITO["vermillion"], linestyle="--", marker="s",
                                      linewidth=2.5, markersize=8, label="items still missing")
            (self._idle,) = left.plot([], [], linestyle="none", marker="x", markersize=14, markeredgewidth=3,
                                      color=CAP_COLOR, zorder=5)
            self._note = left.annotate("", (0, 0), xytext=(6, 6), textcoords="offset points", fontsize=12,
                                       bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "alpha": 0.85})
            left.set_xlabel("turn")
            left.set_ylabel("count")
            left.xaxis.set_major_locator(_integer_ticks())
            left.yaxis.set_major_locator(_integer_ticks())
            left.set_title("State per turn", fontsize=14)
            handles, _ = left.get_legend_handles_labels()
            handles.append(Line2D([], [], linestyle="none", marker="x", markersize=11, markeredgewidth=2.5,
                                  color=CAP_COLOR, label="tool turn, no state change"))
            left.legend(handles=handles, frameon=False, loc="upper left", fontsize=11)

            self._bars = right.barh(range(len(self.names)), [0] * len(self.names), color=OKABE_ITO["blue"],
                                    edgecolor="white", zorder=2)
            self._labels = [right.annotate("", (0, y), xytext=(4, 0), textcoords="offset points", va="center",
                                           fontsize=11) for y in range(len(self.names))]
            right.axvline(100, color=CAP_COLOR, linestyle="--", linewidth=1.5)
            right.annotate("limit", xy=(100, 1), xycoords=("data", "axes fraction"), xytext=(3, -14),
                           textcoords="offset points", fontsize=11)
            right.set_yticks(range(len(self.names)), [n.replace("_s", " (s)") if n == "wall_time_s" else n
                                                      for n in self.names], fontsize=11)
            right.invert_yaxis()
            right.set_xlim(0, 145)
            right.set_xlabel("share of the limit used (%)")
            right.set_ylabel("budget")
            right.set_title("Budgets used", fontsize=14)
            self._title = fig.suptitle("", fontsize=16, fontweight="bold")
        self.figure = fig
        self._left = left
        self.png = b""

    def update(self, run: ControllerRun) -> bytes:
        """Redraw for ``run`` and return the PNG bytes."""
        from PIL import Image

        turns = [0, *(t.turn for t in run.turns)]
        versions = [run.turns[0].state_version if run.turns else 0, *(t.state_version_after for t in run.turns)]
        still_open = [len(run.task.items), *(len(t.open_items) for t in run.turns)]
        self._version.set_data(turns, versions)
        self._open.set_data(turns, still_open)
        idle = _idle_turns(run)
        self._idle.set_data([x for x, _ in idle], [y for _, y in idle])
        self._note.set_text(run.status)
        self._note.xy = (turns[-1], versions[-1])
        self._note.get_bbox_patch().set_facecolor(status_color(run.status))
        top = max(*versions, *still_open, 1)
        self._left.set_xlim(-0.4, max(turns) + 1.2)
        self._left.set_ylim(0, top * 1.35 + 0.5)
        stopped_by = run.stop.budget if run.status == "budget_exhausted" else None
        for name, bar, label in zip(self.names, self._bars, self._labels, strict=True):
            limit = _limit_of(run, name)
            used = run.usage.get(name, 0)
            if limit is None:
                bar.set_width(0)
                label.set_text(f"{used:g} used · off")
                label.xy = (0, label.xy[1])
                continue
            share = min(130.0, 100.0 * used / limit if limit else (100.0 if used else 0.0))
            bar.set_width(share)
            bar.set_color(status_color("budget_exhausted") if name == stopped_by else OKABE_ITO["blue"])
            bar.set_hatch(STATUS_HATCHES["budget_exhausted"] if name == stopped_by else None)
            bar.set_edgecolor("white")
            label.set_text(f"{used:g} / {limit:g}")
            label.xy = (share, label.xy[1])
        self._title.set_text(f"{run.label} [{run.policy.name}]: {run.status} ({run.code})")
        import matplotlib

        from agentloops.plots import STYLE

        with matplotlib.rc_context(cast(Any, STYLE)):  # hatch width and fonts are read at draw time
            self.canvas.draw()
        width, height = self.canvas.get_width_height()
        image = Image.frombuffer("RGBA", (width, height), self.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        out = io.BytesIO()
        image.convert("RGB").save(out, format="png", compress_level=1)
        self.png = out.getvalue()
        return self.png
