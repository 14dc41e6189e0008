"""The tool calls of one reply: one path for one call or many — a single call is a batch of one.

    run_calls(run, turn, calls) -> Stop | None
      1. plan      each call once → an :class:`~agentloops.controller.attempts.Attempt` (tool, arguments,
                   normalised text, label, task item), carried through every stage below
      2. admit     each one, before anything runs: a cancel, a repeated fingerprint, the pre-check
                   (schema, permission gate, task rules, risk), the retry rules → ``None`` (run it), a
                   route (answered, not run) or a :class:`~agentloops.controller.stopping.status.Stop`
      3. launch    the admitted ones together (each paid for, opened in the ledger, executed)
      4. join      their results in arrival order under the task's join rule, each through the ledger
      5. settle    each applied result: routed by the error policy
                   (:func:`~agentloops.controller.attempts.next_attempt`); a retry or a fallback is launched
                   and joined exactly as a first attempt, inside the batch or alone
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
from dataclasses import replace
from typing import cast

from agentloops.controller.attempts import (
    Attempt,
    decide,
    next_attempt,
    not_run,
    plan,
    precheck,
    reask_user,
    record,
    repair_key,
    tool_message,
    usable,
)
from agentloops.controller.engine import Action, Run, Turn, budget_stop, cancel_stop, make_stop
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
from agentloops.controller.sim.timeline import arrivals
from agentloops.controller.stopping.progress import Fingerprint, Repeat
from agentloops.controller.stopping.status import Stop
from agentloops.controller.task.state import Fact, sourced
from agentloops.controller.vocabulary.ledger import ARRIVAL_ORDER, Arrival
from agentloops.controller.vocabulary.readback import readable
from agentloops.controller.vocabulary.render import clip
from agentloops.controller.vocabulary.tools import ToolResult
from agentloops.i18n import N_, Phrase
from agentloops.messages import Message
from agentloops.response import ToolCall

_WHY_ENDED = {"deadline": N_("the join's deadline passed"), "all arrived": N_("every call finished")}

CONTINUING = readable(N_("continue: {reason}"))
REPAIRING = readable(N_("continue: repair {n} of {allowed} allowed for {key}"))
GIVEN_UP = readable(N_("continue: {what} given up ({code})"))
SERVES_NOTHING = readable(N_("{label}: serves no item of this task"))
"""A tool turn's decisions and notes (English data in the trace; read back where shown)."""
readable(N_("{backend} via {tool} ({call})"))


def run_calls(run: Run, t: Turn, calls: Sequence[ToolCall]) -> Stop | None:
    """Every tool call of a reply: plan and admit each (the ones that will not run are answered), launch the
    admitted ones, join and settle them."""
    uses = [plan(run, call, dict(call.parsed_arguments or {})) for call in calls]
    t.action = uses[0].label if len(uses) == 1 else f"parallel×{len(uses)}: " + ", ".join(u.label for u in uses)
    t.args_summary = "; ".join(u.norm for u in uses)
    launch: list[Attempt] = []
    stop: Stop | None = None
    repeats: list[Repeat] = []
    reserved: dict[str, int] = {}  # retries admitted so far in this batch, by tool
    for use in uses:
        said = admit(run, t, use, in_batch=len(uses) > 1, reserved=reserved, repeats=repeats)
        if isinstance(said, Stop):
            stop = stop or said
        elif said is None:
            if use.kind == "retry":
                reserved[use.tool] = reserved.get(use.tool, 0) + 1
            launch.append(use)
    if len(repeats) == len(uses):
        t.observation = Phrase(N_("repeat of turn {turn}"), turn=repeats[0].first_turn)
        reason = repeats[0].explain() if len(uses) == 1 else \
            "every call of the batch repeats an action that brought nothing new"
        stop = make_stop(run, "no_progress", "repeated_action", reason, tool=uses[0].tool)
    elif stop is not None:  # the run stops: start nothing new (and pay for nothing)
        for use in launch:
            not_run(run, use.call, use.tool, "the task is stopping")
    if stop is not None or not launch:
        t.tool_status = ", ".join(a.status or N_("not run") for a in cast("list[Action]", t.actions)) or N_("not run")
        return stop
    return _join(run, t, launch)


