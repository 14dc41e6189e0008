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
5. every tool call — alone or in a parallel batch — passes one admission
   (:meth:`Controller._admit`): a cancel that came due; its fingerprint
   (tool, normalised arguments, progress version; a repeat that brought
   nothing → ``no_progress`` before it runs); the schema, the permission
   gate, the task's rules and the risk policy (a value the *user* gave that
   fails the schema goes back to the user); and, if the same call failed
   transiently before, the retry rules: a side effect is never repeated (a
   person checks), anything else is a retry paid from the shared budget.
   Admitted calls run with the retries and fallbacks the error policy routes
   (a fallback passes the same pre-check first); parallel calls go through a
   join rule and the ledger;
6. the state delta, budgets and decision are written to the trace and flushed.

Nothing here raises for a run that ends badly — a model or provider that
raises included: every ending is a :class:`~agentloops.controller.status.Stop`.
Only a simulated kill (:class:`~agentloops.controller.errors.ProcessKilled`)
escapes, to prove that the trace survives it.
"""

from __future__ import annotations

import html
import json
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

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
from agentloops.controller.progress import (
    Fingerprint,
    ProgressMonitor,
    Repeat,
    fingerprint,
    normalize_args,
    normalize_value,
)
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
from agentloops.tokens import Tokenizer, estimate_tokens

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_MODEL_LATENCY_S = 1.0
"""Simulated seconds per model call."""

_TRACE_NAMESPACE = uuid.UUID("6f1d3a52-2b7e-4c1e-9a51-3f0c8d2e7b44")


def new_trace_id(seed: int | str | None = None) -> str:
    """A run id: random (unique per run), or derived from ``seed`` (the same seed, the same id).

    Ids are 12 hex digits of a UUID (v4 when random, v5 of the seed otherwise). The scenario
    name is not an id: many runs of one scenario must be told apart in logs, so it is kept as
    the run's *label* instead.

    Example:
        >>> new_trace_id("weather-normal") == new_trace_id("weather-normal") != new_trace_id()
        True
    """
    value = uuid.uuid4() if seed is None else uuid.uuid5(_TRACE_NAMESPACE, str(seed))
    return value.hex[:12]


Executor = Callable[[ToolSpec, Mapping[str, Any]], ToolResult]
"""Runs one validated tool attempt: live stubs with faults by default, recorded results in replay."""


@dataclass(frozen=True, slots=True)
class Controls:
    """Signals from outside the loop, on the simulated timeline.

    Attributes:
        cancel_at_turn: the user cancels before this turn starts.
        cancel_at_s: the user cancels at this simulated time: checked at turn starts, before
            every tool attempt (retries and fallback switches included), during a retry's
            back-off, while a call runs (it is cancelled; its result arrives late and is
            ignored) and during a parallel batch.
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


AdmissionVerdict = Literal["run", "repeat", "stop", "skip", "rejected"]
"""What admission decided for one tool call before anything ran."""


@dataclass(frozen=True)
class _Admission:
    """The verdict on one tool call before it runs — the same rules for single and parallel calls.

    Attributes:
        verdict: ``run``; ``repeat`` (a repeated fingerprint: not run); ``stop`` (the run must stop:
            cancelled, held by a rule or the risk policy, a side effect to re-check, retries spent);
            ``skip`` (not run; the item was given up because retries are spent); ``rejected``
            (answered before running by the schema or the permission gate).
        tool / args / label / fp: the call, its label and its fingerprint.
        spec: the tool, when it exists.
        kind: ``call``, or ``retry`` when the same call failed transiently before (the caller pays one
            retry from the shared budget when it launches the call).
        stop: for ``stop``, the stop.
        repeat: for ``repeat``, the earlier sighting.
        rejection: for ``rejected``, the result that answered the call.
    """

    verdict: AdmissionVerdict
    tool: str
    args: dict[str, Any]
    label: str
    fp: Fingerprint
    spec: ToolSpec | None = None
    kind: str = "call"
    stop: Stop | None = None
    repeat: Repeat | None = None
    rejection: ToolResult | None = None


