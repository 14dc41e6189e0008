"""The run value: everything one run remembers, in one dataclass that every stage of a turn takes.

:class:`Run` holds the task state, the meter (and its clock), the progress monitor, the call
ledger, the transcript and the trace (:func:`new_run` sets one up). The stages of a turn are
plain functions over it (:mod:`~agentloops.controller.turn`, :mod:`~agentloops.controller.calls`);
:class:`~agentloops.controller.controller.Controller` owns one and runs them. A turn is
recorded as values (:class:`Turn`, :class:`Action`) and encoded to a trace line only when the
trace is read, or at once when a trace file is open. The stop builders are here because every
stage can end the run: each ending is a :class:`~agentloops.controller.stopping.status.Stop`, never an
exception.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any

from agentloops.controller.persistence.trace import TRACE_SCHEMA, TraceSink, TurnRecord
from agentloops.controller.persistence.trace_lines import ACTION_JSON, Action, StartLine, TaskRef
from agentloops.controller.policy.budgets import Budget, BudgetMeter, BudgetName
from agentloops.controller.policy.error_policy import ErrorPolicy, PolicyLike, resolve_policy
from agentloops.controller.sim.executor import execute
from agentloops.controller.sim.faults import FaultInjector, FaultLike
from agentloops.controller.sim.timeline import Controls
from agentloops.controller.stages import Stages
from agentloops.controller.stopping.progress import ProgressMonitor
from agentloops.controller.stopping.status import Stop, StopStatus
from agentloops.controller.task.context import (
    CompactionEvent,
    Compactor,
    ContextPolicy,
    ContextStore,
    memory_from_state,
)
from agentloops.controller.task.state import DELTA_JSON, StateDelta, TaskState
from agentloops.controller.task.tasks import Task
from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.controller.vocabulary.ledger import Arrival, Ledger
from agentloops.controller.vocabulary.tools import TRANSIENT, Toolbox, ToolResult, ToolSpec
from agentloops.i18n import N_, Phrase, joined
from agentloops.messages import Message
from agentloops.response import Response
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


@dataclass(slots=True)
class Turn:
    """The turn being built (mutable), then its values; :meth:`record` freezes it into a :class:`TurnRecord`.

    The stages fill the first group of fields (``message`` is the model's reply as the transcript
    keeps it); ``ended`` keeps the rest when the turn ends (the state delta, what was left of each budget
    and a copy of the items' statuses), so the record — and its trace line — is made only when read.
    """

    turn: int
    state_version: int
    pending_goal: str
    action: str = "-"
    args_summary: str = ""
    tool_status: str = "-"
    observation: str = ""
    decision: str = "continue"
    context_tokens: int = 0
    actions: list[Action | dict[str, Any]] = field(default_factory=list)
    response: Response | None = None
    compaction: dict[str, Any] | None = None
    failed: bool = False
    message: Message | None = None
    ended: tuple[str, float, StateDelta, dict[str, float | None], dict[str, str]] | None = None
    _record: TurnRecord | None = None

    def record(self) -> TurnRecord:
        """The frozen record (made once, on first read)."""
        if self._record is None:
            assert self.ended is not None, "the turn has not ended"
            trace_id, at_s, delta, left, items = self.ended
            ended = {"trace_id": trace_id, "at_s": at_s, "state_delta": DELTA_JSON.dump_python(delta, mode="json"),
                     "budget_left": left, "progress": delta["progress"],
                     "open_items": tuple(i for i, s in items.items() if s == "open"),
                     "missing_items": tuple(i for i, s in items.items() if s == "missing"),
                     "actions": tuple(a if isinstance(a, dict) else ACTION_JSON.dump_python(a, mode="json")
                                      for a in self.actions), "response": _reply(self.response)}
            self._record = TurnRecord(**{name: ended[name] if name in ended else getattr(self, name)
                                         for name in _RECORD_FIELDS})
        return self._record

    def to_dict(self) -> dict[str, Any]:
        """The trace line."""
        return self.record().to_dict()


_RECORD_FIELDS = tuple(f.name for f in fields(TurnRecord) if f.name != "kind")
"""A turn record's fields: each is worked out when the turn ends, or is the turn's own of the same name."""


def _reply(response: Response | None) -> dict[str, Any] | None:
    """The model's visible reply as the trace keeps it (content, finish reason, tool calls)."""
    if response is None:
        return None
    return {"content": response.content, "finish_reason": response.finish_reason,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in response.tool_calls]}


