"""The engine's state and its shared stop helpers: what one run holds, in one object passed to every stage.

Everything a run remembers lives here — task state, budgets and clock, the progress
monitor, the call ledger, the transcript and the trace — set up once in
:class:`Engine`; the stages of a turn (:mod:`~agentloops.controller.turn`,
:mod:`~agentloops.controller.batch`, :mod:`~agentloops.controller.call`) build on it,
and :class:`~agentloops.controller.controller.Controller` runs them. The stop helpers
are here because every stage can end the run: each ending is a
:class:`~agentloops.controller.status.Stop`, never an exception.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from agentloops.controller.budgets import EPSILON, Budget, BudgetMeter, BudgetName, SimClock
from agentloops.controller.context import (
    CompactionEvent,
    Compactor,
    ContextPolicy,
    ContextStore,
    memory_from_state,
)
from agentloops.controller.errors import ConfigError
from agentloops.controller.faults import FaultInjector, FaultLike
from agentloops.controller.parallel import ARRIVAL_ORDER, Arrival, Ledger, LedgerEvent
from agentloops.controller.policy import (
    PolicyLike,
    resolve_policy,
)
from agentloops.controller.progress import (
    ProgressMonitor,
    normalize_args,
)
from agentloops.controller.status import Stop, StopStatus
from agentloops.controller.tasks import Task
from agentloops.controller.tools import (
    TRANSIENT,
    Toolbox,
    ToolResult,
    ToolSpec,
    execute,
)
from agentloops.controller.trace import TRACE_SCHEMA, TraceSink, TraceWriter, TurnRecord
from agentloops.messages import Message
from agentloops.stubs import Model
from agentloops.tokens import Tokenizer, estimate_tokens

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


_NO_CONTROLS = Controls()
"""No outside signals (a frozen value, shared by every run that has none)."""

_DEFAULT_CONTEXT = ContextPolicy()
"""The default context policy (frozen, so every run without one shares it instead of validating a new one)."""


class Engine:
    """The state of one run and the helpers every stage shares (see the module docstring)."""

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
        self.injector = _injector(faults, self.toolbox)
        self.context = context or _DEFAULT_CONTEXT
        self.compactor = compactor or memory_from_state
        self.send_state = send_state
        self.controls = controls or _NO_CONTROLS
        self.trace_path = Path(trace) if trace is not None else None
        self.trace_id = trace_id or new_trace_id()
        self.label = label
        self.model_latency_s = model_latency_s
        self.tokenizer = tokenizer
        self.scenario = dict(scenario) if scenario is not None else None
        self.executor: Executor = executor or partial(execute, injector=self.injector, granted=task.granted)

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
        self.repairs: Counter[str] = Counter()
        self._normalized: dict[tuple[str, int], tuple[Any, str]] = {}
        self._sizes: dict[int, tuple[Message, int]] = {}
        self._items: dict[tuple[str, int], tuple[Any, str | None]] = {}
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

    def _open_trace(self, append: bool) -> None:
        if self.trace_path is not None:
            self.sink.writer = TraceWriter(self.trace_path, append=append)

    def _start_line(self) -> dict[str, Any]:
        return {"kind": "start", "schema_version": TRACE_SCHEMA, "trace_id": self.trace_id, "label": self.label,
                "at_s": self.clock.now, "task": self.task.spec(), "policy": self.policy.model_dump(mode="json"),
                "budget": self.budget.model_dump(mode="json"), "context": self.context.model_dump(mode="json"),
                "send_state": self.send_state, "model_latency_s": self.model_latency_s, "scenario": self.scenario}

    def _system_text(self) -> str:
        state_line = ("Every request ends with a TASK STATE block: trust it over older messages. "
                      if self.send_state else "")
        return (f"You are a tool-calling agent working on one task ({self.task.name}).\nTools:\n"
                f"{self.toolbox.describe()}\n{state_line}A reply without tool calls is your final answer; the "
                "system checks it against the task's completion condition.")

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
        for arrival in sorted(due, key=ARRIVAL_ORDER):
            self._deliver(arrival)

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

    def _retries_left(self, tool: str, reserved: Mapping[str, int] | None = None) -> float | None:
        """Retries ``tool`` may still spend (``None``: no limit), minus any ``reserved`` in this batch."""
        limit = self.meter.limits["retries"]
        if limit is None:
            return None
        if self.meter.retry_scope == "per_tool":
            return limit - self.meter.retries_by_tool[tool] - (reserved.get(tool, 0) if reserved else 0)
        return limit - self.meter.used["retries"] - (sum(reserved.values()) if reserved else 0)

    def _size(self, messages: Sequence[Message]) -> int:
        """Prompt tokens of a request; a message resent every turn is counted once (the memo holds it, so
        its id cannot be reused), and the memo keeps only what is still sent, so it stays bounded."""
        sizes, total = self._sizes, 0
        for message in messages:
            known = sizes.get(id(message))
            if known is None or known[0] is not message:
                known = sizes[id(message)] = (message, message.tokens(self.tokenizer))
            total += known[1]
        if len(sizes) > 2 * len(messages) + 8:
            self._sizes = {id(m): sizes[id(m)] for m in messages}
        return total

    def _item(self, tool: str, args: Mapping[str, Any]) -> str | None:
        """The task item a call serves, looked up once per call (memoised like :meth:`_norm`)."""
        key = (tool, id(args))
        memo = self._items.get(key)
        if memo is not None and memo[0] is args:
            return memo[1]
        item = self.task.type.item_for(tool, args, self.task.params)
        self._items[key] = (args, item)
        return item

    def _norm(self, tool: str, args: Mapping[str, Any] | None) -> str:
        """``args`` normalised as ``tool``'s schema declares (see :attr:`Param.normalize`) — once per call.

        The same arguments object is labelled, fingerprinted, opened in the ledger and written to the
        trace; the memo (which holds the object, so its id cannot be reused) normalises it only once.
        """
        key = (tool, id(args))
        memo = self._normalized.get(key)
        if memo is not None and memo[0] is args:
            return memo[1]
        spec = self.toolbox.tools.get(tool)
        text = normalize_args(args, spec.params if spec else None)
        self._normalized[key] = (args, text)
        return text


def _injector(faults: Sequence[FaultLike], toolbox: Toolbox) -> FaultInjector:
    """The fault injector for a run, refusing a fault on a tool the task does not offer."""
    injector = FaultInjector(faults)
    for fault in injector.faults:
        if fault.tool not in toolbox:
            raise ConfigError(f"fault on {fault.tool!r}: no such tool in this task's toolbox "
                              f"({', '.join(toolbox.names())})")
    return injector


def _repair_key(tool: str, result: ToolResult) -> str:
    """``tool:status[:parameter]``: what "the same kind of error again" means for the repair allowance."""
    return ":".join(part for part in (tool, result.status, result.parameter) if part)
