"""Charts of many runs: retries and storms (12), how randomized runs end and the claims they make (11, 13)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from agentloops.controller.teaching.plots.one_run import (
    _limit_of,
)
from agentloops.controller.teaching.plots.style import (
    _DODGE,
    CAP_OUTCOME_COLORS,
    LOOP_COLORS,
    STATUS_COLORS,
    STATUS_HATCHES,
    RunsLike,
    _labelled,
    _series_style,
    status_color,
)
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
)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from agentloops.controller.persistence.result import ControllerRun
    from agentloops.controller.teaching.experiments import LoopComparison


def retries_spent(run: ControllerRun) -> list[int]:
    """Cumulative retries after each tool attempt (a retry and a fallback switch each spend one)."""
    total, out = 0, []
    for call in run.calls:
        total += call.kind in ("retry", "fallback")
        out.append(total)
    return out


STORM_CITY = "Beijing"
"""The city whose lookup fails on every tool of a storm run (the first city's one lookup succeeds)."""


def failing_attempts(run: ControllerRun, tool: str | None = None) -> int:
    """Attempts at :data:`STORM_CITY` (of ``tool`` only, if given): the storm, without the first city's lookup."""
    return sum(1 for c in run.calls if STORM_CITY.casefold() in c.args.casefold() and tool in (None, c.tool))


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
        rows: dicts with ``tools`` (tools in the chain, the main one included), ``scope`` (``shared`` or
            ``per_tool``) and ``attempts`` (attempts at the failing city: :func:`failing_attempts`).
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
    ax.set_xlabel(_("tools in the chain, the main one included (all failing)"))
    ax.set_ylabel(_("attempts at the failing city"))
    ax.xaxis.set_major_locator(_integer_ticks())
    ax.yaxis.set_major_locator(_integer_ticks())
    ax.set_ylim(bottom=0)
    ax.margins(y=0.2)
    ax.legend(frameon=False, loc="upper left")
    ax.set_title(title or _("Per-tool retry budgets hide a storm behind every fallback switch"))
    return _done(fig)


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
