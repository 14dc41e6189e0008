"""Stop statuses: nine distinct, first-class ways a task ends, each rendered twice.

``max_steps_reached`` is a system reason, not an answer. A user needs to know
what is done, what is missing and what they can do next; an engineer needs
the tool, the error class, the budgets and the last state. So every
:class:`Stop` renders as an actionable message (:meth:`Stop.user_message`,
never a stack trace) and as a structured record (:meth:`Stop.system_record`,
countable and replayable).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentloops.controller.budgets import BUDGET_LABELS
from agentloops.controller.render import Table
from agentloops.controller.state import Fact

StopStatus = Literal[
    "succeeded", "partially_completed", "waiting_for_user", "failed_unrecoverable", "system_failure",
    "budget_exhausted", "no_progress", "cancelled", "handed_off",
]
STOP_STATUSES: tuple[StopStatus, ...] = StopStatus.__args__  # type: ignore[attr-defined]

StopCode = Literal[
    # succeeded
    "completion_condition_met", "model_said_done",
    # partially completed
    "items_unobtainable", "premature_claim",
    # waiting for the user
    "asked_user", "invalid_user_input", "missing_parameter",
    # failed, unrecoverable: the request itself cannot be served as asked
    "permission_denied", "not_found", "against_policy", "invalid_arguments_repeated", "model_gave_up",
    "content_filter", "refusal", "empty", "permanent_error",
    # system failure: the provider, the model or the infrastructure failed; retry later
    "model_error", "provider_error", "truncated", "malformed_tool_call", "unknown_stop",
    # budgets
    "budget:steps", "budget:wall_time_s", "budget:model_calls", "budget:tool_calls", "budget:tokens",
    "budget:context_tokens", "budget:retries",
    # no progress, cancelled, handed off
    "repeated_action", "idle_turns", "cancelled_by_user", "unknown_outcome_side_effect", "authorization_required",
    "high_risk_action", "consecutive_failures", "no_next_step",
]
"""Every reason code a controller stop can carry; each has a next step in plain words (:data:`NEXT_STEPS`)."""

STOP_CODES: tuple[StopCode, ...] = StopCode.__args__  # type: ignore[attr-defined]

SYSTEM_FAILURES: frozenset[str] = frozenset({"model_error", "provider_error", "truncated", "malformed_tool_call",
                                              "unknown_stop"})
"""Abnormal ends that are the provider's, the model's or the infrastructure's fault (→ ``system_failure``);
the others (a content filter, a refusal) say the request itself is against the rules (→ ``failed_unrecoverable``)."""


@dataclass(frozen=True, slots=True)
class StatusDefinition:
    """What one stop status means, for people and for code.

    Attributes:
        status: the status value.
        label: English name.
        label_zh: the Chinese term as the source article uses it.
        when: the condition that produces it.
        user_gets: what the user message must contain.
        system_keeps: what the system record must keep.
        resumable: the task can continue from saved state (once; see :func:`~agentloops.controller.resume`).
    """

    status: StopStatus
    label: str
    label_zh: str
    when: str
    user_gets: str
    system_keeps: str
    resumable: bool


STATUS_DEFINITIONS: dict[StopStatus, StatusDefinition] = {d.status: d for d in (
    StatusDefinition("succeeded", "succeeded", "成功",
                     "the model signals it is done AND the task's completion condition holds over state",
                     "the answer with its sources", "facts with sources, budgets used", False),
    StatusDefinition("partially_completed", "partially completed", "部分完成",
                     "some items are verified, others cannot be obtained (given up with a reason, or the model "
                     "stopped without them)",
                     "verified facts, each missing item with its reason, what to do about each",
                     "facts, missing items with reasons, last error", False),
    StatusDefinition("waiting_for_user", "waiting for user", "等待用户",
                     "a value only the user can supply is missing or ambiguous",
                     "the one smallest question; what is done so far",
                     "saved state to resume from (once), the question", True),
    StatusDefinition("failed_unrecoverable", "failed, unrecoverable", "不可恢复失败",
                     "permission denied, resource not found, an action against policy, or repeated invalid arguments",
                     "why in plain words, and who or what can unblock it", "tool, error class, last state", False),
    StatusDefinition("system_failure", "system failure", "系统故障",
                     "the model provider, the model or the infrastructure failed (an outage, a cut-off or "
                     "malformed reply): nothing about the request was wrong",
                     "that the service failed, what is done so far, and to try again later",
                     "the error class, the turn, budgets used, the last state", False),
    StatusDefinition("budget_exhausted", "budget exhausted", "预算耗尽",
                     "one of the seven budgets would be exceeded by the next step",
                     "which budget ran out, what is done and missing, try later or raise the budget",
                     "which budget, usage of all budgets, last error", False),
    StatusDefinition("no_progress", "no progress", "无进展",
                     "the same action fingerprint with no new observation, or several turns without progress",
                     "that the agent was repeating itself, and what detail could help",
                     "the repeated fingerprint and why the state did not change", False),
    StatusDefinition("cancelled", "cancelled", "用户取消",
                     "the user (or an operator) cancelled; running calls are cancelled, late results ignored",
                     "what was done before cancelling", "cancel time, cancelled calls", False),
    StatusDefinition("handed_off", "handed off to a human", "转人工",
                     "a high-risk action, a side effect with an unknown outcome, authorization needed, "
                     "or too many failures in a row",
                     "that a person takes over, and the pending action",
                     "the pending action, reason, and the saved state handed to the person (it is not resumed by "
                     "the controller)", False),
)}

NEXT_STEPS: dict[StopCode, str] = {
    "completion_condition_met": "nothing: the answer is checked against the facts it cites",
    "model_said_done": "check the answer yourself: it was not checked against the task's facts",
    "items_unobtainable": "accept the partial result, or try the missing items later",
    "premature_claim": "ask again for the missing items, or accept the partial result",
    "asked_user": "answer the question and I will continue from where I stopped",
    "invalid_user_input": "send the value again in the expected form",
    "missing_parameter": "send the missing detail and I will continue",
    "permission_denied": "ask an administrator for the missing permission, or hand the request to someone who has it",
    "not_found": "check the identifier or version and ask again",
    "against_policy": "change the request so it stays within the rules",
    "invalid_arguments_repeated": "rephrase the request with the exact values",
    "model_gave_up": "rephrase the request",
    "content_filter": "rephrase the request: the provider would not answer it as asked",
    "refusal": "rephrase the request: the model declined it as asked",
    "empty": "check the request: the service had nothing for it",
    "permanent_error": "try again later, or ask for the missing part another way",
    "model_error": "try again in a few minutes: the model service failed; nothing you asked for was wrong",
    "provider_error": "try again in a few minutes: the model provider is failing; nothing you asked for was wrong",
    "truncated": "try again, or ask for a shorter answer: the reply was cut off before it was complete",
    "malformed_tool_call": "try again: the model sent a broken request to a tool",
    "unknown_stop": "try again: the model service answered in a way I could not read",
    "budget:steps": "split the request into smaller ones, or allow more steps",
    "budget:wall_time_s": "try again later, or allow more time for this task",
    "budget:model_calls": "split the request into smaller ones",
    "budget:tool_calls": "split the request into smaller ones",
    "budget:tokens": "narrow the request",
    "budget:context_tokens": "narrow the request",
    "budget:retries": "try again later: the service kept failing",
    "repeated_action": "rephrase the request or add the detail that is missing",
    "idle_turns": "rephrase the request or add the detail that is missing",
    "cancelled_by_user": "start again whenever you like; what was done is listed above",
    "unknown_outcome_side_effect": "wait for a person to check whether the action took effect",
    "authorization_required": "wait for the authorization, or ask someone who holds it",
    "high_risk_action": "wait for a person to approve the action",
    "consecutive_failures": "wait for a person to look at it, or try again later",
    "no_next_step": "wait for a person to pick this up: I could not work out how to do it",
}
"""The user's next step for every stop code, in plain words (no codes, no field names)."""

