"""The batch: every tool call of one reply takes this path — a single call is a batch of one.

The admitted calls start together; their results are settled in arrival order under the
task's join rule, and each call is retried and falls back *inside* the batch, exactly as it
would alone (:meth:`CallPath._execute`). Every result enters the task through the ledger
(applied once, late and duplicate deliveries recorded and refused), is routed by the error
policy, and is applied to state (:meth:`CallPath._apply`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from agentloops.controller.budgets import EPSILON
from agentloops.controller.call import Attempts, _Admission, _no_handler
from agentloops.controller.context import (
    observe,
)
from agentloops.controller.engine import _repair_key, _Turn
from agentloops.controller.parallel import Arrival, Batch
from agentloops.controller.policy import (
    Accept,
    AcceptNotFound,
    AskUser,
    Degrade,
    Fallback,
    Repair,
    Retry,
    ReturnToModel,
    Route,
    RouteContext,
    StopRun,
    route,
    route_name,
)
from agentloops.controller.progress import Fingerprint, Repeat
from agentloops.controller.render import clip
from agentloops.controller.state import Fact
from agentloops.controller.status import Stop
from agentloops.controller.tools import (
    ToolResult,
    ToolSpec,
    action_label,
)
from agentloops.messages import Message
from agentloops.response import ToolCall

_WHY_ENDED = {"deadline": "the join's deadline passed", "all arrived": "every call finished"}


class CallPath(Attempts):
    """Launch admitted calls, settle their results, apply them to state."""

    def _calls(self, t: _Turn, calls: Sequence[ToolCall]) -> Stop | None:
        """Every tool call of a reply takes this one path — a single call is a batch of one.

        Admit each call (:meth:`_admit`), launch the admitted ones together, then settle their
        results in arrival order under the task's join rule (:meth:`_join`); each call is
        retried and falls back inside the batch exactly as it would alone.
        """
        args = [dict(c.parsed_arguments or {}) for c in calls]  # one object per call: normalised once (_norm)
        labels = [action_label(c.name, a) for c, a in zip(calls, args)]
        t.action = labels[0] if len(calls) == 1 else f"parallel×{len(calls)}: " + ", ".join(labels)
        t.args_summary = "; ".join(self._norm(c.name, a) for c, a in zip(calls, args))
        launch, stop = self._admit_all(t, calls, args, labels)
        if stop is not None or not launch:
            t.tool_status = ", ".join(a["status"] or "not run" for a in t.actions) or "not run"
            return stop
        return self._join(t, launch)

    def _admit_all(self, t: _Turn, calls: Sequence[ToolCall], args: Sequence[dict[str, Any]], labels: Sequence[str]
                   ) -> tuple[list[tuple[ToolCall, _Admission]], Stop | None]:
        """Admit each call; answer the ones that will not run. Returns the calls to launch, or the stop."""
        launch: list[tuple[ToolCall, _Admission]] = []
        pending_stop: Stop | None = None
        repeats: list[Repeat] = []
        reserved: Counter[str] = Counter()
        for call, call_args, label in zip(calls, args, labels):
            admission = self._admit(t, call, call_args, label, in_batch=len(calls) > 1, reserved=reserved)
            tool = admission.tool
            if admission.verdict == "repeat":
                assert admission.repeat is not None
                repeats.append(admission.repeat)
                self._not_run(call, tool, "repeat of an action that brought nothing")
            elif admission.verdict == "stop":
                pending_stop = pending_stop or admission.stop
                self._not_run(call, tool, "the task is stopping")
            elif admission.verdict == "skip":
                self._not_run(call, tool, "the same call failed before and the retry budget is spent")
            elif admission.verdict == "rejected":
                pending_stop = pending_stop or self._answer_rejected(t, call, admission)
            else:
                reserved[tool] += admission.kind == "retry"
                launch.append((call, admission))
        if len(repeats) == len(calls):
            t.observation = f"repeat of turn {repeats[0].first_turn}"
            reason = repeats[0].explain() if len(calls) == 1 else \
                "every call of the batch repeats an action that brought nothing new"
            return [], self._make_stop("no_progress", "repeated_action", reason, tool=calls[0].name)
        if pending_stop is not None:  # the run stops: start nothing new (and pay for nothing)
            for call, admission in launch:
                self._not_run(call, admission.tool, "the task is stopping")
            return [], pending_stop
        return launch, None

    def _answer_rejected(self, t: _Turn, call: ToolCall, admission: _Admission) -> Stop | None:
        """A call the schema or the permission gate answered before it ran: route and apply that answer."""
        tool, args, result = admission.tool, admission.args, admission.rejection
        assert result is not None
        ctx = RouteContext(admission.spec or ToolSpec(tool, "", {}, _no_handler), 1, self._retries_left(tool), None,
                           False, self.repairs[_repair_key(tool, result)], self.task.granted)
        decision = route(self.policy, result, ctx)
        self._record_action(t, admission.label, None, tool, args, "rejected", result, route_name(decision),
                            admission.fp)
        self.state.record_failure(tool, result.status, result.error or "", self.turn)
        ref = self._tool_message(call, tool, args, result)
        return self._apply(t, tool, args, result, decision, None, "", ref)

    def _launch(self, t: _Turn, launch: list[tuple[ToolCall, _Admission]], batch: Batch
                ) -> tuple[dict[str, tuple[ToolCall, ToolSpec, dict[str, Any], Fingerprint, ToolResult, Any]],
                           Stop | None]:
        """Start every admitted call at the same moment; a call the budgets cannot pay for is not started."""
        start = self.clock.now
        started: dict[str, tuple[ToolCall, ToolSpec, dict[str, Any], Fingerprint, ToolResult, Any]] = {}
        refused: Stop | None = None
        for call, admission in launch:
            spec, args = admission.spec, admission.args
            assert spec is not None
            for name, needed in (("tool_calls", 1.0), ("wall_time_s", spec.timeout_s)):
                if not self.meter.allows(name, needed):  # type: ignore[arg-type]
                    break
            else:
                name = ""
            if name:  # not run; the batch goes on with what can be paid for
                self._record_action(t, f"blocked:{admission.label}", None, spec.name, args, "blocked", None,
                                    f"budget:{name}", admission.fp)
                self._not_run(call, spec.name, f"the {name} budget is spent")
                refused = refused or self._budget_stop(name, needed)  # type: ignore[arg-type]
                continue
            if admission.kind == "retry":
                self.meter.spend("retries", tool=spec.name)
            self.call_counter += 1
            call_id = f"{self.trace_id}-c{self.call_counter}"
            self.ledger.open(call_id, spec.name, self._norm(spec.name, args), self.turn, start, admission.kind,
                             parallel=len(launch) > 1)
            result, parts = self._usable(self.executor(spec, args), spec.name, args)
            self.meter.spend("tool_calls")
            for delivery in range(1, result.deliveries + 1):
                batch.add(Arrival(round(start + result.latency_s + 0.05 * (delivery - 1), 6), call_id, result,
                                  delivery, self.trace_id))
            started[call_id] = (call, spec, args, admission.fp, result, parts)
            prefix = "" if admission.kind == "call" else f"{admission.kind}:"
            self._record_action(t, prefix + admission.label, call_id, spec.name, args, admission.kind, result, None,
                                admission.fp)
        return started, (refused if not started else None)

    def _join(self, t: _Turn, launch: list[tuple[ToolCall, _Admission]]) -> Stop | None:
        """Launch the calls, then settle each result as it arrives until the join rule is decided.

        The batch stops waiting at its deadline: the wall-time budget, the user's cancel, or the join's
        timeout — which bounds waiting for *parallel* calls; a lone call waits for its own tool timeout.
        """
        start, join, cancel_at = self.clock.now, self.task.join, self.controls.cancel_at_s
        remaining_wall = self.meter.remaining("wall_time_s")
        candidates = [start + remaining_wall] if remaining_wall is not None else []
        if join.timeout_s is not None and len(launch) > 1:
            candidates.append(start + join.timeout_s)
        if cancel_at is not None and cancel_at >= start:
            candidates.append(cancel_at)
        deadline = min(candidates) if candidates else None
        done = sum(1 for fact in self.state.facts.values() if fact.source)
        batch = Batch(join, 0, deadline, still_needed=self.task.need - done)
        started, refused = self._launch(t, launch, batch)
        if not started:  # the budgets could pay for none of them: stop now, naming the budget
            return refused
        batch.total = len(started)
        statuses: dict[str, str] = {}
        pending_stop: Stop | None = None
        while pending_stop is None and (arrival := batch.next()) is not None:
            if arrival.at > self.clock.now:
                self.clock.advance(arrival.at - self.clock.now)
            if self._deliver(arrival) == "applied":
                pending_stop = self._settle(t, arrival.call_id, started[arrival.call_id], batch, statuses)
        if batch.outcome == "deadline" and deadline is not None and deadline > self.clock.now:
            self.clock.advance(deadline - self.clock.now)
        self._wrap_up(t, batch, started, statuses)
        if pending_stop is None and self._cancel_due():
            running = f" while {t.action} was running" if len(started) == 1 else " during a batch"
            return self._cancel_stop(f"the user cancelled the task{running}", next(iter(started.values()))[1].name)
        wall_left = self.meter.remaining("wall_time_s")
        if pending_stop is None and batch.outcome == "deadline" and wall_left is not None and wall_left <= EPSILON:
            return self._budget_stop("wall_time_s", 0)
        return pending_stop

    def _settle(self, t: _Turn, first_id: str,
                launched: tuple[ToolCall, ToolSpec, dict[str, Any], Fingerprint, ToolResult, Any], batch: Batch,
                statuses: dict[str, str]) -> Stop | None:
        """Route one arrived result — retrying or falling back inside the batch — and apply it to state."""
        call, spec, args, fp, result, parts = launched
        progress_before = self.state.progress_count
        self._note_attempt(spec.name, args, result)
        decision: Route | Stop = self._decide(spec, args, result, 1, frozenset())
        for action in t.actions:
            if action["call_id"] == first_id:
                action["route"] = route_name(decision)  # type: ignore[arg-type]
        call_id = first_id
        if isinstance(decision, (Retry, Fallback)):  # the same retries and fallbacks as a call alone (_execute)
            waited = self._before_next(decision, spec)
            if waited is not None:
                decision, parts, call_id = waited, None, ""
            elif isinstance(decision, Retry):
                result, spec, decision, parts, call_id = self._execute(t, spec, args, "retry", fp, attempts=2)
            else:
                result, spec, decision, parts, call_id = self._execute(
                    t, self.toolbox[decision.tool], args, "fallback", fp, tried=frozenset({spec.name}))
        ref = self._tool_message(call, spec.name, args, result)
        statuses[first_id] = result.status
        stop = self._apply(t, spec.name, args, result, decision, parts, call_id, ref)
        if result.status != "invalid_arguments":  # a slip is bounded by the repair allowance, not a sighting
            new = self.state.progress_count != progress_before
            self.monitor.record(fp, self.turn, result.status, new,
                                "" if new else "; ".join(self.state._unchanged) or f"{result.status}, no new fact")
        batch.note(True, result.status == "ok" or (result.status == "empty" and isinstance(decision, AcceptNotFound)))
        return stop

    def _wrap_up(self, t: _Turn, batch: Batch,
                 started: Mapping[str, tuple[ToolCall, ToolSpec, dict[str, Any], Fingerprint, ToolResult, Any]],
                 statuses: dict[str, str]) -> None:
        """Cancel what the join no longer needs (its results will land late) and summarise the turn."""
        if len(started) == 1 and not batch.arrivals:  # a batch of one, settled: it reads as the call it is
            t.tool_status = "→".join(a["status"] or "-" for a in t.actions) if len(t.actions) > 1 else \
                next(iter(statuses.values()), "-")
            return  # (every result has arrived, so nothing is still running)
        outcome = batch.outcome
        why = f"join '{self.task.join.describe()}' satisfied" if outcome == "satisfied" else \
            f"join '{self.task.join.describe()}' can no longer be satisfied" if outcome == "impossible" else \
            _WHY_ENDED.get(outcome or "", "the batch was stopped")
        if outcome == "deadline" and self._cancel_due():  # the user's cancel, not the join, stopped the wait
            why = "the user cancelled the task"
        cancelled = self.ledger.cancel_running(self.clock.now, f"cancelled: {why}")
        for call_id in cancelled:
            call, spec = started[call_id][0], started[call_id][1]
            self.groups[-1].append(Message("tool", json.dumps({"tool": spec.name, "status": "cancelled",
                                                               "error": why}), tool_call_id=call.id, name=spec.name))
            statuses[call_id] = "cancelled"
        self.inbox.extend(batch.leftover())
        for action in t.actions:
            if action["call_id"] in cancelled:
                action["route"] = "cancelled"
        if len(started) == 1 and not cancelled:  # a batch of one reads as the call it is
            t.tool_status = "→".join(a["status"] or "-" for a in t.actions) if len(t.actions) > 1 else \
                next(iter(statuses.values()), "-")
            return
        order = [a["call_id"] for a in t.actions if a["call_id"] in started]
        t.tool_status = ", ".join(statuses.get(c, "-") for c in order)
        t.observation = f"{why}; " + ", ".join(f"{sum(1 for s in statuses.values() if s == k)} {k}"
                                                for k in sorted(set(statuses.values())))

    def _apply(self, t: _Turn, tool: str, args: Mapping[str, Any], result: ToolResult, decision: Route | Stop,
               parts: Any, call_id: str, ref: str | None = None) -> Stop | None:
        """Write the outcome of a settled call into state; return a stop if the route says so."""
        item = self._item(tool, args)
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
            key = _repair_key(tool, result)
            self.repairs[key] += 1
            t.decision = (f"continue: repair {self.repairs[key]} of {self.policy.invalid_argument_repairs} allowed "
                          f"for {key}")
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
