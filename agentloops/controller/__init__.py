"""agentloops.controller — a production stop controller for tool-calling loops.

A step cap is a fuse. This subpackage is the system that converges and stops
for the right reason: it keeps task state outside the transcript, checks each
task type's business completion condition, routes every tool error by its
meaning, spends seven budgets (one retry budget shared by all tools), detects
repeated actions before the cap, ends in one of nine stop statuses rendered
for the user and for the system, writes a JSON Lines trace as it goes, and can
replay a trace under another policy and diff the trajectories.

    >>> from agentloops.controller import run_scenario
    >>> run = run_scenario("weather-timeout-once")
    >>> run.status
    'succeeded'
    >>> run.actions[1:]
    ['get_weather(city=Beijing)', 'retry:get_weather(city=Beijing)', 'answer']

The six pieces of evidence an interviewer asks for are one call each:
:func:`completion_conditions`, :func:`budget_basis`, :func:`stop_statuses`,
:func:`repeated_call_trace`, :func:`error_routing`, :func:`fault_regression`
(and ``agentloops controller evidence`` lists the CLI commands).

**One turn, on a whiteboard.** A run is one value, :class:`~agentloops.controller.engine.Run`
(task state, meter and clock, progress monitor, call ledger, transcript, trace); a turn is a
handful of plain functions over it. A turn speaks two decision types: a stage's outcome is
``Stop | None`` (``None`` goes on, a ``Stop`` ends the run), and one tool result gets a route
(accept, retry, fall back, degrade, repair, return to the model, ask the user, stop)::

    turn.play(run) -> Stop | None                                              (turn.py)     the layer it asks
      turn(run, t)             -> Stop | None
        cancel? idle turns? a step and a model call left?                       sim.timeline, stopping, policy
        prepare_request(run, t)  -> (Message, …)      goal or checked memory, recent turns, TASK STATE  task
        ask(run, t, request)     -> Response | Stop   budgets checked before the call, reply metered     policy
        abnormal_end(reply), inline                   the core's reading of how the reply ended: an abnormal end stops
        no tool calls → on_final: the completion condition, the answer against the facts              task
        ask_user      → on_ask:   waiting_for_user                                                    task
        tool calls    → calls.run_calls(run, t, calls) -> Stop | None    (calls.py, attempts.py)
            plan each call once       -> Attempt (tool, args, normalised text, label, task item)      tools, task
            admit each Attempt        -> None (run it) | a route (answered, not run) | Stop           stopping, tools
            launch, join (ledger)     -> the attempts run, their results in arrival order             task.joins
            settle each result        -> next_attempt(run, use) -> Attempt: routed; a retry or a      policy
                                         fallback is launched and joined as a first attempt is
            apply to state            -> a fact, an item given up, a question, or a Stop              task
      then: nothing left to try? too many failed turns?                                               task, stopping
    turn.finish(run, stop) -> Stop                  freeze the task, the stop line, late results

**Six stages are yours to replace.** The completion condition, the state update from a result, the route
of a tool result, the budget check before a spend, the repeat check and the join of parallel calls are plain
functions; pass your own of the same shape — ``run_scenario("weather-early-claim", completion=my_check)``
(or ``update=``, ``route=``, ``budget_check=``, ``repeat=``, ``join=``) — and it runs inside this controller
in place of the package's (:mod:`.stages`)::

    >>> run_scenario("weather-early-claim", completion=lambda items, facts, need: "complete").status
    'succeeded'

**The folder is the architecture**, bottom to top. :mod:`.vocabulary` holds the words every layer uses
(tool specs and results, the call ledger and its records, the errors, table rendering). The three
layers a turn calls into sit on it: :mod:`.task` (task & state: items, facts, completion conditions,
join rules), :mod:`.policy` (budgets & error policy) and :mod:`.stopping` (progress & stopping:
fingerprints, statuses). :mod:`.persistence` (trace lines, saved runs, results) and :mod:`.sim` (the
simulated world: injected faults, stub models, scenario files) read and write runs without the engine.
The engine (one run, one turn) is the top level: ``controller``, ``engine``, ``turn``, ``calls``,
``attempts``, ``stages``. :mod:`.running` drives it — run a scenario, resume a saved run,
replay a trace — and :mod:`.teaching` (widgets, plots, evidence, experiments, the CLI) stays apart,
never imported by the engine.
:class:`Controller` is the thin shell that owns a ``Run`` and calls the turn until it stops.

Importing it is cheap: each public name loads its module on first use, and
pandas is imported only by the ``to_frame`` methods that need it. Each public
name is listed once, below, under the module that defines it.
"""

