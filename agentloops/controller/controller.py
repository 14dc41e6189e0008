"""The controller: a tool-calling loop that knows what is done, what is missing, and when to stop.

Each turn, in order:

1. deliver results that arrived late (they are recorded, never applied);
2. check the stop signals that need no model call: cancellation, idle turns,
   and every budget that the next model call could break;
3. build the request — system message, goal (or a checked compaction memory),
   recent turns, and the ``TASK STATE`` block — and call the model;
4. a reply that ended abnormally stops the run (the core ``correct`` criterion);
   a reply without tool calls is a *claim*: it succeeds only if the task's
   completion condition holds over state; otherwise the model is told what is
   missing (once, by default), then the run stops as partially completed;
5. a tool call is fingerprinted (repeat → ``no_progress`` before it runs),
   validated against its schema, checked against the permission gate, the
   task's rules and the risk policy, then executed with retries and fallbacks
   that the error policy routes and the shared retry budget pays for;
   parallel calls go through a join rule and the ledger;
6. the state delta, budgets and decision are written to the trace and flushed.

Nothing here raises for a run that ends badly: every ending is a
:class:`~agentloops.controller.status.Stop`. Only a simulated kill
(:class:`~agentloops.controller.errors.ProcessKilled`) escapes, to prove that
the trace survives it.
"""

from __future__ import annotations

import html
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentloops.controller.budgets import EPSILON, Budget, BudgetMeter, BudgetName, SimClock
from agentloops.controller.context import (
    CompactionEvent,
    Compactor,
    ContextPolicy,
    ContextStore,
    check_compaction,
    memory_from_state,
    observe,
)
from agentloops.controller.errors import ConfigError
from agentloops.controller.faults import FaultInjector, FaultLike
from agentloops.controller.parallel import Arrival, Batch, CallRecord, Ledger, LedgerEvent
from agentloops.controller.planners import USER_ANSWER_PREFIX
from agentloops.controller.policy import (
    Accept,
    AcceptNotFound,
    AskUser,
    Degrade,
    ErrorPolicy,
    Fallback,
    PolicyLike,
    Repair,
    Retry,
    ReturnToModel,
    Route,
    RouteContext,
    StopRun,
    resolve_policy,
    route,
    route_name,
)
from agentloops.controller.progress import ProgressMonitor, fingerprint, normalize_args
from agentloops.controller.render import clip, html_table
from agentloops.controller.state import Fact, TaskState
from agentloops.controller.status import Stop, StopStatus
from agentloops.controller.tasks import Task
from agentloops.controller.tools import ASK_USER, TRANSIENT, Toolbox, ToolResult, ToolSpec, execute, validate
from agentloops.controller.trace import TRACE_SCHEMA, Trace, TraceSink, TraceWriter, TurnRecord
from agentloops.criteria import Abort, correct
from agentloops.messages import Message
from agentloops.response import Response, ToolCall
from agentloops.stubs import Model
from agentloops.tables import text_table
from agentloops.tokens import Tokenizer, estimate_tokens

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_MODEL_LATENCY_S = 1.0
"""Simulated seconds per model call."""

Executor = Callable[[ToolSpec, Mapping[str, Any]], ToolResult]
"""Runs one validated tool attempt: live stubs with faults by default, recorded results in replay."""


@dataclass(frozen=True, slots=True)
class Controls:
    """Signals from outside the loop, on the simulated timeline.

    Attributes:
        cancel_at_turn: the user cancels before this turn starts.
        cancel_at_s: the user cancels at this simulated time (checked at turn starts
            and during a parallel batch).
    """

    cancel_at_turn: int | None = None
    cancel_at_s: float | None = None


def action_label(tool: str, args: Mapping[str, Any] | None) -> str:
    """``tool(key=value, …)``: the action as tables and expected sequences write it."""
    if args is None:
        return f"{tool}(<unparseable>)"
    parts = []
    for key, value in args.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
        parts.append(f"{key}={text}")
    return f"{tool}({', '.join(parts)})"


def message_to_dict(message: Message) -> dict[str, Any]:
    """A message as JSON (for saved runs), keeping the tool name."""
    return {"role": message.role, "content": message.content,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls],
            "tool_call_id": message.tool_call_id, "name": message.name}


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """Inverse of :func:`message_to_dict`."""
    calls = tuple(ToolCall(**c) for c in data.get("tool_calls") or ())
    return Message(data["role"], data.get("content"), calls, data.get("tool_call_id"), data.get("name"))


@dataclass
class _Turn:
    """The turn being built (mutable; frozen into a :class:`TurnRecord` at the end)."""

    turn: int
    state_version: int
    pending_goal: str
    action: str = "-"
    args_summary: str = ""
    tool_status: str = "-"
    observation: str = ""
    decision: str = "continue"
    context_tokens: int = 0
    actions: list[dict[str, Any]] = field(default_factory=list)
    response: dict[str, Any] | None = None
    compaction: dict[str, Any] | None = None
    failed: bool = False


