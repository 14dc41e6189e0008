"""The widgets' live charts, redrawn in place: the figure they share, and the controller explorer's chart."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from agentloops.controller.teaching.plots.one_run import (
    _idle,
    _limit_of,
    progress_versions,
)
from agentloops.controller.teaching.plots.style import (
    LOOP_COLORS,
    NO_CHANGE_COLOR,
    STATUS_HATCHES,
    status_color,
)
from agentloops.i18n import _
from agentloops.plots.live import AxisBackgrounds, png_bytes
from agentloops.plots.style import (
    CAP_COLOR,
    OTHER_COLOR,
    _integer_ticks,
    chart_style,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from agentloops.controller.persistence.result import ControllerRun


_STYLE_LOCK = threading.RLock()
"""Held inside :meth:`LiveFigure.style`: the rc settings are global to the process, shared by every thread."""

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
        self._with_axes = AxisBackgrounds(self.canvas)
        self.png = b""

    @staticmethod
    @contextmanager
    def style() -> Iterator[None]:
        """The package's rc settings (text reads them when created, hatches when drawn), one thread at a time.

        ``rc_context`` restores the settings it found when it ends, and the settings are the process's: a widget's
        worker ending its block while the kernel's thread draws another chart (in a block of its own) hands that
        chart the settings from before — so the fonts with Chinese glyphs are made the process's default first,
        and a chart drawn meanwhile still finds them (else: "Glyph … missing from font(s) DejaVu Sans")."""
        import matplotlib

        style = chart_style()
        with _STYLE_LOCK:
            matplotlib.rcParams["font.family"] = style["font.family"]
            with matplotlib.rc_context(cast(Any, style)):
                yield

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
        """Blit the moving artists onto the background; the PNG bytes. The moving axes (the artists handed to
        :meth:`moving` before any other) come with the background, kept per look (:class:`AxisBackgrounds`)."""
        from matplotlib.axis import Axis

        with self.style():
            if self._background is None:
                self.canvas.draw()
                self._background = self.canvas.copy_from_bbox(self.figure.bbox)
            axes = list(itertools.takewhile(lambda artist: isinstance(artist, Axis), self._moving))
            self._with_axes.restore(self._background, axes)
            for artist in self._moving[len(axes):]:
                if artist.get_visible():
                    (artist.axes or self.figure).draw_artist(artist)
        self.png = png_bytes(self.canvas)
        return self.png


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