from __future__ import annotations

import importlib
from typing import Any

_MODULES: dict[str, tuple[str, ...]] = {
    "controller": ("Controller", "run_controller"),
    "engine": ("new_trace_id",),
    "sim.timeline": ("Controls",),
    "vocabulary.errors": ("ConfigError", "ControllerScenarioError", "ControllerScenarioNotFound",
                          "ControllerUsageError", "ProcessKilled", "StageError", "TaskFinishedError", "TraceError"),
    "vocabulary.ledger": ("CALL_STATES", "CallRecord", "Ledger"),
    "vocabulary.render": ("Table",),
    "stages": ("ASSESSMENTS", "Stages"),
    "vocabulary.tools": ("TOOL_STATUSES", "Param", "ToolResult", "ToolSpec", "ToolStatus", "Toolbox"),
    "running.replaying": ("Regression", "Replay", "TraceDiff", "diff_traces", "regression", "replay"),
    "persistence.result": ("ControllerRun",),
    "running.resuming": ("resume",),
    "persistence.run_state": ("RunState",),
    "persistence.trace": ("Trace", "TraceWriter", "TurnRecord", "read_trace"),
    "policy.budgets": ("BUDGET_NAMES", "Budget", "BudgetMeter", "Limit"),
    "policy.error_policy": ("DEFAULT_POLICY", "DEGRADE_POLICY", "NAIVE_POLICY", "POLICIES", "ErrorPolicy",
                            "RouteContext", "resolve_policy", "route", "routing_table"),
    "sim.faults": ("FAULT_KINDS", "Fault", "FaultInjector"),
    "sim.planners": ("TaskPlanner",),
    "sim.scenario_files": ("ControllerScenario", "controller_scenario_names", "list_controller_scenarios",
                           "load_controller_scenario"),
    "running.scenarios": ("check_scenario", "run_scenario", "scenario_table"),
    "stopping.progress": ("Fingerprint", "ProgressMonitor", "fingerprint", "normalize_args"),
    "stopping.status": ("STATUS_DEFINITIONS", "STOP_STATUSES", "Stop", "StopStatus", "status_table"),
    "task.joins": ("JoinRule",),
    "task.context": ("CompactionCheck", "ContextPolicy", "ContextStore", "careless_compactor", "check_compaction",
                     "memory_from_state"),
    "task.state": ("Fact", "StateDelta", "TaskState"),
    "task.task_types": ("TaskType",),
    "task.tasks": ("TASK_TYPES", "Task", "completion_table", "make_task"),
    "teaching.evidence": ("budget_basis", "completion_conditions", "error_routing", "evidence_index",
                          "fault_regression", "happy_path", "repeated_call_trace", "stop_statuses"),
    "teaching.experiments": ("LoopComparison", "RandomCase", "compare_loops", "random_case", "random_runs",
                             "run_cap_only"),
}
"""Module (dotted, under ``agentloops.controller``) → the names it defines that this package resolves lazily."""

_EXPORTS: dict[str, str] = {name: module for module, names in _MODULES.items() for name in names}
"""Name → its module. Names load on first use (PEP 562), so ``agentloops controller …`` and the
core command start without importing the whole controller."""

PUBLIC: tuple[str, ...] = (
    # run it, and read the result
    "run_scenario", "Controller", "ControllerRun", "Controls", "resume",
    # the three layers: task & state, budgets & error policy, progress & stopping; the stages you can replace
    "Stages", "make_task", "TaskType", "Budget", "ErrorPolicy", "Fault", "Stop", "STOP_STATUSES",
    # a stub model, traces and replay
    "TaskPlanner", "read_trace", "replay",
    # the six pieces of evidence
    "completion_conditions", "budget_basis", "stop_statuses", "repeated_call_trace", "error_routing",
    "fault_regression",
)
"""The surface to hold in one's head: about twenty names. Everything else in :data:`_MODULES` still
resolves here (for code written against the earlier, wider surface) but is not part of ``__all__``:
import it from its module (``from agentloops.controller.stopping.progress import fingerprint``)."""

__all__ = sorted(PUBLIC, key=lambda name: (not name.isupper(), name))


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentloops.controller' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"agentloops.controller.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
