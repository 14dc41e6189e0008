"""Widgets for the controller notebooks (10–16): change one setting, re-run, see what moved.

Every builder returns the widget itself, already drawn once with its
defaults, so "Run all" needs no click. Each widget keeps what is on screen
as data in :attr:`state` (a small frozen object with the runs behind it), and
its redraw is one plain method, :meth:`refresh`, that tests and the benchmark
call directly.

A change answers within 100 ms in the page (``benchmarks/bench_widgets_browser.py``, a real browser)
because nothing is computed while the learner waits, when it can be helped: what a control state shows
(runs, chart PNG, tables) is computed once and kept, keyed by the control values, and the states a learner
is likely to pick next — then every setting one move away, or every setting of a small widget — are
computed ahead by a worker thread while the page is read (``panel._Panel``,
:mod:`agentloops.controller.teaching.prewarm`). Each chart is a live figure from
:mod:`agentloops.controller.teaching.plots` whose artists are moved in place and shown at the PNG's own
pixel size. (The interview practice box lives in
:func:`agentloops.interview.practice`.)

Executed headless (nbclient, CI, a static viewer) a widget has no front end;
its ``text/plain`` rendering is then the current state as text tables, so an
executed notebook still reads — the same contract as :mod:`agentloops.widgets`.

The controller explorer's controls carry stable CSS classes
(``agentloops-ctl-scenario``, ``-policy``, ``-fault``, ``-status``, ``-table``,
``-chart``, and ``agentloops-ctl-budget-<name>`` for each budget slider) so an
app page can be driven from a real browser.

Labels, menus, tables and status lines speak the language in use
(:mod:`agentloops.i18n`), read when a widget is built and when it redraws;
the values behind the controls (scenario, policy and fault names, the
budget names), the runs' records and the trace lines stay English.

The small experiments behind the widgets (:func:`inject`,
:func:`claim_counts`, :func:`storm_runs`, :func:`budget_comparison`,
:func:`parallel_run`, :func:`context_run`) are plain functions too: a
notebook cell can call them without a widget.

One module per widget family: ``panel`` (what every widget shares), ``faults`` (the faults a widget can
inject), ``explorer`` (the controller explorer), then one per notebook: ``state`` (10), ``claims`` (11),
``storm`` (12), ``budgets`` (13), ``replays`` (14), ``parallel`` (15), ``context`` (16).
"""

from __future__ import annotations

from collections.abc import Callable

from agentloops.controller.teaching.widgets.budgets import (
    BudgetExplorer,
    BudgetState,
    budget_comparison,
    budget_explorer,
)
from agentloops.controller.teaching.widgets.claims import (
    CLAIM_HEADERS,
    ClaimsExplorer,
    ClaimsState,
    claim_counts,
    claims_explorer,
)
from agentloops.controller.teaching.widgets.context import (
    CONTEXT_HEADERS,
    RESEARCH_BUDGET,
    ContextExplorer,
    ContextState,
    context_explorer,
    context_run,
)
from agentloops.controller.teaching.widgets.explorer import (
    SCENARIO_POLICY,
    SLIDER_BUDGETS,
    ControllerExplorer,
    ControllerExplorerState,
    controller_explorer,
)
from agentloops.controller.teaching.widgets.faults import (
    FAULT_CHOICES,
    OUR_FAULTS,
    SIX_FAULTS,
    FaultChoice,
    fault_target,
    inject,
)
from agentloops.controller.teaching.widgets.panel import (
    PREFIX,
    TURN_HEADERS,
    _Panel,
    route_row,
    routes,
    stop_html,
    stop_text,
    turn_rows,
    turns_html,
    turns_text,
)
from agentloops.controller.teaching.widgets.parallel import (
    CALL_HEADERS,
    ParallelExplorer,
    ParallelState,
    calls_text,
    parallel_explorer,
    parallel_run,
)
from agentloops.controller.teaching.widgets.replays import (
    ReplayExplorer,
    ReplayState,
    replay_explorer,
)
from agentloops.controller.teaching.widgets.state import (
    CITY_ORDER,
    StateExplorer,
    StateExplorerState,
    state_explorer,
    state_run,
)
from agentloops.controller.teaching.widgets.storm import (
    STORM_HEADERS,
    STORM_LABELS,
    StormExplorer,
    StormState,
    fallback_chain,
    storm_explorer,
    storm_rows,
    storm_runs,
)

BUILDERS: dict[str, Callable[[], _Panel]] = {  # every one has a live chart, at .chart and ._chart
    "controller_explorer": controller_explorer,
    "state_explorer": state_explorer,
    "claims_explorer": claims_explorer,
    "storm_explorer": storm_explorer,
    "budget_explorer": budget_explorer,
    "replay_explorer": replay_explorer,
    "parallel_explorer": parallel_explorer,
    "context_explorer": context_explorer,
}
"""Every widget builder by name (tests and the benchmark iterate over them)."""

__all__ = [
    "BUILDERS",
    "CALL_HEADERS",
    "CITY_ORDER",
    "CLAIM_HEADERS",
    "CONTEXT_HEADERS",
    "FAULT_CHOICES",
    "OUR_FAULTS",
    "PREFIX",
    "RESEARCH_BUDGET",
    "SCENARIO_POLICY",
    "SIX_FAULTS",
    "SLIDER_BUDGETS",
    "STORM_HEADERS",
    "STORM_LABELS",
    "TURN_HEADERS",
    "BudgetExplorer",
    "BudgetState",
    "ClaimsExplorer",
    "ClaimsState",
    "ContextExplorer",
    "ContextState",
    "ControllerExplorer",
    "ControllerExplorerState",
    "FaultChoice",
    "ParallelExplorer",
    "ParallelState",
    "ReplayExplorer",
    "ReplayState",
    "StateExplorer",
    "StateExplorerState",
    "StormExplorer",
    "StormState",
    "budget_comparison",
    "budget_explorer",
    "calls_text",
    "claim_counts",
    "claims_explorer",
    "context_explorer",
    "context_run",
    "controller_explorer",
    "fallback_chain",
    "fault_target",
    "inject",
    "parallel_explorer",
    "parallel_run",
    "replay_explorer",
    "route_row",
    "routes",
    "state_explorer",
    "state_run",
    "stop_html",
    "stop_text",
    "storm_explorer",
    "storm_rows",
    "storm_runs",
    "turn_rows",
    "turns_html",
    "turns_text",
]
