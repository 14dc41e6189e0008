"""Charts of what runs did: model calls per run, calls and tool runs wasted."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentloops.i18n import N_, _

if TYPE_CHECKING:
    from matplotlib.figure import Figure

from agentloops.plots.style import (
    WASTE_HATCH,
    Metric,
    Records,
    _cap_line,
    _criterion_legend,
    _done,
    _grid,
    _grouped_positions,
    _integer_ticks,
    _label,
    _new_figure,
    _styled,
    criterion_color,
)

# --------------------------------------------------------------------------- static charts


_METRIC_AXES: dict[Metric, tuple[str, str]] = {
    "steps": (N_("model calls (steps)"), N_("Model calls per run")),
    "wasted_calls": (N_("wasted model calls"), N_("Wasted calls: the same response again, nothing new sent")),
    "wasted_tool_runs": (N_("tool runs the model never saw"), N_("Wasted tool runs")),
    "billed_prompt_tokens": (N_("prompt tokens billed (estimated)"), N_("Prompt tokens billed per run")),
}
"""Per metric: the y label and the default title (translated when a chart is drawn)."""


@_styled
def metric_chart(source: Records, metric: Metric = "steps", *, title: str | None = None) -> Figure:
    """Grouped bars: one group per scenario, one bar per criterion, for one measured number.

    Args:
        source: a :class:`~agentloops.comparison.Comparison` or run records.
        metric: which number of each record to plot.
        title: the chart's message; a neutral description by default.
    """
    if metric not in _METRIC_AXES:
        raise ValueError(_("unknown metric {metric}; expected one of: {allowed}").format(
            metric=repr(metric), allowed=", ".join(_METRIC_AXES)))
    grid = _grid(source)
    ylabel, default_title = _METRIC_AXES[metric]
    fig, (ax,) = _new_figure(min(14.0, max(7.0, 1.6 * len(grid.scenarios) + 3)), 5.2)
    offsets, width = _grouped_positions(len(grid.scenarios), len(grid.criteria))
    for j, criterion in enumerate(grid.criteria):
        xs, heights = [], []
        for i, scenario in enumerate(grid.scenarios):
            record = grid.get(scenario, criterion)
            if record is not None:
                xs.append(i + offsets[j])
                heights.append(getattr(record, metric))
        bars = ax.bar(xs, heights, width, color=criterion_color(criterion), edgecolor="white", label=criterion,
                      zorder=2)
        ax.bar_label(bars, padding=2, fontsize=11)
    cap_handles = _cap_line(ax, grid.caps) if metric == "steps" else []
    ax.set_xticks(range(len(grid.scenarios)), [_label(s) for s in grid.scenarios])
    ax.set_xlabel(_("scenario"))
    ax.set_ylabel(_(ylabel))
    ax.yaxis.set_major_locator(_integer_ticks())
    ax.margins(y=0.15)
    ax.set_title(title or _(default_title))
    _criterion_legend(ax, grid.criteria, extra=cap_handles)
    return _done(fig)


@_styled
def steps_chart(source: Records, *, title: str | None = None, show_wasted: bool = True) -> Figure:
    """Model calls per scenario and criterion; the hatched top of a bar is its wasted calls.

    The dashed line is the step cap (步数上限): a bar that reaches it ran out of
    steps instead of stopping. A run that raised is drawn with a thick black
    outline and a "!" over its count, so "raised" never looks like "answered".
    Legend entries appear only for what the chart holds.
    """
    from matplotlib.patches import Patch

    grid = _grid(source)
    fig, (ax,) = _new_figure(min(14.0, max(7.0, 1.6 * len(grid.scenarios) + 3)), 5.2)
    offsets, width = _grouped_positions(len(grid.scenarios), len(grid.criteria))
    for j, criterion in enumerate(grid.criteria):
        color = criterion_color(criterion)
        for i, scenario in enumerate(grid.scenarios):
            record = grid.get(scenario, criterion)
            if record is None:
                continue
            x = i + offsets[j]
            wasted = record.wasted_calls if show_wasted else 0
            raised = record.error is not None
            outline = {"edgecolor": "black", "linewidth": 2.2} if raised else {"edgecolor": "white"}
            ax.bar(x, record.steps - wasted, width, color=color, zorder=2, **outline)
            if wasted:
                ax.bar(x, wasted, width, bottom=record.steps - wasted, color="white", edgecolor=color,
                       hatch=WASTE_HATCH, linewidth=1.5, zorder=2)
            ax.annotate(f"{record.steps}{'!' if raised else ''}", (x, record.steps), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=11,
                        fontweight="bold" if raised else "normal")
    extra = _cap_line(ax, grid.caps)
    ax.set_xticks(range(len(grid.scenarios)), [_label(s) for s in grid.scenarios])
    ax.set_xlabel(_("scenario"))
    ax.set_ylabel(_("model calls (steps)"))
    ax.yaxis.set_major_locator(_integer_ticks())
    ax.set_ylim(0, max(max(grid.caps), max(r.steps for r in grid.cells.values())) * 1.2)
    ax.set_title(title or _("Model calls per run, by stop criterion"))
    if show_wasted and any(r.wasted_calls for r in grid.cells.values()):
        extra.append(Patch(facecolor="white", edgecolor="black", hatch=WASTE_HATCH, label=_("wasted calls")))
    if any(r.error is not None for r in grid.cells.values()):
        extra.append(Patch(facecolor="#dddddd", edgecolor="black", linewidth=2.2, label=_("raised an error (n!)")))
    _criterion_legend(ax, grid.criteria, extra=extra)
    return _done(fig)


@_styled
def wasted_chart(source: Records, *, title: str | None = None) -> Figure:
    """What each criterion wastes: model calls repeated for nothing, tool results never read.

    A kind of waste that no run in ``source`` has gets no panel (an empty panel
    reads as a drawing error); when no run wastes anything, one panel says so.
    """
    grid = _grid(source)
    panels: list[tuple[str, str, str]] = [
        (metric, ylabel, subtitle) for metric, ylabel, subtitle in (
            ("wasted_calls", _("wasted model calls"), _("Calls that repeated the previous response")),
            ("wasted_tool_runs", _("tool runs the model never saw"), _("Tool results never sent back")),
        ) if any(getattr(r, metric) for r in grid.cells.values())
    ] or [("wasted_calls", _("wasted model calls"), _("No run wasted a call or a tool result"))]
    per_panel = max(7.0, 1.6 * len(grid.scenarios) + 2.5)
    fig, axes = _new_figure(min(15.0, per_panel * len(panels)), 5.2, ncols=len(panels))
    offsets, width = _grouped_positions(len(grid.scenarios), len(grid.criteria))
    for ax, (metric, ylabel, subtitle) in zip(axes, panels, strict=True):
        for j, criterion in enumerate(grid.criteria):
            xs, heights = [], []
            for i, scenario in enumerate(grid.scenarios):
                record = grid.get(scenario, criterion)
                if record is not None:
                    xs.append(i + offsets[j])
                    heights.append(getattr(record, metric))
            bars = ax.bar(xs, heights, width, color=criterion_color(criterion), edgecolor="white", zorder=2)
            ax.bar_label(bars, padding=2, fontsize=11)
        ax.set_xticks(range(len(grid.scenarios)), [_label(s) for s in grid.scenarios])
        ax.set_ylabel(ylabel)
        ax.set_title(subtitle, fontsize=14)
        ax.yaxis.set_major_locator(_integer_ticks())
        ax.set_ylim(0, max(1, *(getattr(r, metric) for r in grid.cells.values())) * 1.25)
    _criterion_legend(axes[-1], grid.criteria)
    fig.suptitle(title or _("What each stop criterion wastes"), fontsize=16, fontweight="bold")
    return _done(fig)


