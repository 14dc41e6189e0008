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

One module per family:

- ``style``: the palette, the fonts and the helpers every chart draws with
- ``runs``: what runs did (model calls, wasted calls and tool runs)
- ``costs``: what runs cost (context per call, tokens billed, blind retries)
- ``live``: :class:`LiveChart`, the explorer's chart, redrawn in place (blitting) because a full
  matplotlib redraw on this kind of machine takes longer than the 100 ms an interactive control may spend
"""

from __future__ import annotations

from agentloops.plots.costs import billed_chart, context_chart, retry_chart
from agentloops.plots.live import LiveChart
from agentloops.plots.runs import metric_chart, steps_chart, wasted_chart
from agentloops.plots.style import (
    CAP_COLOR,
    CRITERION_COLORS,
    CRITERION_STYLES,
    FONT_FAMILIES,
    OKABE_ITO,
    OTHER_COLOR,
    POLICY_COLORS,
    SHOWN_FROM_ELSEWHERE,
    STYLE,
    WASTE_HATCH,
    LineStyle,
    Metric,
    Records,
    chart_style,
    criterion_color,
    criterion_style,
    installed_fonts,
)

__all__ = [
    "CAP_COLOR", "CRITERION_COLORS", "CRITERION_STYLES", "FONT_FAMILIES", "OKABE_ITO", "OTHER_COLOR", "POLICY_COLORS",
    "SHOWN_FROM_ELSEWHERE", "STYLE", "WASTE_HATCH", "LineStyle", "LiveChart", "Metric", "Records", "billed_chart",
    "chart_style", "context_chart", "criterion_color", "criterion_style", "installed_fonts", "metric_chart",
    "retry_chart", "steps_chart", "wasted_chart",
]