_NO_CONTROLS = Controls()
"""No outside signals (a frozen value, shared by every run that has none)."""

_DEFAULT_CONTEXT = ContextPolicy()
"""The default context policy (frozen, so every run without one shares it instead of validating a new one)."""


@dataclass(eq=False)
class Run:
    """What one run remembers — configuration, then the parts that change — passed to every stage."""

    task: Task
    model: Model
    toolbox: Toolbox
    policy: ErrorPolicy
    budget: Budget
    injector: FaultInjector
    context: ContextPolicy
    compactor: Compactor
    send_state: bool
    controls: Controls
    trace_path: Path | None
    trace_id: str
    label: str
    model_latency_s: float
    tokenizer: Tokenizer
    scenario: dict[str, Any] | None
    executor: Executor
    meter: BudgetMeter
    state: TaskState
    system: Message
    stages: Stages
    monitor: ProgressMonitor
    store: ContextStore = field(default_factory=ContextStore)
    sink: TraceSink = field(default_factory=TraceSink)
    head: list[Message] = field(default_factory=list)
    groups: list[list[Message]] = field(default_factory=list)
    turn: int = 0
    repairs: Counter[str] = field(default_factory=Counter)
    claims_rejected: int = 0
    consecutive_failures: int = 0
    call_counter: int = 0
    failed_calls: set[tuple[str, str]] = field(default_factory=set)
    inbox: list[Arrival] = field(default_factory=list)
    turns: list[Turn | TurnRecord] = field(default_factory=list)
    compactions: list[CompactionEvent] = field(default_factory=list)
    resumed_at_turn: int | None = None
    stop: Stop | None = None
    ledger: Ledger = field(init=False)

    def __post_init__(self) -> None:
        self.ledger = Ledger(self.trace_id, self.sink.write)  # what it refuses is written to the trace


def new_run(task: Task, model: Model, *, tools: Toolbox | None = None, policy: PolicyLike | None = None,
            budget: Budget | None = None, faults: Sequence[FaultLike] = (), context: ContextPolicy | None = None,
            compactor: Compactor | None = None, send_state: bool = True, controls: Controls | None = None,
            trace: str | Path | None = None, trace_id: str | None = None, label: str = N_("custom"),
            model_latency_s: float = DEFAULT_MODEL_LATENCY_S, tokenizer: Tokenizer = estimate_tokens,
            scenario: Mapping[str, Any] | None = None, executor: Executor | None = None,
            stages: Stages | None = None) -> Run:
    """A fresh run of ``task`` (the arguments are :class:`~agentloops.controller.controller.Controller`'s)."""
    toolbox = tools if tools is not None else task.toolbox()
    chosen = resolve_policy(policy)
    bound = (stages or Stages()).guarded()
    limits = budget if budget is not None else task.budget
    injector = _injector(faults, toolbox)
    state_line = "Every request ends with a TASK STATE block: trust it over older messages. " if send_state else ""
    system = Message("system", f"You are a tool-calling agent working on one task ({task.name}).\nTools:\n"
                               f"{toolbox.describe()}\n{state_line}A reply without tool calls is your final answer; "
                               "the system checks it against the task's completion condition.")
    return Run(task=task, model=model, toolbox=toolbox, policy=chosen, budget=limits, injector=injector,
               context=context or _DEFAULT_CONTEXT, compactor=compactor or memory_from_state, send_state=send_state,
               controls=controls or _NO_CONTROLS, trace_path=Path(trace) if trace is not None else None,
               trace_id=trace_id or new_trace_id(), label=label, model_latency_s=model_latency_s,
               tokenizer=tokenizer, scenario=dict(scenario) if scenario is not None else None,
               executor=executor or partial(execute, injector=injector, granted=task.granted),
               meter=BudgetMeter(limits, chosen.retry_scope, check=bound.budget_check), state=task.new_state(),
               system=system, stages=bound, monitor=ProgressMonitor(bound.repeat), head=[Message("user", task.prompt)])


@dataclass(frozen=True, slots=True)
class StopValues:
    """The ``stop`` line kept as its (frozen) stop: a dict when read."""

    trace_id: str
    stop: Stop

    def to_dict(self) -> dict[str, Any]:
        """The ``stop`` line: the stop's system record."""
        return {"kind": "stop", "trace_id": self.trace_id, "record": self.stop.system_record()}


