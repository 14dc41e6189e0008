"""Charts of measured runs: one message per chart, one colour per criterion.

Every chart here is drawn from run records, never from typed-in numbers, and
follows the same rules so that a projected notebook reads the same everywhere:

- the Okabe–Ito palette (safe for the common colour-vision deficiencies), with
  one fixed colour *and* one line style and marker per criterion, so a reader
  who cannot tell two colours apart can still tell the lines apart;
- labelled axes with their units, a title that states the one message;
- fonts sized for a projector (14 pt body, 16 pt titles).

matplotlib is imported inside the functions: ``import agentloops.plots`` only
defines the palette. Each chart function returns a
:class:`~matplotlib.figure.Figure` that has already been closed in pyplot's
registry, so a headless run (tests, nbclient) does not accumulate open figures,
while a notebook still displays the returned figure.

:class:`LiveChart` is the explorer's chart: it keeps one figure and redraws
only what changed (blitting), because a full matplotlib redraw on this kind of
machine takes longer than the 100 ms an interactive control may spend.
"""

from __future__ import annotations

import functools
import io
import textwrap
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Union, cast

from agentloops.comparison import Comparison
from agentloops.criteria import CRITERION_NAMES
from agentloops.fonts import register_cjk_font, regular_for_missing_bold
from agentloops.i18n import N_, _
from agentloops.record import RunRecord

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from agentloops.retry import Policy, RetryComparison

OKABE_ITO: dict[str, str] = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}
"""The eight colours of Okabe & Ito (2008), distinguishable under the common colour-vision deficiencies."""

CRITERION_COLORS: dict[str, str] = {
    "content": OKABE_ITO["orange"],
    "finish_reason": OKABE_ITO["sky_blue"],
    "tool_calls": OKABE_ITO["bluish_green"],
    "correct": OKABE_ITO["blue"],
}
"""One colour per built-in criterion, used by every chart and widget of the package."""

LineStyle = Literal["-", "--", ":", "-."]

CRITERION_STYLES: dict[str, tuple[LineStyle, str]] = {
    "content": ("-", "o"),
    "finish_reason": ("--", "s"),
    "tool_calls": (":", "^"),
    "correct": ("-.", "D"),
}
"""Line style and marker per criterion: a second cue besides colour (and visible where lines overlap)."""

POLICY_COLORS: dict[str, str] = {
    "blind_retry": OKABE_ITO["vermillion"],
    "right_response": OKABE_ITO["reddish_purple"],
}
"""Colours of the two retry policies of notebook 05 (kept apart from the criterion colours)."""

CAP_COLOR = OKABE_ITO["black"]
OTHER_COLOR = "#777777"
"""Colour of a criterion the package does not know (a learner's own function)."""

WASTE_HATCH = "///"
"""Hatching marks the wasted share of a bar (wasted calls, completion tokens) in every chart."""

STYLE: dict[str, Any] = {
    "font.size": 14,
    "axes.titlesize": 16,
    "axes.titleweight": "bold",
    "axes.labelsize": 14,
    "xtick.labelsize": 13,
    "ytick.labelsize": 13,
    "legend.fontsize": 12,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "hatch.linewidth": 1.2,
}
"""rc settings for every chart: projector-sized fonts, no box around the plot."""

Records = Union[Comparison, Iterable[RunRecord]]  # noqa: UP007 (a runtime alias: `|` needs 3.10 objects)
"""A comparison, or any run records (for example ``[run("truncated", c) for c in CRITERION_NAMES]``)."""

Metric = Literal["steps", "wasted_calls", "wasted_tool_runs", "billed_prompt_tokens"]


def criterion_color(name: str) -> str:
    """The colour of a criterion; grey for one the package does not know."""
    return CRITERION_COLORS.get(name, OTHER_COLOR)


