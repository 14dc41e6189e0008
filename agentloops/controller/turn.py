"""One turn of the controller, as plain stage functions over one :class:`~agentloops.controller.engine.Run`.

Each stage takes the run (and the :class:`~agentloops.controller.engine.Turn` being built) and
returns a value; ``None`` means "go on", a :class:`~agentloops.controller.stopping.status.Stop` ends the run::

    play(run)                                   -> Stop | None   one whole turn, then progress and its record
      turn(run, t)                              -> Stop | None   the stages, in order:
        (inline)                                                 progress & budgets: cancelled? idle turns?
                                                                 a step and a model call left?
        prepare_request(run, t)                 -> (Message, …) task & state: system, goal (or a checked
                                                                 memory), recent turns, the TASK STATE block
        ask(run, t, request)                    -> Response | Stop   budgets before the call, the reply metered
        (inline) abnormal_end(reply)                             the core's reading of how the reply ended:
                                                                 an abnormal end is a Stop
        on_final(run, t, reply)                 -> Stop | None   a claim: the completion condition, the facts
        on_ask(run, t, calls, ask)              -> Stop          the model asks the user
        run_calls(run, t, calls)                -> Stop | None   admit → execute → settle → apply: one path
                                                                 for one call or many (:mod:`.calls`)
      (inline, in play)                                          progress: nothing left to try, failing turns
    finish(run, stop)                           -> Stop          freeze the task, the stop line, late results

A turn is recorded as values (the turn, its actions, a copy of the budgets used); its trace line
is made when the trace is read, or at once when a trace file is open.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from itertools import chain

from agentloops.controller.attempts import deliver_due
from agentloops.controller.calls import run_calls
from agentloops.controller.engine import (
    Run,
    StopValues,
    Turn,
    assessment,
    budget_stop,
    cancel_stop,
    make_stop,
    stop_unobtainable,
)
from agentloops.controller.stopping.progress import normalize_args
from agentloops.controller.stopping.status import SYSTEM_FAILURES, Stop
from agentloops.controller.task.answers import contradiction
from agentloops.controller.task.context import CompactionEvent, MemoryUsed, check_compaction, memory_from_state
from agentloops.controller.vocabulary.ledger import ARRIVAL_ORDER
from agentloops.controller.vocabulary.readback import readable
from agentloops.controller.vocabulary.tools import ASK_USER
from agentloops.criteria import abnormal_end
from agentloops.i18n import N_, Phrase
from agentloops.messages import Message
from agentloops.response import Response, ToolCall

STOP_DECISION = readable(N_("stop:{status} ({code})"))
"""A turn's decision when the run stops (English data in the trace; read back where shown)."""
readable(N_("continue"))


def play(run: Run) -> Stop | None:
    """One turn from its start to its record: the stages, then progress and the next step."""
    run.turn += 1
    state, open_items = run.state, run.state.open_items()
    goal = f"waiting for {state.waiting_for['input']}" if state.waiting_for else \
        open_items[0] if open_items and assessment(run) != "complete" else N_("final answer")
    t = Turn(run.turn, state.version, goal)
    if run.inbox:  # results still on their way from an earlier turn
        deliver_due(run)
    stop = turn(run, t)
    delta = state.end_turn()
    if stop is None:  # progress: nothing left to try, or too many failed turns in a row
        run.monitor.idle = 0 if delta["progress"] else run.monitor.idle + 1  # idle turns in a row
        run.consecutive_failures = run.consecutive_failures + 1 if t.failed and not delta["progress"] else 0
        limit = run.policy.max_consecutive_failures
        if "open" not in state.items.values() and assessment(run) == "impossible":
            stop = stop_unobtainable(run)  # with open items left, go on: they make the partial answer better
        elif limit is not None and run.consecutive_failures >= limit:
            stop = make_stop(run, "handed_off", "consecutive_failures",
                             f"{run.consecutive_failures} turns in a row failed; a person should look at it")
    if stop is not None:
        t.decision = STOP_DECISION.format(status=stop.status, code=stop.code)
    t.ended = (run.trace_id, run.meter.now, delta, run.meter.left(), dict(state.items))
    run.turns.append(t)
    sink = run.sink
    if sink.writer is None:
        sink.kept.append(t)  # kept as values: a dict only when the trace is read
    else:
        sink.write(t)  # a file is open: its line is written now
    return stop


