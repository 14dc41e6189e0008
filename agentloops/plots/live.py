"""The explorer's chart, redrawn in place (blitting) within an interactive budget."""

from __future__ import annotations

import struct
import zlib
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, cast

from agentloops.criteria import CRITERION_NAMES
from agentloops.i18n import _
from agentloops.plots.style import (
    CAP_COLOR,
    OKABE_ITO,
    WASTE_HATCH,
    chart_style,
    criterion_color,
    criterion_style,
)
from agentloops.record import RunRecord

# --------------------------------------------------------------------------- the PNG a widget shows


def png_bytes(canvas: Any) -> bytes:
    """The canvas as a PNG: RGB rows unfiltered, deflated at level 1 (half the time PIL's filtered encoder takes
    on a chart of flat colours, for as many bytes; the pixels are the same)."""
    import numpy as np

    pixels = np.asarray(canvas.buffer_rgba())[:, :, :3]
    height, width = pixels.shape[:2]
    rows = np.zeros((height, 1 + 3 * width), np.uint8)  # each row: filter type 0 (none), then its pixels
    rows[:, 1:] = pixels.reshape(height, 3 * width)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits per channel, RGB
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows.tobytes(), 1))
            + chunk(b"IEND", b""))


# --------------------------------------------------------------------------- axes drawn once per look

AXIS_LOOKS = 8
"""Backgrounds a live chart keeps with its moving axes drawn in (one per look of those axes; each is the
figure's pixels, 1 to 2 MB), least recently used dropped."""


def axis_look(axis: Any) -> Hashable:
    """What a moving axis draws, in full: its range, its ticks' places and texts, its label and offset text
    (about 0.3 ms, against some 10 ms to draw it). Two settings whose axes look alike in it draw the same axis
    pixels."""
    ticks = (*axis.get_majorticklabels(), *axis.get_minorticklabels())  # brings the ticks up to date first
    return (axis.get_visible(), tuple(axis.get_view_interval()), tuple(axis.get_majorticklocs()),
            tuple(axis.get_minorticklocs()), tuple(t.get_text() for t in ticks), axis.label.get_text(),
            axis.major.formatter.get_offset())


class AxisBackgrounds:
    """A live chart's background with its moving axes drawn in, kept per look of those axes.

    A chart redrawn in place redraws its moving axes every time, and an axis costs more to draw than the data
    it frames (every tick label is text laid out and rasterised). Its looks are few (a handful of ranges), so
    the background with the axes drawn in is kept per look (:func:`axis_look`): a redraw whose axes look as
    before restores it and draws only the data — the same pixels as drawing the axes again.
    """

    def __init__(self, canvas: Any, size: int = AXIS_LOOKS) -> None:
        self.canvas, self.size = canvas, size
        self._kept: OrderedDict[Hashable, Any] = OrderedDict()

    def restore(self, background: Any, axes: Sequence[Any]) -> None:
        """Put ``background`` with ``axes`` drawn on it onto the canvas (drawn now, or as kept)."""
        look = tuple(axis_look(axis) for axis in axes)
        if look in self._kept:
            self._kept.move_to_end(look)
            self.canvas.restore_region(self._kept[look])
            return
        self.canvas.restore_region(background)
        for axis in axes:
            axis.axes.draw_artist(axis)
        self._kept[look] = self.canvas.copy_from_bbox(self.canvas.figure.bbox)
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)


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
        self._with_axes = AxisBackgrounds(self.canvas)
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
        canvas = self.canvas
        calls, context, billed = self._axes
        self._with_axes.restore(self._background, (context.yaxis, billed.yaxis))
        for bar in self._bars:
            bar.axes.draw_artist(bar)
        calls.draw_artist(self._cap)
        for line in (*self._lines, self._repeats):
            context.draw_artist(line)
        self.png = png_bytes(canvas)
        return self.png
