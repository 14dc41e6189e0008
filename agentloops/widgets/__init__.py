"""Widgets for the notebooks: change one thing, watch what moves.

Every builder returns the widget itself, so a test can drive it without a
browser: set ``.value`` on a control, then read :attr:`Explorer.state` (the
records behind what is on screen) or the ``.value`` of the HTML and image
outputs. All redraw logic is plain methods (``refresh``) that tests and the
benchmark call directly.

Executed headless (nbclient, CI, a static notebook viewer) a widget has no
front end; its ``text/plain`` rendering is then the current tables, as text,
so an executed notebook still reads.

Controls carry stable CSS classes (``agentloops-finish-reason``,
``agentloops-chart``…) so a browser test can find them on the page.

One module per family:

- ``script``: scripts built round by round (:class:`RoundSpec`, :func:`build_scenario`)
- ``views``: what the explorer shows, as HTML and as text
- ``explorer``: the criteria explorer (:func:`explorer`)
- ``ahead``: the settings the criteria explorer computes ahead, while the page is read
- ``walkthrough``: a call-by-call walk-through (:func:`walkthrough`)
- ``prediction``: predict, commit, reveal (:func:`predict`)
- ``controls``: what every widget shares (CSS classes, label widths, argument checks)
"""

from __future__ import annotations

from agentloops.widgets.explorer import (
    DEFAULT_CUSTOM_SCRIPT,
    NEXT_ROUND,
    Explorer,
    RoundRow,
    explorer,
)
from agentloops.widgets.prediction import (
    Prediction,
    PredictionStage,
    predict,
)
from agentloops.widgets.script import (
    ANSWER,
    CONTENT_LABELS,
    CUSTOM,
    CUSTOM_TOOLS,
    DEFAULT_SCENARIO,
    EXPLORER_GROUPS,
    FINISH_REASONS,
    MAX_CAP,
    MAX_ROUNDS,
    MAX_TOOL_CALLS,
    TALK,
    ContentKind,
    RoundSpec,
    build_scenario,
)
from agentloops.widgets.views import (
    SCENARIO_TEXTS,
    STEP_HEADERS,
    SUMMARY_HEADERS,
    ExplorerState,
    header_html,
    headers,
    step_rows,
    steps_html,
    steps_text,
    summary_html,
    summary_row,
)
from agentloops.widgets.walkthrough import (
    Walkthrough,
    walkthrough,
)

__all__ = [
    "ANSWER",
    "CONTENT_LABELS",
    "CUSTOM",
    "CUSTOM_TOOLS",
    "DEFAULT_CUSTOM_SCRIPT",
    "DEFAULT_SCENARIO",
    "EXPLORER_GROUPS",
    "FINISH_REASONS",
    "MAX_CAP",
    "MAX_ROUNDS",
    "MAX_TOOL_CALLS",
    "NEXT_ROUND",
    "SCENARIO_TEXTS",
    "STEP_HEADERS",
    "SUMMARY_HEADERS",
    "TALK",
    "ContentKind",
    "Explorer",
    "ExplorerState",
    "Prediction",
    "PredictionStage",
    "RoundRow",
    "RoundSpec",
    "Walkthrough",
    "build_scenario",
    "explorer",
    "header_html",
    "headers",
    "predict",
    "step_rows",
    "steps_html",
    "steps_text",
    "summary_html",
    "summary_row",
    "walkthrough",
]