def criterion_style(name: str) -> tuple[LineStyle, str]:
    """Line style and marker of a criterion (solid line and dots for an unknown one)."""
    return CRITERION_STYLES.get(name, ("-", "o"))


# --------------------------------------------------------------------------- helpers


@dataclass(frozen=True)
class _Grid:
    """Records arranged by scenario (rows) and criterion (columns), in order of first appearance."""

    scenarios: tuple[str, ...]
    criteria: tuple[str, ...]
    cells: Mapping[tuple[str, str], RunRecord]
    caps: tuple[int, ...]

    def get(self, scenario: str, criterion: str) -> RunRecord | None:
        return self.cells.get((scenario, criterion))


def _records(source: Records) -> list[RunRecord]:
    records = list(source.records) if isinstance(source, Comparison) else list(source)
    if not records:
        raise ValueError(_("nothing to plot: no run records were given"))
    for record in records:
        if not isinstance(record, RunRecord):
            raise TypeError(_("expected run records (from agentloops.run or compare); got {kind}").format(
                kind=type(record).__name__))
    return records


def _grid(source: Records) -> _Grid:
    records = _records(source)
    scenarios = tuple(dict.fromkeys(r.scenario for r in records))
    found = dict.fromkeys(r.criterion for r in records)
    criteria = tuple([c for c in CRITERION_NAMES if c in found] + [c for c in found if c not in CRITERION_NAMES])
    cells = {(r.scenario, r.criterion): r for r in records}
    caps = tuple(sorted({r.max_steps for r in records}))
    return _Grid(scenarios, criteria, cells, caps)


FONT_FAMILIES: tuple[str, ...] = ("DejaVu Sans", "Noto Sans CJK SC", "Noto Sans CJK JP", "WenQuanYi Zen Hei",
                                   "Noto Sans SC")
"""Fonts to draw with, in order: matplotlib's DejaVu Sans, then a CJK font for Chinese glosses when installed."""


@functools.lru_cache(maxsize=1)
def installed_fonts() -> tuple[str, ...]:
    """The families of :data:`FONT_FAMILIES` that exist on this machine (never one that would warn "findfont")."""
    from matplotlib import font_manager

    register_cjk_font()  # the CJK font that the package's dependencies install
    present = {entry.name for entry in font_manager.fontManager.ttflist}
    families = tuple(family for family in FONT_FAMILIES if family in present) or ("DejaVu Sans",)
    regular_for_missing_bold(families)  # bold titles in a family with no bold face: its regular, no findfont warning
    return families


def chart_style() -> dict[str, Any]:
    """:data:`STYLE` plus the installed fonts, with fallback: Chinese text uses the CJK font when there is one."""
    return {**STYLE, "font.family": list(installed_fonts())}


def _styled(function: Callable[..., Figure]) -> Callable[..., Figure]:
    """Draw the whole chart inside the package's rc settings (text reads them when it is created)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Figure:
        with _pyplot().rc_context(chart_style()):
            return function(*args, **kwargs)

    return wrapper


def _pyplot() -> Any:
    """pyplot, imported on first use (importing it also registers the notebook's figure display)."""
    import matplotlib.pyplot as plt

    return plt


def _new_figure(width: float, height: float, ncols: int = 1) -> tuple[Figure, list[Axes]]:
    fig, axes = _pyplot().subplots(1, ncols, figsize=(width, height), layout="constrained", squeeze=False)
    return fig, list(axes[0])


def _done(fig: Figure) -> Figure:
    """Close ``fig`` in pyplot's registry (it stays drawable) and hand it back."""
    _pyplot().close(fig)
    return fig


def _integer_ticks() -> Any:
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def _label(name: str, width: int = 14) -> str:
    """``name`` wrapped to ``width`` columns; a Chinese character takes two, so Chinese wraps at half as many."""
    if any(unicodedata.east_asian_width(ch) in "WF" for ch in name):
        width = max(4, width // 2)
    return "\n".join(textwrap.wrap(name, width)) or name


SHOWN_FROM_ELSEWHERE: tuple[str, ...] = (
    # the titles of the stop cases of agentloops.retry (the retry chart's x labels)
    N_("answer cut off by max_tokens"), N_("reply withheld by a content filter"),
    N_("a tool that keeps failing hits the cap"),
)
"""Texts that other modules define and the charts show through ``_()``: marked here for the catalog
(``tests/test_i18n_core.py`` checks that they are all listed)."""


def _grouped_positions(n_groups: int, n_bars: int, width: float = 0.8) -> tuple[list[float], float]:
    """Left offsets of each bar inside a group, and the bar width."""
    bar = width / max(n_bars, 1)
    return [-width / 2 + bar * (i + 0.5) for i in range(n_bars)], bar


def _criterion_legend(ax: Axes, criteria: Sequence[str], *, extra: Sequence[Any] = ()) -> None:
    """The criterion colours, outside the plot on the right so they never cover a bar."""
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=criterion_color(c), label=c) for c in criteria]
    ax.legend(handles=[*handles, *extra], loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
              title=_("stop criterion"), alignment="left")