def turn(run: Run, t: Turn) -> Stop | None:
    """The stages of one turn: each takes the last one's value and may end the run with a :class:`Stop`."""
    if run.controls.cancelled(run.meter.now, run.turn):  # the user's cancel, idle turns, a step and a call left
        t.action = "cancel"
        return cancel_stop(run, "the user cancelled the task")
    idle = run.policy.idle_turns
    if idle is not None and run.monitor.idle >= idle:
        return make_stop(run, "no_progress", "idle_turns", f"{run.monitor.idle} turns in a row added no fact, "
                                                           "settled no item and got no user input")
    for name in ("steps", "model_calls"):
        if not run.meter.allows(name):
            return budget_stop(run, name, 1)
    request = prepare_request(run, t)  # task & state: goal (or a checked memory), recent turns, TASK STATE
    reply = ask(run, t, request)  # budgets: the request must fit, the reply is metered
    if isinstance(reply, Stop):
        return reply
    abnormal = abnormal_end(reply)  # a cut, a refusal, a call that cannot run: (error code, reason)
    if abnormal is not None:
        code, why = abnormal
        t.action = "abnormal reply"
        return make_stop(run, "system_failure" if code in SYSTEM_FAILURES else "failed_unrecoverable", code, why)
    message = t.message or Message.from_response(reply)
    if not reply.tool_calls and reply.finish_reason == "pause":
        run.groups.append([message])
        t.action, t.decision = "pause", N_("continue: the provider paused the turn")
        return None
    if not reply.tool_calls:
        return on_final(run, t, reply)  # a claim: checked against the completion condition and the facts
    run.groups.append([message])
    asks = [c for c in reply.tool_calls if c.name == ASK_USER]
    if asks:
        return on_ask(run, t, reply.tool_calls, asks[0])
    return run_calls(run, t, reply.tool_calls)  # admit → execute → settle → apply, one path for 1 or N calls


def prepare_request(run: Run, t: Turn) -> tuple[Message, ...]:
    """System, goal (or the memory that replaced older turns, checked against state), recent turns, TASK STATE."""
    tail = (Message("system", run.state.for_model(run.meter.left())),) if run.send_state else ()
    request = (run.system, *run.head, *chain.from_iterable(run.groups), *tail)  # a tuple: a model keeps it as is
    limit, keep = run.context.compact_over_tokens, run.context.keep_recent_turns
    if limit is None or len(run.groups) <= keep:
        return request
    before = sum(m.tokens(run.tokenizer) for m in request)
    if before <= limit:
        return request
    memory = run.compactor(run.state)
    check = check_compaction(memory, run.state)
    used: MemoryUsed = "compactor"
    if not check.ok and run.context.check_compaction:
        memory, used = memory_from_state(run.state), "safe_memory"
    compacted = len(run.groups) - keep
    run.head = [Message("user", memory)]
    run.groups = run.groups[compacted:] if keep else []
    request = (run.system, *run.head, *chain.from_iterable(run.groups), *tail)
    event = CompactionEvent(run.turn, before, sum(m.tokens(run.tokenizer) for m in request), compacted, check, used)
    run.compactions.append(event)
    t.compaction = event.to_dict()
    if not check.ok:
        refused = used == "safe_memory"
        run.state.note(Phrase(N_("compaction refused: {check}") if refused else N_("compaction used: {check}"),
                              check=check.phrase()))
    return request


def ask(run: Run, t: Turn, request: Sequence[Message]) -> Response | Stop:
    """Check the request against the budgets *before* sending it, call the model, meter the reply after."""
    meter, budget = run.meter, run.budget
    size = t.context_tokens = sum(m.tokens(run.tokenizer) for m in request)
    if not meter.allows("context_tokens", size):
        return budget_stop(run, "context_tokens", size)
    if not meter.allows("tokens", size + budget.output_reserve):
        return budget_stop(run, "tokens", size + budget.output_reserve)
    if not meter.allows("wall_time_s", run.model_latency_s):
        return budget_stop(run, "wall_time_s", run.model_latency_s)
    meter.spend("steps")
    meter.spend("model_calls")
    meter.spend("context_tokens", size)
    try:
        response = run.model(request)
    except Exception as exc:  # a provider or model failure: a stop with a reason, never a traceback
        run.meter.spend("wall_time_s", run.model_latency_s)
        meter.spend("tokens", size)  # the prompt was sent
        t.action = N_("model error")
        t.observation = Phrase(N_("the model call failed ({error})"), error=type(exc).__name__)
        return make_stop(run, "system_failure", "model_error",
                         Phrase(N_("the model call failed ({error}); nothing more was attempted"),
                                error=type(exc).__name__),
                         error_class=type(exc).__name__)
    run.meter.spend("wall_time_s", run.model_latency_s)
    message = t.message = Message.from_response(response)  # as the transcript will keep it: counted once
    usage = response.usage
    completion = usage.completion_tokens if usage is not None and usage.completion_tokens is not None else \
        message.tokens(run.tokenizer)
    if completion > budget.output_reserve:  # a real client's max_tokens would have cut it here
        response = response.model_copy(update={"finish_reason": "length"})
        completion = budget.output_reserve
    meter.spend("tokens", size + completion)
    t.response = response  # frozen: the trace's copy of it is made when the record is read
    return response


