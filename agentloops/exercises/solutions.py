"""Reference solutions, one function per exercise, named as the learner's function is.

Instructors get them filled into copies of the learner notebooks with
``agentloops solutions --out DIR``; a learner sees one with ``q.solution()``.
Each function's source is pasted into a notebook cell as it is, so it uses
only names the exercise notebook's setup cell defines (``al``, the helpers
imported from the exercise set, the controller names) — the tests execute the
rendered notebooks to keep it that way.
"""

from __future__ import annotations

from dataclasses import replace

import agentloops as al
from agentloops.controller import Fingerprint, RouteContext, TaskState, ToolResult, fingerprint
from agentloops.controller.policy.routes import (
    Accept,
    AcceptNotFound,
    AskUser,
    Degrade,
    Fallback,
    Repair,
    Retry,
    StopRun,
)
from agentloops.controller.vocabulary.tools import TRANSIENT
from agentloops.exercises.kit import PRICE_TASK, Action, Attempt, LoggedCall, run_tool, tool_results
from agentloops.retry import failing_tools
from agentloops.stop_cases import Setup

# -- set 1: stop the loop ----------------------------------------------------------------------


def stop_criterion(response: al.Response) -> al.Decision:
    """First: how did the round end? Then: is there work left?"""
    if response.finish_reason == "length":
        return al.Abort("truncated", "cut off by the token limit: raise the limit, do not retry in place")
    if response.finish_reason == "content_filter":
        return al.Abort("content_filter", "the provider withheld the output: change the input")
    if response.finish_reason == "refusal":
        return al.Abort("refusal", "the model refused")
    for call in response.tool_calls:
        if call.parsed_arguments is None and call.is_cut_off:  # a call that cannot run: cut off mid-JSON…
            return al.Abort("truncated", f"the arguments of {call.name} were cut off")
        if call.parsed_arguments is None:  # … or not JSON at all
            return al.Abort("malformed_tool_call", f"the arguments of {call.name} cannot be parsed")
    if response.tool_calls:
        return al.Continue("tool calls to run")
    return al.Finish(response.content, "no tool calls and a normal stop")


def capped_loop(model: al.Model, tools: dict[str, str], max_steps: int = 8) -> str | None:
    """The naive loop with one line changed: at the cap it raises instead of returning the last text."""
    messages = [al.Message("user", "How many lines does notes.txt have?")]
    for _step in range(max_steps):
        response = model(messages)
        messages.append(al.Message.from_response(response))
        if not response.tool_calls:  # no tool calls: this is the answer
            return response.content
        for call in response.tool_calls:
            messages.append(al.Message("tool", run_tool(tools, call), tool_call_id=call.id, name=call.name))
    raise al.MaxStepsError(f"reached max_steps={max_steps} without a final answer")


def is_wasted(before: LoggedCall, now: LoggedCall) -> bool:
    """Wasted: the same response again, and nothing sent in between that the model had not seen."""
    same = now.response.same_as(before.response)
    new = set(tool_results(now.request[now.new_from:])) - set(tool_results(before.request))
    return same and not new


def count_wasted(rounds: tuple[LoggedCall, ...]) -> int:
    """Calls that repeat the previous response when nothing new was sent in between."""
    wasted = 0
    for i in range(1, len(rounds)):
        before, now = rounds[i - 1], rounds[i]
        same = now.response.same_as(before.response)
        sent_since = now.request[now.new_from:]
        new = set(tool_results(sent_since)) - set(tool_results(before.request))
        if same and not new:
            wasted += 1
    return wasted


# -- set 2: control the loop -------------------------------------------------------------------


def is_repeat(action: Action, history: list[Attempt]) -> bool:
    """A repeat: the latest attempt with the same fingerprint brought nothing new and was not a transient failure."""
    def fp(a: Action) -> Fingerprint:
        return fingerprint(a.tool, a.args, a.state_version)  # tool, normalised arguments, state version

    same = [attempt for attempt in history if fp(attempt.action) == fp(action)]
    if not same:
        return False
    last = same[-1]
    if last.new_observation:
        return False
    return last.status not in TRANSIENT  # after a timeout or a rate limit, trying again is a retry


