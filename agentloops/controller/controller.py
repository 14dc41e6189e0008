"""The controller: a tool-calling loop that knows what is done, what is missing, and when to stop.

:class:`Controller` runs turns until one returns a stop. A turn is a pipeline, one module per stage:

1. :mod:`~agentloops.controller.turn` — stops that need no model call (cancel, idle turns, no
   step left), the request (goal or a checked memory, recent turns, the ``TASK STATE`` block),
   the budget checks before and after the model call, and the reply classified by the core
   ``correct`` criterion; a reply without tool calls is a *claim*, checked against the task's
   completion condition and, on success, against the facts (:mod:`~agentloops.controller.answers`);
2. :mod:`~agentloops.controller.batch` — one path for one call or many: admit each, launch,
   join, settle, apply to state; :mod:`~agentloops.controller.call` — one call's verdict before
   it runs, then its attempts (retries and fallbacks), the same alone or in a batch;
3. back here: progress (idle turns, consecutive failures) and the next step
   (:meth:`~agentloops.controller.turn.TurnPipeline._next_step`), the turn record, the trace line.

The state all stages share lives in one object (:class:`~agentloops.controller.engine.Engine`).
A run that pauses or hands off is captured as one versioned value
(:meth:`Controller.capture` → :class:`~agentloops.controller.run_state.RunState`), and
:meth:`Controller.from_state` rebuilds a controller from it: that is how a resume continues.
Nothing here raises for a run that ends badly — a model or provider that
raises included: every ending is a :class:`~agentloops.controller.status.Stop`.
Only a simulated kill (:class:`~agentloops.controller.errors.ProcessKilled`)
escapes, to prove that the trace survives it.
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import replace
from typing import Any

from agentloops.controller.budgets import BudgetMeter
from agentloops.controller.engine import Executor, _Turn
from agentloops.controller.errors import ConfigError
from agentloops.controller.parallel import ARRIVAL_ORDER, Call
from agentloops.controller.progress import ProgressMonitor
from agentloops.controller.result import ControllerRun
from agentloops.controller.run_state import RUN_STATE_SCHEMA, RunState
from agentloops.controller.saved import message_from_dict, message_to_dict
from agentloops.controller.state import TaskState
from agentloops.controller.status import Stop
from agentloops.controller.tasks import Task, make_task
from agentloops.controller.tools import Toolbox
from agentloops.controller.trace import TurnRecord
from agentloops.controller.turn import TurnPipeline
from agentloops.stubs import Model


class Controller(TurnPipeline):
    """A stop controller around a model and a task.

    Args:
        task: what to do (type, parameters, budget).
        model: any callable from messages to a :class:`~agentloops.response.Response`
            (a :class:`~agentloops.controller.planners.TaskPlanner`, a ``ScriptedModel``…).
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
    """

    def run(self) -> ControllerRun:
        """Run until a stop; returns the result (a killed run raises and leaves its trace on disk)."""
        if self._stop is not None:
            raise ConfigError("this controller has already run; build a new one (or resume a saved run)")
        self._open_trace(append=False)
        self.sink.write(self._start_line())
        return self._drive()

    def _drive(self) -> ControllerRun:
        try:
            stop = self._loop()
        finally:
            self.sink.close()
        return self._result(stop)

    def _loop(self) -> Stop:
        while True:
            self.turn += 1
            state = self.state
            open_items = state.open_items()
            goal = f"waiting for {state.waiting_for['input']}" if state.waiting_for else \
                open_items[0] if open_items and self.task.assess(state) != "complete" else "final answer"
            t = _Turn(self.turn, state.version, goal)
            self.state.begin_turn()
            if self.inbox:  # results still on their way from an earlier turn
                self._deliver_due()
            stop = self._turn(t)
            delta = self.state.end_turn()
            progress = delta.progress
            if stop is None:  # next: progress, and whether the task can still be finished
                self.monitor.end_turn(progress)
                self.consecutive_failures = self.consecutive_failures + 1 if t.failed and not progress else 0
                stop = self._next_step()
            t.decision = f"stop:{stop.status} ({stop.code})" if stop is not None else t.decision
            record = TurnRecord(
                trace_id=self.trace_id, turn=t.turn, at_s=self.clock.now, state_version=t.state_version,
                pending_goal=t.pending_goal, action=t.action, args_summary=t.args_summary, tool_status=t.tool_status,
                observation=t.observation, state_delta=delta.to_dict(), budget_left=self.meter.left(),
                decision=t.decision, context_tokens=t.context_tokens, open_items=tuple(self.state.open_items()),
                missing_items=tuple(self.state.missing_items()), progress=progress, actions=tuple(t.actions),
                response=t.response, compaction=t.compaction)
            self.turn_records.append(record)
            self.sink.write(record)  # a dict only when read, or at once when a file is open
            if stop is not None:
                return self._finish(stop)

    def _finish(self, stop: Stop) -> Stop:
        """Freeze the task, write the stop line, then let results still on their way arrive — late.

        Late deliveries are written *after* the stop line, in the order they land: they are part
        of the record, and the closed ledger and the frozen state make sure they change nothing.
        """
        self.ledger.cancel_running(self.clock.now, f"cancelled: the task stopped ({stop.status})")
        self._deliver_due()  # results that landed during the last turn, before the stop
        self.state.finish(stop.status)
        self.ledger.close()
        stop = replace(stop, state=self.state.snapshot())
        self._stop = stop
        self.sink.write({"kind": "stop", "trace_id": self.trace_id, "record": stop.system_record()})
        for arrival in sorted(self.inbox, key=ARRIVAL_ORDER):
            self._deliver(arrival)  # late results: written to the trace, refused by the closed ledger
        self.inbox = []
        return stop

    def _result(self, stop: Stop) -> ControllerRun:
        state = self.capture(stop) if stop.status in ("waiting_for_user", "handed_off") else None
        return ControllerRun(
            label=self.label, trace_id=self.trace_id, task=self.task, policy=self.policy, stop=stop,
            turns=tuple(self.turn_records), calls=self.ledger.records(), events=tuple(self.ledger.events),
            compactions=tuple(self.compactions), usage=self.meter.usage(), within_budget=self.meter.within_limits(),
            trace_lines=tuple(self.sink.lines), trace_path=self.trace_path, run_state=state,
            resumed_at_turn=self.resumed_at_turn, toolbox=self.toolbox, stored=dict(self.store.items))

    def capture(self, stop: Stop) -> RunState:
        """The run as one versioned value: what a paused task needs to continue (``waiting_for_user``),
        or what a person takes over (``handed_off``); its stop record is the trace's stop line."""
        snapshot = dict(self.state.snapshot())
        snapshot["finished"] = None  # paused, not finished: a resume continues it (once; see saved.py)
        return RunState.model_validate({
            "schema_version": RUN_STATE_SCHEMA, "trace_id": self.trace_id, "label": self.label,
            "status": stop.status, "question": stop.question,
            "parameter": (self.state.waiting_for or {}).get("input"), "task": self.task.spec(),
            "budget": self.budget, "policy": self.policy, "context": self.context,
            "send_state": self.send_state, "model_latency_s": self.model_latency_s, "scenario": self.scenario,
            "faults": self.injector.faults, "injector": self.injector.state(),
            "state": snapshot, "meter": self.meter.state(), "clock": self.clock.now, "turn": self.turn,
            "paused_at_version": self.state.version,
            "head": [message_to_dict(m) for m in self.head],
            "groups": [[message_to_dict(m) for m in g] for g in self.groups],
            "monitor": self.monitor.state(), "repairs_used": sum(self.repairs.values()), "repairs": dict(self.repairs),
            "claims_rejected": self.claims_rejected, "consecutive_failures": self.consecutive_failures,
            "call_counter": self.call_counter, "failed_calls": [list(k) for k in sorted(self.failed_calls)],
            "model_calls": int(self.meter.used["model_calls"]), "turns": [r.to_dict() for r in self.turn_records],
            "calls": [c.to_dict() for c in self.ledger.records()], "store": dict(self.store.items),
            "trace_path": str(self.trace_path) if self.trace_path else None, "pause_id": uuid.uuid4().hex[:12],
            "trace_lines": [*self.sink.lines], "stop": stop.system_record(),
        })

    @classmethod
    def from_state(cls, state: RunState, *, model: Model | None = None, tools: Toolbox | None = None,
                   executor: Executor | None = None, source: str = "saved run") -> Controller:
        """A controller in exactly the state ``state`` holds: budgets, clock, state, transcript, monitor, ledger.

        Args:
            state: a run state (``run.run_state``, or :func:`~agentloops.controller.saved.load_state`).
            model: the model to continue with (default: rebuilt from the scenario, past the calls made).
            tools: the toolbox (default: the task's).
            executor: runs tool attempts (default: the stub tools with the saved faults).
            source: names the state in error messages.

        Raises:
            ConfigError: no model given and the state did not come from a scenario.
        """
        task = replace(make_task(state.task.type, state.task.params, source=f"{source}: task"), budget=state.budget)
        if model is None:
            if state.scenario is None:
                raise ConfigError(f"{source}: this saved run did not come from a scenario; pass model= to resume it")
            from agentloops.controller.scenarios import build_model, scenario_from_dict

            model = build_model(scenario_from_dict(state.scenario, f"{source}: scenario"), task, skip=state.model_calls)
        c = cls(task, model, tools=tools, policy=state.policy, budget=task.budget, faults=state.faults,
                context=state.context, send_state=state.send_state, trace=None, trace_id=state.trace_id,
                label=state.label, model_latency_s=state.model_latency_s, scenario=state.scenario, executor=executor)
        c._restore(state.to_saved())
        return c

    def _restore(self, data: dict[str, Any]) -> None:
        """Set every counter and record from a run state's JSON view (the inverse of :meth:`capture`)."""
        self.injector.restore(data["injector"])
        self.state = TaskState.from_snapshot(data["state"])
        self.clock.now = float(data["clock"])
        meter = data["meter"]
        self.meter = BudgetMeter(self.budget, self.clock, self.policy.retry_scope, used=meter["used"],
                                 retries_by_tool=meter["retries_by_tool"], started_at=meter["started_at"])
        self.turn = int(data["turn"])
        self.head = [message_from_dict(m) for m in data["head"]]
        self.groups = [[message_from_dict(m) for m in g] for g in data["groups"]]
        self.monitor = ProgressMonitor.from_state(data["monitor"])
        self.repairs = Counter({str(k): int(v) for k, v in data["repairs"].items()})
        self.claims_rejected = int(data["claims_rejected"])
        self.consecutive_failures = int(data["consecutive_failures"])
        self.call_counter = int(data["call_counter"])
        self.failed_calls = {(str(k[0]), str(k[1])) for k in data["failed_calls"]}
        self.store.items.update(data["store"])
        self.turn_records = [_turn_from_dict(t) for t in data["turns"]]
        self.resumed_at_turn = self.turn + 1
        for call in data["calls"]:
            self.ledger.calls[call["call_id"]] = Call(**call)
            if call["state"] in ("succeeded", "failed"):
                self.ledger.applied.add(call["call_id"])


def run_controller(task: Task, model: Model, **kwargs: Any) -> ControllerRun:
    """Build a :class:`Controller` and run it (a convenience for notebooks)."""
    return Controller(task, model, **kwargs).run()


def _turn_from_dict(data: dict[str, Any]) -> TurnRecord:
    fields = {k: v for k, v in data.items() if k != "kind"}
    for name in ("open_items", "missing_items", "actions"):
        fields[name] = tuple(fields.get(name, ()))
    return TurnRecord(**fields)