def admit(run: Run, t: Turn, use: Attempt, *, in_batch: bool, reserved: Mapping[str, int], repeats: list[Repeat]
          ) -> Route | Stop | None:
    """Decide, before anything runs, what happens to one tool call (single and parallel calls alike): ``None``
    runs it; a :class:`Stop` ends the run; a route means it does not run and is answered already.

    In order: a cancel that has come due; a repeated fingerprint (kept in ``repeats``); the pre-check (schema,
    permission gate, task rules, risk) — a user-supplied value that fails the schema goes back to the user, a
    rejected call is routed as its result; then a retry's own rules (:func:`_admit_retry`).
    """
    tool, spec, policy = use.tool, use.spec, run.policy
    fp = use.fp = Fingerprint(tool, use.norm, run.state.progress_count)
    if run.controls.cancelled(run.meter.now):
        stop = cancel_stop(run, f"the user cancelled the task before {tool} ran", tool)
        return _refuse(run, t, use, "blocked", "stop:cancelled", stop)
    if policy.detect_repeats and (repeat := run.monitor.check(fp)) is not None:
        run.state.note(repeat.explain())
        repeats.append(repeat)
        return _refuse(run, t, use, "blocked", "skip" if in_batch else "stop:no_progress",
                       ReturnToModel("repeat of an action that brought nothing"))
    checked = precheck(run, spec, tool, use.args)
    if isinstance(checked, Stop):
        return _refuse(run, t, use, "held", f"stop:{checked.status}", checked)
    if checked is not None:
        asked = reask_user(run, spec, use.args, checked)
        return _answer_rejected(run, t, use, checked) if asked is None else \
            _refuse(run, t, use, "held", "ask_user", asked)
    return None if (tool, fp.args) not in run.failed_calls else _admit_retry(run, t, use, reserved)


def _admit_retry(run: Run, t: Turn, use: Attempt, reserved: Mapping[str, int]) -> Route | Stop | None:
    """The same call failed retryably before, so this is a *retry*: a side effect is never repeated (a person
    checks); anything else needs a retry left in the shared budget, minus those ``reserved`` in this batch."""
    tool, spec, policy = use.tool, use.spec, run.policy
    assert spec is not None
    if spec.side_effects and not policy.retry_side_effects:
        stop = make_stop(run, "handed_off", "unknown_outcome_side_effect",
                         f"{tool} changes the world and its last attempt failed transiently: whether it took "
                         "effect is unknown, so a person must check before it runs again", tool=tool,
                         pending_action=use.label)
        return _refuse(run, t, use, "held", "stop:handed_off", stop)
    left = run.meter.retries_left(tool, reserved)
    if left is None or left >= 1:
        use.kind = "retry"  # the model repeats a call that failed retryably: a retry
        return None
    if policy.on_retries_exhausted == "stop":  # ... with the shared retry budget spent: stop, or give the item up
        return _refuse(run, t, use, "blocked", "stop:budget_exhausted", budget_stop(run, "retries", 1))
    why = Phrase(N_("retry budget spent: the same call failed before and no retries are left"))
    if use.item is not None:
        run.state.mark_missing(use.item, why, code="budget:retries")
    return _refuse(run, t, use, "blocked", "degrade",
                   Degrade("budget:retries", "the same call failed before and the retry budget is spent"))


def _refuse(run: Run, t: Turn, use: Attempt, prefix: str, route_taken: str, said: Route | Stop) -> Route | Stop:
    """Keep the refused call as an action and answer it in the transcript (it does not run)."""
    record(t, use, f"{prefix}:{use.label}", None, prefix, None, route_taken)
    not_run(run, use.call, use.tool, "the task is stopping" if isinstance(said, Stop) else said.reason)
    return said


def _answer_rejected(run: Run, t: Turn, use: Attempt, result: ToolResult) -> Route | Stop:
    """A call the schema or the permission gate answered before it ran: route and apply that answer."""
    decision = decide(run, use, result, 1, frozenset())
    record(t, use, use.label, None, "rejected", result, decision.name)
    run.state.record_failure(use.tool, result.status, result.error or "", run.turn)
    settled = replace(use, result=result, route=decision)
    return _apply(run, t, settled) or decision


Started = dict[str, Attempt]
"""The launched attempts by call id (a retry or a fallback is one more)."""


def _launch(run: Run, t: Turn, launch: list[Attempt]) -> tuple[Started, list[Arrival], Stop | None]:
    """Start every admitted call at the same moment; a call the budgets cannot pay for is not started.
    Returns the started calls, when their results will arrive, and the stop if none could be paid for."""
    start, meter = run.meter.now, run.meter
    started: Started = {}
    landing: list[Arrival] = []
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
        if use.kind == "retry" and use.tries == 1:  # the model repeated a failed call (a routed retry is paid)
            meter.spend("retries", tool=spec.name)
        run.call_counter += 1
        call_id = f"{run.trace_id}-c{run.call_counter}"
        run.ledger.open(call_id, spec.name, use.norm, run.turn, start, use.kind, parallel=len(launch) > 1)
        result, parts = usable(run, use, run.executor(spec, use.args))
        meter.spend("tool_calls")
        landing.extend(arrivals(start, call_id, result, run.trace_id))
        action = record(t, use, ("" if use.kind == "call" else f"{use.kind}:") + use.label, call_id, use.kind, result,
                        None)
        started[call_id] = replace(use, call_id=call_id, first_id=use.first_id or call_id, result=result,
                                   parts=parts, action=action)
    return started, landing, (refused if not started else None)


