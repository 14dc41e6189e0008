"""One turn, as a pipeline of small values: prepare → ask → classify → calls → (the loop applies the result).

:meth:`TurnPipeline._turn` reads in one screen. Each step is a value the next one takes:
the request (system message, goal or a checked memory, recent turns, the ``TASK STATE``
block), the model's reply, the core ``correct`` criterion's decision (``Continue`` /
``Finish`` / ``Abort``), and then either the final answer checked against the task's
completion condition, a question for the user, or the tool calls (:mod:`~agentloops.controller.batch`).
Each returns ``None`` (go on) or a :class:`~agentloops.controller.status.Stop`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from agentloops.controller.answers import contradiction
from agentloops.controller.batch import CallPath
from agentloops.controller.context import (
    CompactionEvent,
    check_compaction,
    memory_from_state,
)
from agentloops.controller.engine import _Turn
from agentloops.controller.progress import (
    normalize_args,
)
from agentloops.controller.status import SYSTEM_FAILURES, Stop, StopStatus
from agentloops.controller.tools import (
    ASK_USER,
)
from agentloops.criteria import Abort, correct
from agentloops.messages import Message
from agentloops.response import Response, ToolCall


class TurnPipeline(CallPath):
    """The stages of one turn up to the tool calls."""

    def _turn(self, t: _Turn) -> Stop | None:
        """One turn: each stage takes the last one's value and may end the run with a :class:`Stop`."""
        stop = self._before_request(t)  # progress & budgets: cancelled? idle? a step and a model call left?
        if stop is not None:
            return stop
        request = self._request(t)  # task & state: goal (or a checked memory), recent turns, TASK STATE
        reply = self._ask(t, request)  # budgets: the request must fit, the reply is metered
        if isinstance(reply, Stop):
            return reply
        decision = correct(reply)  # the shared stop vocabulary: Continue / Finish / Abort(code)
        if isinstance(decision, Abort):
            t.action = "abnormal reply"
            status: StopStatus = "system_failure" if decision.code in SYSTEM_FAILURES else "failed_unrecoverable"
            return self._make_stop(status, decision.code, decision.reason)
        if not reply.tool_calls and reply.finish_reason == "pause":
            self.groups.append([Message.from_response(reply)])
            t.action, t.decision = "pause", "continue: the provider paused the turn"
            return None
        if not reply.tool_calls:
            return self._on_final(t, reply)  # a claim: checked against the completion condition and the facts
        self.groups.append([Message.from_response(reply)])
        asks = [c for c in reply.tool_calls if c.name == ASK_USER]
        if asks:
            return self._on_ask(t, reply.tool_calls, asks[0])
        return self._calls(t, reply.tool_calls)  # admit → execute → settle → apply, one path for 1 or N calls

    def _next_step(self) -> Stop | None:
        """After a turn that did not stop: nothing left to try, or too many failed turns in a row."""
        if not self.state.open_items() and self.task.assess(self.state) == "impossible":
            return self._stop_unobtainable()  # with open items left, go on: they make the partial answer better
        limit = self.policy.max_consecutive_failures
        if limit is not None and self.consecutive_failures >= limit:
            return self._make_stop("handed_off", "consecutive_failures",
                                   f"{self.consecutive_failures} turns in a row failed; a person should look at it")
        return None

    def _before_request(self, t: _Turn) -> Stop | None:
        """The stops that need no model call: a cancel, idle turns, no step or model call left."""
        controls = self.controls
        if (controls.cancel_at_turn is not None and self.turn >= controls.cancel_at_turn) or self._cancel_due():
            t.action = "cancel"
            return self._cancel_stop("the user cancelled the task")
        idle = self.policy.idle_turns
        if idle is not None and self.monitor.idle >= idle:
            return self._make_stop("no_progress", "idle_turns",
                                   f"{self.monitor.idle} turns in a row added no fact, settled no item and got no "
                                   "user input")
        for name in ("steps", "model_calls"):
            if not self.meter.allows(name):  # type: ignore[arg-type]
                return self._budget_stop(name, 1)  # type: ignore[arg-type]
        return None

    def _ask(self, t: _Turn, request: list[Message]) -> Response | Stop:
        """Check the request against the budgets *before* sending it, call the model, meter the reply after."""
        size = self._size(request)
        t.context_tokens = size
        for name, needed in (("context_tokens", size), ("tokens", size + self.budget.output_reserve),
                             ("wall_time_s", self.model_latency_s)):
            if not self.meter.allows(name, needed):  # type: ignore[arg-type]
                return self._budget_stop(name, needed)  # type: ignore[arg-type]
        self.meter.spend("steps")
        self.meter.spend("model_calls")
        self.meter.spend("context_tokens", size)
        try:
            response = self.model(request)
        except Exception as exc:  # a provider or model failure: a stop with a reason, never a traceback
            self.clock.advance(self.model_latency_s)
            self.meter.spend("tokens", size)  # the prompt was sent
            t.action, t.observation = "model error", f"the model call failed ({type(exc).__name__})"
            return self._make_stop("system_failure", "model_error",
                                   f"the model call failed ({type(exc).__name__}); nothing more was attempted",
                                   error_class=type(exc).__name__)
        self.clock.advance(self.model_latency_s)
        completion = Message.from_response(response).tokens(self.tokenizer)
        if response.usage is not None and response.usage.completion_tokens is not None:
            completion = response.usage.completion_tokens
        if completion > self.budget.output_reserve:  # a real client's max_tokens would have cut it here
            response = response.model_copy(update={"finish_reason": "length"})
            completion = self.budget.output_reserve
        self.meter.spend("tokens", size + completion)
        t.response = {"content": response.content, "finish_reason": response.finish_reason,
                      "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments}
                                     for c in response.tool_calls]}
        return response

    def _request(self, t: _Turn) -> list[Message]:
        body = [self.system, *self.head, *(m for g in self.groups for m in g)]
        tail = [Message("system", self.state.for_model(self.meter.left()))] if self.send_state else []
        request = body + tail
        limit = self.context.compact_over_tokens
        keep = self.context.keep_recent_turns
        if limit is None or len(self.groups) <= keep:
            return request
        before = self._size(request)
        if before <= limit:
            return request
        memory = self.compactor(self.state)
        check = check_compaction(memory, self.state)
        used = "compactor"
        if not check.ok and self.context.check_compaction:
            memory, used = memory_from_state(self.state), "safe_memory"
        compacted = len(self.groups) - keep
        self.head = [Message("user", memory)]
        self.groups = self.groups[compacted:] if keep else []
        request = [self.system, *self.head, *(m for g in self.groups for m in g), *tail]
        after = self._size(request)
        event = CompactionEvent(self.turn, before, after, compacted, check, used)
        self.compactions.append(event)
        t.compaction = event.to_dict()
        if not check.ok:
            self.state.note(f"compaction refused: {check}" if used == "safe_memory" else f"compaction used: {check}")
        return request

    def _on_final(self, t: _Turn, response: Response) -> Stop | None:
        t.action = "answer"
        t.actions.append({"label": "answer", "call_id": None, "tool": None, "args": None, "kind": "answer",
                          "status": None, "route": None, "result": None})
        assessment = self.task.assess(self.state)
        if self.policy.trust_model_claims:
            verified = "the completion condition holds" if assessment == "complete" else \
                "UNVERIFIED: the completion condition does not hold"
            return self._make_stop("succeeded", "model_said_done", f"the model stopped calling tools ({verified})",
                                   answer=response.content)
        if assessment == "complete":
            reason = f"{self.task.condition}: holds over state v{self.state.version}"
            answer = response.content
            problem = contradiction(answer, self.state.facts.values(), self.task.prompt)
            if problem is not None:  # never hand a contradicting text to the user as a verified success
                answer = self.task.type.answer({f.item: f.summary for f in self.state.facts.values()}, {})
                reason += f"; {problem}, so the answer was written from the verified facts instead"
                t.observation = f"answer replaced: {problem}"
            return self._make_stop("succeeded", "completion_condition_met", reason, answer=answer)
        open_items = self.state.open_items()
        if assessment == "impossible" or not open_items:
            return self._stop_unobtainable(answer=response.content)
        if self.claims_rejected < self.policy.premature_claims:
            self.claims_rejected += 1
            note = (f"CONTROLLER: not done yet. The completion condition is: {self.task.condition}. "
                    f"Still missing: {', '.join(open_items)}.")
            self.groups.append([Message.from_response(response), Message("system", note)])
            self.state.note(f"final answer rejected: {', '.join(open_items)} still open")
            t.observation = "completion condition not met"
            t.decision = "continue: premature claim rejected, the model was told what is missing"
            return None
        extra = tuple((item, "the model declared success without it") for item in open_items)
        if not self.state.facts:  # nothing obtained: the model lacked a detail, or did not know what to do
            unasked = self._unasked_detail()
            if unasked is not None:  # a value only the user can give was never asked for: ask it now
                self.state.set_waiting(*unasked)
                return self._make_stop("waiting_for_user", "missing_parameter", "the model stopped without "
                                       "asking for a detail only the user can give", question=unasked[1])
            return self._make_stop("handed_off", "no_next_step", "the model stopped without obtaining anything "
                                   "or asking; a person decides the next step", missing=extra,
                                   answer=response.content)
        return self._make_stop("partially_completed", "premature_claim",
                               f"the model claimed success {self.claims_rejected + 1}× while "
                               f"{', '.join(open_items)} stayed open", missing=extra, answer=response.content)

    def _unasked_detail(self) -> tuple[str, str] | None:
        """The first (parameter, question) only the user can answer that the user has not answered yet."""
        for spec in self.toolbox.tools.values():
            for name, param in spec.params.items():
                if param.ask_user and name not in self.state.inputs:
                    return name, param.ask_user
        return None

    def _on_ask(self, t: _Turn, calls: Sequence[ToolCall], ask: ToolCall) -> Stop:
        args = ask.parsed_arguments or {}
        question = str(args.get("question") or "Could you give me the missing detail?")
        parameter = str(args.get("parameter") or "answer")
        t.action, t.args_summary = "ask_user", normalize_args(args)
        t.actions.append({"label": "ask_user", "call_id": ask.id, "tool": ASK_USER, "args": dict(args),
                          "kind": "ask_user", "status": None, "route": "ask_user", "result": None})
        for call in calls:
            text = "question sent to the user" if call is ask else "not run: the task is waiting for the user"
            self.groups[-1].append(Message("tool", json.dumps({"tool": call.name, "status": "ok", "data": text}),
                                           tool_call_id=call.id, name=call.name))
        self.state.set_waiting(parameter, question)
        return self._make_stop("waiting_for_user", "asked_user", "the model asked the user", question=question)
