"""The tool calls of one reply: one path for one call or many — a single call is a batch of one.

    run_calls(run, turn, calls) -> Stop | None
      1. plan      each call once → a :class:`~agentloops.controller.attempts.Use` (tool, arguments,
                   normalised text, label, task item)
      2. admit     each Use, before anything runs: a cancel, a repeated fingerprint, the pre-check
                   (schema, permission gate, task rules, risk), the retry rules   → run / not run / stop
      3. launch    the admitted ones together (each paid for, opened in the ledger, executed)
      4. join      their results in arrival order under the task's join rule, each through the ledger
      5. settle    each applied result: routed by the error policy; a retry or a fallback runs here,
                   inside the batch (:func:`~agentloops.controller.attempts.attempts`), exactly as it would alone
      6. apply     the outcome to the task state: a fact, an item given up, a question, a stop

Every stage takes the :class:`~agentloops.controller.engine.Run` and the turn being built and
returns values; a stage that ends the run returns a :class:`~agentloops.controller.stopping.status.Stop`.
*Whether* a failure is worth retrying is the tool's call (``ToolResult.retryable``); what to do
about it is the policy's (:func:`~agentloops.controller.policy.error_policy.route`); the retries it may still
spend are the task's one shared budget (:meth:`~agentloops.controller.policy.budgets.BudgetMeter.retries_left`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Literal, cast

from agentloops.controller.attempts import (
    Attempt,
    Parts,
    Use,
    attempts,
    cancel_due,
    decide,
    deliver,
    not_run,
    plan,
    precheck,
    reask_user,
    record,
    repair_key,
    tool_message,
    usable,
)
from agentloops.controller.engine import Action, Run, Turn, budget_stop, cancel_stop, fact_of, make_stop
from agentloops.controller.parallel import Arrival, Batch
from agentloops.controller.policy.budgets import EPSILON, BudgetName
from agentloops.controller.policy.error_policy import (
    Accept,
    AcceptNotFound,
    AskUser,
    Degrade,
    Repair,
    ReturnToModel,
    Route,
    StopRun,
)
from agentloops.controller.render import clip
from agentloops.controller.stopping.progress import Fingerprint, Repeat
from agentloops.controller.stopping.status import Stop
from agentloops.controller.task.state import Fact
from agentloops.controller.tools import ToolResult
from agentloops.i18n import N_, Phrase
from agentloops.messages import Message
from agentloops.response import ToolCall

AdmissionVerdict = Literal["run", "repeat", "stop", "skip", "rejected"]
"""What admission decided for one tool call before anything ran."""

_WHY_ENDED = {"deadline": "the join's deadline passed", "all arrived": "every call finished"}


def run_calls(run: Run, t: Turn, calls: Sequence[ToolCall]) -> Stop | None:
    """Every tool call of a reply: plan and admit each, launch the admitted ones, join and settle them."""
    uses = [plan(run, call, dict(call.parsed_arguments or {})) for call in calls]
    t.action = uses[0].label if len(uses) == 1 else f"parallel×{len(uses)}: " + ", ".join(u.label for u in uses)
    t.args_summary = "; ".join(u.norm for u in uses)
    launch, stop = _admit_all(run, t, uses)
    if stop is not None or not launch:
        t.tool_status = ", ".join(a.status or "not run" for a in cast("list[Action]", t.actions)) or "not run"
        return stop
    return _join(run, t, launch)


def admit(run: Run, t: Turn, use: Use, *, in_batch: bool, reserved: Mapping[str, int]
          ) -> tuple[AdmissionVerdict, Stop | Repeat | ToolResult | None]:
    """Decide, before anything runs, what happens to one tool call (single and parallel calls alike).

    In order: a cancel that has come due; a repeated fingerprint; the pre-check (schema, permission
    gate, task rules, risk) — a user-supplied value that fails the schema goes back to the user; then,
    if the same call failed retryably before, it is a *retry*: a side effect is never repeated (a
    person checks), and anything else needs a retry left in the shared budget (minus those
    ``reserved`` by earlier calls of the same batch). The launch pays for an admitted retry.
    Returns the verdict and what it rests on (the stop, the earlier sighting, the rejection).
    """
    tool, spec, policy = use.tool, use.spec, run.policy
    fp = use.fp = Fingerprint(tool, use.norm, run.state.progress_count)
    if cancel_due(run):
        stop = cancel_stop(run, f"the user cancelled the task before {tool} ran", tool)
        return _refuse(t, use, "stop", "blocked", "stop:cancelled", stop)
    if policy.detect_repeats and (repeat := run.monitor.check(fp)) is not None:
        run.state.note(repeat.explain())
        return _refuse(t, use, "repeat", "blocked", "skip" if in_batch else "stop:no_progress", repeat)
    checked = precheck(run, spec, tool, use.args)
    if isinstance(checked, Stop):
        return _refuse(t, use, "stop", "held", f"stop:{checked.status}", checked)
    if checked is not None:
        asked = reask_user(run, spec, use.args, checked)
        return ("rejected", checked) if asked is None else _refuse(t, use, "stop", "held", "ask_user", asked)
    assert spec is not None
    if (tool, fp.args) not in run.failed_calls:
        return "run", None
    if spec.side_effects and not policy.retry_side_effects:
        stop = make_stop(run, "handed_off", "unknown_outcome_side_effect",
                         f"{tool} changes the world and its last attempt failed transiently: whether it took "
                         "effect is unknown, so a person must check before it runs again", tool=tool,
                         pending_action=use.label)
        return _refuse(t, use, "stop", "held", "stop:handed_off", stop)
    left = run.meter.retries_left(tool, reserved)
    if left is None or left >= 1:
        use.kind = "retry"  # the model repeats a call that failed retryably: a retry
        return "run", None
    if policy.on_retries_exhausted == "stop":  # ... with the shared retry budget spent: stop, or give the item up
        return _refuse(t, use, "stop", "blocked", "stop:budget_exhausted", budget_stop(run, "retries", 1))
    if use.item is not None:
        run.state.mark_missing(use.item, Phrase(N_("retry budget spent: the same call failed before and no retries "
                                                     "are left")),
                               code="budget:retries")
    return _refuse(t, use, "skip", "blocked", "degrade", None)


def _refuse(t: Turn, use: Use, verdict: AdmissionVerdict, prefix: str, route_taken: str,
            said: Stop | Repeat | None) -> tuple[AdmissionVerdict, Stop | Repeat | None]:
    record(t, use, f"{prefix}:{use.label}", None, prefix, None, route_taken)
    return verdict, said


def _admit_all(run: Run, t: Turn, uses: list[Use]) -> tuple[list[Use], Stop | None]:
    """Admit each call; answer the ones that will not run. Returns the calls to launch, or the stop."""
    launch: list[Use] = []
    pending_stop: Stop | None = None
    repeats: list[Repeat] = []
    reserved: dict[str, int] = {}  # retries admitted so far in this batch, by tool
    for use in uses:
        verdict, said = admit(run, t, use, in_batch=len(uses) > 1, reserved=reserved)
        if verdict == "repeat":
            assert isinstance(said, Repeat)
            repeats.append(said)
            not_run(run, use.call, use.tool, "repeat of an action that brought nothing")
        elif verdict == "stop":
            pending_stop = pending_stop or said  # type: ignore[assignment]
            not_run(run, use.call, use.tool, "the task is stopping")
        elif verdict == "skip":
            not_run(run, use.call, use.tool, "the same call failed before and the retry budget is spent")
        elif verdict == "rejected":
            assert isinstance(said, ToolResult)
            pending_stop = pending_stop or _answer_rejected(run, t, use, said)
        else:
            if use.kind == "retry":
                reserved[use.tool] = reserved.get(use.tool, 0) + 1
            launch.append(use)
    if len(repeats) == len(uses):
        t.observation = f"repeat of turn {repeats[0].first_turn}"
        reason = repeats[0].explain() if len(uses) == 1 else \
            "every call of the batch repeats an action that brought nothing new"
        return [], make_stop(run, "no_progress", "repeated_action", reason, tool=uses[0].tool)
    if pending_stop is not None:  # the run stops: start nothing new (and pay for nothing)
        for use in launch:
            not_run(run, use.call, use.tool, "the task is stopping")
        return [], pending_stop
    return launch, None


def _answer_rejected(run: Run, t: Turn, use: Use, result: ToolResult) -> Stop | None:
    """A call the schema or the permission gate answered before it ran: route and apply that answer."""
    decision = decide(run, use, result, 1, frozenset())
    record(t, use, use.label, None, "rejected", result, decision.name)
    run.state.record_failure(use.tool, result.status, result.error or "", run.turn)
    return _apply(run, t, use, result, decision, None, "", tool_message(run, use, result))


Started = dict[str, tuple[Use, Attempt]]
"""The launched calls by call id: the call and its first attempt (call id, usable result, parts, action)."""


def _launch(run: Run, t: Turn, launch: list[Use]) -> tuple[Started, list[Arrival], Stop | None]:
    """Start every admitted call at the same moment; a call the budgets cannot pay for is not started.
    Returns the started calls, when their results will arrive, and the stop if none could be paid for."""
    start, meter = run.clock.now, run.meter
    started: Started = {}
    arrivals: list[Arrival] = []
    refused: Stop | None = None
    for use in launch:
        spec = use.spec
        assert spec is not None
        name: BudgetName | None = "tool_calls" if not meter.allows("tool_calls", 1.0) else \
            "wall_time_s" if not meter.allows("wall_time_s", spec.timeout_s) else None
        if name is not None:  # not run; the batch goes on with what can be paid for
            record(t, use, f"blocked:{use.label}", None, "blocked", None, f"budget:{name}")
            not_run(run, use.call, spec.name, f"the {name} budget is spent")
            refused = refused or budget_stop(run, name, 1.0 if name == "tool_calls" else spec.timeout_s)
            continue
        if use.kind == "retry":
            meter.spend("retries", tool=spec.name)
        run.call_counter += 1
        call_id = f"{run.trace_id}-c{run.call_counter}"
        run.ledger.open(call_id, spec.name, use.norm, run.turn, start, use.kind, parallel=len(launch) > 1)
        result, parts = usable(run, use, run.executor(spec, use.args))
        meter.spend("tool_calls")
        for delivery in range(1, result.deliveries + 1):
            arrivals.append(Arrival(round(start + result.latency_s + 0.05 * (delivery - 1), 6), call_id, result,
                                    delivery, run.trace_id))
        action = record(t, use, ("" if use.kind == "call" else f"{use.kind}:") + use.label, call_id, use.kind, result,
                        None)
        started[call_id] = (use, (call_id, result, parts, action))
    return started, arrivals, (refused if not started else None)


def _join(run: Run, t: Turn, launch: list[Use]) -> Stop | None:
    """Launch the calls, then settle each result as it arrives until the join rule is decided.

    The batch stops waiting at its deadline: the wall-time budget, the user's cancel, or the join's
    timeout — which bounds waiting for *parallel* calls; a lone call waits for its own tool timeout.
    """
    started, arrivals, refused = _launch(run, t, launch)
    if not started:  # the budgets could pay for none of them: stop now, naming the budget
        return refused
    start, join, cancel_at = run.clock.now, run.task.join, run.controls.cancel_at_s
    remaining_wall = run.meter.remaining("wall_time_s")
    candidates = [start + remaining_wall] if remaining_wall is not None else []
    if join.timeout_s is not None and len(launch) > 1:
        candidates.append(start + join.timeout_s)
    if cancel_at is not None and cancel_at >= start:
        candidates.append(cancel_at)
    deadline = min(candidates) if candidates else None
    still_needed = None if join.kind == "all" else run.task.need - run.state.sourced  # "all" waits for all anyway
    batch = Batch(join, len(started), deadline, still_needed, arrivals, run.stages.join)
    statuses: dict[str, str] = {}
    pending_stop: Stop | None = None
    while pending_stop is None and (arrival := batch.next()) is not None:
        if arrival.at > run.clock.now:
            run.clock.advance(arrival.at - run.clock.now)
        if deliver(run, arrival) == "applied":
            pending_stop = _settle(run, t, arrival.call_id, started[arrival.call_id], batch, statuses)
    if batch.outcome == "deadline" and deadline is not None and deadline > run.clock.now:
        run.clock.advance(deadline - run.clock.now)
    _wrap_up(run, t, batch, started, statuses, pending_stop)
    if pending_stop is None and cancel_due(run):
        running = f" while {t.action} was running" if len(started) == 1 else " during a batch"
        return cancel_stop(run, f"the user cancelled the task{running}", next(iter(started.values()))[0].tool)
    if pending_stop is None and batch.outcome == "deadline":
        wall_left = run.meter.remaining("wall_time_s")
        if wall_left is not None and wall_left <= EPSILON:
            return budget_stop(run, "wall_time_s", 0)
    return pending_stop


def _settle(run: Run, t: Turn, first_id: str, launched: tuple[Use, Attempt], batch: Batch,
            statuses: dict[str, str]) -> Stop | None:
    """Route one arrived result — retrying or falling back inside the batch, as a call alone — and apply it."""
    use, first = launched
    state = run.state
    progress_before = state.progress_count
    result, final, decision, parts, call_id = attempts(run, t, use, first)
    ref = tool_message(run, final, result)
    statuses[first_id] = result.status
    stop = _apply(run, t, final, result, decision, parts, call_id, ref)
    if result.status != "invalid_arguments" and use.fp is not None:  # a slip is bounded by the repair allowance
        new = state.progress_count != progress_before
        run.monitor.record(use.fp, run.turn, result.status, new,
                           "" if new else "; ".join(state._unchanged) or f"{result.status}, no new fact")
    batch.note(True, result.status == "ok" or (result.status == "empty" and isinstance(decision, AcceptNotFound)))
    return stop


def _wrap_up(run: Run, t: Turn, batch: Batch, started: Started, statuses: dict[str, str],
             stopped: Stop | None = None) -> None:
    """Cancel what the join no longer needs (its results will land late) and summarise the turn; when a stop
    ended the batch (``stopped``: a budget ran out), its reason is why the running calls were cancelled."""
    actions = cast("list[Action]", t.actions)  # a turn of tool calls records only tool actions
    if len(started) > 1 or batch.arrivals:  # something may still be running
        outcome, join = batch.outcome, run.task.join
        why = f"join '{join.describe()}' satisfied" if outcome == "satisfied" else \
            f"join '{join.describe()}' can no longer be satisfied" if outcome == "impossible" else \
            _WHY_ENDED.get(outcome or "", f"the task stopped: {stopped.reason}" if stopped else "the batch was stopped")
        if outcome == "deadline" and cancel_due(run):  # the user's cancel, not the join, stopped the wait
            why = "the user cancelled the task"
        cancelled = run.ledger.cancel_running(run.clock.now, f"cancelled: {why}")
        for call_id in cancelled:
            use = started[call_id][0]
            run.groups[-1].append(Message("tool", json.dumps({"tool": use.tool, "status": "cancelled",
                                                               "error": why}), tool_call_id=use.call.id, name=use.tool))
            statuses[call_id] = "cancelled"
        run.inbox.extend(batch.leftover())
        for action in actions:
            if action.call_id in cancelled:
                action.route = "cancelled"
        if len(started) > 1 or cancelled:
            order = [a.call_id for a in actions if a.call_id in started]
            t.tool_status = ", ".join(statuses.get(c or "", "-") for c in order)
            t.observation = f"{why}; " + ", ".join(f"{sum(1 for s in statuses.values() if s == k)} {k}"
                                                    for k in sorted(set(statuses.values())))
            return
    # a batch of one reads as the call it is: ``timeout→ok`` when it was retried
    t.tool_status = "→".join(a.status or "-" for a in actions) if len(actions) > 1 else \
        next(iter(statuses.values()), "-")


def _apply(run: Run, t: Turn, use: Use, result: ToolResult, decision: Route | Stop, parts: Parts, call_id: str,
           ref: str | None = None) -> Stop | None:
    """Write the outcome of a settled call into state; return a stop if the route says so."""
    tool, item, state = use.tool, use.item, run.state
    if isinstance(decision, (Accept, AcceptNotFound)):
        if parts is not None:
            item_name, value, summary = parts
            if isinstance(decision, AcceptNotFound) or summary is None:
                made = fact_of(run, item_name, result)
                value, summary = made if isinstance(made, tuple) else ([], "none found")
            source = Phrase(N_("{backend} via {tool} ({call})"), backend=result.source or tool, tool=tool,
                            call=call_id.rsplit('-', 1)[-1])
            state.add_fact(Fact(item_name, value, summary, source, run.turn, ref))
            t.observation = summary
        else:
            state.note(f"{use.label}: serves no item of this task")
            t.observation = "ok, but not needed by the task"
    else:
        t.failed = True
        t.observation = clip(result.error or result.status, 80)
    if isinstance(decision, Repair):
        key = repair_key(tool, result)
        run.repairs[key] += 1
        t.decision = f"continue: repair {run.repairs[key]} of {run.policy.invalid_argument_repairs} allowed for {key}"
    elif isinstance(decision, ReturnToModel):
        t.decision = f"continue: {decision.reason}"
    elif isinstance(decision, Degrade):
        if item is not None:
            state.mark_missing(item, Phrase(N_("{code}: {reason}"), code=decision.code, reason=decision.reason),
                               code=decision.code)
        t.decision = f"continue: {item or tool} given up ({decision.code})"
    elif isinstance(decision, AskUser):
        state.set_waiting(decision.parameter, decision.question)
        return make_stop(run, "waiting_for_user", result.status, decision.reason, tool=tool,
                         error_class=result.status, question=decision.question)
    elif isinstance(decision, StopRun):
        return make_stop(run, decision.status, decision.code, decision.reason,  # type: ignore[arg-type]
                         tool=tool, error_class=result.status, budget=decision.budget)
    elif isinstance(decision, Stop):
        return decision
    return None
