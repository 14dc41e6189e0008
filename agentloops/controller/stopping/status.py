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

from pydantic import TypeAdapter

from agentloops.controller.policy.budgets import BUDGET_LABELS
from agentloops.controller.task.state import Fact
from agentloops.controller.vocabulary.readback import read_back
from agentloops.controller.vocabulary.render import Table
from agentloops.i18n import N_, Phrase, Said, _, shown

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


def shown_item(item: str) -> str:
    """An item as the user reads it: ``weather:Shanghai`` → ``Shanghai`` (the kind prefix is the system's id); a
    key the catalog has is shown in the language in use (``order:status`` → ``状态``)."""
    return _(item.split(":", 1)[-1])


@dataclass(frozen=True, slots=True)
class StatusDefinition:
    """What one stop status means, for people and for code.

    Attributes:
        status: the status value.
        label: English name.
        label_zh: the Chinese term, as notebooks/glossary.md fixes it.
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
                     N_("the model signals it is done AND the task's completion condition holds over state"),
                     N_("the answer with its sources"), N_("facts with sources, budgets used"), False),
    StatusDefinition("partially_completed", "partially completed", "部分完成",
                     N_("some items are verified, others cannot be obtained (given up with a reason, or the model "
                     "stopped without them)"),
                     N_("verified facts, each missing item with its reason, what to do about each"),
                     N_("facts, missing items with reasons, last error"), False),
    StatusDefinition("waiting_for_user", "waiting for user", "等待用户",
                     N_("a value only the user can supply is missing or ambiguous"),
                     N_("the one smallest question; what is done so far"),
                     N_("saved state to resume from (once), the question"), True),
    StatusDefinition("failed_unrecoverable", "failed, unrecoverable", "不可恢复的失败",
                     N_("permission denied, resource not found, an action against policy, or repeated invalid "
                        "arguments"),
                     N_("why in plain words, and who or what can unblock it"), N_("tool, error class, last state"),
                     False),
    StatusDefinition("system_failure", "system failure", "系统故障",
                     N_("the model provider, the model or the infrastructure failed (an outage, a cut-off or "
                     "malformed reply): nothing about the request was wrong"),
                     N_("that the service failed, what is done so far, and to try again later"),
                     N_("the error class, the turn, budgets used, the last state"), False),
    StatusDefinition("budget_exhausted", "budget exhausted", "预算耗尽",
                     N_("one of the seven budgets would be exceeded by the next step"),
                     N_("which budget ran out, what is done and missing, try later or raise the budget"),
                     N_("which budget, usage of all budgets, last error"), False),
    StatusDefinition("no_progress", "no progress", "无进展",
                     N_("the same action fingerprint with no new observation, or several turns without progress"),
                     N_("that the agent was repeating itself, and what detail could help"),
                     N_("the repeated fingerprint and why the state did not change"), False),
    StatusDefinition("cancelled", "cancelled", "已取消",
                     N_("the user (or an operator) cancelled; running calls are cancelled, late results ignored"),
                     N_("what was done before cancelling"), N_("cancel time, cancelled calls"), False),
    StatusDefinition("handed_off", "handed off to a human", "转人工",
                     N_("a high-risk action, a side effect with an unknown outcome, authorization needed, "
                     "or too many failures in a row"),
                     N_("that a person takes over, and the pending action"),
                     N_("the pending action, reason, and the saved state handed to the person (it is not resumed by "
                     "the controller)"), False),
)}

NEXT_STEPS: dict[StopCode, str] = {
    "completion_condition_met": N_("nothing: the answer is checked against the facts it cites"),
    "model_said_done": N_("check the answer yourself: it was not checked against the task's facts"),
    "items_unobtainable": N_("accept the partial result, or try the missing items later"),
    "premature_claim": N_("ask again for the missing items, or accept the partial result"),
    "asked_user": N_("answer the question and I will continue from where I stopped"),
    "invalid_user_input": N_("send the value again in the expected form"),
    "missing_parameter": N_("send the missing detail and I will continue"),
    "permission_denied": N_("ask an administrator for the missing permission, or hand the request to someone who "
                            "has it"),
    "not_found": N_("check the identifier or version and ask again"),
    "against_policy": N_("change the request so it stays within the rules"),
    "invalid_arguments_repeated": N_("rephrase the request with the exact values"),
    "model_gave_up": N_("rephrase the request"),
    "content_filter": N_("rephrase the request: the provider would not answer it as asked"),
    "refusal": N_("rephrase the request: the model declined it as asked"),
    "empty": N_("check the request: the service had nothing for it"),
    "permanent_error": N_("try again later, or ask for the missing part another way"),
    "model_error": N_("try again in a few minutes: the model service failed; nothing you asked for was wrong"),
    "provider_error": N_("try again in a few minutes: the model provider is failing; nothing you asked for was "
                         "wrong"),
    "truncated": N_("try again, or ask for a shorter answer: the reply was cut off before it was complete"),
    "malformed_tool_call": N_("try again: the model sent a broken request to a tool"),
    "unknown_stop": N_("try again: the model service answered in a way I could not read"),
    "budget:steps": N_("split the request into smaller ones, or allow more steps"),
    "budget:wall_time_s": N_("try again later, or allow more time for this task"),
    "budget:model_calls": N_("split the request into smaller ones"),
    "budget:tool_calls": N_("split the request into smaller ones"),
    "budget:tokens": N_("narrow the request"),
    "budget:context_tokens": N_("narrow the request"),
    "budget:retries": N_("try again later: the service kept failing"),
    "repeated_action": N_("rephrase the request or add the detail that is missing"),
    "idle_turns": N_("rephrase the request or add the detail that is missing"),
    "cancelled_by_user": N_("start again whenever you like; what was done is listed above"),
    "unknown_outcome_side_effect": N_("wait for a person to check whether the action took effect"),
    "authorization_required": N_("wait for the authorization, or ask someone who holds it"),
    "high_risk_action": N_("wait for a person to approve the action"),
    "consecutive_failures": N_("wait for a person to look at it, or try again later"),
    "no_next_step": N_("wait for a person to pick this up: I could not work out how to do it"),
}
"""The user's next step for every stop code, in plain words (no codes, no field names)."""