@dataclass(frozen=True)
class ControllerRun:
    """The result of one controller run (or of a run resumed from saved state).

    Attributes:
        label: the scenario name, or ``custom``.
        trace_id: the run's id (kept across a resume).
        task: the task.
        policy: the error policy it ran under.
        stop: how and why it stopped.
        turns: every turn record (those before a resume included).
        calls: every tool call with its final state and times (a timeline).
        events: late and duplicate deliveries the ledger refused.
        compactions: compactions done, with their checks.
        usage: what the run used of every budget.
        within_budget: per budget, whether usage stayed within the limit.
        trace: the trace lines (also written to ``trace_path`` when one was given).
        trace_path: the JSON Lines file, if any.
        saved: everything needed to resume (set for ``waiting_for_user`` and ``handed_off``).
        resumed_at_turn: the first turn after a resume (``None`` for a fresh run).
    """

    label: str
    trace_id: str
    task: Task
    policy: ErrorPolicy
    stop: Stop
    turns: tuple[TurnRecord, ...]
    calls: tuple[CallRecord, ...]
    events: tuple[LedgerEvent, ...]
    compactions: tuple[CompactionEvent, ...]
    usage: Mapping[str, float]
    within_budget: Mapping[str, bool]
    trace: Trace
    trace_path: Path | None = None
    saved: dict[str, Any] | None = None
    resumed_at_turn: int | None = None

    @property
    def status(self) -> StopStatus:
        """The stop status."""
        return self.stop.status

    @property
    def code(self) -> str:
        """The stop reason code."""
        return self.stop.code

    @property
    def answer(self) -> str | None:
        """The final answer, if any."""
        return self.stop.answer

    @property
    def steps(self) -> int:
        """Turns that called the model."""
        return int(self.usage.get("steps", 0))

    @property
    def actions(self) -> list[str]:
        """Every action in order: ``tool(args)``, ``retry:…``, ``fallback:…``, ``blocked:…``, ``answer``…"""
        return [a["label"] for t in self.turns for a in t.actions]

    @property
    def new_actions(self) -> list[str]:
        """Actions since the resume (all actions for a fresh run)."""
        first = self.resumed_at_turn or 0
        return [a["label"] for t in self.turns if t.turn >= first for a in t.actions]

    def user_message(self) -> str:
        """The stop, for the user."""
        return self.stop.user_message()

    def system_record(self) -> dict[str, Any]:
        """The stop, for the system."""
        return self.stop.system_record()

    def resume(self, answer: str, *, model: Model | None = None, trace: str | Path | None = None) -> ControllerRun:
        """Continue a waiting task with the user's answer (see :func:`resume`)."""
        if self.saved is None or self.status != "waiting_for_user":
            raise ConfigError(f"a run that stopped as {self.status} cannot be resumed; only a waiting_for_user run "
                              "continues with the user's answer")
        return resume(self.saved, answer, model=model, trace=trace if trace is not None else self.trace_path)

    def save(self, path: str | Path) -> Path:
        """Write the saved state as JSON (to resume later, even in another process)."""
        if self.saved is None:
            raise ConfigError(f"a run that stopped as {self.status} has no saved state to write")
        target = Path(path)
        target.write_text(json.dumps(self.saved, ensure_ascii=False, indent=1), encoding="utf-8")
        return target

    def to_dict(self) -> dict[str, Any]:
        """JSON summary: stop record, actions, usage and turns."""
        return {
            "label": self.label, "trace_id": self.trace_id, "task": self.task.spec(), "policy": self.policy.name,
            "status": self.status, "code": self.code, "actions": self.actions, "usage": dict(self.usage),
            "within_budget": dict(self.within_budget), "stop": self.system_record(),
            "user_message": self.user_message(), "turns": [t.to_row() for t in self.turns],
            "calls": [c.to_dict() for c in self.calls], "events": [e.to_dict() for e in self.events],
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per turn: state version, open/missing items, context size, budgets left, decision."""
        import pandas as pd

        return pd.DataFrame([t.to_row() for t in self.turns]).set_index("turn")

    def calls_frame(self) -> pd.DataFrame:
        """One row per tool call: start, end, arrival and state (draw a Gantt chart from it)."""
        import pandas as pd

        return pd.DataFrame([c.to_dict() for c in self.calls])

    def headline(self) -> str:
        """One line: label, status, code, turns and tool calls."""
        return (f"{self.label} [{self.task.name}, policy {self.policy.name}]: {self.status} ({self.code}) after "
                f"{self.steps} turn(s), {int(self.usage.get('tool_calls', 0))} tool call(s), "
                f"{self.usage.get('wall_time_s', 0):g} s simulated")

    def __str__(self) -> str:
        events = "".join(f"\n  late/duplicate at {e.at_s:g} s: {e.call_id} {e.verdict} — {e.note}" for e in self.events)
        return f"{self.headline()}\n{self.trace.table()}{events}\n{self.stop}"

    def __repr__(self) -> str:
        return f"<ControllerRun {self.headline()}>"

    def _repr_html_(self) -> str:
        rows = [[t.turn, f"v{t.state_version}→v{t.state_version_after}", t.pending_goal, t.action, t.tool_status,
                 t.delta_text(), t.context_tokens, t.decision] for t in self.turns]
        changed = [t.state_version_after != t.state_version for t in self.turns]
        table = html_table(self.headline(), ["turn", "state", "pending goal", "action", "tool status", "state delta",
                                             "context tokens", "decision"], rows, highlight=changed)
        return f"<div>{table}{self.stop._repr_html_()}</div>" + "".join(
            f"<div><small>{html.escape(f'{e.call_id} {e.verdict} at {e.at_s:g} s: {e.note}')}</small></div>"
            for e in self.events)


class Controller:
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
        trace_id: the run's id (default: random).
        label: a name for tables (the scenario name).
        model_latency_s: simulated seconds per model call.
        tokenizer: counts tokens for context size and the token budget.
        scenario: the scenario's JSON, written into the trace so replay can rebuild the model.
        executor: runs tool attempts (default: the stub tools with the declared faults).
    """

    def __init__(self, task: Task, model: Model, *, tools: Toolbox | None = None, policy: PolicyLike | None = None,
                 budget: Budget | None = None, faults: Sequence[FaultLike] = (), context: ContextPolicy | None = None,
                 compactor: Compactor | None = None, send_state: bool = True, controls: Controls | None = None,
                 trace: str | Path | None = None, trace_id: str | None = None, label: str = "custom",
                 model_latency_s: float = DEFAULT_MODEL_LATENCY_S, tokenizer: Tokenizer = estimate_tokens,
                 scenario: Mapping[str, Any] | None = None, executor: Executor | None = None) -> None:
        self.task = task
        self.model = model
        self.toolbox = tools if tools is not None else task.toolbox()
        self.policy = resolve_policy(policy)
        self.budget = budget if budget is not None else task.budget
        self.injector = FaultInjector(faults)
        for fault in self.injector.faults:
            if fault.tool not in self.toolbox:
                raise ConfigError(f"fault on {fault.tool!r}: no such tool in this task's toolbox "
                                  f"({', '.join(self.toolbox.names())})")
        self.context = context or ContextPolicy()
        self.compactor = compactor or memory_from_state
        self.send_state = send_state
        self.controls = controls or Controls()
        self.trace_path = Path(trace) if trace is not None else None
        self.trace_id = trace_id or uuid.uuid4().hex[:12]
        self.label = label
        self.model_latency_s = model_latency_s
        self.tokenizer = tokenizer
        self.scenario = dict(scenario) if scenario is not None else None
        self.executor: Executor = executor or self._execute_live

        self.clock = SimClock()
        self.meter = BudgetMeter(self.budget, self.clock, self.policy.retry_scope)
        self.state = task.new_state()
        self.monitor = ProgressMonitor()
        self.ledger = Ledger(self.trace_id)
        self.store = ContextStore()
        self.system = Message("system", self._system_text())
        self.head: list[Message] = [Message("user", task.prompt)]
        self.groups: list[list[Message]] = []
        self.turn = 0
        self.repairs_used = 0
        self.claims_rejected = 0
        self.consecutive_failures = 0
        self.call_counter = 0
        self.failed_calls: set[tuple[str, str]] = set()
        self.inbox: list[Arrival] = []
        self.turn_records: list[TurnRecord] = []
        self.compactions: list[CompactionEvent] = []
        self.sink = TraceSink()
        self.resumed_at_turn: int | None = None
        self._stop: Stop | None = None

    def _execute_live(self, spec: ToolSpec, args: Mapping[str, Any]) -> ToolResult:
        return execute(spec, args, injector=self.injector, granted=self.task.granted)

    # -- public -------------------------------------------------------------------------------------
    def run(self) -> ControllerRun:
        """Run until a stop; returns the result (a killed run raises and leaves its trace on disk)."""
        if self._stop is not None:
            raise ConfigError("this controller has already run; build a new one (or resume a saved run)")
        self._open_trace(append=False)
        self.sink.write(self._start_line())
        return self._drive()

    # -- plumbing -------------------------------------------------------------------------------------
    def _open_trace(self, append: bool) -> None:
        if self.trace_path is not None:
            self.sink.writer = TraceWriter(self.trace_path, append=append)

    def _start_line(self) -> dict[str, Any]:
        return {"kind": "start", "schema_version": TRACE_SCHEMA, "trace_id": self.trace_id, "label": self.label,
                "at_s": self.clock.now, "task": self.task.spec(), "policy": self.policy.model_dump(mode="json"),
                "budget": self.budget.model_dump(mode="json"), "context": self.context.model_dump(mode="json"),
                "send_state": self.send_state, "model_latency_s": self.model_latency_s, "scenario": self.scenario}

    def _drive(self) -> ControllerRun:
        try:
            stop = self._loop()
        finally:
            self.sink.close()
        return self._result(stop)

    def _system_text(self) -> str:
        state_line = ("Every request ends with a TASK STATE block: trust it over older messages. "
                      if self.send_state else "")
        return (f"You are a tool-calling agent working on one task ({self.task.name}).\nTools:\n"
                f"{self.toolbox.describe()}\n{state_line}A reply without tool calls is your final answer; the "
                "system checks it against the task's completion condition.")

    def _pending_goal(self) -> str:
        if self.state.waiting_for:
            return f"waiting for {self.state.waiting_for['input']}"
        items = self.state.open_items()
        return items[0] if items and self.task.assess(self.state) != "complete" else "final answer"

    def _new_call_id(self) -> str:
        self.call_counter += 1
        return f"{self.trace_id}-c{self.call_counter}"

    def _event(self, event: LedgerEvent) -> None:
        self.sink.write({"kind": "event", "trace_id": self.trace_id, "turn": self.turn, **event.to_dict()})

    def _deliver(self, arrival: Arrival) -> str:
        before = len(self.ledger.events)
        verdict = self.ledger.deliver(arrival, succeeded=arrival.result.status in ("ok", "empty"))
        for event in self.ledger.events[before:]:
            self._event(event)
        return verdict

    def _deliver_due(self) -> None:
        due = [a for a in self.inbox if a.at <= self.clock.now]
        self.inbox = [a for a in self.inbox if a.at > self.clock.now]
        for arrival in sorted(due, key=lambda a: (a.at, a.call_id, a.delivery)):
            self._deliver(arrival)

    # -- the loop ---------------------------------------------------------------------------------------
    def _loop(self) -> Stop:
        while True:
            self.turn += 1
            t = _Turn(self.turn, self.state.version, self._pending_goal())
            self.state.begin_turn()
            self._deliver_due()
            stop = self._turn(t)
            delta = self.state.end_turn()
            progress = delta.progress
            if stop is None:
                self.monitor.end_turn(progress)
                self.consecutive_failures = self.consecutive_failures + 1 if t.failed and not progress else 0
                stop = self._after_turn(t)
            t.decision = f"stop:{stop.status} ({stop.code})" if stop is not None else t.decision
            record = TurnRecord(
                trace_id=self.trace_id, turn=t.turn, at_s=self.clock.now, state_version=t.state_version,
                pending_goal=t.pending_goal, action=t.action, args_summary=t.args_summary, tool_status=t.tool_status,
                observation=t.observation, state_delta=delta.to_dict(), budget_left=self.meter.left(),
                decision=t.decision, context_tokens=t.context_tokens, open_items=tuple(self.state.open_items()),
                missing_items=tuple(self.state.missing_items()), progress=progress, actions=tuple(t.actions),
                response=t.response, compaction=t.compaction)
            self.turn_records.append(record)
            self.sink.write(record.to_dict())
            if stop is not None:
                return self._finish(stop)

    def _after_turn(self, t: _Turn) -> Stop | None:
        assessment = self.task.assess(self.state)
        if assessment == "impossible" and not self.state.open_items():
            return self._stop_unobtainable()  # with open items left, go on: they make the partial answer better
        limit = self.policy.max_consecutive_failures
        if limit is not None and self.consecutive_failures >= limit:
            return self._make_stop("handed_off", "consecutive_failures",
                                   f"{self.consecutive_failures} turns in a row failed; a person should look at it")
        return None

    def _stop_unobtainable(self, answer: str | None = None) -> Stop:
        missing = self.state.missing_items()
        codes = [r.split(":", 1)[0] for r in missing.values()]
        if self.state.facts:
            return self._make_stop("partially_completed", "items_unobtainable",
                                   f"{len(missing)} item(s) cannot be obtained: " + "; ".join(
                                       f"{k} ({v})" for k, v in missing.items()), answer=answer)
        reason = "nothing could be obtained: " + "; ".join(f"{k} ({v})" for k, v in missing.items())
        if codes and all(code in TRANSIENT for code in codes):  # gave up on transient failures: retries ran out
            return self._make_stop("budget_exhausted", "budget:retries", reason, budget="retries")
        code = next((c for c in codes if c not in TRANSIENT), "items_unobtainable")
        return self._make_stop("failed_unrecoverable", code, reason)

    def _make_stop(self, status: StopStatus, code: str, reason: str, **extra: Any) -> Stop:
        facts = tuple(self.state.facts.values())
        missing = tuple(self.state.missing_items().items())
        extra_missing = extra.pop("missing", ())
        return Stop(status=status, code=code, reason=reason, turn=self.turn, at_s=self.clock.now,
                    trace_id=self.trace_id, task=self.task.name, policy=self.policy.name, facts=facts,
                    missing=missing + tuple(extra_missing),
                    open_items=tuple(i for i in self.state.open_items() if i not in dict(extra_missing)),
                    budgets_used=self.meter.usage(), budgets_left=self.meter.left(), state=self.state.snapshot(),
                    verified=self.task.assess(self.state) == "complete", **extra)

    def _finish(self, stop: Stop) -> Stop:
        self.ledger.cancel_running(self.clock.now, f"cancelled: the task stopped ({stop.status})")
        self._deliver_due()  # results that landed during the last turn, before the stop
        self.state.finish(stop.status)
        self.ledger.close()
        stop = replace(stop, state=self.state.snapshot())
        self._stop = stop
        for arrival in sorted(self.inbox, key=lambda a: (a.at, a.call_id, a.delivery)):
            self._deliver(arrival)  # late results: written to the trace, refused by the closed ledger
        self.inbox = []
        self.sink.write({"kind": "stop", "trace_id": self.trace_id, "record": stop.system_record()})
        return stop

    def _budget_stop(self, name: BudgetName, needed: float, t: _Turn) -> Stop:
        limit = self.budget.limit(name)
        used = self.meter.used_of(name)
        reason = (f"the {name} budget would be exceeded: {used:g} used + {needed:g} needed > limit {limit:g}"
                  if name != "context_tokens" else f"the next request ({needed:g} tokens) is larger than the "
                                                   f"context budget ({limit:g})")
        return self._make_stop("budget_exhausted", f"budget:{name}", reason, budget=name)

    # -- one turn ---------------------------------------------------------------------------------------
    def _turn(self, t: _Turn) -> Stop | None:
        controls = self.controls
        if (controls.cancel_at_turn is not None and self.turn >= controls.cancel_at_turn) or (
                controls.cancel_at_s is not None and self.clock.now >= controls.cancel_at_s):
            t.action = "cancel"
            return self._make_stop("cancelled", "cancelled_by_user", "the user cancelled the task")
        idle = self.policy.idle_turns
        if idle is not None and self.monitor.idle >= idle:
            return self._make_stop("no_progress", "idle_turns",
                                   f"{self.monitor.idle} turns in a row added no fact, settled no item and got no "
                                   "user input")
        for name in ("steps", "model_calls"):
            if not self.meter.allows(name):  # type: ignore[arg-type]
                return self._budget_stop(name, 1, t)  # type: ignore[arg-type]
        request = self._request(t)
        size = sum(m.tokens(self.tokenizer) for m in request)
        t.context_tokens = size
        if not self.meter.allows("context_tokens", size):
            return self._budget_stop("context_tokens", size, t)
        if not self.meter.allows("tokens", size + self.budget.output_reserve):
            return self._budget_stop("tokens", size + self.budget.output_reserve, t)
        if not self.meter.allows("wall_time_s", self.model_latency_s):
            return self._budget_stop("wall_time_s", self.model_latency_s, t)
        self.meter.spend("steps")
        self.meter.spend("model_calls")
        self.meter.spend("context_tokens", size)
        response = self.model(request)
        self.clock.advance(self.model_latency_s)
        completion = Message.from_response(response).tokens(self.tokenizer)
        if response.usage is not None and response.usage.completion_tokens is not None:
            completion = response.usage.completion_tokens
        if completion > self.budget.output_reserve:  # a real client's max_tokens would have cut it here
            response = response.model_copy(update={"finish_reason": "length"})
            completion = self.budget.output_reserve
        self.meter.spend("tokens", size + completion)
        t.response = {"content": response.content, "finish_reason": response.finish_reason,
                      "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments}
                                     for c in response.tool_calls]}
        decision = correct(response)
        if isinstance(decision, Abort):
            t.action = "abnormal reply"
            return self._make_stop("failed_unrecoverable", decision.code, decision.reason)
        if not response.tool_calls:
            if response.finish_reason == "pause":
                self.groups.append([Message.from_response(response)])
                t.action, t.decision = "pause", "continue: the provider paused the turn"
                return None
            return self._on_final(t, response)
        self.groups.append([Message.from_response(response)])
        asks = [c for c in response.tool_calls if c.name == ASK_USER]
        if asks:
            return self._on_ask(t, response.tool_calls, asks[0])
        if len(response.tool_calls) == 1:
            return self._single(t, response.tool_calls[0])
        return self._parallel(t, response.tool_calls)

    def _request(self, t: _Turn) -> list[Message]:
        body = [self.system, *self.head, *(m for g in self.groups for m in g)]
        tail = [Message("system", self.state.for_model(self.meter.left()))] if self.send_state else []
        request = body + tail
        limit = self.context.compact_over_tokens
        keep = self.context.keep_recent_turns
        if limit is None or len(self.groups) <= keep:
            return request
        before = sum(m.tokens(self.tokenizer) for m in request)
        if before <= limit:
            return request
        memory = self.compactor(self.state)
        check = check_compaction(memory, self.state)
        used = "compactor"
        if not check.ok and self.context.check_compaction:
            memory, used = memory_from_state(self.state), "safe_memory"
        compacted = len(self.groups) - keep
        self.head = [Message("user", memory)]
        self.groups = self.groups[compacted:] if keep else []
        request = [self.system, *self.head, *(m for g in self.groups for m in g), *tail]
        after = sum(m.tokens(self.tokenizer) for m in request)
        event = CompactionEvent(self.turn, before, after, compacted, check, used)
        self.compactions.append(event)
        t.compaction = event.to_dict()
        if not check.ok:
            self.state.note(f"compaction refused: {check}" if used == "safe_memory" else f"compaction used: {check}")
        return request

    # -- final replies, questions -------------------------------------------------------------------------
    def _on_final(self, t: _Turn, response: Response) -> Stop | None:
        t.action = "answer"
        t.actions.append({"label": "answer", "call_id": None, "tool": None, "args": None, "kind": "answer",
                          "status": None, "route": None, "result": None})
        assessment = self.task.assess(self.state)
        if self.policy.trust_model_claims:
            verified = "the completion condition holds" if assessment == "complete" else \
                "UNVERIFIED: the completion condition does not hold"
            return self._make_stop("succeeded", "model_said_done", f"the model stopped calling tools ({verified})",
                                   answer=response.content)
        if assessment == "complete":
            return self._make_stop("succeeded", "completion_condition_met",
                                   f"{self.task.condition}: holds over state v{self.state.version}",
                                   answer=response.content)
        open_items = self.state.open_items()
        if assessment == "impossible" or not open_items:
            return self._stop_unobtainable(answer=response.content)
        if self.claims_rejected < self.policy.premature_claims:
            self.claims_rejected += 1
            note = (f"CONTROLLER: not done yet. The completion condition is: {self.task.condition}. "
                    f"Still missing: {', '.join(open_items)}.")
            self.groups.append([Message.from_response(response), Message("system", note)])
            self.state.note(f"final answer rejected: {', '.join(open_items)} still open")
            t.observation = "completion condition not met"
            t.decision = "continue: premature claim rejected, the model was told what is missing"
            return None
        extra = tuple((item, "the model declared success without it") for item in open_items)
        if not self.state.facts:
            return self._make_stop("failed_unrecoverable", "model_gave_up",
                                   "the model stopped without obtaining anything", missing=extra,
                                   answer=response.content)
        return self._make_stop("partially_completed", "premature_claim",
                               f"the model claimed success {self.claims_rejected + 1}× while "
                               f"{', '.join(open_items)} stayed open", missing=extra, answer=response.content)

    def _on_ask(self, t: _Turn, calls: Sequence[ToolCall], ask: ToolCall) -> Stop:
        args = ask.parsed_arguments or {}
        question = str(args.get("question") or "Could you give me the missing detail?")
        parameter = str(args.get("parameter") or "answer")
        t.action, t.args_summary = "ask_user", normalize_args(args)
        t.actions.append({"label": "ask_user", "call_id": ask.id, "tool": ASK_USER, "args": dict(args),
                          "kind": "ask_user", "status": None, "route": "ask_user", "result": None})
        for call in calls:
            text = "question sent to the user" if call is ask else "not run: the task is waiting for the user"
            self.groups[-1].append(Message("tool", json.dumps({"tool": call.name, "status": "ok", "data": text}),
                                           tool_call_id=call.id, name=call.name))
        self.state.set_waiting(parameter, question)
        return self._make_stop("waiting_for_user", "asked_user", "the model asked the user", question=question)

    # -- one tool call, with retries and fallbacks --------------------------------------------------------
    def _retries_left(self, tool: str) -> float | None:
        limit = self.budget.limit("retries")
        if limit is None:
            return None
        if self.meter.retry_scope == "per_tool":
            return limit - self.meter.retries_by_tool[tool]
        return limit - self.meter.used["retries"]

    def _precheck(self, spec: ToolSpec | None, tool: str, args: Mapping[str, Any]) -> ToolResult | Stop | None:
        """Everything that answers before a tool runs: schema, permission gate, rules, risk."""
        if spec is None:
            known = ", ".join(self.toolbox.names())
            return ToolResult("invalid_arguments", error=f"there is no tool named {tool!r} (tools: {known})", ran=False)
        rejection = validate(spec, args)
        if rejection is not None:
            return rejection
        if self.policy.permission_gate == "uniform" and spec.capability and spec.capability not in self.task.granted:
            return ToolResult("permission_denied", error=f"{tool} needs the {spec.capability} permission, which this "
                                                         "caller does not have", ran=False, source="permission gate")
        rule = self.task.type.rules(tool, args, self.task.params)
        if rule is not None:
            return self._make_stop("failed_unrecoverable", "against_policy", rule, tool=tool,
                                   pending_action=action_label(tool, args))
        if spec.risk == "high" and self.policy.high_risk == "handoff":
            return self._make_stop("handed_off", "high_risk_action",
                                   f"{tool} is a high-risk action with side effects; a person must approve it",
                                   tool=tool, pending_action=action_label(tool, args))
        return None

    def _record_action(self, t: _Turn, label: str, call_id: str | None, tool: str, args: Mapping[str, Any],
                       kind: str, result: ToolResult | None, route_taken: str | None) -> None:
        t.actions.append({"label": label, "call_id": call_id, "tool": tool, "args": dict(args),
                          "args_norm": normalize_args(args), "kind": kind,
                          "status": result.status if result else None, "route": route_taken,
                          "result": result.to_dict() if result else None})

    def _usable(self, result: ToolResult, tool: str, args: Mapping[str, Any]) -> tuple[ToolResult, Any]:
        """Turn an ``ok`` result into (result, (item, value, summary)) or downgrade it when unusable."""
        if result.status not in ("ok", "empty"):
            return result, None
        item = self.task.type.item_for(tool, args, self.task.params)
        if item is None:
            return result, None
        if result.status == "empty":
            return result, (item, None, None)
        made = self.task.type.fact(item, result, self.task.params)
        if isinstance(made, str):
            bad = replace(result, status="permanent_error", retryable=False,
                          error=f"{tool}: the data cannot be used for {item} ({made})")
            return bad, None
        value, summary = made
        return result, (item, value, summary)

    def _execute(self, t: _Turn, spec: ToolSpec, args: Mapping[str, Any], first_kind: str
                 ) -> tuple[ToolResult, ToolSpec, Route | Stop, Any, str]:
        """Run a validated call until the policy settles it; returns (result, tool, route, fact parts, call id)."""
        current, attempts, kind = spec, 1, first_kind
        tried: set[str] = set()
        while True:
            if not self.meter.allows("tool_calls"):
                stop = self._budget_stop("tool_calls", 1, t)
                return ToolResult("permanent_error", ran=False), current, stop, None, ""
            if not self.meter.allows("wall_time_s", current.timeout_s):
                return ToolResult("permanent_error", ran=False), current, self._budget_stop(
                    "wall_time_s", current.timeout_s, t), None, ""
            call_id = self._new_call_id()
            self.ledger.open(call_id, current.name, normalize_args(args), self.turn, self.clock.now, kind)
            raw = self.executor(current, args)
            self.meter.spend("tool_calls")
            self.clock.advance(raw.latency_s)
            result, parts = self._usable(raw, current.name, args)
            for delivery in range(1, result.deliveries + 1):
                self._deliver(Arrival(self.clock.now, call_id, result, delivery, self.trace_id))
            if result.status not in ("ok", "empty"):
                self.state.record_failure(current.name, result.status, result.error or "", self.turn)
            if result.status in TRANSIENT:
                self.failed_calls.add((current.name, normalize_args(args)))
            item = self.task.type.item_for(current.name, args, self.task.params)
            ctx = RouteContext(current, attempts, self._retries_left(current.name),
                               self.toolbox.tools.get(current.fallback) if current.fallback and current.fallback
                               not in tried else None, self.task.type.allows_not_found and item is not None,
                               self.repairs_used)
            decision = route(self.policy, result, ctx)
            prefix = "" if kind == "call" else f"{kind}:"
            self._record_action(t, prefix + action_label(current.name, args), call_id, current.name, args, kind, result,
                                route_name(decision))
            if isinstance(decision, Retry):
                if not self.meter.allows("wall_time_s", decision.delay_s + current.timeout_s):
                    return result, current, self._budget_stop("wall_time_s", decision.delay_s + current.timeout_s,
                                                              t), None, call_id
                self.meter.spend("retries", tool=current.name)
                self.clock.advance(decision.delay_s)
                attempts, kind = attempts + 1, "retry"
                continue
            if isinstance(decision, Fallback):
                fallback = self.toolbox[decision.tool]
                if validate(fallback, args) is not None:
                    return result, current, Degrade(result.status, f"{decision.tool} cannot take these arguments"), \
                        None, call_id
                self.meter.spend("retries", tool=current.name)
                tried.add(current.name)
                current, attempts, kind = fallback, 1, "fallback"
                continue
            return result, current, decision, parts, call_id

    def _apply(self, t: _Turn, tool: str, args: Mapping[str, Any], result: ToolResult, decision: Route | Stop,
               parts: Any, call_id: str, ref: str | None = None) -> Stop | None:
        """Write the outcome of a settled call into state; return a stop if the route says so."""
        item = self.task.type.item_for(tool, args, self.task.params)
        if isinstance(decision, (Accept, AcceptNotFound)):
            if parts is not None:
                item_name, value, summary = parts
                if isinstance(decision, AcceptNotFound) or summary is None:
                    made = self.task.type.fact(item_name, result, self.task.params)
                    value, summary = made if isinstance(made, tuple) else ([], "none found")
                source = f"{result.source or tool} via {tool} ({call_id.rsplit('-', 1)[-1]})"
                self.state.add_fact(Fact(item_name, value, summary, source, self.turn, ref))
                t.observation = summary
            else:
                self.state.note(f"{action_label(tool, args)}: serves no item of this task")
                t.observation = "ok, but not needed by the task"
        else:
            t.failed = True
            t.observation = clip(result.error or result.status, 80)
        if isinstance(decision, Repair):
            self.repairs_used += 1
            t.decision = f"continue: repair {self.repairs_used} of {self.policy.invalid_argument_repairs} allowed"
        elif isinstance(decision, ReturnToModel):
            t.decision = f"continue: {decision.reason}"
        elif isinstance(decision, Degrade):
            if item is not None:
                self.state.mark_missing(item, f"{decision.code}: {decision.reason}")
            t.decision = f"continue: {item or tool} given up ({decision.code})"
        elif isinstance(decision, AskUser):
            question = decision.question
            self.state.set_waiting(decision.parameter, question)
            return self._make_stop("waiting_for_user", result.status, decision.reason, tool=tool,
                                   error_class=result.status, question=question)
        elif isinstance(decision, StopRun):
            return self._make_stop(decision.status, decision.code, decision.reason,  # type: ignore[arg-type]
                                   tool=tool, error_class=result.status, budget=decision.budget)
        elif isinstance(decision, Stop):
            return decision
        return None

    def _tool_message(self, call: ToolCall, tool: str, args: Mapping[str, Any], result: ToolResult) -> str | None:
        """Append the observation to the transcript (large data stored outside); return the storage reference."""
        observation, ref = observe(result, tool, args, self.store, self.context, self.tokenizer)
        if result.deliveries > 1:
            observation["deliveries"] = result.deliveries
        self.groups[-1].append(Message("tool", json.dumps(observation, ensure_ascii=False, default=str),
                                       tool_call_id=call.id, name=tool))
        return ref

    def _single(self, t: _Turn, call: ToolCall) -> Stop | None:
        tool, args = call.name, call.parsed_arguments or {}
        label = action_label(tool, args)
        t.action, t.args_summary = label, normalize_args(args)
        fp = fingerprint(tool, args, self.state.version)
        if self.policy.detect_repeats:
            repeat = self.monitor.check(fp)
            if repeat is not None:
                self._record_action(t, f"blocked:{label}", None, tool, args, "blocked", None, "stop:no_progress")
                t.tool_status, t.observation = "not run", "repeat of turn " + str(repeat.first_turn)
                self.state.note(repeat.explain())
                return self._make_stop("no_progress", "repeated_action", repeat.explain(), tool=tool)
        spec = self.toolbox.tools.get(tool)
        checked = self._precheck(spec, tool, args)
        if isinstance(checked, Stop):
            self._record_action(t, f"held:{label}", None, tool, args, "held", None, f"stop:{checked.status}")
            t.tool_status = "not run"
            return checked
        progress_before = self.state.progress_count
        if checked is not None:  # answered before running: schema, gate
            result = checked
            ctx = RouteContext(spec or ToolSpec(tool, "", {}, lambda a: None), 1, self._retries_left(tool), None,
                               False, self.repairs_used)
            decision: Route | Stop = route(self.policy, result, ctx)
            self._record_action(t, label, None, tool, args, "rejected", result, route_name(decision))
            self.state.record_failure(tool, result.status, result.error or "", self.turn)
            final_tool, parts, call_id = tool, None, ""
        else:
            assert spec is not None
            first_kind = "call"
            if (tool, normalize_args(args)) in self.failed_calls:  # the model repeats a timed-out call: a retry
                first_kind = "retry"
                left = self._retries_left(tool)
                if left is not None and left < 1:
                    self._record_action(t, f"blocked:{label}", None, tool, args, "blocked", None, "stop:budget")
                    if self.policy.on_retries_exhausted == "stop":
                        return self._budget_stop("retries", 1, t)
                    item = self.task.type.item_for(tool, args, self.task.params)
                    if item is not None:
                        self.state.mark_missing(item, "retry budget spent")
                    return None
                self.meter.spend("retries", tool=tool)
            result, final_spec, decision, parts, call_id = self._execute(t, spec, args, first_kind)
            final_tool = final_spec.name
        ref = self._tool_message(call, final_tool, args, result)
        t.tool_status = "→".join(a["status"] or "-" for a in t.actions) if len(t.actions) > 1 else result.status
        stop = self._apply(t, final_tool, args, result, decision, parts, call_id, ref)
        new = self.state.progress_count != progress_before
        self.monitor.record(fp, self.turn, result.status, new,
                            "" if new else "; ".join(self.state._unchanged) or f"{result.status}, no new fact")
        return stop

    # -- parallel calls -------------------------------------------------------------------------------------
    def _parallel(self, t: _Turn, calls: Sequence[ToolCall]) -> Stop | None:
        labels = [action_label(c.name, c.parsed_arguments or {}) for c in calls]
        t.action = f"parallel×{len(calls)}: " + ", ".join(labels)
        t.args_summary = "; ".join(normalize_args(c.parsed_arguments or {}) for c in calls)
        launch: list[tuple[ToolCall, ToolSpec, dict[str, Any], Any]] = []
        pending_stop: Stop | None = None
        blocked = 0
        for call, label in zip(calls, labels, strict=False):
            tool, args = call.name, call.parsed_arguments or {}
            fp = fingerprint(tool, args, self.state.version)
            if self.policy.detect_repeats and (repeat := self.monitor.check(fp)) is not None:
                blocked += 1
                self._record_action(t, f"blocked:{label}", None, tool, args, "blocked", None, "skip")
                text = json.dumps({"tool": tool, "status": "not run",
                                   "error": "repeat of an action that brought nothing"})
                self.groups[-1].append(Message("tool", text, tool_call_id=call.id, name=tool))
                self.state.note(repeat.explain())
                continue
            spec = self.toolbox.tools.get(tool)
            checked = self._precheck(spec, tool, args)
            if isinstance(checked, Stop):
                pending_stop = pending_stop or checked
                self._record_action(t, f"held:{label}", None, tool, args, "held", None, f"stop:{checked.status}")
                continue
            if checked is not None:
                ctx = RouteContext(spec or ToolSpec(tool, "", {}, lambda a: None), 1, None, None, False,
                                   self.repairs_used)
                decision = route(self.policy, checked, ctx)
                self._record_action(t, label, None, tool, args, "rejected", checked, route_name(decision))
                self.state.record_failure(tool, checked.status, checked.error or "", self.turn)
                self._tool_message(call, tool, args, checked)
                pending_stop = pending_stop or self._apply(t, tool, args, checked, decision, None, "")
                continue
            assert spec is not None
            launch.append((call, spec, dict(args), fp))
        if blocked == len(calls):
            return self._make_stop("no_progress", "repeated_action",
                                   "every call of the batch repeats an action that brought nothing new")
        if pending_stop is not None and not launch:
            return pending_stop
        start = self.clock.now
        remaining_wall = self.meter.remaining("wall_time_s")
        deadline_candidates = [start + remaining_wall] if remaining_wall is not None else []
        if self.task.join.timeout_s is not None:
            deadline_candidates.append(start + self.task.join.timeout_s)
        if self.controls.cancel_at_s is not None and self.controls.cancel_at_s >= start:
            deadline_candidates.append(self.controls.cancel_at_s)
        deadline = min(deadline_candidates) if deadline_candidates else None
        batch = Batch(self.task.join, 0, deadline)
        started: dict[str, tuple[ToolCall, ToolSpec, dict[str, Any], Any, ToolResult, Any]] = {}
        for call, spec, args, fp in launch:
            label = action_label(spec.name, args)
            if not self.meter.allows("tool_calls"):
                self._record_action(t, f"blocked:{label}", None, spec.name, args, "blocked", None, "budget:tool_calls")
                pending_stop = pending_stop or self._budget_stop("tool_calls", 1, t)
                continue
            call_id = self._new_call_id()
            self.ledger.open(call_id, spec.name, normalize_args(args), self.turn, start, "call", parallel=True)
            raw = self.executor(spec, args)
            self.meter.spend("tool_calls")
            result, parts = self._usable(raw, spec.name, args)
            for delivery in range(1, result.deliveries + 1):
                batch.add(Arrival(round(start + result.latency_s + 0.05 * (delivery - 1), 6), call_id, result,
                                  delivery, self.trace_id))
            started[call_id] = (call, spec, args, fp, result, parts)
            self._record_action(t, label, call_id, spec.name, args, "call", result, None)
        batch.total = len(started)
        statuses: dict[str, str] = {}
        while (arrival := batch.next()) is not None:
            if arrival.at > self.clock.now:
                self.clock.advance(arrival.at - self.clock.now)
            verdict = self._deliver(arrival)
            call, spec, args, fp, result, parts = started[arrival.call_id]
            if verdict != "applied":
                continue
            ctx = RouteContext(spec, 1, 0, None, self.task.type.allows_not_found, self.repairs_used)
            decision = route(self.policy, result, ctx)
            if isinstance(decision, (Retry, Fallback)):
                decision = ReturnToModel(f"{result.status}: not retried inside a parallel batch; the item stays open")
            if isinstance(decision, StopRun) and decision.code == "budget:retries":
                decision = ReturnToModel(f"{result.status}: the item stays open")
            if result.status not in ("ok", "empty"):
                self.state.record_failure(spec.name, result.status, result.error or "", self.turn)
            if result.status in TRANSIENT:
                self.failed_calls.add((spec.name, normalize_args(args)))
            for action in t.actions:
                if action["call_id"] == arrival.call_id:
                    action["route"] = route_name(decision)
            ref = self._tool_message(call, spec.name, args, result)
            statuses[arrival.call_id] = result.status
            progress_before = self.state.progress_count
            stop = self._apply(t, spec.name, args, result, decision, parts, arrival.call_id, ref)
            new = self.state.progress_count != progress_before
            self.monitor.record(fp, self.turn, result.status, new, "" if new else f"{result.status}, no new fact")
            pending_stop = pending_stop or stop
            batch.note(True, result.status == "ok" or (result.status == "empty" and isinstance(decision,
                                                                                            AcceptNotFound)))
            if pending_stop is not None:
                break
        if batch.outcome == "deadline" and deadline is not None and deadline > self.clock.now:
            self.clock.advance(deadline - self.clock.now)
        why = {"satisfied": f"join '{self.task.join.describe()}' satisfied",
               "impossible": f"join '{self.task.join.describe()}' can no longer be satisfied",
               "deadline": "the join's deadline passed", "all arrived": "every call finished"}.get(
            batch.outcome or "", "the batch was stopped")
        cancelled = self.ledger.cancel_running(self.clock.now, f"cancelled: {why}")
        for call_id in cancelled:
            call = started[call_id][0]
            self.groups[-1].append(Message("tool", json.dumps({"tool": started[call_id][1].name, "status": "cancelled",
                                                               "error": why}), tool_call_id=call.id,
                                           name=started[call_id][1].name))
            statuses[call_id] = "cancelled"
        self.inbox.extend(batch.leftover())
        order = [a["call_id"] for a in t.actions if a["call_id"] in started]
        t.tool_status = ", ".join(statuses.get(c, "-") for c in order)
        t.observation = f"{why}; " + ", ".join(f"{sum(1 for s in statuses.values() if s == k)} {k}"
                                                for k in sorted(set(statuses.values())))
        for action in t.actions:
            if action["call_id"] in cancelled:
                action["route"] = "cancelled"
        cancel_at = self.controls.cancel_at_s
        if pending_stop is None and cancel_at is not None and self.clock.now >= cancel_at:
            return self._make_stop("cancelled", "cancelled_by_user", "the user cancelled the task during a batch")
        wall_left = self.meter.remaining("wall_time_s")
        if pending_stop is None and batch.outcome == "deadline" and wall_left is not None and wall_left <= EPSILON:
            return self._budget_stop("wall_time_s", 0, t)
        return pending_stop

    # -- the result -------------------------------------------------------------------------------------------
    def _result(self, stop: Stop) -> ControllerRun:
        saved = self._saved(stop) if stop.status in ("waiting_for_user", "handed_off") else None
        return ControllerRun(
            label=self.label, trace_id=self.trace_id, task=self.task, policy=self.policy, stop=stop,
            turns=tuple(self.turn_records), calls=self.ledger.records(), events=tuple(self.ledger.events),
            compactions=tuple(self.compactions), usage=self.meter.usage(), within_budget=self.meter.within_limits(),
            trace=self.sink.trace(), trace_path=self.trace_path, saved=saved, resumed_at_turn=self.resumed_at_turn)

    def _saved(self, stop: Stop) -> dict[str, Any]:
        snapshot = dict(self.state.snapshot())
        snapshot["finished"] = None  # a waiting task is paused, not finished: resuming reopens it by design
        return {
            "schema_version": TRACE_SCHEMA, "trace_id": self.trace_id, "label": self.label, "status": stop.status,
            "question": stop.question, "parameter": (self.state.waiting_for or {}).get("input"),
            "task": self.task.spec(), "budget": self.budget.model_dump(mode="json"),
            "policy": self.policy.model_dump(mode="json"), "context": self.context.model_dump(mode="json"),
            "send_state": self.send_state, "model_latency_s": self.model_latency_s, "scenario": self.scenario,
            "faults": [f.model_dump(mode="json") for f in self.injector.faults], "injector": self.injector.state(),
            "state": snapshot, "meter": self.meter.state(), "clock": self.clock.now, "turn": self.turn,
            "head": [message_to_dict(m) for m in self.head],
            "groups": [[message_to_dict(m) for m in g] for g in self.groups],
            "monitor": self.monitor.state(), "repairs_used": self.repairs_used,
            "claims_rejected": self.claims_rejected, "call_counter": self.call_counter,
            "failed_calls": [list(k) for k in sorted(self.failed_calls)],
            "model_calls": int(self.meter.used["model_calls"]),
            "turns": [r.to_dict() for r in self.turn_records],
            "calls": [c.to_dict() for c in self.ledger.records()],
            "trace_path": str(self.trace_path) if self.trace_path else None,
        }


