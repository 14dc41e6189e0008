"""A live chart's cheaper redraw is the same picture: axes kept per look, PNGs written unfiltered."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

import agentloops as al
from agentloops import plots
from agentloops.controller.teaching import widgets
from agentloops.plots.live import AxisBackgrounds, axis_look, png_bytes


@pytest.fixture(autouse=True)
def _no_working_ahead(monkeypatch):
    """The figures are read here: no worker may draw other settings into them meanwhile."""
    from agentloops.controller.teaching.widgets import panel

    monkeypatch.setattr(panel, "PREWARM", False)


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def test_a_png_written_unfiltered_holds_the_canvas_pixels_exactly():
    chart = plots.LiveChart()
    png = chart.update({c: al.run("truncated", c) for c in al.CRITERION_NAMES}, 8, highlight="content")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png == png_bytes(chart.canvas)
    canvas = np.asarray(chart.canvas.buffer_rgba())[:, :, :3]
    assert _pixels(png).shape == canvas.shape and np.array_equal(_pixels(png), canvas)


def _two_runs() -> tuple[widgets.ControllerExplorer, tuple, tuple]:
    """The controller explorer, its first setting, and the same with a one-step budget (fewer turns: another
    range of the turn axis)."""
    explorer = widgets.controller_explorer()
    short = explorer._key()[:-1]
    steps = 3 + list(explorer.budgets).index("steps")
    return explorer, short, (*short[:steps], 1, *short[steps + 1:])


def test_an_axis_look_changes_with_the_range_and_with_ticks_set_by_hand():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    ax.set_xlim(0, 4)
    before = axis_look(ax.xaxis)
    assert axis_look(ax.xaxis) == before
    ax.set_xlim(0, 5)
    assert axis_look(ax.xaxis) != before
    ax.set_xticks([1, 2], ["a", "b"])
    named = axis_look(ax.xaxis)
    ax.set_xticks([1, 2], ["a", "c"])  # the same places and range, another text
    assert axis_look(ax.xaxis) != named
    ax.set_xlabel("turn")
    assert axis_look(ax.xaxis) != named


def test_a_chart_redrawn_from_a_kept_look_is_the_picture_drawn_afresh():
    explorer, short, long = _two_runs()
    kept = explorer._chart.live._with_axes
    first = explorer._view(short).png
    other = explorer._view(long).png
    assert len(kept._kept) == 2 and first != other  # two looks of the axes
    again = explorer._view(short).png  # its axes restored as kept, not drawn
    assert len(kept._kept) == 2 and again == first
    fresh, _short, _long = _two_runs()
    assert fresh._view(long).png == other  # a look kept for one setting is never shown for another


def test_a_chart_keeps_only_its_number_of_looks(monkeypatch):
    import agentloops.plots.live as live

    class Canvas:
        figure = type("Figure", (), {"bbox": None})()

        def restore_region(self, region):
            pass

        def copy_from_bbox(self, _bbox):
            return object()

    class Axis:
        def __init__(self, look):
            self.look, self.drawn, self.axes = look, 0, self

        def draw_artist(self, _axis):
            self.drawn += 1

    monkeypatch.setattr(live, "axis_look", lambda axis: axis.look)
    kept = AxisBackgrounds(Canvas(), size=2)
    axes = [Axis(look) for look in range(3)]
    for axis in (*axes, axes[2], axes[0]):
        kept.restore("background", [axis])
    assert [axis.drawn for axis in axes] == [2, 1, 1]  # the first look made room for the third: drawn again
    assert len(kept._kept) == 2