def _join(run: Run, t: Turn, launch: list[Attempt]) -> Stop | None:
    """Launch the calls, then settle each result as it arrives until the join rule is decided.

    The batch stops waiting at its deadline: the wall-time budget, the user's cancel, or the join's
    timeout — which bounds waiting for *parallel* calls; a lone call waits for its own tool timeout.
    """
    started, landing, refused = _launch(run, t, launch)
    if not started:  # the budgets could pay for none of them: stop now, naming the budget
        return refused
    start, join, cancel_at, lone = run.meter.now, run.task.join, run.controls.cancel_at_s, len(started) == 1
    remaining_wall = run.meter.remaining("wall_time_s")
    candidates = [start + remaining_wall] if remaining_wall is not None else []
    if join.timeout_s is not None and len(launch) > 1:
        candidates.append(start + join.timeout_s)
    if cancel_at is not None and cancel_at >= start:
        candidates.append(cancel_at)
    deadline = min(candidates) if candidates else None
    still_needed = None if join.kind == "all" else run.task.need - sourced(run.state.facts)  # "all" waits for all
    queue = sorted(landing, key=ARRIVAL_ORDER)
    outcome, pending_stop, statuses = _wait(run, t, started, queue, deadline, join.needed(len(started), still_needed))
    if outcome == "deadline" and deadline is not None and deadline > run.meter.now:
        run.meter.spend("wall_time_s", deadline - run.meter.now)
    _wrap_up(run, t, outcome, queue, started, statuses, pending_stop)
    if pending_stop is None and run.controls.cancelled(run.meter.now):
        use = [*started.values()][-1 if lone else 0]  # alone: the attempt that was running; a batch: its first call
        running = f" while {use.label} was running" if lone else " during a batch"
        return cancel_stop(run, f"the user cancelled the task{running}", use.tool)
    if pending_stop is None and outcome == "deadline":
        wall_left = run.meter.remaining("wall_time_s")
        if wall_left is not None and wall_left <= EPSILON:
            return budget_stop(run, "wall_time_s", 0)
    return pending_stop


def _wait(run: Run, t: Turn, started: Started, queue: list[Arrival], deadline: float | None, needed: int
          ) -> tuple[str | None, Stop | None, dict[str, str]]:
    """Settle the arrivals in time order — each routed (a retry or a fallback is launched, its results queued),
    applied, its progress recorded — until the join stage says the wait is over (``satisfied``), time is up
    (``deadline``), nothing more will arrive, or a stop comes. Returns why it ended (``None``: the stop), the stop
    and each call's status; what is left in ``queue`` will land late. It never ends just because the batch can no
    longer meet its rule: the calls still running carry evidence the task needs."""
    total, succeeded, finished, short = len(started), 0, 0, False
    statuses: dict[str, str] = {}
    stop: Stop | None = None
    while stop is None:
        if not queue:
            return ("impossible" if short else "all arrived"), None, statuses
        if deadline is not None and queue[0].at > deadline:
            return "deadline", None, statuses
        arrival = queue.pop(0)
        if arrival.at > run.meter.now:
            run.meter.spend("wall_time_s", arrival.at - run.meter.now)
        if run.ledger.deliver(arrival, run.turn) != "applied":
            continue
        progress_before = run.state.progress_count
        settled = next_attempt(run, started[arrival.call_id])  # routed: settled, or its next attempt
        if settled.route is None:  # a retry or a fallback: launched, and its results queued, as any call's
            more, landing, _ = _launch(run, t, [settled])  # (the budgets allow it: next_attempt checked)
            started.update(more)
            queue[:] = sorted(queue + landing, key=ARRIVAL_ORDER)
            continue
        stop = _apply(run, t, settled)
        assert settled.result is not None  # a settled call has a result (its last attempt's)
        status = statuses[settled.first_id] = settled.result.status
        if status != "invalid_arguments" and settled.fp is not None:  # a slip is bounded by the repair allowance
            new = run.state.progress_count != progress_before
            run.monitor.record(settled.fp, run.turn, status, new,
                               "" if new else "; ".join(run.state._unchanged) or f"{status}, no new fact")
        finished += 1
        succeeded += status == "ok" or (status == "empty" and isinstance(settled.route, AcceptNotFound))
        if run.stages.join(succeeded, finished, total, needed):
            return "satisfied", stop, statuses
        short = short or succeeded + total - finished < needed  # noted; the running calls are still needed
    return None, stop, statuses


