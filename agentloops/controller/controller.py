"""The controller: a tool-calling loop that knows what is done, what is missing, and when to stop.

:class:`Controller` is a thin shell: it owns one :class:`~agentloops.controller.engine.Run` (what
the run remembers) and calls the turn (:func:`~agentloops.controller.turn.play`) until one returns
a stop, then :func:`~agentloops.controller.turn.finish`. The turn's stages are plain functions over
that value — :mod:`~agentloops.controller.turn` (prepare, ask, classify, the next step) and
:mod:`~agentloops.controller.calls` (admit, execute, settle, apply: one path for one call or many).

A run that pauses or hands off is captured as one versioned value
(:meth:`Controller.capture` → :class:`~agentloops.controller.persistence.run_state.RunState`), and
:meth:`Controller.from_state` rebuilds a controller from it: that is how a resume continues.
Nothing here raises for a run that ends badly — a model or provider that
raises included: every ending is a :class:`~agentloops.controller.stopping.status.Stop`.
Only a simulated kill (:class:`~agentloops.controller.vocabulary.errors.ProcessKilled`)
escapes, to prove that the trace survives it.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import astuple, fields, replace
from pathlib import Path
from typing import Any

from agentloops.controller.engine import (
    DEFAULT_MODEL_LATENCY_S,
    Controls,
    Executor,
    Run,
    Turn,
    new_run,
    start_line,
)
from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.persistence.run_state import RUN_STATE_SCHEMA, RunState
from agentloops.controller.persistence.trace import TraceWriter, TurnRecord
from agentloops.controller.persistence.trace_lines import TaskRef
from agentloops.controller.policy.budgets import Budget, BudgetMeter
from agentloops.controller.policy.error_policy import PolicyLike
from agentloops.controller.sim.faults import FaultLike
from agentloops.controller.stages import Stages
from agentloops.controller.stopping.status import Stop
from agentloops.controller.task.context import Compactor, ContextPolicy
from agentloops.controller.task.state import STATE_JSON
from agentloops.controller.task.tasks import Task, make_task
from agentloops.controller.turn import finish, play
from agentloops.controller.vocabulary.errors import ConfigError, StageError
from agentloops.controller.vocabulary.ledger import Call, CallRecord
from agentloops.controller.vocabulary.tools import Toolbox
from agentloops.i18n import N_
from agentloops.stubs import Model
from agentloops.tokens import Tokenizer, estimate_tokens


class Controller:
    """A stop controller around a model and a task.

    Args:
        task: what to do (type, parameters, budget).
        model: any callable from messages to a :class:`~agentloops.response.Response`
            (a :class:`~agentloops.controller.sim.planners.TaskPlanner`, a ``ScriptedModel``…).
        tools: the toolbox (default: the task type's stub tools).
        policy: the error policy (a value, a shipped name, or a dict of fields).
        budget: the budgets (default: the task's).
        faults: declared faults to inject into the stub tools.
        context: how the context is kept small.
        compactor: writes the memory that replaces older turns (default: from state).
        send_state: append the ``TASK STATE`` block to every request.
        controls: outside signals (cancellation).
        trace: a JSON Lines file to write, line by line, as the run goes.
        trace_id: the run's id (default: :func:`new_trace_id`, random; pass ``new_trace_id(seed)``
            for a reproducible one).
        label: a name for tables (the scenario name).
        model_latency_s: simulated seconds per model call.
        tokenizer: counts tokens for context size and the token budget.
        scenario: the scenario's JSON, written into the trace so replay can rebuild the model.
        executor: runs tool attempts (default: the stub tools with the declared faults).
        stages: your own completion, route, budget or repeat stage in place of the package's
            (:class:`~agentloops.controller.stages.Stages`).
    """

    def __init__(self, task: Task, model: Model, *, tools: Toolbox | None = None, policy: PolicyLike | None = None,
                 budget: Budget | None = None, faults: Sequence[FaultLike] = (), context: ContextPolicy | None = None,
                 compactor: Compactor | None = None, send_state: bool = True, controls: Controls | None = None,
                 trace: str | Path | None = None, trace_id: str | None = None, label: str = N_("custom"),
                 model_latency_s: float = DEFAULT_MODEL_LATENCY_S, tokenizer: Tokenizer = estimate_tokens,
                 scenario: Mapping[str, Any] | None = None, executor: Executor | None = None,
                 stages: Stages | None = None) -> None:
        self.current: Run = new_run(
            task, model, tools=tools, policy=policy, budget=budget, faults=faults, context=context,
            compactor=compactor, send_state=send_state, controls=controls, trace=trace, trace_id=trace_id,
            label=label, model_latency_s=model_latency_s, tokenizer=tokenizer, scenario=scenario, executor=executor,
            stages=stages)
        """What the run remembers; every stage of a turn takes it (:mod:`~agentloops.controller.turn`)."""

    def __getattr__(self, name: str) -> Any:
        """The run's parts read through the shell (``controller.state``, ``controller.sink``…)."""
        if name == "current":
            raise AttributeError(name)
        return getattr(self.current, name)

    def run(self) -> ControllerRun:
        """Run until a stop; returns the result (a killed run raises and leaves its trace on disk)."""
        run = self.current
        if run.stop is not None:
            raise ConfigError("this controller has already run; build a new one (or resume a saved run)")
        if run.trace_path is not None:
            run.sink.writer = TraceWriter(run.trace_path, append=False)
        run.sink.write(start_line(run))  # written now when a file is open, else a dict when read
        return self._drive()

    def _drive(self) -> ControllerRun:
        """Turns until one stops, then the stop; the trace file is closed whatever happens."""
        run = self.current
        try:
            stop = play(run)
            while stop is None:
                stop = play(run)
            stop = finish(run, stop)
        except StageError as error:  # a replaced stage failed: one error naming it, not the engine's frames
            raise error.with_traceback(None) from None
        finally:
            run.sink.close()
        return self._result(stop)

    def _result(self, stop: Stop) -> ControllerRun:
        run = self.current
        state = self.capture(stop) if stop.status in ("waiting_for_user", "handed_off") else None
        return ControllerRun(
            label=run.label, trace_id=run.trace_id, task=run.task, policy=run.policy, stop=stop,
            records=_Records(run), events=tuple(run.ledger.events), compactions=tuple(run.compactions),
            usage=run.meter.usage(), within_budget=run.meter.within_limits(), trace_path=run.trace_path,
            run_state=state, resumed_at_turn=run.resumed_at_turn, toolbox=run.toolbox, stored=dict(run.store.items))

    def capture(self, stop: Stop) -> RunState:
        """The run as one versioned value: what a paused task needs to continue (``waiting_for_user``),
        or what a person takes over (``handed_off``); its stop record is the trace's stop line."""
        run = self.current
        paused = STATE_JSON.validate_python({**STATE_JSON.dump_python(run.state, mode="json"), "finished": None})
        return RunState.model_validate({  # the run's own parts, then the ones saved in another shape
            **{name: getattr(run, name) for name in _AS_IS}, "state": paused,  # paused, not finished: a resume
            "schema_version": RUN_STATE_SCHEMA, "status": stop.status, "question": stop.question,  # continues it
            "parameter": (run.state.waiting_for or {}).get("input"), "task": TaskRef(**run.task.spec()),
            "faults": run.injector.faults, "injector": run.injector.seen, "meter": run.meter.state(),
            "clock": run.meter.now, "paused_at_version": run.state.version, "repairs_used": sum(run.repairs.values()),
            "model_calls": int(run.meter.used["model_calls"]), "turns": turn_records(run),
            "calls": run.ledger.records(), "store": run.store.items, "pause_id": uuid.uuid4().hex[:12],
            "trace_path": str(run.trace_path) if run.trace_path else None, "trace_lines": run.sink.lines,
            "stop": stop.system_record()})

    @classmethod
    def from_state(cls, state: RunState, *, model: Model, tools: Toolbox | None = None,
                   executor: Executor | None = None, source: str = "saved run", stages: Stages | None = None
                   ) -> Controller:
        """A controller in exactly the state ``state`` holds: budgets, clock, state, transcript, monitor, ledger.

        Args:
            state: a run state (``run.run_state``, or :func:`~agentloops.controller.persistence.saved.load_state`).
            model: the model to continue with (:func:`~agentloops.controller.running.resuming.resume`
                rebuilds a scenario's stub model past the calls made).
            tools: the toolbox (default: the task's).
            executor: runs tool attempts (default: the stub tools with the saved faults).
            source: names the state in error messages.
            stages: replaced stages to continue with (they are not saved with the run).
        """
        task = saved_task(state, source)
        c = cls(task, model, tools=tools, policy=state.policy, budget=task.budget, faults=state.faults,
                context=state.context, send_state=state.send_state, trace=None, trace_id=state.trace_id,
                label=state.label, model_latency_s=state.model_latency_s, scenario=state.scenario, executor=executor,
                stages=stages)
        c._restore(state.to_saved())
        return c

    def _restore(self, data: dict[str, Any]) -> None:
        """Set every counter and record from a run state's JSON view (the inverse of :meth:`capture`): read
        back from JSON, the records are the run's own and share nothing with the state they came from."""
        run, saved = self.current, RunState.model_validate(data)
        for name in _AS_IS:
            setattr(run, name, getattr(saved, name))
        run.monitor.repeat = run.stages.repeat  # (a stage is not saved: the resume passes it again)
        run.injector.seen, run.turns = Counter(saved.injector), list(saved.turns)
        run.meter = BudgetMeter(run.budget, run.policy.retry_scope, now=saved.clock, **saved.meter,
                                check=run.stages.budget_check)
        run.store.items.update(saved.store)
        run.resumed_at_turn = run.turn + 1
        for call in saved.calls:
            run.ledger.calls[call.call_id] = Call(*astuple(call))
            if call.state in ("succeeded", "failed"):
                run.ledger.applied.add(call.call_id)


_SAVED_OTHERWISE = ("task", "injector", "meter", "turns", "store", "trace_path", "stop")
"""Run attributes whose run-state field of the same name holds them in another shape (converted both ways)."""

_AS_IS = tuple(name for name in RunState.model_fields
               if name in {f.name for f in fields(Run)} and name not in _SAVED_OTHERWISE)
"""The run-state fields that are the run's own attributes, saved and set back as they are."""


def run_controller(task: Task, model: Model, **kwargs: Any) -> ControllerRun:
    """Build a :class:`Controller` and run it (a convenience for notebooks)."""
    return Controller(task, model, **kwargs).run()


class _Records:
    """A finished run's turns, calls and trace lines, made into records when the result is read."""

    def __init__(self, run: Run) -> None:
        self.run = run

    def turns(self) -> tuple[TurnRecord, ...]:
        return turn_records(self.run)

    def calls(self) -> tuple[CallRecord, ...]:
        return self.run.ledger.records()

    def lines(self) -> tuple[dict[str, Any], ...]:
        return tuple(self.run.sink.lines)


def turn_records(run: Run) -> tuple[TurnRecord, ...]:
    """Every turn of the run as a frozen record (a turn kept as values is frozen here, once)."""
    return tuple(t.record() if isinstance(t, Turn) else t for t in run.turns)


def saved_task(state: RunState, source: str = "saved run") -> Task:
    """The task a saved run was working on, with the budget it ran under."""
    return replace(make_task(state.task.type, state.task.params, source=f"{source}: task"), budget=state.budget)