PLAIN_WHY: dict[str, str] = {
    "model_error": N_("the model service failed while I was working on this"),
    "provider_error": N_("the model provider reported an error (it may be down or overloaded)"),
    "truncated": N_("the model's reply was cut off before it was complete"),
    "malformed_tool_call": N_("the model sent a request to a tool that could not be read"),
    "unknown_stop": N_("the model service ended its reply in a way I could not interpret"),
    "content_filter": N_("the provider withheld the answer under its content rules"),
    "refusal": N_("the model declined this request"),
}
"""What happened, in plain words, for the codes whose ``reason`` is written for engineers."""


BUDGET_LABEL_IDS: tuple[str, ...] = (
    N_("turns of the loop"), N_("simulated wall time (s)"), N_("model calls"), N_("tool executions (every attempt)"),
    N_("tokens billed (prompt + output)"), N_("largest single request (tokens)"),
    N_("retries, shared by all tools (a fallback switch counts)"),
)
"""The texts of :data:`~agentloops.controller.policy.budgets.BUDGET_LABELS`, marked here for the catalog (that table is
English data; its labels are translated where a person reads them)."""


def _budget_label(budget: str | None) -> str:
    """The budget's name for people (``simulated wall time (s)``), or ``this task``'s when none is named."""
    for name, label in BUDGET_LABELS.items():
        if name == budget:
            return _(label)
    return budget or _("this task")