def next_move(result: ToolResult, ctx: RouteContext) -> str:
    """Route one tool result: the move depends on whose fault it is and whether it can recover."""
    fallback = ctx.fallback
    usable_fallback = fallback is not None and not (fallback.backend and fallback.backend == ctx.spec.backend)
    can_retry = ctx.retries_left is None or ctx.retries_left >= 1
    status = result.status
    if status == "ok":
        return "accept"
    if status == "empty":
        if ctx.allows_not_found:
            return "accept_not_found"
        return "fallback" if usable_fallback and can_retry else "degrade"
    if status == "invalid_arguments":
        return "repair" if ctx.repairs_used < 1 else "stop"  # the model may repair once
    if status == "missing_parameter":
        return "ask_user"  # only the user has it; never let the model guess
    if status in ("timeout", "rate_limited"):
        if ctx.spec.side_effects:
            return "stop"  # did the write happen? a person must check before anything is repeated
        if not can_retry:
            return "stop"  # the shared retry budget is spent
        if ctx.attempts_on_tool >= 2 and usable_fallback:
            return "fallback"
        return "retry"
    if status == "permission_denied":
        return "stop"  # never route around a denial through another tool
    if status == "not_found":
        return "degrade"  # the resource does not exist: give the item up, with the reason
    if status == "permanent_error":
        return "fallback" if usable_fallback and can_retry else "degrade"
    raise ValueError(f"unknown status {status!r}")


def price_compare_done(state: TaskState) -> str:
    """Complete when enough shops have a sourced price in the task's currency; impossible when that cannot happen."""
    counted = 0
    for fact in state.facts.values():
        if fact.source and fact.value.get("currency") == PRICE_TASK.currency:
            counted += 1
    if counted >= PRICE_TASK.minimum:
        return "complete"
    if counted + len(state.open_items()) < PRICE_TASK.minimum:
        return "impossible"  # settled items cannot be redone: too few are left open to reach the minimum
    return "incomplete"


# -- Part 1: one exercise per lesson -----------------------------------------------------------


def splitting_round(done_test: str, going_test: str) -> al.Response:
    """Each naive test watches one field: set the done test's field to 'done', the other's to 'go on'."""
    content = "notes.txt has 42 lines." if done_test == "content" else None  # text: the content test is done
    calls = (al.ToolCall(id="call_1", name="read_file", arguments="{}"),) if going_test == "tool_calls" else ()
    finish: al.FinishReason = "length" if going_test == "finish_reason" else "stop"
    return al.Response(content=content, tool_calls=calls, finish_reason=finish)


def my_stop_test(response: al.Response) -> bool:
    """The tool calls say whether work is left: not the text, not the finish value (03 finds its blind spot)."""
    return not response.tool_calls


def wasted_calls(log: list[dict]) -> int:
    """A call is wasted when its response repeats the previous one and it brought no tool result not seen before."""
    seen: set[tuple] = set()
    wasted = 0
    previous = None
    for entry in log:
        results = {(m["name"], m["arguments"], m["content"]) for m in entry["new_messages"] if m["role"] == "tool"}
        fresh = results - seen
        seen |= results
        if previous is not None and entry["response"] == previous and not fresh:
            wasted += 1
        previous = entry["response"]
    return wasted


def my_decide(response: al.Response) -> al.Decision:
    """How the round ended comes first; only a normal end lets the tool calls decide (the lesson's two rules)."""
    from agentloops.stops import ABORT_CODES  # every abnormal finish_reason → the error code it raises

    if response.finish_reason in ABORT_CODES:  # rule 1: length, content_filter, refusal, provider_error, unknown…
        return al.Abort(ABORT_CODES[response.finish_reason], f"finish_reason is {response.finish_reason}")
    if response.tool_calls:  # rule 2: tool calls to run, whatever the finish_reason says
        return al.Continue("tool calls to run")
    return al.Finish(response.content, "no tool calls and a normal end")


def respond(record: al.RunRecord, setup: Setup) -> Setup | None:
    """Each stop has its own response; the same request again is never one of them."""
    if record.error == "truncated":
        return replace(setup, max_tokens=setup.max_tokens * 2)  # the same limit cuts the same answer off
    if record.error == "content_filter":
        return replace(setup, prompt="List the action items in notes.txt and who owns each.")
    if record.error == "max_steps" and failing_tools(record):
        return replace(setup, tool_fixed=True)  # the model kept calling a broken tool: fix the tool
    return None  # nothing automatic helps: a person decides


