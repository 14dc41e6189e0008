"""Resume: continue a task that stopped as ``waiting_for_user``, from its saved state — once."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentloops.controller.budgets import Budget, BudgetMeter
from agentloops.controller.context import (
    ContextPolicy,
)
from agentloops.controller.controller import Controller
from agentloops.controller.engine import Executor
from agentloops.controller.errors import ConfigError
from agentloops.controller.planners import USER_ANSWER_PREFIX
from agentloops.controller.progress import (
    ProgressMonitor,
)
from agentloops.controller.result import ControllerRun
from agentloops.controller.state import TaskState
from agentloops.controller.tools import (
    Toolbox,
)
from agentloops.controller.trace import TraceWriter, TurnRecord
from agentloops.messages import Message
from agentloops.stubs import Model

if TYPE_CHECKING:
    from agentloops.controller.saved import PauseStore


def resume(saved: Mapping[str, Any] | str | Path, answer: str, *, model: Model | None = None,
           trace: str | Path | None = None, tools: Toolbox | None = None,
           executor: Executor | None = None, store: PauseStore | None = None) -> ControllerRun:
    """Continue a task that stopped as ``waiting_for_user`` with the user's answer — once.

    Budgets, clock, state, fingerprints, fault counters and the outputs stored
    outside the context continue from where they were: waiting did not spend
    anything, and answering does not reset anything. The answer becomes a user
    input in state (version + 1) and a ``USER ANSWER`` message in the transcript.
    (A ``handed_off`` run also has saved state, but it is the package a person
    takes over; it cannot be resumed here.)

    Resuming is idempotent: a pause is identified by (trace id, the state version
    it paused at); a second resume of the same pause — seen in the pause store
    (:class:`~agentloops.controller.saved.PauseStore`, which a redelivered *copy*
    cannot dodge) or in the trace (a ``resume`` line or a later turn) — is refused,
    so one task never stops twice under one trace id. The resumed run's in-memory
    trace is the whole trace: the file's lines (or the saved ones) and the new ones.

    Args:
        saved: ``run.saved``, or a path to a file written by :meth:`ControllerRun.save`.
        answer: the user's reply.
        model: the model to continue with (default: rebuilt from the scenario, if the run came from one).
        trace: the trace file to append to (default: the original one, if any).
        tools: the toolbox (default: the task's; :meth:`ControllerRun.resume` passes the run's own).
        executor: runs tool attempts (default: the stub tools with the saved faults; replay passes
            the recorded results).
        store: where pauses are claimed (default: the process-wide :data:`~agentloops.controller.saved.RESUMED`).

    Raises:
        ConfigError: the saved run is malformed, is not waiting, or was already resumed (one line).
    """
    from agentloops.controller.saved import RESUMED, check_not_resumed, load_saved, trace_beside

    data = load_saved(saved)
    source = str(saved) if isinstance(saved, (str, Path)) else "saved run"
    if trace is not None:
        trace_path: str | Path | None = trace
    elif isinstance(saved, (str, Path)):  # a file: it may only point beside itself
        trace_path = trace_beside(Path(saved), data.get("trace_path"))
    else:
        trace_path = data.get("trace_path")
    check_not_resumed(data, source, trace_path)
    controller = _rebuild(data, source, model, tools, executor)
    controller.trace_path = Path(trace_path) if trace_path else None
    (store or RESUMED).claim(data, source)  # before anything is written: a refused resume leaves no trace
    _reopen_trace(controller, data)
    return _answer(controller, saved, data, answer)._drive()


def _rebuild(data: Mapping[str, Any], source: str, model: Model | None, tools: Toolbox | None,
             executor: Executor | None) -> Controller:
    """A controller in exactly the state the pause saved: budgets, clock, state, transcript, monitor, ledger."""
    from agentloops.controller.saved import message_from_dict
    from agentloops.controller.tasks import make_task

    task = make_task(data["task"]["type"], data["task"]["params"], source=f"{source}: task")
    task = replace(task, budget=Budget.model_validate(data["budget"]))
    if model is None:
        if data.get("scenario") is None:
            raise ConfigError(f"{source}: this saved run did not come from a scenario; pass model= to resume it")
        from agentloops.controller.scenarios import build_model, scenario_from_dict

        scenario = scenario_from_dict(data["scenario"], f"{source}: scenario")
        model = build_model(scenario, task, skip=int(data.get("model_calls", 0)))
    c = Controller(task, model, tools=tools, policy=data["policy"], budget=task.budget, faults=data.get("faults", ()),
                   context=ContextPolicy.model_validate(data["context"]), send_state=bool(data["send_state"]),
                   trace=None, trace_id=data["trace_id"], label=data["label"],
                   model_latency_s=float(data["model_latency_s"]), scenario=data.get("scenario"), executor=executor)
    c.injector.restore(data.get("injector", {}))
    c.state = TaskState.from_snapshot(data["state"])
    c.clock.now = float(data["clock"])
    meter = data["meter"]
    c.meter = BudgetMeter(task.budget, c.clock, c.policy.retry_scope, used=meter["used"],
                          retries_by_tool=meter["retries_by_tool"], started_at=meter["started_at"])
    c.turn = int(data["turn"])
    c.head = [message_from_dict(m) for m in data["head"]]
    c.groups = [[message_from_dict(m) for m in g] for g in data["groups"]]
    c.monitor = ProgressMonitor.from_state(data["monitor"])
    c.repairs = Counter({str(k): int(v) for k, v in (data.get("repairs") or {}).items()})
    c.claims_rejected = int(data["claims_rejected"])
    c.consecutive_failures = int(data.get("consecutive_failures", 0))
    c.call_counter = int(data["call_counter"])
    c.failed_calls = {(str(k[0]), str(k[1])) for k in data.get("failed_calls", [])}
    c.store.items.update(data.get("store") or {})
    c.turn_records = [_turn_from_dict(t) for t in data.get("turns", [])]
    c.resumed_at_turn = c.turn + 1
    for call in data.get("calls", []):
        c.ledger.calls[call["call_id"]] = _call_from_dict(call)
        if call["state"] in ("succeeded", "failed"):
            c.ledger.applied.add(call["call_id"])
    return c


def _reopen_trace(c: Controller, data: Mapping[str, Any]) -> None:
    """Start the in-memory trace from the file's lines (or the saved ones), so memory and file stay equal."""
    from agentloops.controller.saved import trace_prefix

    fresh = c.trace_path is None or not c.trace_path.exists() or c.trace_path.stat().st_size == 0
    c.sink.lines = trace_prefix(data, None if fresh else c.trace_path) or \
        [c._start_line()] + [t.to_dict() for t in c.turn_records]
    if c.trace_path is not None:
        c.sink.writer = TraceWriter(c.trace_path, append=True)
        if fresh:  # a new file: write the configuration and the earlier lines first
            for line in c.sink.lines:
                c.sink.writer.write(line)


