"""One tool call: its :class:`Attempt` (planned once), its pre-check, and its attempts — the same alone or in a batch.

    plan(run, call, args)                 -> Attempt   the call's tool, normalised arguments, label, task item
    precheck(run, spec, tool, args)       -> ToolResult | Stop | None   schema, permission gate, task rules, risk
    next_attempt(run, use)                -> Attempt   the call settled (its route, or the stop that ended it,
        set), or its next attempt: :func:`decide` routes the result (the error policy); a retry waits out
        its back-off, every retry and switch is paid from the task's one shared retry budget, and the
        cancel time and the budgets are checked before it. The next attempt is launched and waited for
        exactly as a first one (:mod:`.calls`).

Results reach the task through the ledger (:meth:`~agentloops.controller.vocabulary.ledger.Ledger.deliver`):
applied once, while the call is running; late and duplicate deliveries are written to the trace and change nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from agentloops.controller.engine import Action, Run, Turn, budget_stop, cancel_stop, make_stop
from agentloops.controller.policy.error_policy import RouteContext, route
from agentloops.controller.policy.routes import Degrade, Fallback, Retry, Route
from agentloops.controller.stopping.progress import Fingerprint, normalize_args, normalize_value
from agentloops.controller.stopping.status import Stop
from agentloops.controller.task.context import summarize
from agentloops.controller.vocabulary.ledger import ARRIVAL_ORDER
from agentloops.controller.vocabulary.tools import ToolResult, ToolSpec, action_label, validate
from agentloops.i18n import N_, Phrase
from agentloops.messages import Message
from agentloops.response import ToolCall

_JSON = json.JSONEncoder(ensure_ascii=False, default=str).encode
"""The encoder of a tool's data (to measure it) and of an observation."""

Parts = tuple[str, Any, str] | None
"""What an ``ok`` or ``empty`` result gives the task: (item, value, summary), or ``None``."""

@dataclass(slots=True)
class Attempt:
    """One tool call and where its latest attempt stands: planned once, then admitted, run, routed and applied —
    every stage reads it instead of working it out again; a retry or a fallback is a new ``Attempt`` of it.

    Attributes:
        call: the model's call (its id answers it in the transcript).
        tool / args / spec: the tool's name, the parsed arguments, the tool (``None`` if there is none); a
            fallback runs another tool.
        norm: the arguments normalised as the tool's schema declares (the fingerprint's, the ledger's
            and the trace's text).
        label: ``tool(key=value)``, as tables write the action.
        item: the task item the call serves (``None``: none).
        fp: its fingerprint, taken when it is admitted (at the progress version of that moment).
        kind: ``call``; ``retry`` when the same call failed retryably before; ``fallback``.
        tries: its attempts on this tool so far (this one included); tried: the tools it fell back from.
        call_id: its id in the ledger (``""``: no attempt of it ran); first_id: its first attempt's.
        result: its (usable) result (``None``: not run yet); parts: what it gives the task,
            ``(item, value, summary)`` or ``None``.
        action: its action in the turn (``None``: it did not run).
        route: ``None`` while it may still be retried; once settled, the route it took or the stop that ended it.
    """

    call: ToolCall
    tool: str
    args: dict[str, Any]
    spec: ToolSpec | None
    norm: str
    label: str
    item: str | None
    fp: Fingerprint | None = None
    kind: str = "call"
    tries: int = 1
    tried: frozenset[str] = frozenset()
    call_id: str = ""
    first_id: str = ""
    result: ToolResult | None = None
    parts: Parts = None
    action: Action | None = None
    route: Route | Stop | None = None


def plan(run: Run, call: ToolCall, args: dict[str, Any], spec: ToolSpec | None = None) -> Attempt:
    """The :class:`Attempt` of ``call`` with ``args`` on ``spec`` (default: the tool the call names)."""
    tool = call.name if spec is None else spec.name
    spec = run.toolbox.tools.get(tool) if spec is None else spec
    return Attempt(call, tool, args, spec, normalize_args(args, spec.params if spec else None),
                   action_label(tool, args), run.task.kind.item_for(tool, args))


def record(t: Turn, use: Attempt, label: str, call_id: str | None, kind: str, result: ToolResult | None,
           route_taken: str | None) -> Action:
    """Keep one action of the turn as values (its trace dict is made when the trace is read)."""
    action = Action(label=label, call_id=call_id, tool=use.tool, args=use.args, args_norm=use.norm, kind=kind,
                    status=None if result is None else result.status, route=route_taken, result=result,
                    fingerprint=use.fp)
    t.actions.append(action)
    return action