PLAIN_WHY: dict[str, str] = {
    "model_error": "the model service failed while I was working on this",
    "provider_error": "the model provider reported an error (it may be down or overloaded)",
    "truncated": "the model's reply was cut off before it was complete",
    "malformed_tool_call": "the model sent a request to a tool that could not be read",
    "unknown_stop": "the model service ended its reply in a way I could not interpret",
    "content_filter": "the provider withheld the answer under its content rules",
    "refusal": "the model declined this request",
}
"""What happened, in plain words, for the codes whose ``reason`` is written for engineers."""


def _budget_label(budget: str | None) -> str:
    """The budget's name for people (``simulated wall time (s)``), or ``this task``'s when none is named."""
    for name, label in BUDGET_LABELS.items():
        if name == budget:
            return label
    return budget or "this task"


def next_step(code: str) -> str:
    """What the user can do next after a stop with ``code`` (a generic step for an unknown code)."""
    return NEXT_STEPS.get(code, "try again, or ask a person for help")  # type: ignore[call-overload]



@dataclass(frozen=True)
class Stop:
    """How and why a run stopped, with everything needed to act on it.

    Attributes:
        status: one of :data:`StopStatus`.
        code: a short reason code (``completion_condition_met``, ``permission_denied``, ``budget:retries``…).
        reason: one plain sentence, safe to show.
        turn: the turn at which it stopped.
        at_s: simulated time of the stop.
        trace_id: the run's trace id.
        task: task type name.
        policy: error policy name.
        answer: the final answer (success, or the model's text on a partial stop).
        tool: the tool involved, if any.
        error_class: the tool status involved, if any.
        budget: for ``budget_exhausted``, which budget.
        question: for ``waiting_for_user``, the question.
        pending_action: for ``handed_off``, the action a person must review.
        verified: the task's completion condition held over state when the run stopped.
        facts: verified facts kept.
        missing: (item, reason) for items that could not be obtained.
        open_items: items neither done nor given up.
        budgets_used: usage of every budget.
        budgets_left: what remains of every budget.
        state: the last task-state snapshot.
    """

    status: StopStatus
    code: str
    reason: str
    turn: int
    at_s: float
    trace_id: str
    task: str
    policy: str
    answer: str | None = None
    tool: str | None = None
    error_class: str | None = None
    budget: str | None = None
    question: str | None = None
    pending_action: str | None = None
    verified: bool = False
    facts: tuple[Fact, ...] = ()
    missing: tuple[tuple[str, str], ...] = ()
    open_items: tuple[str, ...] = ()
    budgets_used: Mapping[str, float] = field(default_factory=dict)
    budgets_left: Mapping[str, float | None] = field(default_factory=dict)
    state: Mapping[str, Any] = field(default_factory=dict)

    @property
    def definition(self) -> StatusDefinition:
        """The definition of this status."""
        return STATUS_DEFINITIONS[self.status]

    def _done_lines(self) -> list[str]:
        return [f"  ✓ {f.item}: {f.summary} (source: {f.source})" for f in self.facts]

    def _missing_lines(self) -> list[str]:
        lines = [f"  ✗ {item}: {reason}" for item, reason in self.missing]
        lines += [f"  … {item}: not done yet" for item in self.open_items]
        return lines

    def user_message(self) -> str:
        """What the user is told: what is done, what is missing, what they can do next."""
        s = self.status
        lines: list[str]
        if s == "succeeded":
            lines = [self.answer or "Done.", "Sources:"] + [f"  {f.item}: {f.source}" for f in self.facts]
            return "\n".join(lines)
        if s == "waiting_for_user":
            lines = [f"I need one detail to continue: {self.question}"]
            if self.facts:
                lines += ["Done so far:", *self._done_lines()]
            lines.append("Reply with it and I will continue from where I stopped; nothing is lost.")
            return "\n".join(lines)
        why = PLAIN_WHY.get(self.code, self.reason)
        heads = {
            "partially_completed": "I could only partly finish this.",
            "failed_unrecoverable": f"I stopped and cannot finish this automatically: {why}",
            "system_failure": f"I had to stop because of a system failure, not because of your request: {why}.",
            "budget_exhausted": "I stopped because the budget for "
                                f"{_budget_label(self.budget)} ran out.",
            "no_progress": "I stopped because I was repeating a step that brought nothing new.",
            "cancelled": "Cancelled as you asked. Nothing else will run; results that arrive later are ignored.",
            "handed_off": f"A person will take this over: {self.reason}",
        }
        lines = [heads[s]]
        if s == "no_progress" and self.verified:
            lines.append("Everything needed was collected (below), but the agent kept repeating instead of answering.")
        if self.facts:
            lines += ["Done:", *self._done_lines()]
        missing = self._missing_lines()
        if missing:
            lines += ["Missing:", *missing]
        if self.pending_action:
            lines.append(f"Waiting for a person to review: {self.pending_action}")
        lines.append(f"What you can do: {next_step(self.code)}.")
        return "\n".join(lines)

    def system_record(self) -> dict[str, Any]:
        """The structured record for logs, dashboards and replay."""
        return {
            "status": self.status,
            "code": self.code,
            "reason": self.reason,
            "turn": self.turn,
            "at_s": self.at_s,
            "trace_id": self.trace_id,
            "task": self.task,
            "policy": self.policy,
            "tool": self.tool,
            "error_class": self.error_class,
            "budget": self.budget,
            "question": self.question,
            "pending_action": self.pending_action,
            "verified": self.verified,
            "answer": self.answer,
            "facts": [f.to_dict() for f in self.facts],
            "missing": [list(m) for m in self.missing],
            "open_items": list(self.open_items),
            "budgets_used": dict(self.budgets_used),
            "budgets_left": dict(self.budgets_left),
            "state": dict(self.state),
        }

    def __str__(self) -> str:
        record = {k: v for k, v in self.system_record().items()
                  if k not in ("state", "facts") and v not in (None, [], {})}
        return (f"[{self.status}] {self.code}: {self.reason}\n--- user message ---\n{self.user_message()}\n"
                f"--- system record ---\n{json.dumps(record, ensure_ascii=False, indent=1)}")

    def _repr_html_(self) -> str:
        record = {k: v for k, v in self.system_record().items() if k != "state" and v not in (None, [], {})}
        system = html.escape(json.dumps(record, ensure_ascii=False, indent=1))
        return (f"<div><b>{html.escape(self.status)}</b> · <code>{html.escape(self.code)}</code>"
                f"<div style='display:flex;gap:1em'><pre style='flex:1'>{html.escape(self.user_message())}</pre>"
                f"<pre style='flex:1'>{system}</pre></div></div>")


def status_table() -> Table:
    """The nine stop statuses and their definitions (evidence: stop status definitions)."""
    rows = [(d.status, f"{d.label} ({d.label_zh})", d.when, d.user_gets, d.system_keeps,
             "yes" if d.resumable else "no") for d in STATUS_DEFINITIONS.values()]
    return Table.build("Stop statuses", ["status", "name", "when", "the user gets", "the system keeps", "resumable"],
                       rows, note="Each stop renders twice: Stop.user_message() and Stop.system_record().")