def _answer(c: Controller, saved: Mapping[str, Any] | str | Path, data: dict[str, Any], answer: str) -> Controller:
    """Mark the pause as continued and hand the user's answer to the task (state version + 1)."""
    from agentloops.controller.saved import mark_resumed

    parameter = str(data.get("parameter") or "answer")
    mark_resumed(saved, data, c.clock.now)
    c.state.begin_turn()
    c.state.add_input(parameter, answer)
    c.groups.append([Message("user", f"{USER_ANSWER_PREFIX} {parameter}: {answer}")])
    c.sink.write({"kind": "resume", "trace_id": c.trace_id, "turn": c.turn, "at_s": c.clock.now,
                  "parameter": parameter, "answer": answer, "state_version": c.state.version,
                  "from_version": int(data["paused_at_version"])})
    return c


def _turn_from_dict(data: Mapping[str, Any]) -> TurnRecord:
    fields = {k: v for k, v in data.items() if k != "kind"}
    fields["open_items"] = tuple(fields.get("open_items", ()))
    fields["missing_items"] = tuple(fields.get("missing_items", ()))
    fields["actions"] = tuple(fields.get("actions", ()))
    return TurnRecord(**fields)


def _call_from_dict(data: Mapping[str, Any]) -> Any:
    from agentloops.controller.parallel import Call

    return Call(**dict(data))