def _cap_line(ax: Axes, caps: Sequence[int], *, horizontal: bool = True) -> list[Any]:
    """Dashed lines at the step caps; returns legend handles (a label in the plot would collide with bars)."""
    from matplotlib.lines import Line2D

    for cap in caps:
        if horizontal:
            ax.axhline(cap, color=CAP_COLOR, linestyle="--", linewidth=1.5, zorder=1)
    label = _("step cap = {caps}").format(caps=", ".join(map(str, caps)))
    return [Line2D([], [], color=CAP_COLOR, linestyle="--", linewidth=1.5, label=label)] if caps else []


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


@_styled
def context_chart(source: Records, *, title: str | None = None) -> Figure:
    """Prompt tokens sent on each call: every call resends the whole transcript, so the line only rises.

    A cross marks a wasted call (the same response as before, with nothing new
    sent in between): a spinning run is a rising line made of crosses. With
    several runs each line is shifted sideways by a fraction of a call, so runs
    that send exactly the same context stay visible side by side.
    """
    from matplotlib.lines import Line2D

    records = _records(source)
    several = len({r.scenario for r in records}) > 1
    fig, (ax,) = _new_figure(9.0, 5.2)
    dodge = 0.1 if len(records) > 1 else 0.0
    for index, record in enumerate(records):
        style, marker = criterion_style(record.criterion)
        color = criterion_color(record.criterion)
        shift = dodge * (index - (len(records) - 1) / 2)
        calls = [step + shift for step in range(1, record.steps + 1)]
        label = f"{record.scenario} × {record.criterion}" if several else record.criterion
        ax.plot(calls, record.context_tokens, linestyle=style, marker=marker, color=color, linewidth=2.5,
                markersize=8, label=label, zorder=3)
        wasted = [(r.step + shift, r.context_tokens) for r in record.rounds if r.repeated]
        if wasted:
            xs, ys = zip(*wasted, strict=True)
            ax.plot(xs, ys, linestyle="none", marker="x", markersize=13, markeredgewidth=2.5,
                    color=OKABE_ITO["vermillion"], zorder=4)
    handles, _labels = ax.get_legend_handles_labels()
    if any(r.repeated for record in records for r in record.rounds):
        handles.append(Line2D([], [], linestyle="none", marker="x", markersize=11, markeredgewidth=2.5,
                              color=OKABE_ITO["vermillion"], label=_("wasted call")))
    ax.legend(handles=handles, frameon=False, loc="upper left")
    ax.set_xlabel(_("model call number"))
    ax.set_ylabel(_("prompt tokens sent (estimated)"))
    ax.xaxis.set_major_locator(_integer_ticks())
    ax.set_ylim(bottom=0)
    ax.set_title(title or _("Context sent with each call"))
    return _done(fig)