def _why_cancelled(run: Run, outcome: str | None, stopped: Stop | None) -> Phrase:
    """Why the calls still running are cancelled, as a phrase (a learner reads it in the call table and the trace)."""
    rule = run.task.join.describe()
    if outcome == "deadline" and run.controls.cancelled(run.meter.now):  # the user cancelled, not the join
        return Phrase(N_("the user cancelled the task"))
    if outcome == "satisfied":
        return Phrase(N_("join '{rule}' satisfied"), rule=rule)
    if outcome == "impossible":
        return Phrase(N_("join '{rule}' can no longer be satisfied"), rule=rule)
    if ended := _WHY_ENDED.get(outcome or ""):
        return Phrase(ended)
    return Phrase(N_("the task stopped: {reason}"), reason=stopped.reason) if stopped else \
        Phrase(N_("the batch was stopped"))


def _wrap_up(run: Run, t: Turn, outcome: str | None, leftover: list[Arrival], started: Started,
             statuses: dict[str, str], stopped: Stop | None = None) -> None:
    """Cancel what the join no longer needs (its results, ``leftover``, will land late) and summarise the turn;
    when a stop ended the batch (``stopped``: a budget ran out), its reason is why the running calls were
    cancelled."""
    actions = cast("list[Action]", t.actions)  # a turn of tool calls records only tool actions
    order = [call_id for call_id, use in started.items() if call_id == use.first_id]  # the calls, not attempts
    if len(order) > 1 or leftover:  # something may still be running
        why = _why_cancelled(run, outcome, stopped)
        cancelled = run.ledger.cancel_running(run.meter.now, Phrase(N_("cancelled: {why}"), why=why))
        for call_id in cancelled:
            use = started[call_id]
            run.groups[-1].append(Message("tool", json.dumps({"tool": use.tool, "status": "cancelled",
                                                               "error": why}), tool_call_id=use.call.id, name=use.tool))
            statuses[use.first_id] = "cancelled"
        run.inbox.extend(leftover)
        for action in actions:
            if action.call_id in cancelled:
                action.route = "cancelled"
        if len(order) > 1 or cancelled:
            t.tool_status = ", ".join(statuses.get(c or "", "-") for c in order)
            t.observation = Phrase(N_("{why}; {counts}"), why=why, counts=", ".join(
                f"{sum(1 for s in statuses.values() if s == k)} {k}" for k in sorted(set(statuses.values()))))
            return
    if any(a.call_id is None for a in actions):  # calls answered without running beside the one that ran
        t.tool_status = ", ".join(a.status or "not run" for a in actions)
    else:  # a batch of one reads as the call it is: ``timeout→ok`` when it was retried
        t.tool_status = "→".join(a.status or "-" for a in actions) if len(actions) > 1 else \
            next(iter(statuses.values()), "-")


def _apply(run: Run, t: Turn, settled: Attempt) -> Stop | None:
    """Answer a settled call in the transcript and write its outcome into state; return a stop if its route says so."""
    result, decision, parts, call_id = settled.result, settled.route, settled.parts, settled.call_id
    tool, item, state = settled.tool, settled.item, run.state
    assert result is not None  # a settled call has a result (its last attempt's, or the one it never ran)
    ref = tool_message(run, settled, result)  # the storage reference when its data was kept outside the context
    if isinstance(decision, (Accept, AcceptNotFound)):
        if parts is not None:
            item_name, value, summary = parts
            source = Phrase(N_("{backend} via {tool} ({call})"), backend=result.source or tool, tool=tool,
                            call=call_id.rsplit('-', 1)[-1])
            state.add_fact(Fact(item_name, value, summary, source, run.turn, ref))
            t.observation = summary
        else:
            state.note(SERVES_NOTHING.format(label=settled.label))
            t.observation = N_("ok, but not needed by the task")
    else:
        t.failed, t.observation = True, clip(result.error or result.status, 80)
    if isinstance(decision, Repair):
        key = repair_key(tool, result)
        run.repairs[key] += 1
        t.decision = REPAIRING.format(n=run.repairs[key], allowed=run.policy.invalid_argument_repairs, key=key)
    elif isinstance(decision, ReturnToModel):
        t.decision = CONTINUING.format(reason=decision.reason)
    elif isinstance(decision, Degrade):
        if item is not None:
            state.mark_missing(item, Phrase(N_("{code}: {reason}"), code=decision.code, reason=decision.reason),
                               code=decision.code)
        t.decision = GIVEN_UP.format(what=item or tool, code=decision.code)
    elif isinstance(decision, AskUser):
        state.set_waiting(decision.parameter, decision.question)
        return make_stop(run, "waiting_for_user", result.status, decision.reason, tool=tool,
                         error_class=result.status, question=decision.question)
    elif isinstance(decision, StopRun):
        return make_stop(run, decision.status, decision.code, decision.reason,  # type: ignore[arg-type]
                         tool=tool, error_class=result.status, budget=decision.budget)
    return decision if isinstance(decision, Stop) else None
