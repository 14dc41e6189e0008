"""The look every chart of runs shares: the palette, one colour and line style per criterion, projector-sized
fonts with CJK fallback, and the small helpers the chart modules draw with."""

from __future__ import annotations

import functools
import textwrap
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Union

from agentloops.comparison import Comparison
from agentloops.criteria import CRITERION_NAMES
from agentloops.fonts import register_cjk_font, regular_for_missing_bold
from agentloops.i18n import N_, _
from agentloops.record import RunRecord

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure



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