def not_run(run: Run, call: ToolCall, tool: str, why: str) -> None:
    """Answer a call that did not run, so every call in the transcript has its tool message."""
    text = json.dumps({"tool": tool, "status": "not run", "error": why}, ensure_ascii=False)
    run.groups[-1].append(Message("tool", text, tool_call_id=call.id, name=tool))


def repair_key(tool: str, result: ToolResult) -> str:
    """``tool:status[:parameter]``: what "the same kind of error again" means for the repair allowance."""
    return f"{tool}:{result.status}:{result.parameter}" if result.parameter else f"{tool}:{result.status}"


def precheck(run: Run, spec: ToolSpec | None, tool: str, args: dict[str, Any]) -> ToolResult | Stop | None:
    """Everything that answers before a tool runs: schema, permission gate, task rules, risk."""
    if spec is None:
        known = ", ".join(run.toolbox.names())
        return ToolResult("invalid_arguments", error=f"there is no tool named {tool!r} (tools: {known})", ran=False)
    rejection = validate(spec, args)
    if rejection is not None:
        return rejection
    task = run.task
    if run.policy.permission_gate == "uniform" and spec.capability and spec.capability not in task.granted:
        denied = Phrase(N_("{tool} needs the {capability} permission, which this caller does not have"), tool=tool,
                        capability=spec.capability)
        return ToolResult("permission_denied", error=denied, ran=False, source="permission gate")
    rule = task.kind.rules(tool, args)
    if rule is not None:
        return make_stop(run, "failed_unrecoverable", "against_policy", rule, tool=tool,
                         pending_action=action_label(tool, args))
    if spec.risk == "high" and run.policy.high_risk == "handoff":
        return make_stop(run, "handed_off", "high_risk_action",
                         Phrase(N_("{tool} is a high-risk action with side effects; a person must approve it"),
                                tool=tool),
                         tool=tool, pending_action=action_label(tool, args))
    return None


def reask_user(run: Run, spec: ToolSpec | None, args: dict[str, Any], rejection: ToolResult) -> Stop | None:
    """A value the *user* gave that the schema rejects goes back to the user, not to the model.

    The model cannot repair what only the user knows; asking it to would invite a guess. The
    question names the value and repeats the parameter's own question, never the tool's pattern.
    """
    name = rejection.parameter
    if spec is None or rejection.status != "invalid_arguments" or name is None or name not in spec.params:
        return None
    value = args.get(name)
    if not isinstance(value, (str, int, float)) or isinstance(value, bool) or \
            all(normalize_value(str(given)) != normalize_value(str(value)) for given in run.state.inputs.values()):
        return None  # not a value the user supplied (an input in state): the model made it up
    words = name.replace("_", " ")
    ask = Phrase(spec.params[name].ask_user or N_("Could you send the correct {words}?"), words=words)
    question = Phrase(N_("{value!r} does not look like a valid {words}. {ask}"), value=value, words=words, ask=ask)
    run.state.set_waiting(name, question)
    return make_stop(run, "waiting_for_user", "invalid_user_input",
                     f"the {words} the user gave ({value!r}) is not valid for {spec.name}; only the user "
                     "can correct it, so the model is not asked to guess", tool=spec.name,
                     error_class="invalid_arguments", question=question)


def next_attempt(run: Run, use: Attempt) -> Attempt:
    """Route one attempt's result: the call settled (``route``: the route taken, or the stop that ended it), or
    its next attempt to launch — a retry after its back-off, or a fallback — paid from the shared retry budget."""
    result, key = use.result, (use.tool, use.norm)  # remember a failure, and which calls a repeat would retry
    assert result is not None and use.action is not None  # an attempt being routed ran
    if result.status in ("ok", "empty"):
        run.failed_calls.discard(key)
        for slip in [k for k in run.repairs if k.startswith(f"{use.tool}:")]:
            del run.repairs[slip]  # a success of the tool: the next slip is a first one again
    else:
        run.state.record_failure(use.tool, result.status, result.error or "", run.turn)
        if result.retryable:  # the tool's judgement: calling it again is a retry, paid from the shared budget
            run.failed_calls.add(key)
    decision = decide(run, use, result, use.tries, use.tried)
    use.action.route = decision.name
    if not isinstance(decision, (Retry, Fallback)):
        return replace(use, route=decision)
    if isinstance(decision, Retry):  # wait out the back-off, unless the budget or the user's cancel ends it
        wait = decision.delay_s + (use.spec.timeout_s if use.spec is not None else 0.0)
        if not run.meter.allows("wall_time_s", wait):
            return replace(use, parts=None, route=budget_stop(run, "wall_time_s", wait))
        cancel_at = run.controls.cancel_within(run.meter.now, decision.delay_s)
        if cancel_at is not None:  # the retry never starts
            run.meter.spend("wall_time_s", cancel_at - run.meter.now)
            why = f"the user cancelled the task while waiting to retry {use.tool}"
            return replace(use, parts=None, route=cancel_stop(run, why, use.tool))
        run.meter.spend("wall_time_s", decision.delay_s)
    run.meter.spend("retries", tool=use.tool)
    again = replace(use, kind="retry", tries=use.tries + 1) if isinstance(decision, Retry) else \
        replace(plan(run, use.call, use.args, run.toolbox[decision.tool]), fp=use.fp, first_id=use.first_id,
                kind="fallback", tried=use.tried | {use.tool})  # the same call on another tool
    timeout = again.spec.timeout_s if again.spec is not None else 0.0
    if run.controls.cancelled(run.meter.now):
        return replace(use, parts=None, route=cancel_stop(
            run, f"the user cancelled the task before the next attempt of {again.tool}", again.tool))
    if not run.meter.allows("tool_calls"):
        return replace(use, parts=None, route=budget_stop(run, "tool_calls", 1))
    if not run.meter.allows("wall_time_s", timeout):
        return replace(use, parts=None, route=budget_stop(run, "wall_time_s", timeout))
    return again


