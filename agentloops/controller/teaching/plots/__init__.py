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
headless run accumulates no open figures, and a notebook still shows it.

The widgets draw with the ``Live…Chart`` classes instead: each lays its
figure out once (:class:`LiveFigure`) and a redraw only moves the data of
its artists, so a control change costs milliseconds, not a new figure.
Labels sit beside or above their bar, never on it or on a line; markers are
explained in legends outside the plot.

Titles, axis labels and legends speak the language in use (:mod:`agentloops.i18n`),
read when a chart is drawn (a live chart: when it is built); stop statuses, codes,
tool and budget names keep their code names in every language. The Chinese font is
the package's own (:mod:`agentloops.fonts`), through :func:`~agentloops.plots.chart_style`.

One module per family:

- ``style``: colours per stop status, loop, policy, call state and action; PNG and series helpers
- ``one_run``: the state per turn and the budgets of one run (10, 13)
- ``many_runs``: retries, storms, how randomized runs end, claims (11, 12, 13)
- ``timelines``: parallel calls, context per turn, two trajectories (14, 15, 16)
- ``live``: the live figure the widgets redraw in place, and the controller explorer's chart
- ``live_many``: the live charts of many runs (state, claims, storm, budgets)
- ``live_timelines``: the live diff, parallel timeline and context charts
"""

from __future__ import annotations

from agentloops.controller.teaching.plots.live import (
    CHART_DPI,
    LiveFigure,
    LiveRunChart,
)
from agentloops.controller.teaching.plots.live_many import (
    STORM_SERIES,
    LiveBudgetChart,
    LiveClaimsChart,
    LiveStateChart,
    LiveStormChart,
)
from agentloops.controller.teaching.plots.live_timelines import (
    MAX_LANE_ACTIONS,
    MAX_TIMELINE_CALLS,
    LiveContextChart,
    LiveDiffChart,
    LiveGanttChart,
)
from agentloops.controller.teaching.plots.many_runs import (
    CAP_OUTCOME_LABELS,
    CLAIM_KINDS,
    LOOP_LABELS,
    STORM_CITY,
    claim_bars,
    claims_chart,
    failing_attempts,
    loop_histograms,
    retries_spent,
    retry_chart,
    storm_chart,
)
from agentloops.controller.teaching.plots.one_run import (
    BUDGET_SHORT_LABELS,
    budget_chart,
    progress_versions,
    run_chart,
    state_chart,
)
from agentloops.controller.teaching.plots.style import (
    ACTION_COLORS,
    ACTION_LABELS,
    CALL_STATE_COLORS,
    CALL_STATE_LABELS,
    CAP_OUTCOME_COLORS,
    DIFFERS_EDGE,
    LOOP_COLORS,
    NO_CHANGE_COLOR,
    POLICY_COLORS,
    STATUS_COLORS,
    STATUS_HATCHES,
    RunsLike,
    action_kind,
    policy_color,
    status_color,
    to_png,
)
from agentloops.controller.teaching.plots.timelines import (
    LOG_SCALE_RATIO,
    context_chart,
    diff_headline,
    gantt_chart,
    trace_diff_chart,
)

__all__ = [
    "ACTION_COLORS",
    "ACTION_LABELS",
    "BUDGET_SHORT_LABELS",
    "CALL_STATE_COLORS",
    "CALL_STATE_LABELS",
    "CAP_OUTCOME_COLORS",
    "CAP_OUTCOME_LABELS",
    "CHART_DPI",
    "CLAIM_KINDS",
    "DIFFERS_EDGE",
    "LOG_SCALE_RATIO",
    "LOOP_COLORS",
    "LOOP_LABELS",
    "MAX_LANE_ACTIONS",
    "MAX_TIMELINE_CALLS",
    "NO_CHANGE_COLOR",
    "POLICY_COLORS",
    "STATUS_COLORS",
    "STATUS_HATCHES",
    "STORM_CITY",
    "STORM_SERIES",
    "LiveBudgetChart",
    "LiveClaimsChart",
    "LiveContextChart",
    "LiveDiffChart",
    "LiveFigure",
    "LiveGanttChart",
    "LiveRunChart",
    "LiveStateChart",
    "LiveStormChart",
    "RunsLike",
    "action_kind",
    "budget_chart",
    "claim_bars",
    "claims_chart",
    "context_chart",
    "diff_headline",
    "failing_attempts",
    "gantt_chart",
    "loop_histograms",
    "policy_color",
    "progress_versions",
    "retries_spent",
    "retry_chart",
    "run_chart",
    "state_chart",
    "status_color",
    "storm_chart",
    "to_png",
    "trace_diff_chart",
]