def next_step(code: str) -> str:
    """What the user can do next after a stop with ``code`` (a generic step for an unknown code), in the
    language in use."""
    step = NEXT_STEPS.get(code, N_("try again, or ask a person for help"))  # type: ignore[call-overload]
    return _(step)


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
        tool: the tool involved, if any.
        error_class: the tool status involved, if any.
        budget: for ``budget_exhausted``, which budget.
        question: for ``waiting_for_user``, the question.
        pending_action: for ``handed_off``, the action a person must review.
        verified: the task's completion condition held over state when the run stopped.
        answer: the final answer (success, or the model's text on a partial stop).
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
    tool: str | None = None
    error_class: str | None = None
    budget: str | None = None
    question: str | None = None
    pending_action: str | None = None
    verified: bool = False
    answer: str | None = None
    facts: tuple[Fact, ...] = ()
    missing: tuple[tuple[str, str], ...] = ()
    open_items: tuple[str, ...] = ()
    budgets_used: Mapping[str, int | float] = field(default_factory=dict)
    budgets_left: Mapping[str, int | float | None] = field(default_factory=dict)
    state: Mapping[str, Any] = field(default_factory=dict)

    @property
    def definition(self) -> StatusDefinition:
        """The definition of this status."""
        return STATUS_DEFINITIONS[self.status]

    def _done_lines(self) -> list[str]:
        return [_("  ✓ {item}: {summary} (source: {source})").format(
            item=shown_item(f.item), summary=shown(f.summary), source=shown(f.source)) for f in self.facts]

    def _missing_lines(self) -> list[str]:
        lines = [_("  ✗ {item}: {reason}").format(item=shown_item(item), reason=shown(reason))
                 for item, reason in self.missing]
        lines += [_("  … {item}: not done yet").format(item=shown_item(item)) for item in self.open_items]
        return lines

    def user_message(self) -> str:
        """What the user is told: what is done, what is missing, what they can do next (in the language in use;
        the system record stays English)."""
        s = self.status
        lines: list[str]
        if s == "succeeded":
            lines = [read_back(self.answer or "") or _("Done."), _("Sources:")] + [
                _("  {item}: {source}").format(item=shown_item(f.item), source=shown(f.source)) for f in self.facts]
            return "\n".join(lines)
        if s == "waiting_for_user":
            lines = [_("I need one detail to continue: {question}").format(question=shown(self.question or ""))]
            if self.facts:
                lines += [_("Done so far:"), *self._done_lines()]
            lines.append(_("Reply with it and I will continue from where I stopped; nothing is lost."))
            return "\n".join(lines)
        plain = PLAIN_WHY.get(self.code)
        why = _(plain) if plain is not None else shown(self.reason)
        heads = {
            "partially_completed": _("I could only partly finish this."),
            "failed_unrecoverable": _("I stopped and cannot finish this automatically: {why}").format(why=why),
            "system_failure": _("I had to stop because of a system failure, not because of your request: "
                                "{why}.").format(why=why),
            "budget_exhausted": _("I stopped because the budget for {budget} ran out.").format(
                budget=_budget_label(self.budget)),
            "no_progress": _("I stopped because I was repeating a step that brought nothing new."),
            "cancelled": _("Cancelled as you asked. Nothing else will run; results that arrive later are ignored."),
            "handed_off": _("A person will take this over: {reason}").format(reason=shown(self.reason)),
        }
        lines = [heads[s]]
        if s == "no_progress" and self.verified:
            lines.append(_("Everything needed was collected (below), but the agent kept repeating instead of "
                           "answering."))
        if self.facts:
            lines += [_("Done:"), *self._done_lines()]
        missing = self._missing_lines()
        if missing:
            lines += [_("Missing:"), *missing]
        if self.pending_action:
            lines.append(_("Waiting for a person to review: {action}").format(action=shown(self.pending_action)))
        lines.append(_("What you can do: {step}.").format(step=next_step(self.code)))
        return "\n".join(lines)

    def system_record(self) -> dict[str, Any]:
        """The structured record for logs, dashboards and replay: the stop itself, dumped."""
        return STOP_JSON.dump_python(self, mode="json")  # type: ignore[no-any-return]

    def __str__(self) -> str:
        record = {k: v for k, v in self.system_record().items()
                  if k not in ("state", "facts") and v not in (None, [], {})}
        user, system = _("--- user message ---"), _("--- system record ---")
        head = _("[{status}] {code}: {reason}").format(status=self.status, code=self.code,
                                                       reason=read_back(self.reason))
        return (f"{head}\n{user}\n{self.user_message()}\n"
                f"{system}\n{json.dumps(record, ensure_ascii=False, indent=1)}")

    def _repr_html_(self) -> str:
        record = {k: v for k, v in self.system_record().items() if k != "state" and v not in (None, [], {})}
        system = html.escape(json.dumps(record, ensure_ascii=False, indent=1))
        return (f"<div><b>{html.escape(self.status)}</b> · <code>{html.escape(self.code)}</code>"
                f"<div style='display:flex;gap:1em'><pre style='flex:1'>{html.escape(self.user_message())}</pre>"
                f"<pre style='flex:1'><code>{system}</code></pre></div></div>")  # the record is JSON data


STOP_JSON: TypeAdapter[Stop] = TypeAdapter(Stop)
"""Dumps a :class:`Stop` as its system record (the trace's stop line holds it)."""


def status_table() -> Table:
    """The nine stop statuses and their definitions (evidence: stop status definitions)."""
    rows = [(d.status, Said(f"{d.label} ({d.label_zh})", d.label_zh), Phrase(d.when),
             Phrase(d.user_gets), Phrase(d.system_keeps),
             Phrase(N_("yes") if d.resumable else N_("no"))) for d in STATUS_DEFINITIONS.values()]
    return Table.build(N_("Stop statuses"), [N_("status"), N_("name"), N_("when"), N_("the user gets"),
                                             N_("the system keeps"), N_("resumable")],
                       rows, note=N_("Each stop renders twice: Stop.user_message() and Stop.system_record()."))