@_styled
def billed_chart(source: Records, *, title: str | None = None) -> Figure:
    """Tokens billed per run: prompt tokens (solid) plus completion tokens (hatched) on top."""
    from matplotlib.patches import Patch

    records = _records(source)
    several = len({r.scenario for r in records}) > 1
    fig, (ax,) = _new_figure(max(7.0, 1.5 * len(records) + 2.5), 5.2)
    for x, record in enumerate(records):
        color = criterion_color(record.criterion)
        prompt, completion = record.billed_prompt_tokens, record.billed_completion_tokens
        ax.bar(x, prompt, 0.7, color=color, edgecolor="white", zorder=2)
        ax.bar(x, completion, 0.7, bottom=prompt, color="white", edgecolor=color, hatch=WASTE_HATCH,
               linewidth=1.5, zorder=2)
        ax.annotate(str(prompt + completion), (x, prompt + completion), xytext=(0, 2), textcoords="offset points",
                    ha="center", va="bottom", fontsize=12)
    labels = [_label(f"{r.scenario} {r.criterion}" if several else r.criterion, 13) for r in records]
    ax.set_xticks(range(len(records)), labels)
    ax.set_ylabel(_("tokens billed (estimated)"))
    ax.margins(y=0.15)
    ax.set_title(title or _("Tokens billed per run"))
    ax.legend(handles=[Patch(facecolor="#bbbbbb", label=_("prompt (resent every call)")),
                       Patch(facecolor="white", edgecolor="#555555", hatch=WASTE_HATCH, label=_("completion"))],
              frameon=False, loc="upper right")
    return _done(fig)


@_styled
def retry_chart(comparison: RetryComparison, *, title: str | None = None) -> Figure:
    """Calls and tokens spent per kind of stop: a blind retry loop against the right response.

    Args:
        comparison: the result of :func:`agentloops.retry.compare_policies`.
        title: the chart's message.
    """
    from matplotlib.patches import Patch

    cases = comparison.case_names()
    fig, axes = _new_figure(max(11.0, 3.6 * len(cases) + 2), 5.4, ncols=2)
    policies: tuple[Policy, ...] = ("blind_retry", "right_response")
    offsets, width = _grouped_positions(len(cases), len(policies), 0.75)
    panels = (("calls", _("model calls"), _("Calls")), ("tokens", _("tokens billed (estimated)"), _("Tokens")))
    for ax, (attr, ylabel, subtitle) in zip(axes, panels, strict=True):
        for j, policy in enumerate(policies):
            for i, case in enumerate(cases):
                result = comparison.get(case, policy)
                value = getattr(result, attr)
                hatch = WASTE_HATCH if not result.succeeded else None
                color = POLICY_COLORS[policy]
                ax.bar(i + offsets[j], value, width, color=color if result.succeeded else "white", edgecolor=color,
                       hatch=hatch, linewidth=2, zorder=2)
                verdict = _("answer") if result.succeeded else _("failed")
                ax.annotate(f"{value}\n{verdict}", (i + offsets[j], value), xytext=(0, 3),
                            textcoords="offset points", ha="center", va="bottom", fontsize=11)
        titles = [comparison.case_title(c) for c in cases]
        ax.set_xticks(range(len(cases)), [_label(_(title), 16) for title in titles])
        ax.set_ylabel(ylabel)
        ax.set_title(subtitle, fontsize=14)
        ax.margins(y=0.3)
        ax.set_ylim(bottom=0)
    axes[0].legend(handles=[Patch(facecolor=POLICY_COLORS["blind_retry"], label=_("blind retry")),
                            Patch(facecolor=POLICY_COLORS["right_response"], label=_("right response to the stop")),
                            Patch(facecolor="white", edgecolor="black", hatch=WASTE_HATCH,
                                  label=_("ended without an answer"))],
                   frameon=False, loc="upper left")
    fig.suptitle(title or _("A blind retry pays again and still fails; the right response answers"),
                 fontsize=16, fontweight="bold")
    return _done(fig)