# -- set 3: build the controller -----------------------------------------------------------------


def my_completion(items, facts, need):
    """Done when enough items have a fact that names its source; impossible when the open ones cannot make it."""
    sourced = sum(1 for fact in facts.values() if fact.source)
    if sourced >= need:
        return "complete"
    still_open = sum(1 for status in items.values() if status == "open")
    return "impossible" if sourced + still_open < need else "incomplete"


def my_route(result, ctx):
    """One move per status; a retry only for what may pass, and only while the shared budget allows it."""
    status = result.status
    if status == "ok":
        return Accept()
    if status == "empty":
        return AcceptNotFound() if ctx.allows_not_found else Degrade("empty", "empty, and 'not found' is no answer")
    if status == "invalid_arguments":
        if ctx.repairs_used < 1:
            return Repair("the model may fix its arguments once")
        return StopRun("failed_unrecoverable", "invalid_arguments_repeated", "the same slip again")
    if status == "missing_parameter":
        return AskUser(result.question or "Which one do you mean?", result.parameter or "answer", "only the user knows")
    if status == "permission_denied":
        return StopRun("failed_unrecoverable", "permission_denied", "no tool may get around a denial")
    if status == "not_found":
        return Degrade("not_found", result.error or "not found")
    if status in TRANSIENT and result.retryable:
        if ctx.retries_left is not None and ctx.retries_left < 1:
            return StopRun("budget_exhausted", "budget:retries", "the shared retry budget is spent", budget="retries")
        pause = max(2.0 ** (ctx.attempts_on_tool - 1), result.retry_after_s or 0)  # 1 s, 2 s, 4 s… or what it asks
        return Retry(pause, f"{status} may pass: try again after a pause")
    fallback, can_retry = ctx.fallback, ctx.retries_left is None or ctx.retries_left >= 1
    if fallback is not None and can_retry and not fallback.side_effects and fallback.backend != ctx.spec.backend:
        return Fallback(fallback.name, f"{status} here; an independent source may have it")
    return Degrade(status, result.error or status)


def my_budget_check(name, used, amount, limit):
    """Reaching the limit exactly is fine; going past it is not (limit None: the budget is off)."""
    return limit is None or used + amount <= limit + 1e-6


def my_repeat(fingerprint, seen):
    """Taken before at the same progress, it brought nothing new, and it did not fail transiently."""
    return seen is not None and not seen.new_observation and seen.status not in TRANSIENT


def my_update(item, result):
    """A weather fact only from data for this city, with a temperature (°F converted) and the conditions."""
    data = result.data if isinstance(result.data, dict) else {}
    city = item.split(":", 1)[1]
    if str(data.get("city", "")).casefold() != city.casefold():
        return f"the data is for {data.get('city')!r}, not {city}"
    if "temp_c" in data:
        temp = data["temp_c"]
    elif "temp_f" in data:
        temp = round((float(data["temp_f"]) - 32) * 5 / 9)
    else:
        return "no temperature in the data"
    sky = data.get("conditions", data.get("sky"))
    if not sky:
        return "no conditions in the data"
    return {"temp_c": temp, "conditions": sky}, f"{temp}°C, {sky}"


def my_join(succeeded, finished, total, needed):
    """Stop waiting once the successes the task still needs are in: never before, never after."""
    return succeeded >= needed


def my_memory(state):
    """Keep, as text, everything the next turns rely on: the goal, each constraint and user input, every fact
    with its source, the open items, and what failed — so that nothing finished is done again."""
    import json

    kept = {
        "goal": state.goal,
        "constraints": list(state.constraints),
        "inputs": dict(state.inputs),
        "facts": [{"item": f.item, "summary": f.summary, "source": f.source} for f in state.facts.values()],
        "open": state.open_items(),
        "tried": [f"{f['tool']}: {f['status']}" for f in state.failures],
    }
    return "MEMORY (older turns compacted)\n" + json.dumps(kept, ensure_ascii=False)


def first_wasted_turn(trace):
    """The first turn whose call succeeded yet changed nothing in the state (None when there is none)."""
    for turn in trace.turns:
        if turn.tool_status == "ok" and not turn.progress:
            return turn.turn
    return None