def _no_handler(args: dict[str, Any]) -> Any:
    """The handler of a placeholder spec for a tool that does not exist (never called)."""
    return None


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
        saved: for ``waiting_for_user``, everything needed to resume (once); for ``handed_off``,
            the same package handed to the person who takes over (it cannot be resumed).
        resumed_at_turn: the first turn after a resume (``None`` for a fresh run).
        toolbox: the tools the run used (a resume keeps them).
        stored: outputs kept outside the context, by reference (``ref:1``…): where the full data is.
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
    toolbox: Toolbox | None = None
    stored: Mapping[str, Any] = field(default_factory=dict)

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

    def resume(self, answer: str, *, model: Model | None = None, trace: str | Path | None = None,
               tools: Toolbox | None = None, executor: Executor | None = None) -> ControllerRun:
        """Continue a waiting task with the user's answer (see :func:`resume`); the run's own tools are kept.

        A pause continues once: calling this twice on the same run raises :class:`ConfigError`.
        """
        if self.saved is None or self.status != "waiting_for_user":
            raise ConfigError(f"a run that stopped as {self.status} cannot be resumed; only a waiting_for_user run "
                              "continues with the user's answer")
        return resume(self.saved, answer, model=model, trace=trace if trace is not None else self.trace_path,
                      tools=tools if tools is not None else self.toolbox, executor=executor)

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
        trace_id: the run's id (default: :func:`new_trace_id`, random; pass ``new_trace_id(seed)``
            for a reproducible one).
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
        self.trace_id = trace_id or new_trace_id()
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
        codes = [code for code in self.state.missing_codes().values() if code is not None]
        described = "; ".join(f"{k} ({v})" for k, v in missing.items())
        if self.state.facts:
            return self._make_stop("partially_completed", "items_unobtainable",
                                   f"{len(missing)} item(s) cannot be obtained: {described}", answer=answer)
        reason = f"nothing could be obtained: {described}"
        spent = [code for code in codes if code in TRANSIENT or code == "budget:retries"]
        if codes and len(codes) == len(missing) and len(spent) == len(codes):  # gave up on transient failures
            return self._make_stop("budget_exhausted", "budget:retries", reason, budget="retries")
        code = next((c for c in codes if c not in spent), "items_unobtainable")
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
        for arrival in sorted(self.inbox, key=lambda a: (a.at, a.call_id, a.delivery)):
            self._deliver(arrival)  # late results: written to the trace, refused by the closed ledger
        self.inbox = []
        return stop

    def _budget_stop(self, name: BudgetName, needed: float) -> Stop:
        limit = self.budget.limit(name)
        used = self.meter.used_of(name)
        if name == "context_tokens":
            reason = f"the next request ({needed:g} tokens) is larger than the context budget ({limit:g} tokens)"
        elif name == "wall_time_s" and needed <= 0:
            reason = f"the wall-time budget ran out while waiting: {used:g} s of the {limit:g} s allowed are used"
        elif name == "wall_time_s":
            reason = (f"the wall-time budget would run out: {used:g} s used + {needed:g} s for the next step > "
                      f"{limit:g} s allowed")
        else:
            reason = f"the {name} budget would be exceeded: {used:g} used + {needed:g} needed > {limit:g} allowed"
        return self._make_stop("budget_exhausted", f"budget:{name}", reason, budget=name)

    def _cancel_due(self) -> bool:
        """True once the simulated clock has reached the user's cancel time."""
        cancel_at = self.controls.cancel_at_s
        return cancel_at is not None and self.clock.now >= cancel_at - EPSILON

    def _cancel_within(self, seconds: float) -> float | None:
        """The cancel time if it falls inside the next ``seconds`` of waiting, else ``None``."""
        cancel_at = self.controls.cancel_at_s
        if cancel_at is not None and self.clock.now < cancel_at < self.clock.now + seconds:
            return cancel_at
        return None

    def _cancel_stop(self, reason: str, tool: str | None = None) -> Stop:
        return self._make_stop("cancelled", "cancelled_by_user", reason, tool=tool)

    # -- one turn ---------------------------------------------------------------------------------------
    def _turn(self, t: _Turn) -> Stop | None:
        controls = self.controls
        if (controls.cancel_at_turn is not None and self.turn >= controls.cancel_at_turn) or self._cancel_due():
            t.action = "cancel"
            return self._cancel_stop("the user cancelled the task")
        idle = self.policy.idle_turns
        if idle is not None and self.monitor.idle >= idle:
            return self._make_stop("no_progress", "idle_turns",
                                   f"{self.monitor.idle} turns in a row added no fact, settled no item and got no "
                                   "user input")
        for name in ("steps", "model_calls"):
            if not self.meter.allows(name):  # type: ignore[arg-type]
                return self._budget_stop(name, 1)  # type: ignore[arg-type]
        request = self._request(t)
        size = sum(m.tokens(self.tokenizer) for m in request)
        t.context_tokens = size
        if not self.meter.allows("context_tokens", size):
            return self._budget_stop("context_tokens", size)
        if not self.meter.allows("tokens", size + self.budget.output_reserve):
            return self._budget_stop("tokens", size + self.budget.output_reserve)
        if not self.meter.allows("wall_time_s", self.model_latency_s):
            return self._budget_stop("wall_time_s", self.model_latency_s)
        self.meter.spend("steps")
        self.meter.spend("model_calls")
        self.meter.spend("context_tokens", size)
        try:
            response = self.model(request)
        except Exception as exc:  # a provider or model failure: a stop with a reason, never a traceback
            self.clock.advance(self.model_latency_s)
            self.meter.spend("tokens", size)  # the prompt was sent
            t.action, t.observation = "model error", f"the model call failed ({type(exc).__name__})"
            return self._make_stop("failed_unrecoverable", "model_error",
                                   f"the model call failed ({type(exc).__name__}); nothing more was attempted",
                                   error_class=type(exc).__name__)
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
    def _retries_left(self, tool: str, reserved: Counter[str] | None = None) -> float | None:
        """Retries ``tool`` may still spend (``None``: no limit), minus any ``reserved`` in this batch."""
        limit = self.budget.limit("retries")
        if limit is None:
            return None
        held = reserved or Counter()
        if self.meter.retry_scope == "per_tool":
            return limit - self.meter.retries_by_tool[tool] - held[tool]
        return limit - self.meter.used["retries"] - sum(held.values())

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
                       kind: str, result: ToolResult | None, route_taken: str | None,
                       fp: Fingerprint | None = None) -> None:
        t.actions.append({"label": label, "call_id": call_id, "tool": tool, "args": dict(args),
                          "args_norm": normalize_args(args), "kind": kind,
                          "status": result.status if result else None, "route": route_taken,
                          "result": result.to_dict() if result else None,
                          "fingerprint": None if fp is None else [fp.tool, fp.args, fp.state_version]})

    def _from_user(self, value: Any) -> bool:
        """True when ``value`` is one the user supplied (an input in state), not one the model made up."""
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            return False
        return any(normalize_value(str(given)) == normalize_value(str(value)) for given in self.state.inputs.values())

    def _reask_user(self, spec: ToolSpec | None, args: Mapping[str, Any], rejection: ToolResult) -> Stop | None:
        """A value the *user* gave that the schema rejects goes back to the user, not to the model.

        The model cannot repair what only the user knows; asking it to would invite a guess.
        The question names the value and repeats the parameter's own question, never the
        tool's validation pattern.
        """
        name = rejection.parameter
        if spec is None or rejection.status != "invalid_arguments" or name is None or name not in spec.params:
            return None
        value = args.get(name)
        if not self._from_user(value):
            return None
        words = name.replace("_", " ")
        ask = spec.params[name].ask_user or f"Could you send the correct {words}?"
        question = f"{value!r} does not look like a valid {words}. {ask}"
        self.state.set_waiting(name, question)
        return self._make_stop("waiting_for_user", "invalid_user_input",
                               f"the {words} the user gave ({value!r}) is not valid for {spec.name}; only the user "
                               "can correct it, so the model is not asked to guess", tool=spec.name,
                               error_class="invalid_arguments", question=question)

    def _admit(self, t: _Turn, call: ToolCall, *, in_batch: bool, reserved: Counter[str] | None = None
               ) -> _Admission:
        """Decide, before anything runs, what happens to one tool call (single and parallel calls alike).

        In order: a cancel that has come due; a repeated fingerprint; the pre-check (schema,
        permission gate, task rules, risk) — with a user-supplied value that fails the schema
        sent back to the user; then, if the same call failed transiently before, it is a
        *retry*: a side effect is never repeated (a person checks), and anything else needs a
        retry left in the shared budget (minus those ``reserved`` by earlier calls of the same
        batch), or it is blocked. The caller pays for an admitted retry when it launches it.
        """
        tool, args = call.name, dict(call.parsed_arguments or {})
        label = action_label(tool, args)
        fp = fingerprint(tool, args, self.state.progress_version)

        def refuse(verdict: AdmissionVerdict, prefix: str, route_taken: str, **extra: Any) -> _Admission:
            self._record_action(t, f"{prefix}:{label}", None, tool, args, prefix, None, route_taken, fp)
            return _Admission(verdict, tool, args, label, fp, **extra)

        if self._cancel_due():
            return refuse("stop", "blocked", "stop:cancelled",
                          stop=self._cancel_stop(f"the user cancelled the task before {tool} ran", tool))
        if self.policy.detect_repeats and (repeat := self.monitor.check(fp)) is not None:
            self.state.note(repeat.explain())
            return refuse("repeat", "blocked", "skip" if in_batch else "stop:no_progress", repeat=repeat)
        spec = self.toolbox.tools.get(tool)
        checked = self._precheck(spec, tool, args)
        if isinstance(checked, Stop):
            return refuse("stop", "held", f"stop:{checked.status}", stop=checked, spec=spec)
        if checked is not None:
            asked = self._reask_user(spec, args, checked)
            if asked is not None:
                return refuse("stop", "held", "ask_user", stop=asked, spec=spec)
            return _Admission("rejected", tool, args, label, fp, spec=spec, rejection=checked)
        assert spec is not None
        if (tool, normalize_args(args)) not in self.failed_calls:
            return _Admission("run", tool, args, label, fp, spec=spec)
        if spec.side_effects and not self.policy.retry_side_effects:
            stop = self._make_stop("handed_off", "unknown_outcome_side_effect",
                                   f"{tool} changes the world and its last attempt failed transiently: whether it "
                                   "took effect is unknown, so a person must check before it runs again",
                                   tool=tool, pending_action=label)
            return refuse("stop", "held", "stop:handed_off", stop=stop, spec=spec)
        left = self._retries_left(tool, reserved)
        if left is not None and left < 1:
            if self.policy.on_retries_exhausted == "stop":
                return refuse("stop", "blocked", "stop:budget_exhausted", stop=self._budget_stop("retries", 1),
                              spec=spec)
            item = self.task.type.item_for(tool, args, self.task.params)
            if item is not None:
                self.state.mark_missing(item, "retry budget spent: the same call failed before and no retries are "
                                              "left", code="budget:retries")
            return refuse("skip", "blocked", "degrade", spec=spec)
        return _Admission("run", tool, args, label, fp, spec=spec, kind="retry")  # the model repeats it: a retry

    def _note_attempt(self, tool: str, args: Mapping[str, Any], result: ToolResult) -> None:
        """Remember a failed attempt in state, and which calls a repeat would *retry*."""
        key = (tool, normalize_args(args))
        if result.status in ("ok", "empty"):
            self.failed_calls.discard(key)
            return
        self.state.record_failure(tool, result.status, result.error or "", self.turn)
        if result.status in TRANSIENT:
            self.failed_calls.add(key)

    def _not_run(self, call: ToolCall, tool: str, why: str) -> None:
        """Answer a call that did not run, so every call in the transcript has its tool message."""
        text = json.dumps({"tool": tool, "status": "not run", "error": why}, ensure_ascii=False)
        self.groups[-1].append(Message("tool", text, tool_call_id=call.id, name=tool))

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

    def _execute(self, t: _Turn, spec: ToolSpec, args: Mapping[str, Any], first_kind: str,
                 fp: Fingerprint | None = None) -> tuple[ToolResult, ToolSpec, Route | Stop, Any, str]:
        """Run an admitted call until the policy settles it; returns (result, tool, route, fact parts, call id).

        Before every attempt — the first, each retry and a fallback switch — the cancel time,
        the tool-call budget and the wall-time budget are checked. A fallback also passes the
        full pre-check first (schema, permission gate, task rules, risk); if that refuses, the
        item is given up instead.
        """
        current, attempts, kind = spec, 1, first_kind
        tried: set[str] = set()
        last: ToolResult | None = None
        call_id = ""

        def not_run(why: str) -> ToolResult:
            return last or ToolResult("permanent_error", error=f"{current.name}: not run ({why})", ran=False)

        while True:
            if self._cancel_due():
                return not_run("cancelled"), current, self._cancel_stop(
                    f"the user cancelled the task before the next attempt of {current.name}", current.name), None, \
                    call_id
            if not self.meter.allows("tool_calls"):
                return not_run("tool-call budget spent"), current, self._budget_stop("tool_calls", 1), None, call_id
            if not self.meter.allows("wall_time_s", current.timeout_s):
                return not_run("wall-time budget spent"), current, self._budget_stop(
                    "wall_time_s", current.timeout_s), None, call_id
            call_id = self._new_call_id()
            started = self.clock.now
            self.ledger.open(call_id, current.name, normalize_args(args), self.turn, started, kind)
            raw = self.executor(current, args)
            self.meter.spend("tool_calls")
            label = ("" if kind == "call" else f"{kind}:") + action_label(current.name, args)
            cancel_at = self._cancel_within(raw.latency_s)
            if cancel_at is not None:  # the user cancels while the call runs: stop waiting; it will land late
                self.clock.advance(cancel_at - started)
                self.ledger.cancel_running(self.clock.now, "cancelled: the user cancelled the task")
                late, _ = self._usable(raw, current.name, args)
                for delivery in range(1, late.deliveries + 1):
                    self.inbox.append(Arrival(round(started + raw.latency_s + 0.05 * (delivery - 1), 6), call_id,
                                              late, delivery, self.trace_id))
                self._record_action(t, label, call_id, current.name, args, kind, None, "cancelled", fp)
                return (ToolResult("permanent_error", error=f"{current.name}: cancelled while running", ran=False),
                        current, self._cancel_stop(f"the user cancelled the task while {current.name} was running",
                                                   current.name), None, call_id)
            self.clock.advance(raw.latency_s)
            result, parts = self._usable(raw, current.name, args)
            last = result
            for delivery in range(1, result.deliveries + 1):
                self._deliver(Arrival(self.clock.now, call_id, result, delivery, self.trace_id))
            self._note_attempt(current.name, args, result)
            item = self.task.type.item_for(current.name, args, self.task.params)
            fallback = self.toolbox.tools.get(current.fallback) if current.fallback and current.fallback not in tried \
                else None
            ctx = RouteContext(current, attempts, self._retries_left(current.name), fallback,
                               self.task.type.allows_not_found and item is not None, self.repairs_used,
                               self.task.granted)
            decision = route(self.policy, result, ctx)
            if isinstance(decision, Fallback):
                refused = self._precheck(self.toolbox.tools.get(decision.tool), decision.tool, args)
                if refused is not None:
                    why = refused.reason if isinstance(refused, Stop) else (refused.error or refused.status)
                    decision = Degrade(result.status, f"fallback {decision.tool} refused before it ran: {why}")
            self._record_action(t, label, call_id, current.name, args, kind, result, route_name(decision), fp)
            if isinstance(decision, Retry):
                if not self.meter.allows("wall_time_s", decision.delay_s + current.timeout_s):
                    return result, current, self._budget_stop("wall_time_s", decision.delay_s + current.timeout_s), \
                        None, call_id
                cancel_at = self._cancel_within(decision.delay_s)
                if cancel_at is not None:  # cancelled during the back-off: the retry never starts
                    self.clock.advance(cancel_at - self.clock.now)
                    return result, current, self._cancel_stop(
                        f"the user cancelled the task while waiting to retry {current.name}", current.name), None, \
                        call_id
                self.meter.spend("retries", tool=current.name)
                self.clock.advance(decision.delay_s)
                attempts, kind = attempts + 1, "retry"
                continue
            if isinstance(decision, Fallback):
                self.meter.spend("retries", tool=current.name)
                tried.add(current.name)
                current, attempts, kind = self.toolbox[decision.tool], 1, "fallback"
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
                self.state.mark_missing(item, f"{decision.code}: {decision.reason}", code=decision.code)
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
        admission = self._admit(t, call, in_batch=False)
        tool, args, fp = admission.tool, admission.args, admission.fp
        t.action, t.args_summary = admission.label, normalize_args(args)
        if admission.verdict == "repeat":
            assert admission.repeat is not None
            t.tool_status, t.observation = "not run", f"repeat of turn {admission.repeat.first_turn}"
            return self._make_stop("no_progress", "repeated_action", admission.repeat.explain(), tool=tool)
        if admission.verdict == "skip":
            t.tool_status, t.observation = "not run", "retry budget spent; the item is given up"
            self._not_run(call, tool, "the same call failed before and the retry budget is spent")
            return None
        if admission.verdict == "stop":
            t.tool_status = "not run"
            return admission.stop
        progress_before = self.state.progress_count
        if admission.verdict == "rejected":  # answered before running: schema, gate
            result = admission.rejection
            assert result is not None
            ctx = RouteContext(admission.spec or ToolSpec(tool, "", {}, _no_handler), 1, self._retries_left(tool),
                               None, False, self.repairs_used, self.task.granted)
            decision: Route | Stop = route(self.policy, result, ctx)
            self._record_action(t, admission.label, None, tool, args, "rejected", result, route_name(decision), fp)
            self.state.record_failure(tool, result.status, result.error or "", self.turn)
            final_tool, parts, call_id = tool, None, ""
        else:
            assert admission.spec is not None
            if admission.kind == "retry":
                self.meter.spend("retries", tool=tool)
            result, final_spec, decision, parts, call_id = self._execute(t, admission.spec, args, admission.kind, fp)
            final_tool = final_spec.name
        ref = self._tool_message(call, final_tool, args, result)
        t.tool_status = "→".join(a["status"] or "-" for a in t.actions) if len(t.actions) > 1 else result.status
        stop = self._apply(t, final_tool, args, result, decision, parts, call_id, ref)
        self._sighting(fp, result.status, progress_before,
                       "; ".join(self.state._unchanged) or f"{result.status}, no new fact")
        return stop

    def _sighting(self, fp: Fingerprint, status: str, progress_before: int, why: str) -> None:
        """Tell the progress monitor how acting on ``fp`` went.

        Rejected arguments are not a sighting: the repair allowance bounds them, and its stop
        ("invalid arguments again") names the real problem better than "repeated action".
        """
        if status == "invalid_arguments":
            return
        new = self.state.progress_count != progress_before
        self.monitor.record(fp, self.turn, status, new, "" if new else why)

    # -- parallel calls -------------------------------------------------------------------------------------
    def _parallel(self, t: _Turn, calls: Sequence[ToolCall]) -> Stop | None:
        labels = [action_label(c.name, c.parsed_arguments or {}) for c in calls]
        t.action = f"parallel×{len(calls)}: " + ", ".join(labels)
        t.args_summary = "; ".join(normalize_args(c.parsed_arguments or {}) for c in calls)
        launch: list[tuple[ToolCall, _Admission]] = []
        pending_stop: Stop | None = None
        blocked = 0
        reserved: Counter[str] = Counter()
        for call in calls:
            admission = self._admit(t, call, in_batch=True, reserved=reserved)
            tool, args = admission.tool, admission.args
            if admission.verdict == "repeat":
                blocked += 1
                self._not_run(call, tool, "repeat of an action that brought nothing")
                continue
            if admission.verdict == "stop":
                pending_stop = pending_stop or admission.stop
                self._not_run(call, tool, "the task is stopping")
                continue
            if admission.verdict == "skip":
                self._not_run(call, tool, "the same call failed before and the retry budget is spent")
                continue
            if admission.verdict == "rejected":
                checked = admission.rejection
                assert checked is not None
                ctx = RouteContext(admission.spec or ToolSpec(tool, "", {}, _no_handler), 1, None, None, False,
                                   self.repairs_used, self.task.granted)
                decision = route(self.policy, checked, ctx)
                self._record_action(t, admission.label, None, tool, args, "rejected", checked, route_name(decision),
                                    admission.fp)
                self.state.record_failure(tool, checked.status, checked.error or "", self.turn)
                self._tool_message(call, tool, args, checked)
                pending_stop = pending_stop or self._apply(t, tool, args, checked, decision, None, "")
                continue
            if admission.kind == "retry":
                reserved[tool] += 1
            launch.append((call, admission))
        if blocked == len(calls):
            return self._make_stop("no_progress", "repeated_action",
                                   "every call of the batch repeats an action that brought nothing new")
        if pending_stop is not None:  # the run stops: start nothing new (and pay for nothing)
            for call, admission in launch:
                self._not_run(call, admission.tool, "the task is stopping")
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
        started: dict[str, tuple[ToolCall, ToolSpec, dict[str, Any], Fingerprint, ToolResult, Any]] = {}
        for call, admission in launch:
            spec, args = admission.spec, admission.args
            assert spec is not None
            if not self.meter.allows("tool_calls"):  # not run; the batch goes on with what could be paid for
                self._record_action(t, f"blocked:{admission.label}", None, spec.name, args, "blocked", None,
                                    "budget:tool_calls", admission.fp)
                self._not_run(call, spec.name, "the tool-call budget is spent")
                continue
            if admission.kind == "retry":
                self.meter.spend("retries", tool=spec.name)
            call_id = self._new_call_id()
            self.ledger.open(call_id, spec.name, normalize_args(args), self.turn, start, admission.kind, parallel=True)
            raw = self.executor(spec, args)
            self.meter.spend("tool_calls")
            result, parts = self._usable(raw, spec.name, args)
            for delivery in range(1, result.deliveries + 1):
                batch.add(Arrival(round(start + result.latency_s + 0.05 * (delivery - 1), 6), call_id, result,
                                  delivery, self.trace_id))
            started[call_id] = (call, spec, args, admission.fp, result, parts)
            prefix = "" if admission.kind == "call" else f"{admission.kind}:"
            self._record_action(t, prefix + admission.label, call_id, spec.name, args, admission.kind, result, None,
                                admission.fp)
        if not started:  # the budget could pay for none of them: stop now, naming it
            return self._budget_stop("tool_calls", 1)
        batch.total = len(started)
        statuses: dict[str, str] = {}
        while (arrival := batch.next()) is not None:
            if arrival.at > self.clock.now:
                self.clock.advance(arrival.at - self.clock.now)
            verdict = self._deliver(arrival)
            call, spec, args, fp, result, parts = started[arrival.call_id]
            if verdict != "applied":
                continue
            ctx = RouteContext(spec, 1, self._retries_left(spec.name), None, self.task.type.allows_not_found,
                               self.repairs_used, self.task.granted)
            decision = route(self.policy, result, ctx)
            if isinstance(decision, (Retry, Fallback)):
                decision = ReturnToModel(f"{result.status}: not retried inside a parallel batch; calling it again "
                                         "is a retry, paid from the shared budget")
            if isinstance(decision, StopRun) and decision.code == "budget:retries":
                decision = ReturnToModel(f"{result.status}: the item stays open")
            self._note_attempt(spec.name, args, result)
            for action in t.actions:
                if action["call_id"] == arrival.call_id:
                    action["route"] = route_name(decision)
            ref = self._tool_message(call, spec.name, args, result)
            statuses[arrival.call_id] = result.status
            progress_before = self.state.progress_count
            stop = self._apply(t, spec.name, args, result, decision, parts, arrival.call_id, ref)
            self._sighting(fp, result.status, progress_before, f"{result.status}, no new fact")
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
        if pending_stop is None and self._cancel_due():
            return self._cancel_stop("the user cancelled the task during a batch")
        wall_left = self.meter.remaining("wall_time_s")
        if pending_stop is None and batch.outcome == "deadline" and wall_left is not None and wall_left <= EPSILON:
            return self._budget_stop("wall_time_s", 0)
        return pending_stop

    # -- the result -------------------------------------------------------------------------------------------
    def _result(self, stop: Stop) -> ControllerRun:
        saved = self._saved(stop) if stop.status in ("waiting_for_user", "handed_off") else None
        return ControllerRun(
            label=self.label, trace_id=self.trace_id, task=self.task, policy=self.policy, stop=stop,
            turns=tuple(self.turn_records), calls=self.ledger.records(), events=tuple(self.ledger.events),
            compactions=tuple(self.compactions), usage=self.meter.usage(), within_budget=self.meter.within_limits(),
            trace=self.sink.trace(), trace_path=self.trace_path, saved=saved, resumed_at_turn=self.resumed_at_turn,
            toolbox=self.toolbox, stored=dict(self.store.items))

    def _saved(self, stop: Stop) -> dict[str, Any]:
        """What a paused task needs to continue (``waiting_for_user``), or what a person takes over (``handed_off``)."""
        snapshot = dict(self.state.snapshot())
        snapshot["finished"] = None  # paused, not finished: a resume continues it (once; see saved.py)
        return {
            "schema_version": TRACE_SCHEMA, "trace_id": self.trace_id, "label": self.label, "status": stop.status,
            "question": stop.question, "parameter": (self.state.waiting_for or {}).get("input"),
            "task": self.task.spec(), "budget": self.budget.model_dump(mode="json"),
            "policy": self.policy.model_dump(mode="json"), "context": self.context.model_dump(mode="json"),
            "send_state": self.send_state, "model_latency_s": self.model_latency_s, "scenario": self.scenario,
            "faults": [f.model_dump(mode="json") for f in self.injector.faults], "injector": self.injector.state(),
            "state": snapshot, "meter": self.meter.state(), "clock": self.clock.now, "turn": self.turn,
            "paused_at_version": self.state.version,
            "head": [message_to_dict(m) for m in self.head],
            "groups": [[message_to_dict(m) for m in g] for g in self.groups],
            "monitor": self.monitor.state(), "repairs_used": self.repairs_used,
            "claims_rejected": self.claims_rejected, "consecutive_failures": self.consecutive_failures,
            "call_counter": self.call_counter,
            "failed_calls": [list(k) for k in sorted(self.failed_calls)],
            "model_calls": int(self.meter.used["model_calls"]),
            "turns": [r.to_dict() for r in self.turn_records],
            "calls": [c.to_dict() for c in self.ledger.records()],
            "store": dict(self.store.items),
            "trace_path": str(self.trace_path) if self.trace_path else None,
        }


