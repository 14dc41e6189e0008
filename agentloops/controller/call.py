"""One tool call's path, the same alone or in a batch: its verdict before it runs, then its attempts.

**Admission** (:class:`Admission`), in order: a cancel that came due; a repeated fingerprint
(no progress since an identical call that brought nothing); the pre-check (schema, permission
gate, task rules, risk), with a value the *user* gave that fails the schema sent back to the
user; and, if the same call failed retryably before, the retry rules (a side effect is never
repeated blindly; anything else needs a retry left in the shared budget).

**Attempts** (:class:`Attempts`): run it, and retry or fall back as the error policy routes.
Before every attempt (the first, each retry, a fallback switch) the cancel time, the tool-call
budget and the wall-time budget are checked; a retry first waits out its back-off; every retry
and every switch is paid from the task's one shared retry budget. *Whether* a failure is worth
retrying is the tool's call (``ToolResult.retryable``); the policy decides what to do about it
(:func:`~agentloops.controller.policy.route`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from agentloops.controller.engine import Engine, _repair_key, _Turn
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
from agentloops.controller.progress import (
    Fingerprint,
    Repeat,
    normalize_value,
)
from agentloops.controller.status import Stop
from agentloops.controller.tools import (
    ToolResult,
    ToolSpec,
    action_label,
    validate,
)
from agentloops.messages import Message
from agentloops.response import ToolCall

AdmissionVerdict = Literal["run", "repeat", "stop", "skip", "rejected"]
"""What admission decided for one tool call before anything ran."""


@dataclass(slots=True)
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


class Admission(Engine):
    """Decide, for each call of a reply, whether it runs — and answer the ones that do not."""

    def _admit(self, t: _Turn, call: ToolCall, args: dict[str, Any], label: str, *, in_batch: bool,
               reserved: Counter[str] | None = None) -> _Admission:
        """Decide, before anything runs, what happens to one tool call (single and parallel calls alike).

        In order: a cancel that has come due; a repeated fingerprint; the pre-check (schema,
        permission gate, task rules, risk) — with a user-supplied value that fails the schema
        sent back to the user; then, if the same call failed transiently before, it is a
        *retry*: a side effect is never repeated (a person checks), and anything else needs a
        retry left in the shared budget (minus those ``reserved`` by earlier calls of the same
        batch), or it is blocked. The caller pays for an admitted retry when it launches it.
        """
        tool = call.name
        spec = self.toolbox.tools.get(tool)
        fp = Fingerprint(tool, self._norm(tool, args), self.state.progress_count)

        def refuse(verdict: AdmissionVerdict, prefix: str, route_taken: str, **extra: Any) -> _Admission:
            self._record_action(t, f"{prefix}:{label}", None, tool, args, prefix, None, route_taken, fp)
            return _Admission(verdict, tool, args, label, fp, **extra)

        if self._cancel_due():
            return refuse("stop", "blocked", "stop:cancelled",
                          stop=self._cancel_stop(f"the user cancelled the task before {tool} ran", tool))
        if self.policy.detect_repeats and (repeat := self.monitor.check(fp)) is not None:
            self.state.note(repeat.explain())
            return refuse("repeat", "blocked", "skip" if in_batch else "stop:no_progress", repeat=repeat)
        checked = self._precheck(spec, tool, args)
        if isinstance(checked, Stop):
            return refuse("stop", "held", f"stop:{checked.status}", stop=checked, spec=spec)
        if checked is not None:
            asked = self._reask_user(spec, args, checked)
            if asked is not None:
                return refuse("stop", "held", "ask_user", stop=asked, spec=spec)
            return _Admission("rejected", tool, args, label, fp, spec=spec, rejection=checked)
        assert spec is not None
        if (tool, fp.args) not in self.failed_calls:
            return _Admission("run", tool, args, label, fp, spec=spec)
        if spec.side_effects and not self.policy.retry_side_effects:
            stop = self._make_stop("handed_off", "unknown_outcome_side_effect",
                                   f"{tool} changes the world and its last attempt failed transiently: whether it "
                                   "took effect is unknown, so a person must check before it runs again",
                                   tool=tool, pending_action=label)
            return refuse("stop", "held", "stop:handed_off", stop=stop, spec=spec)
        left = self._retries_left(tool, reserved)
        if left is not None and left < 1:
            return self._no_retry_left(spec, args, refuse)
        return _Admission("run", tool, args, label, fp, spec=spec, kind="retry")  # the model repeats it: a retry

    def _no_retry_left(self, spec: ToolSpec, args: Mapping[str, Any],
                       refuse: Callable[..., _Admission]) -> _Admission:
        """The model repeats a failed call with the shared retry budget spent: stop, or give the item up."""
        if self.policy.on_retries_exhausted == "stop":
            return refuse("stop", "blocked", "stop:budget_exhausted", stop=self._budget_stop("retries", 1), spec=spec)
        item = self._item(spec.name, args)
        if item is not None:
            self.state.mark_missing(item, "retry budget spent: the same call failed before and no retries are left",
                                    code="budget:retries")
        return refuse("skip", "blocked", "degrade", spec=spec)

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

    def _from_user(self, value: Any) -> bool:
        """True when ``value`` is one the user supplied (an input in state), not one the model made up."""
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            return False
        return any(normalize_value(str(given)) == normalize_value(str(value)) for given in self.state.inputs.values())

    def _record_action(self, t: _Turn, label: str, call_id: str | None, tool: str, args: Mapping[str, Any],
                       kind: str, result: ToolResult | None, route_taken: str | None,
                       fp: Fingerprint | None = None) -> None:
        t.actions.append({"label": label, "call_id": call_id, "tool": tool, "args": dict(args),
                          "args_norm": self._norm(tool, args), "kind": kind,
                          "status": result.status if result else None, "route": route_taken,
                          "result": result.to_dict() if result else None,
                          "fingerprint": None if fp is None else [fp.tool, fp.args, fp.state_version]})

    def _note_attempt(self, tool: str, args: Mapping[str, Any], result: ToolResult) -> None:
        """Remember a failed attempt in state, and which calls a repeat would *retry*."""
        key = (tool, self._norm(tool, args))
        if result.status in ("ok", "empty"):
            self.failed_calls.discard(key)
            for slip in [k for k in self.repairs if k.startswith(f"{tool}:")]:
                del self.repairs[slip]  # a success of the tool: the next slip is a first one again
            return
        self.state.record_failure(tool, result.status, result.error or "", self.turn)
        if result.retryable:  # the tool's judgement: calling it again is a retry, paid from the shared budget
            self.failed_calls.add(key)

    def _not_run(self, call: ToolCall, tool: str, why: str) -> None:
        """Answer a call that did not run, so every call in the transcript has its tool message."""
        text = json.dumps({"tool": tool, "status": "not run", "error": why}, ensure_ascii=False)
        self.groups[-1].append(Message("tool", text, tool_call_id=call.id, name=tool))


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
        while True:
            refused = self._may_attempt(current)
            if refused is not None:
                unrun = ToolResult("permanent_error", error=f"{current.name}: not run ({refused[0]})", ran=False)
                return last or unrun, current, refused[1], None, call_id
            self.call_counter += 1
            call_id = f"{self.trace_id}-c{self.call_counter}"
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
        item = self._item(spec.name, args)
        fallback = self.toolbox.tools.get(spec.fallback) if spec.fallback and spec.fallback not in tried else None
        ctx = RouteContext(spec, attempts, self._retries_left(spec.name), fallback,
                           self.task.type.allows_not_found and item is not None,
                           self.repairs[_repair_key(spec.name, result)], self.task.granted)
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
        item = self._item(tool, args)
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
