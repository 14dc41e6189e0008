"""One tool call: its :class:`Attempt` (planned once), its pre-check, and its attempts — the same alone or in a batch.

    plan(run, call, args)                 -> Attempt   the call's tool, normalised arguments, label, task item
    precheck(run, spec, tool, args)       -> ToolResult | Stop | None   schema, permission gate, task rules, risk
    attempts(run, turn, first)            -> Attempt   the last attempt, its route (or the stop that ended it) set
        from the first attempt's outcome: :func:`decide` routes each result (the error policy); a retry
        waits out its back-off, and every retry and switch is paid from the task's one shared retry
        budget; before each further attempt, the cancel time, the tool-call budget and the wall-time
        budget are checked (:func:`_attempt`)

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
from agentloops.controller.sim.timeline import arrivals
from agentloops.controller.stopping.progress import Fingerprint, normalize_args, normalize_value
from agentloops.controller.stopping.status import Stop
from agentloops.controller.task.context import summarize
from agentloops.controller.vocabulary.ledger import ARRIVAL_ORDER, Arrival
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
        call_id: its id in the ledger (``""``: no attempt of it ran).
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
    call_id: str = ""
    result: ToolResult | None = None
    parts: Parts = None
    action: Action | None = None
    route: Route | Stop | None = None


def plan(run: Run, call: ToolCall, args: dict[str, Any], spec: ToolSpec | None = None) -> Attempt:
    """The :class:`Attempt` of ``call`` with ``args`` on ``spec`` (default: the tool the call names)."""
    tool = call.name if spec is None else spec.name
    spec = run.toolbox.tools.get(tool) if spec is None else spec
    return Attempt(call, tool, args, spec, normalize_args(args, spec.params if spec else None),
                   action_label(tool, args), run.task.type.item_for(tool, args, run.task.params))


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
    rule = task.type.rules(tool, args, task.params)
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


def attempts(run: Run, t: Turn, first: Attempt) -> Attempt:
    """Settle one call from its first attempt: route each result with the error policy, and retry or fall back —
    waiting out a retry's back-off, paying from the shared retry budget, checking the cancel time and the budgets
    before each attempt — until the route is final. Returns the last attempt with its ``route`` set."""
    now, tries, seen = first, 1, set[str]()
    while True:
        result, key = now.result, (now.tool, now.norm)  # remember a failure, and which calls a repeat would retry
        assert result is not None  # an attempt being routed ran
        if result.status in ("ok", "empty"):
            run.failed_calls.discard(key)
            for slip in [k for k in run.repairs if k.startswith(f"{now.tool}:")]:
                del run.repairs[slip]  # a success of the tool: the next slip is a first one again
        else:
            run.state.record_failure(now.tool, result.status, result.error or "", run.turn)
            if result.retryable:  # the tool's judgement: calling it again is a retry, paid from the shared budget
                run.failed_calls.add(key)
        decision = decide(run, now, result, tries, frozenset(seen))
        now.action.route = decision.name  # type: ignore[union-attr]  # an attempt being routed ran
        if not isinstance(decision, (Retry, Fallback)):
            return replace(now, route=decision)
        if isinstance(decision, Retry):  # wait out the back-off, unless the budget or the user's cancel ends it
            wait = decision.delay_s + (now.spec.timeout_s if now.spec is not None else 0.0)
            if not run.meter.allows("wall_time_s", wait):
                return replace(now, parts=None, route=budget_stop(run, "wall_time_s", wait))
            cancel_at = run.controls.cancel_within(run.clock.now, decision.delay_s)
            if cancel_at is not None:  # the retry never starts
                run.clock.advance(cancel_at - run.clock.now)
                why = f"the user cancelled the task while waiting to retry {now.tool}"
                return replace(now, parts=None, route=cancel_stop(run, why, now.tool))
            run.clock.advance(decision.delay_s)
        run.meter.spend("retries", tool=now.tool)
        if isinstance(decision, Retry):
            tries, kind, again = tries + 1, "retry", now
        else:
            seen.add(now.tool)
            tries, kind, again = 1, "fallback", switch(run, now, decision.tool)
        now = _attempt(run, t, again, kind, None if now is first else now)
        if now.route is not None:  # it did not run, or was cancelled while running: settled
            return now


def _attempt(run: Run, t: Turn, use: Attempt, kind: str, last: Attempt | None) -> Attempt:
    """One more attempt of an admitted call, run at once (the clock waits for it) unless a cancel came due or a
    budget is spent (then it is settled with that stop); what it returns is delivered through the ledger."""
    timeout = use.spec.timeout_s if use.spec is not None else 0.0
    if run.controls.cancelled(run.clock.now):
        why, stop = "cancelled", cancel_stop(run, f"the user cancelled the task before the next attempt of "
                                                  f"{use.tool}", use.tool)
    elif not run.meter.allows("tool_calls"):
        why, stop = "tool-call budget spent", budget_stop(run, "tool_calls", 1)
    elif not run.meter.allows("wall_time_s", timeout):
        why, stop = "wall-time budget spent", budget_stop(run, "wall_time_s", timeout)
    else:
        why, stop = "", None
    if stop is not None:
        unrun = ToolResult("permanent_error", error=f"{use.tool}: not run ({why})", ran=False)
        return replace(use, kind=kind, call_id=last.call_id if last else "", result=last.result if last else unrun,
                       parts=None, action=None, route=stop)
    run.call_counter += 1
    call_id = f"{run.trace_id}-c{run.call_counter}"
    started = run.clock.now
    run.ledger.open(call_id, use.tool, use.norm, run.turn, started, kind)
    raw = run.executor(use.spec, use.args)  # type: ignore[arg-type]
    run.meter.spend("tool_calls")
    label = ("" if kind == "call" else f"{kind}:") + use.label
    cancel_at = run.controls.cancel_within(started, raw.latency_s)
    if cancel_at is not None:
        record(t, use, label, call_id, kind, None, "cancelled")  # cancelled while it runs: it lands late
        return _cancelled_while_running(run, use, kind, raw, started, cancel_at, call_id)
    run.clock.advance(raw.latency_s)
    result, parts = usable(run, use, raw)
    for delivery in range(1, result.deliveries + 1):
        run.ledger.deliver(Arrival(run.clock.now, call_id, result, delivery, run.trace_id), run.turn)
    return replace(use, kind=kind, call_id=call_id, result=result, parts=parts,
                   action=record(t, use, label, call_id, kind, result, None), route=None)


def switch(run: Run, use: Attempt, tool: str) -> Attempt:
    """The same call on its fallback ``tool`` (normalised and labelled as that tool declares; same fingerprint)."""
    fallback = plan(run, use.call, use.args, run.toolbox[tool])
    fallback.fp = use.fp
    return fallback


def decide(run: Run, use: Attempt, result: ToolResult, tries: int, tried: frozenset[str]) -> Route:
    """The error policy's route for one attempt's result; a fallback that the pre-check refuses is a give-up."""
    toolbox, task = run.toolbox, run.task
    spec = use.spec or ToolSpec(use.tool, "", {}, _no_handler)  # a tool that does not exist: its call was rejected
    fallback = toolbox.tools.get(spec.fallback) if spec.fallback and spec.fallback not in tried else None
    repairs = run.repairs.get(repair_key(spec.name, result), 0) if result.status == "invalid_arguments" else 0
    ctx = RouteContext(spec, tries, run.meter.retries_left(spec.name), fallback,
                       task.type.allows_not_found and use.item is not None, repairs, task.granted)
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
    made = update(use.item, result) if update is not None else run.task.type.fact(use.item, result, run.task.params)
    if result.status == "empty":
        return result, (use.item, *(made if isinstance(made, tuple) else ([], "none found")))
    if isinstance(made, str):
        return replace(result, status="permanent_error", retryable=False,
                       error=f"{use.tool}: the data cannot be used for {use.item} ({made})"), None
    return result, (use.item, *made)


def _cancelled_while_running(run: Run, use: Attempt, kind: str, raw: ToolResult, started: float,
                             cancel_at: float, call_id: str) -> Attempt:
    """Stop waiting at the cancel time; the call's result is queued to land late (and be refused)."""
    run.clock.advance(cancel_at - started)
    run.ledger.cancel_running(run.clock.now, "cancelled: the user cancelled the task")
    late, _ = usable(run, use, raw)
    run.inbox.extend(arrivals(started, call_id, late, run.trace_id))
    return replace(use, kind=kind, call_id=call_id, result=ToolResult(
        "permanent_error", error=f"{use.tool}: cancelled while running", ran=False), parts=None, action=None,
        route=cancel_stop(run, f"the user cancelled the task while {use.tool} was running", use.tool))


def deliver_due(run: Run) -> None:
    """Deliver the results that have landed by now (from an earlier turn's cancelled or leftover calls)."""
    now = run.clock.now
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