def run_controller(task: Task, model: Model, **kwargs: Any) -> ControllerRun:
    """Build a :class:`Controller` and run it (a convenience for notebooks)."""
    return Controller(task, model, **kwargs).run()


def resume(saved: Mapping[str, Any] | str | Path, answer: str, *, model: Model | None = None,
           trace: str | Path | None = None, tools: Toolbox | None = None,
           executor: Executor | None = None) -> ControllerRun:
    """Continue a task that stopped as ``waiting_for_user`` with the user's answer — once.

    Budgets, clock, state, fingerprints, fault counters and the outputs stored
    outside the context continue from where they were: waiting did not spend
    anything, and answering does not reset anything. The answer becomes a user
    input in state (version + 1) and a ``USER ANSWER`` message in the transcript.
    (A ``handed_off`` run also has saved state, but it is the package a person
    takes over; it cannot be resumed here.)

    Resuming is idempotent: the saved run records the state version it paused
    at; a second resume of the same pause — seen in the saved run (marked when
    resumed) or in the trace (a ``resume`` line or a later turn) — is refused,
    so one task never stops twice under one trace id.

    Args:
        saved: ``run.saved``, or a path to a file written by :meth:`ControllerRun.save`.
        answer: the user's reply.
        model: the model to continue with (default: rebuilt from the scenario, if the run came from one).
        trace: the trace file to append to (default: the original one, if any).
        tools: the toolbox (default: the task's; :meth:`ControllerRun.resume` passes the run's own).
        executor: runs tool attempts (default: the stub tools with the saved faults; replay passes
            the recorded results).

    Raises:
        ConfigError: the saved run is malformed, is not waiting, or was already resumed (one line).
    """
    from agentloops.controller.saved import check_not_resumed, load_saved, mark_resumed
    from agentloops.controller.tasks import make_task

    data = load_saved(saved)
    source = str(saved) if isinstance(saved, (str, Path)) else "saved run"
    trace_path = trace if trace is not None else data.get("trace_path")
    check_not_resumed(data, source, trace_path)
    task = make_task(data["task"]["type"], data["task"]["params"], source=f"{source}: task")
    task = replace(task, budget=Budget.model_validate(data["budget"]))
    if model is None:
        if data.get("scenario") is None:
            raise ConfigError(f"{source}: this saved run did not come from a scenario; pass model= to resume it")
        from agentloops.controller.scenarios import build_model, scenario_from_dict

        scenario = scenario_from_dict(data["scenario"], f"{source}: scenario")
        model = build_model(scenario, task, skip=int(data.get("model_calls", 0)))
    controller = Controller(task, model, tools=tools, policy=data["policy"], budget=task.budget,
                            faults=data.get("faults", ()), context=ContextPolicy.model_validate(data["context"]),
                            send_state=bool(data["send_state"]), trace=None, trace_id=data["trace_id"],
                            label=data["label"], model_latency_s=float(data["model_latency_s"]),
                            scenario=data.get("scenario"), executor=executor)
    controller.trace_path = Path(trace_path) if trace_path else None
    controller.injector.restore(data.get("injector", {}))
    controller.state = TaskState.from_snapshot(data["state"])
    controller.clock.now = float(data["clock"])
    meter = data["meter"]
    controller.meter = BudgetMeter(task.budget, controller.clock, controller.policy.retry_scope, used=meter["used"],
                                   retries_by_tool=meter["retries_by_tool"], started_at=meter["started_at"])
    controller.turn = int(data["turn"])
    controller.head = [message_from_dict(m) for m in data["head"]]
    controller.groups = [[message_from_dict(m) for m in g] for g in data["groups"]]
    controller.monitor = ProgressMonitor.from_state(data["monitor"])
    controller.repairs_used = int(data["repairs_used"])
    controller.claims_rejected = int(data["claims_rejected"])
    controller.consecutive_failures = int(data.get("consecutive_failures", 0))
    controller.call_counter = int(data["call_counter"])
    controller.failed_calls = {(str(k[0]), str(k[1])) for k in data.get("failed_calls", [])}
    controller.store.items.update(data.get("store") or {})
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
    mark_resumed(saved, data, controller.clock.now)
    controller.state.begin_turn()
    controller.state.add_input(parameter, answer)
    controller.groups.append([Message("user", f"{USER_ANSWER_PREFIX} {parameter}: {answer}")])
    controller.sink.write({"kind": "resume", "trace_id": controller.trace_id, "turn": controller.turn,
                           "at_s": controller.clock.now, "parameter": parameter, "answer": answer,
                           "state_version": controller.state.version,
                           "from_version": int(data["paused_at_version"])})
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