def run_controller(task: Task, model: Model, **kwargs: Any) -> ControllerRun:
    """Build a :class:`Controller` and run it (a convenience for notebooks)."""
    return Controller(task, model, **kwargs).run()


def resume(saved: Mapping[str, Any] | str | Path, answer: str, *, model: Model | None = None,
           trace: str | Path | None = None, tools: Toolbox | None = None) -> ControllerRun:
    """Continue a task that stopped as ``waiting_for_user`` (or ``handed_off``) with the user's answer.

    Budgets, clock, state, fingerprints and fault counters continue from where
    they were: waiting did not spend anything, and answering does not reset
    anything. The answer becomes a user input in state (version + 1) and a
    ``USER ANSWER`` message in the transcript.

    Args:
        saved: ``run.saved``, or a path to a file written by :meth:`ControllerRun.save`.
        answer: the user's reply.
        model: the model to continue with (default: rebuilt from the scenario, if the run came from one).
        trace: the trace file to append to (default: the original one, if any).
        tools: the toolbox (default: the task's).
    """
    from agentloops.controller.saved import load_saved
    from agentloops.controller.tasks import make_task

    data = load_saved(saved)
    task = make_task(data["task"]["type"], data["task"]["params"], source="saved run")
    task = replace(task, budget=Budget.model_validate(data["budget"]))
    if model is None:
        if data.get("scenario") is None:
            raise ConfigError("this saved run did not come from a scenario; pass model= to resume it")
        from agentloops.controller.scenarios import build_model, scenario_from_dict

        scenario = scenario_from_dict(data["scenario"], "saved run scenario")
        model = build_model(scenario, task, skip=int(data.get("model_calls", 0)))
    trace_path = trace if trace is not None else data.get("trace_path")
    controller = Controller(task, model, tools=tools, policy=data["policy"], budget=task.budget,
                            faults=data.get("faults", ()), context=ContextPolicy.model_validate(data["context"]),
                            send_state=bool(data["send_state"]), trace=None, trace_id=data["trace_id"],
                            label=data["label"], model_latency_s=float(data["model_latency_s"]),
                            scenario=data.get("scenario"))
    controller.trace_path = Path(trace_path) if trace_path else None
    controller.injector.restore(data.get("injector", {}))
    controller.state = TaskState.from_snapshot(data["state"])
    controller.clock.now = float(data["clock"])
    meter = data["meter"]
    controller.meter = BudgetMeter(task.budget, controller.clock, controller.policy.retry_scope, used=meter["used"],
                                   retries_by_tool=meter["retries_by_tool"], started_at=meter["started_at"])
    controller.meter.waited_s = float(meter.get("waited_s", 0.0))
    controller.turn = int(data["turn"])
    controller.head = [message_from_dict(m) for m in data["head"]]
    controller.groups = [[message_from_dict(m) for m in g] for g in data["groups"]]
    controller.monitor = ProgressMonitor.from_state(data["monitor"])
    controller.repairs_used = int(data["repairs_used"])
    controller.claims_rejected = int(data["claims_rejected"])
    controller.call_counter = int(data["call_counter"])
    controller.failed_calls = {tuple(k) for k in data.get("failed_calls", [])}  # type: ignore[misc]
    controller.turn_records = [_turn_from_dict(t) for t in data.get("turns", [])]
    parameter = str(data.get("parameter") or "answer")
    controller.resumed_at_turn = controller.turn + 1
    controller.sink.lines = [controller._start_line()] + [t.to_dict() for t in controller.turn_records]
    if controller.trace_path is not None:
        fresh = not controller.trace_path.exists() or controller.trace_path.stat().st_size == 0
        controller.sink.writer = TraceWriter(controller.trace_path, append=True)
        if fresh:  # a new file: write the configuration and the earlier turns first
            for line in controller.sink.lines:
                controller.sink.writer.write(line)
    for call in data.get("calls", []):
        controller.ledger.calls[call["call_id"]] = _call_from_dict(call)
        if call["state"] in ("succeeded", "failed"):
            controller.ledger.applied.add(call["call_id"])
    controller.state.begin_turn()
    controller.state.add_input(parameter, answer)
    controller.groups.append([Message("user", f"{USER_ANSWER_PREFIX} {parameter}: {answer}")])
    controller.sink.write({"kind": "resume", "trace_id": controller.trace_id, "turn": controller.turn,
                           "at_s": controller.clock.now, "parameter": parameter, "answer": answer,
                           "state_version": controller.state.version})
    return controller._drive()


def _turn_from_dict(data: Mapping[str, Any]) -> TurnRecord:
    fields = {k: v for k, v in data.items() if k != "kind"}
    fields["open_items"] = tuple(fields.get("open_items", ()))
    fields["missing_items"] = tuple(fields.get("missing_items", ()))
    fields["actions"] = tuple(fields.get("actions", ()))
    return TurnRecord(**fields)


def _call_from_dict(data: Mapping[str, Any]) -> Any:
    from agentloops.controller.parallel import Call

    return Call(**dict(data))


def summary_table(runs: Sequence[ControllerRun]) -> str:
    """Several runs side by side: label, status, code, turns, tool calls, actions."""
    rows = [[r.label, r.policy.name, r.status, r.code, r.steps, int(r.usage.get("tool_calls", 0)),
             clip(" → ".join(r.actions), 70)] for r in runs]
    return text_table(["run", "policy", "status", "code", "turns", "tool calls", "actions"], rows)