def start_line(run: Run) -> StartLine:
    """The trace's first line: the configuration a replay needs, as the run holds it (a dict when read)."""
    return StartLine.model_construct(**{  # the run's own values (already checked), then the ones it keeps otherwise
        **{name: getattr(run, name) for name in StartLine.model_fields if name in Run.__dataclass_fields__},
        "kind": "start", "schema_version": TRACE_SCHEMA, "at_s": run.meter.now, "task": TaskRef(**run.task.spec())})


def _injector(faults: Sequence[FaultLike], toolbox: Toolbox) -> FaultInjector:
    """The fault injector for a run, refusing a fault on a tool the task does not offer."""
    injector = FaultInjector(faults)
    for fault in injector.faults:
        if fault.tool not in toolbox:
            raise ConfigError(f"fault on {fault.tool!r}: no such tool in this task's toolbox "
                              f"({', '.join(toolbox.names())})")
    return injector


def assessment(run: Run) -> str:
    """The completion stage over the run's state, given read-only views (a stage cannot change the task)."""
    state = run.state
    return run.stages.completion(MappingProxyType(state.items), MappingProxyType(state.facts), run.task.need)


# -- the stops: every stage can end the run with one ------------------------------------------------------
def make_stop(run: Run, status: StopStatus, code: str, reason: str, **extra: Any) -> Stop:
    """A stop with everything the user message and the system record need (``missing`` adds items).

    Its state snapshot is taken when the run stops (:func:`~agentloops.controller.turn.finish`), once the
    task is frozen: every stop a stage returns ends there."""
    state = run.state
    missing = tuple(state.missing_items().items())
    extra_missing = tuple(extra.pop("missing", ()))
    given_up = dict(extra_missing)
    return Stop(status=status, code=code, reason=reason, turn=run.turn, at_s=run.meter.now, trace_id=run.trace_id,
                task=run.task.name, policy=run.policy.name, facts=tuple(state.facts.values()),
                missing=missing + extra_missing,
                open_items=tuple(i for i in state.open_items() if i not in given_up),
                budgets_used=run.meter.usage(), budgets_left=run.meter.left(),
                verified=assessment(run) == "complete", **extra)


def budget_stop(run: Run, name: BudgetName, needed: float) -> Stop:
    """``budget_exhausted``, naming the budget and the numbers."""
    limit = run.budget.limit(name)
    used = run.meter.used_of(name)
    if name == "context_tokens":
        reason = Phrase(N_("the next request ({needed} tokens) is larger than the context budget ({limit} tokens)"),
                        needed=f"{needed:g}", limit=f"{limit:g}")
    elif name == "wall_time_s" and needed <= 0:
        reason = Phrase(N_("the wall-time budget ran out while waiting: {used} s of the {limit} s allowed are used"),
                        used=f"{used:g}", limit=f"{limit:g}")
    elif name == "wall_time_s":
        reason = Phrase(N_("the wall-time budget would run out: {used} s used + {needed} s for the next step > "
                           "{limit} s allowed"), used=f"{used:g}", needed=f"{needed:g}", limit=f"{limit:g}")
    else:
        reason = Phrase(N_("the {name} budget would be exceeded: {used} used + {needed} needed > {limit} allowed"),
                        name=name, used=f"{used:g}", needed=f"{needed:g}", limit=f"{limit:g}")
    return make_stop(run, "budget_exhausted", f"budget:{name}", reason, budget=name)


def cancel_stop(run: Run, reason: str, tool: str | None = None) -> Stop:
    """``cancelled`` by the user."""
    return make_stop(run, "cancelled", "cancelled_by_user", reason, tool=tool)


def stop_unobtainable(run: Run, answer: str | None = None) -> Stop:
    """Items were given up: a partial answer, a spent retry budget, or nothing obtainable at all."""
    state = run.state
    missing = state.missing_items()
    codes = [code for code in state.missing_codes().values() if code is not None]
    described = joined([Phrase(N_("{item} ({why})"), item=k, why=v) for k, v in missing.items()], "; ")
    if state.facts:
        return make_stop(run, "partially_completed", "items_unobtainable",
                         Phrase(N_("{n} item(s) cannot be obtained: {described}"), n=len(missing),
                                described=described), answer=answer)
    reason = Phrase(N_("nothing could be obtained: {described}"), described=described)
    spent = [code for code in codes if code in TRANSIENT or code == "budget:retries"]
    if codes and len(codes) == len(missing) and len(spent) == len(codes):  # gave up on transient failures
        return make_stop(run, "budget_exhausted", "budget:retries", reason, budget="retries")
    code = next((c for c in codes if c not in spent), "items_unobtainable")
    return make_stop(run, "failed_unrecoverable", code, reason)