# --------------------------------------------------------------------------- the explorer's chart


class LiveChart:
    """The explorer's three panels, redrawn in place: calls per criterion, context per call, tokens billed.

    The axes, titles and labels are drawn once into a background; a redraw
    restores it and draws only the bars, lines, cap line and the two y axes
    whose range changes. That keeps a redraw within an interactive budget.

    Args:
        criteria: the criteria shown side by side (one bar and one line each).
        max_cap: the largest cap the explorer offers (fixes the x range of the calls axes).
        dpi: pixels per inch of the PNG.
    """

    def __init__(self, criteria: Sequence[str] = CRITERION_NAMES, *, max_cap: int = 12, dpi: int = 80) -> None:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch
        from matplotlib.ticker import MaxNLocator

        self.criteria = tuple(criteria)
        self.max_cap = max_cap
        n = len(self.criteria)
        with matplotlib.rc_context(cast(Any, chart_style())):
            fig = Figure(figsize=(16, 4.9), dpi=dpi)
            self.canvas = FigureCanvasAgg(fig)
            calls, context, billed = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1, 1.25, 1]})
            fig.subplots_adjust(left=0.05, right=0.99, bottom=0.19, top=0.8, wspace=0.3)
            xs = range(n)
            short = [c.replace("_", "_\n") if len(c) > 9 else c for c in self.criteria]

            self._useful = calls.bar(xs, [0] * n, 0.7, color=[criterion_color(c) for c in self.criteria], zorder=2)
            self._wasted = calls.bar(xs, [0] * n, 0.7, color="white",
                                     edgecolor=[criterion_color(c) for c in self.criteria],
                                     hatch=WASTE_HATCH, linewidth=1.5, zorder=2)
            self._cap = calls.axhline(8, color=CAP_COLOR, linestyle="--", linewidth=1.5)
            calls.set_xticks(list(xs), short)
            calls.set_ylim(0, max_cap * 1.3)
            calls.yaxis.set_major_locator(MaxNLocator(5, integer=True))
            calls.set_ylabel(_("model calls (steps)"))
            calls.set_title(_("Calls (hatched: wasted)"))

            self._lines = []
            for c in self.criteria:
                style, marker = criterion_style(c)
                (line,) = context.plot([], [], linestyle=style, marker=marker, color=criterion_color(c),
                                       linewidth=2.5, markersize=7, zorder=3)
                self._lines.append(line)
            (self._repeats,) = context.plot([], [], linestyle="none", marker="x", markersize=12,
                                            markeredgewidth=2.5, color=OKABE_ITO["vermillion"], zorder=4)
            context.set_xlim(0.5, max_cap + 0.5)
            context.xaxis.set_major_locator(MaxNLocator(integer=True))
            context.yaxis.set_major_locator(MaxNLocator(4))
            context.set_xlabel(_("model call number"))
            context.set_ylabel(_("prompt tokens sent"))
            context.set_title(_("Context sent with each call"))

            self._prompt = billed.bar(xs, [0] * n, 0.7, color=[criterion_color(c) for c in self.criteria], zorder=2)
            self._completion = billed.bar(xs, [0] * n, 0.7, color="white",
                                          edgecolor=[criterion_color(c) for c in self.criteria],
                                          hatch=WASTE_HATCH, linewidth=1.5, zorder=2)
            billed.set_xticks(list(xs), short)
            billed.yaxis.set_major_locator(MaxNLocator(4, integer=True))
            billed.set_ylabel(_("tokens billed"))
            billed.set_title(_("Tokens billed"))
            # one legend row above the panels: inside an axes a legend would sit on some run's data
            fig.legend(handles=[
                *(Line2D([], [], linestyle=criterion_style(c)[0], marker=criterion_style(c)[1],
                         color=criterion_color(c), label=c) for c in self.criteria),
                Line2D([], [], linestyle="none", marker="x", markeredgewidth=2.5, color=OKABE_ITO["vermillion"],
                       label=_("wasted call")),
                Line2D([], [], color=CAP_COLOR, linestyle="--", label=_("step cap")),
                Patch(facecolor="#bbbbbb", label=_("prompt tokens")),
                Patch(facecolor="white", edgecolor="#555555", hatch=WASTE_HATCH, label=_("completion / wasted")),
            ], loc="upper center", ncol=len(self.criteria) + 4, frameon=False, fontsize=12,
                bbox_to_anchor=(0.5, 1.0))

        self.figure = fig
        self._axes = (calls, context, billed)
        self._dynamic_axes = (context, billed)
        self._bars = (*self._useful, *self._wasted, *self._prompt, *self._completion)
        for artist in (*self._bars, self._cap, *self._lines, self._repeats, context.yaxis, billed.yaxis):
            artist.set_animated(True)
        self.canvas.draw()
        self._background = self.canvas.copy_from_bbox(fig.bbox)
        self.png = b""

    def update(self, records: Mapping[str, RunRecord], max_steps: int, highlight: str | None = None) -> bytes:
        """Redraw for ``records`` (criterion → record of one scenario) and return the PNG bytes.

        Args:
            records: one record per criterion of :attr:`criteria` (missing ones draw as zero).
            max_steps: the cap the runs used (the dashed line).
            highlight: the criterion to emphasise; the others are drawn faded.
        """
        _, context, billed = self._axes
        top_context = top_billed = 1
        xs_rep: list[int] = []
        ys_rep: list[int] = []
        for i, criterion in enumerate(self.criteria):
            record = records.get(criterion)
            alpha = 1.0 if highlight in (None, criterion) else 0.35
            steps = record.steps if record else 0
            wasted = record.wasted_calls if record else 0
            self._useful[i].set_height(steps - wasted)
            self._wasted[i].set_y(steps - wasted)
            self._wasted[i].set_height(wasted)
            prompt = record.billed_prompt_tokens if record else 0
            completion = record.billed_completion_tokens if record else 0
            self._prompt[i].set_height(prompt)
            self._completion[i].set_y(prompt)
            self._completion[i].set_height(completion)
            for patch in (self._useful[i], self._wasted[i], self._prompt[i], self._completion[i]):
                patch.set_alpha(alpha)
            line = self._lines[i]
            tokens = record.context_tokens if record else ()
            line.set_data(range(1, len(tokens) + 1), tokens)
            line.set_alpha(alpha)
            line.set_linewidth(3.5 if highlight == criterion else 2.0)
            if record and highlight in (None, criterion):
                for r in record.rounds:
                    if r.repeated:
                        xs_rep.append(r.step)
                        ys_rep.append(r.context_tokens)
            top_context = max(top_context, *tokens) if tokens else top_context
            top_billed = max(top_billed, prompt + completion)
        self._repeats.set_data(xs_rep, ys_rep)
        self._cap.set_ydata([max_steps, max_steps])
        context.set_ylim(0, top_context * 1.15)
        billed.set_ylim(0, top_billed * 1.5)
        return self._render()

    def _render(self) -> bytes:
        from PIL import Image

        canvas = self.canvas
        canvas.restore_region(self._background)
        calls, context, billed = self._axes
        for axis in (context.yaxis, billed.yaxis):
            axis.axes.draw_artist(axis)
        for bar in self._bars:
            bar.axes.draw_artist(bar)
        calls.draw_artist(self._cap)
        for line in (*self._lines, self._repeats):
            context.draw_artist(line)
        width, height = canvas.get_width_height()
        image = Image.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        out = io.BytesIO()
        image.convert("RGB").save(out, format="png", compress_level=1)
        self.png = out.getvalue()
        return self.png