def on_final(run: Run, t: Turn, response: Response) -> Stop | None:
    """A reply without tool calls is a claim: success only if the completion condition holds and the text
    agrees with the facts; otherwise the model is told what is missing (once), or the run stops."""
    state, task, policy = run.state, run.task, run.policy
    t.action = "answer"
    t.actions.append({"label": "answer", "call_id": None, "tool": None, "args": None, "kind": "answer",
                      "status": None, "route": None, "result": None})
    assessed = assessment(run)
    if policy.trust_model_claims:
        verified = N_("the completion condition holds") if assessed == "complete" else \
            N_("UNVERIFIED: the completion condition does not hold")
        return make_stop(run, "succeeded", "model_said_done",
                         Phrase(N_("the model stopped calling tools ({verified})"), verified=Phrase(verified)),
                         answer=response.content)
    if assessed == "complete":
        reason: str = Phrase(N_("{condition}: holds over state v{version}"), condition=task.condition,
                             version=state.version)
        written = task.kind.answer({f.item: f.summary for f in state.facts.values()}, {})
        answer = written if response.content == written else response.content  # same text: keep the phrase
        problem = contradiction(answer, state.facts.values(), task.prompt)
        if problem is not None:  # never hand a contradicting text to the user as a verified success
            answer = written
            reason += f"; {problem}, so the answer was written from the verified facts instead"
            t.observation = f"answer replaced: {problem}"
        return make_stop(run, "succeeded", "completion_condition_met", reason, answer=answer)
    open_items = state.open_items()
    if assessed == "impossible" or not open_items:
        return stop_unobtainable(run, answer=response.content)
    if run.claims_rejected < policy.premature_claims:
        run.claims_rejected += 1
        note = (f"CONTROLLER: not done yet. The completion condition is: {task.condition}. "
                f"Still missing: {', '.join(open_items)}.")
        run.groups.append([t.message or Message.from_response(response), Message("system", note)])
        state.note(Phrase(N_("final answer rejected: {items} still open"), items=", ".join(open_items)))
        t.observation = N_("completion condition not met")
        t.decision = N_("continue: premature claim rejected, the model was told what is missing")
        return None
    extra = tuple((item, Phrase(N_("the model declared success without it"))) for item in open_items)
    if not state.facts:  # nothing obtained: the model lacked a detail, or did not know what to do
        unasked = next(((name, param.ask_user) for spec in run.toolbox.tools.values()
                        for name, param in spec.params.items() if param.ask_user and name not in state.inputs), None)
        if unasked is not None:  # a value only the user can give was never asked for: ask it now
            state.set_waiting(*unasked)
            return make_stop(run, "waiting_for_user", "missing_parameter", N_("the model stopped without asking for "
                             "a detail only the user can give"), question=unasked[1])
        return make_stop(run, "handed_off", "no_next_step", Phrase(N_("the model stopped without obtaining anything "
                         "or asking; a person decides the next step")), missing=extra, answer=response.content)
    return make_stop(run, "partially_completed", "premature_claim",
                     Phrase(N_("the model claimed success {n}× while {items} stayed open"), n=run.claims_rejected + 1,
                            items=", ".join(open_items)), missing=extra, answer=response.content)


def on_ask(run: Run, t: Turn, calls: Sequence[ToolCall], ask: ToolCall) -> Stop:
    """The model asks the user: the task waits (every other call of the reply is answered, not run)."""
    args = ask.parsed_arguments or {}
    question = str(args.get("question") or N_("Could you give me the missing detail?"))
    parameter = str(args.get("parameter") or "answer")
    t.action, t.args_summary = "ask_user", normalize_args(args)
    t.actions.append({"label": "ask_user", "call_id": ask.id, "tool": ASK_USER, "args": dict(args),
                      "kind": "ask_user", "status": None, "route": "ask_user", "result": None})
    for call in calls:
        text = "question sent to the user" if call is ask else "not run: the task is waiting for the user"
        run.groups[-1].append(Message("tool", json.dumps({"tool": call.name, "status": "ok", "data": text}),
                                      tool_call_id=call.id, name=call.name))
    run.state.set_waiting(parameter, question)
    return make_stop(run, "waiting_for_user", "asked_user", "the model asked the user", question=question)


def finish(run: Run, stop: Stop) -> Stop:
    """Freeze the task, write the stop line, then let results still on their way arrive — late.

    Late deliveries are written *after* the stop line, in the order they land: they are part of the
    record, and the closed ledger and the frozen state make sure they change nothing.
    """
    run.ledger.cancel_running(run.meter.now, f"cancelled: the task stopped ({stop.status})")
    if run.inbox:
        deliver_due(run)  # results that landed during the last turn, before the stop
    run.state.finish(stop.status)
    run.ledger.close()
    stop = run.stop = replace(stop, state=run.state.snapshot())
    sink, line = run.sink, StopValues(run.trace_id, stop)  # a frozen stop: its line is made when read
    if sink.writer is None:
        sink.kept.append(line)
    else:
        sink.write(line)
    if run.inbox:
        for arrival in sorted(run.inbox, key=ARRIVAL_ORDER):
            run.ledger.deliver(arrival, run.turn)  # late results: written to the trace, refused by the closed ledger
        run.inbox = []
    return stop
