"""One call's attempts: run it, and retry or fall back as the error policy routes — alone or in a batch.

Before every attempt (the first, each retry, a fallback switch) the cancel time, the
tool-call budget and the wall-time budget are checked; a retry first waits out its
back-off; every retry and every switch is paid from the task's one shared retry budget.
*Whether* a failure is worth retrying is the tool's call (``ToolResult.retryable``); the
policy decides what to do about it (:func:`~agentloops.controller.policy.route`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from agentloops.controller.admission import Admission
from agentloops.controller.engine import _Turn
from agentloops.controller.parallel import Arrival
from agentloops.controller.policy import (
    Degrade,
    Fallback,
    Retry,
    Route,
    RouteContext,
    route,
    route_name,
)
from agentloops.controller.progress import Fingerprint
from agentloops.controller.status import Stop
from agentloops.controller.tools import (
    ToolResult,
    ToolSpec,
    action_label,
)


class Attempts(Admission):
    """Run an admitted call until the error policy settles it."""

    def _execute(self, t: _Turn, spec: ToolSpec, args: Mapping[str, Any], first_kind: str,
                 fp: Fingerprint | None = None, *, attempts: int = 1, tried: frozenset[str] = frozenset()
                 ) -> tuple[ToolResult, ToolSpec, Route | Stop, Any, str]:
        """Run an admitted call until the policy settles it; returns (result, tool, route, fact parts, call id).

        Before every attempt — the first, each retry and a fallback switch — the cancel time,
        the tool-call budget and the wall-time budget are checked. A fallback also passes the
        full pre-check first (schema, permission gate, task rules, risk); if that refuses, the
        item is given up instead. A call of a parallel batch continues here after its first
        attempt (``attempts``, ``tried``), so a call is retried and falls back the same way alone
        or in a batch.
        """
        current, kind = spec, first_kind
        seen = set(tried)
        last: ToolResult | None = None
        call_id = ""

        def not_run(why: str) -> ToolResult:
            return last or ToolResult("permanent_error", error=f"{current.name}: not run ({why})", ran=False)

        while True:
            refused = self._may_attempt(current)
            if refused is not None:
                return not_run(refused[0]), current, refused[1], None, call_id
            call_id = self._new_call_id()
            started = self.clock.now
            self.ledger.open(call_id, current.name, self._norm(current.name, args), self.turn, started, kind)
            raw = self.executor(current, args)
            self.meter.spend("tool_calls")
            label = ("" if kind == "call" else f"{kind}:") + action_label(current.name, args)
            cancel_at = self._cancel_within(raw.latency_s)
            if cancel_at is not None:  # the user cancels while the call runs: stop waiting; it will land late
                self._record_action(t, label, call_id, current.name, args, kind, None, "cancelled", fp)
                return self._cancelled_while_running(current, args, raw, started, cancel_at, call_id)
            self.clock.advance(raw.latency_s)
            result, parts = self._usable(raw, current.name, args)
            last = result
            for delivery in range(1, result.deliveries + 1):
                self._deliver(Arrival(self.clock.now, call_id, result, delivery, self.trace_id))
            self._note_attempt(current.name, args, result)
            decision = self._decide(current, args, result, attempts, frozenset(seen))
            self._record_action(t, label, call_id, current.name, args, kind, result, route_name(decision), fp)
            if not isinstance(decision, (Retry, Fallback)):
                return result, current, decision, parts, call_id
            stop = self._before_next(decision, current)
            if stop is not None:
                return result, current, stop, None, call_id
            if isinstance(decision, Retry):
                attempts, kind = attempts + 1, "retry"
            else:
                seen.add(current.name)
                current, attempts, kind = self.toolbox[decision.tool], 1, "fallback"

    def _may_attempt(self, spec: ToolSpec) -> tuple[str, Stop] | None:
        """Why the next attempt of ``spec`` may not start (a cancel came due, a budget is spent), or ``None``."""
        if self._cancel_due():
            return "cancelled", self._cancel_stop(f"the user cancelled the task before the next attempt of "
                                                  f"{spec.name}", spec.name)
        if not self.meter.allows("tool_calls"):
            return "tool-call budget spent", self._budget_stop("tool_calls", 1)
        if not self.meter.allows("wall_time_s", spec.timeout_s):
            return "wall-time budget spent", self._budget_stop("wall_time_s", spec.timeout_s)
        return None

    def _decide(self, spec: ToolSpec, args: Mapping[str, Any], result: ToolResult, attempts: int,
                tried: frozenset[str]) -> Route:
        """The error policy's route for one attempt's result; a fallback that the pre-check refuses is a give-up."""
        item = self.task.type.item_for(spec.name, args, self.task.params)
        fallback = self.toolbox.tools.get(spec.fallback) if spec.fallback and spec.fallback not in tried else None
        ctx = RouteContext(spec, attempts, self._retries_left(spec.name), fallback,
                           self.task.type.allows_not_found and item is not None, self._repairs(spec.name, result),
                           self.task.granted)
        decision = route(self.policy, result, ctx)
        if isinstance(decision, Fallback):
            refused = self._precheck(self.toolbox.tools.get(decision.tool), decision.tool, args)
            if refused is not None:
                why = refused.reason if isinstance(refused, Stop) else (refused.error or refused.status)
                decision = Degrade(result.status, f"fallback {decision.tool} refused before it ran: {why}")
        return decision

    def _before_next(self, decision: Retry | Fallback, current: ToolSpec) -> Stop | None:
        """Wait out a retry's back-off and pay for the next attempt from the shared retry budget."""
        if isinstance(decision, Retry):
            if not self.meter.allows("wall_time_s", decision.delay_s + current.timeout_s):
                return self._budget_stop("wall_time_s", decision.delay_s + current.timeout_s)
            cancel_at = self._cancel_within(decision.delay_s)
            if cancel_at is not None:  # cancelled during the back-off: the retry never starts
                self.clock.advance(cancel_at - self.clock.now)
                return self._cancel_stop(f"the user cancelled the task while waiting to retry {current.name}",
                                         current.name)
            self.clock.advance(decision.delay_s)
        self.meter.spend("retries", tool=current.name)
        return None

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

    def _follow_up(self, t: _Turn, spec: ToolSpec, args: Mapping[str, Any], decision: Retry | Fallback,
                   fp: Fingerprint, result: ToolResult) -> tuple[ToolResult, ToolSpec, Route | Stop, Any, str]:
        """Continue a batch call after its first attempt, exactly as :meth:`_execute` continues a call alone."""
        stop = self._before_next(decision, spec)
        if stop is not None:
            return result, spec, stop, None, ""
        if isinstance(decision, Retry):
            return self._execute(t, spec, args, "retry", fp, attempts=2)
        return self._execute(t, self.toolbox[decision.tool], args, "fallback", fp, tried=frozenset({spec.name}))

    def _cancelled_while_running(self, spec: ToolSpec, args: Mapping[str, Any], raw: ToolResult, started: float,
                                 cancel_at: float, call_id: str) -> tuple[ToolResult, ToolSpec, Route | Stop, Any, str]:
        """Stop waiting at the cancel time; the call's result is queued to land late (and be refused)."""
        self.clock.advance(cancel_at - started)
        self.ledger.cancel_running(self.clock.now, "cancelled: the user cancelled the task")
        late, _ = self._usable(raw, spec.name, args)
        for delivery in range(1, late.deliveries + 1):
            self.inbox.append(Arrival(round(started + raw.latency_s + 0.05 * (delivery - 1), 6), call_id, late,
                                      delivery, self.trace_id))
        return (ToolResult("permanent_error", error=f"{spec.name}: cancelled while running", ran=False), spec,
                self._cancel_stop(f"the user cancelled the task while {spec.name} was running", spec.name), None,
                call_id)