def decide(run: Run, use: Attempt, result: ToolResult, tries: int, tried: frozenset[str]) -> Route:
    """The error policy's route for one attempt's result; a fallback that the pre-check refuses is a give-up."""
    toolbox, task = run.toolbox, run.task
    spec = use.spec or ToolSpec(use.tool, "", {}, _no_handler)  # a tool that does not exist: its call was rejected
    fallback = toolbox.tools.get(spec.fallback) if spec.fallback and spec.fallback not in tried else None
    repairs = run.repairs.get(repair_key(spec.name, result), 0) if result.status == "invalid_arguments" else 0
    ctx = RouteContext(spec, tries, run.meter.retries_left(spec.name), fallback,
                       task.kind.allows_not_found and use.item is not None, repairs, task.granted)
    mine = run.stages.route  # a learner's route stage, or the error policy's
    decision = mine(result, ctx) if mine is not None else route(run.policy, result, ctx)
    if isinstance(decision, Fallback):
        refused = precheck(run, toolbox.tools.get(decision.tool), decision.tool, use.args)
        if refused is not None:
            why = refused.reason if isinstance(refused, Stop) else (refused.error or refused.status)
            decision = Degrade(result.status, Phrase(N_("fallback {tool} refused before it ran: {why}"),
                                                     tool=decision.tool, why=why))
    return decision


def _no_handler(args: dict[str, Any]) -> Any:
    """The handler of a placeholder spec for a tool that does not exist (never called)."""
    return None


def usable(run: Run, use: Attempt, result: ToolResult) -> tuple[ToolResult, Parts]:
    """What a result gives the task — ``(item, value, summary)`` from the update stage (an empty result: "none
    found") — or the result downgraded when its data cannot be used."""
    if result.status not in ("ok", "empty") or use.item is None:
        return result, None
    update = run.stages.update  # a learner's update stage, or the task type's
    made = update(use.item, result) if update is not None else run.task.kind.fact(use.item, result)
    if result.status == "empty":
        return result, (use.item, *(made if isinstance(made, tuple) else ([], "none found")))
    if isinstance(made, str):
        return replace(result, status="permanent_error", retryable=False,
                       error=f"{use.tool}: the data cannot be used for {use.item} ({made})"), None
    return result, (use.item, *made)


def deliver_due(run: Run) -> None:
    """Deliver the results that have landed by now (from an earlier turn's cancelled or leftover calls)."""
    now = run.meter.now
    due = [a for a in run.inbox if a.at <= now]
    run.inbox = [a for a in run.inbox if a.at > now]
    for arrival in sorted(due, key=ARRIVAL_ORDER):
        run.ledger.deliver(arrival, run.turn)


def tool_message(run: Run, use: Attempt, result: ToolResult) -> str | None:
    """Append the observation to the transcript — data over the context's limit stored outside it, as a
    reference and a summary — and return the storage reference (``None`` when nothing was stored)."""
    observation = result.observation(use.tool, use.args)
    ref, limit = None, run.context.offload_over_tokens
    if limit is not None and result.status == "ok":
        size = run.tokenizer(_JSON(result.data))
        if size > limit:
            ref = run.store.put(result.data)
            del observation["data"]
            observation.update(ref=ref, summary=summarize(result.data, run.context.summary_chars), stored_tokens=size)
    if result.deliveries > 1:
        observation["deliveries"] = result.deliveries
    run.groups[-1].append(Message("tool", _JSON(observation), tool_call_id=use.call.id, name=use.tool))
    return ref
