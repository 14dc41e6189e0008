"""Exercise set 2 — control the loop: repeated actions, error routes, a completion condition.

Three exercises on the production controller (:mod:`agentloops.controller`),
each judged against the controller's own code rather than against a
hand-written answer key wherever the controller has one:

- ``q4`` — decide whether an action repeats an earlier, fruitless one, with an
  action fingerprint that still lets a retry after a timeout through
  (judged by :class:`~agentloops.controller.stopping.progress.ProgressMonitor`);
- ``q5`` — route each tool result to the next move
  (judged by :func:`~agentloops.controller.policy.error_policy.route` under the default policy);
- ``q6`` — write the business completion condition of a new task type over
  :class:`~agentloops.controller.task.state.TaskState` (judged by a table of task
  states, each with the reason for its expected answer).

In a notebook::

    from agentloops.exercises.controlling import q4, q5, q6, Action, Attempt, PRICE_TASK, price_state
"""

from __future__ import annotations

import contextlib
import random
import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Literal, get_args

from agentloops.controller.policy.error_policy import DEFAULT_POLICY, RouteContext, route
from agentloops.controller.policy.routes import Route, route_name
from agentloops.controller.stopping.progress import ProgressMonitor, Repeat, fingerprint
from agentloops.controller.task.state import TaskState
from agentloops.controller.vocabulary.readback import read_back
from agentloops.controller.vocabulary.tools import TRANSIENT, ToolResult, ToolSpec, ToolStatus
from agentloops.exercises import outputs
from agentloops.exercises.checking import Case, LearnerError, Verdict, guarded_call
from agentloops.exercises.exercise import Exercise
from agentloops.exercises.failures import raised_text
from agentloops.exercises.kit import PRICE_TASK, Action, Attempt, PriceEntry, price_state
from agentloops.exercises.results import case_label
from agentloops.i18n import N_, Phrase, _, language

# --------------------------------------------------------------------------- q4: is this action a repeat?


def controller_repeat(action: Action, history: Sequence[Attempt]) -> tuple[bool, str]:
    """What the controller's :class:`ProgressMonitor` says about ``action`` after ``history``, and why."""
    monitor = ProgressMonitor()
    for attempt in history:
        a = attempt.action
        monitor.record(fingerprint(a.tool, a.args, a.state_version), attempt.turn, attempt.status,
                       attempt.new_observation)
    fp = fingerprint(action.tool, action.args, action.state_version)
    verdict = monitor.check(fp)
    if verdict is not None:
        return True, _("a repeat: {why}").format(why=_explain(verdict))
    seen = monitor.sightings.get(fp)
    if seen is None:
        return False, _("not a repeat: nothing was done with fingerprint {fingerprint} before").format(fingerprint=fp)
    if seen.new_observation:
        return False, _("not a repeat: the last attempt with {fingerprint} (turn {turn}) brought something new"
                        ).format(fingerprint=fp, turn=seen.turn)
    assert seen.status in TRANSIENT
    return False, _("not a repeat: the last attempt with {fingerprint} (turn {turn}) ended in {status}, so this is "
                    "a retry — the retry budget, not the fingerprint, bounds it").format(
                        fingerprint=fp, turn=seen.turn, status=seen.status)


_NO_NEW_OBSERVATION = N_("no new observation")


def _explain(verdict: Repeat) -> str:
    """The controller's own sentence for a repeat (:meth:`Repeat.explain`, English), in the language in use."""
    if language() == "en":
        return verdict.explain()
    fp = verdict.fingerprint
    why = _(_NO_NEW_OBSERVATION) if verdict.why == _NO_NEW_OBSERVATION else verdict.why
    return _("{tool}{args} was already done at turn {turn} with the same progress (v{version}) and brought no new "
             "observation ({why}); nothing it depends on has changed since").format(
                 tool=fp.tool, args=fp.args, turn=verdict.first_turn, version=fp.state_version, why=read_back(why))


def _act(tool: str, version: int, **args: Any) -> Action:
    return Action(tool, args, version)


_BJ = _act("get_weather", 2, city="Beijing")
_SH = _act("get_weather", 1, city="Shanghai")

REPEAT_CASES: tuple[tuple[str, Action, tuple[Attempt, ...]], ...] = (
    (N_("first call"), _BJ, ()),
    (N_("asked again, nothing new"), _BJ, (Attempt(_SH, "ok", True, 1), Attempt(_BJ, "ok", False, 2))),
    (N_("same call, spaced differently"), _act("get_weather", 2, city="  Beijing "),
     (Attempt(_BJ, "ok", False, 2),)),
    (N_("same call, arguments in another order"), _act("get_weather", 2, units="c", city="Beijing"),
     (Attempt(_act("get_weather", 2, city="Beijing", units="c"), "ok", False, 2),)),
    (N_("the state moved on"), _act("get_weather", 3, city="Beijing"), (Attempt(_BJ, "ok", False, 2),)),
    (N_("retry after a timeout"), _BJ, (Attempt(_BJ, "timeout", False, 2),)),
    (N_("retry after a rate limit"), _BJ, (Attempt(_BJ, "rate_limited", False, 2),)),
    (N_("timeout, then a fruitless retry"), _BJ, (Attempt(_BJ, "timeout", False, 2), Attempt(_BJ, "ok", False, 3))),
    (N_("a second timeout"), _BJ, (Attempt(_BJ, "timeout", False, 2), Attempt(_BJ, "timeout", False, 3))),
    (N_("another tool, same arguments"), _act("weather_backup", 2, city="Beijing"), (Attempt(_BJ, "ok", False, 2),)),
    (N_("another city"), _act("get_weather", 2, city="Shanghai"), (Attempt(_BJ, "ok", False, 2),)),
    (N_("asked again after a denial"), _BJ, (Attempt(_BJ, "permission_denied", False, 2),)),
    (N_("asked again after an empty result"), _BJ, (Attempt(_BJ, "empty", False, 2),)),
    (N_("a repeat among other calls"), _BJ, (Attempt(_SH, "ok", True, 1), Attempt(_BJ, "ok", False, 2),
                                         Attempt(_act("weather_backup", 2, city="Beijing"), "timeout", False, 3))),
)
"""Named situations: (name, the action asked for, the attempts before it, oldest first)."""

RANDOM_CASES = 24
RANDOM_SEED = 20240611

_TOOLS = ("get_weather", "weather_backup")
_CITIES = ("Beijing", " beijing", "Shanghai", "SHANGHAI ")
_STATUSES: tuple[ToolStatus, ...] = ("ok", "ok", "ok", "timeout", "rate_limited", "empty", "permission_denied")


def random_history(rng: random.Random) -> tuple[Action, tuple[Attempt, ...]]:
    """A coherent random history: a new observation moves the state version, as in the controller."""
    version = rng.randint(0, 2)
    history = []
    for turn in range(1, rng.randint(1, 6) + 1):
        action = Action(rng.choice(_TOOLS), {"city": rng.choice(_CITIES)}, version)
        status = rng.choice(_STATUSES)
        new = status == "ok" and rng.random() < 0.4
        history.append(Attempt(action, status, new, turn))
        version += int(new)
    last = history[-1].action
    if rng.random() < 0.6:  # most often, ask again for something already tried
        action = Action(last.tool if rng.random() < 0.8 else rng.choice(_TOOLS), {"city": rng.choice(_CITIES)},
                        version)
    else:
        action = Action(rng.choice(_TOOLS), {"city": rng.choice(_CITIES)}, version)
    return action, tuple(history)


def repeat_situations() -> list[tuple[str, Action, tuple[Attempt, ...]]]:
    """Every situation ``q4`` is checked on: the named ones, then seeded random histories."""
    rng = random.Random(RANDOM_SEED)
    randoms = [(f"random history {i + 1}", *random_history(rng)) for i in range(RANDOM_CASES)]
    return [*REPEAT_CASES, *randoms]


def _history_text(history: Sequence[Attempt]) -> str:
    return "; ".join(str(a) for a in history) or _("nothing yet")


def judge_repeat(raw: Any, action: Action, history: tuple[Attempt, ...]) -> Verdict:
    """Compare the learner's answer (as the worker sent it) with the controller's progress monitor."""
    expected, why = controller_repeat(action, history)
    if outputs.tag(raw) == "raised":
        raise LearnerError(_("your function raised {error} on {action} after: {history}").format(
            error=raised_text(raw), action=action, history=_history_text(history)))
    if type(raw) is not bool:
        raise LearnerError(_("your function returned {value}; expected True (a repeat: stop before running it) or "
                             "False (let it run)").format(value=outputs.show(raw)))
    if raw == expected:
        return True, _("{answer} — {why}").format(answer=raw, why=read_back(why))
    return False, _("you said {answer} for {action} after: {history}; expected {expected} — {why}").format(
        answer=raw, action=action, history=_history_text(history), expected=expected, why=read_back(why))


_RANDOM_NAME = re.compile(r"^random history (\d+)$")


def _situation_name(name: str) -> str:
    """A situation's name as the learner reads it (``random history 3`` is numbered, not looked up)."""
    found = _RANDOM_NAME.match(name)
    return _("random history {number}").format(number=found.group(1)) if found else case_label(name)


def _repeat_cases(function: Callable[..., Any]) -> list[Case]:
    return [Case(_situation_name(name), partial(guarded_call, function, action, list(history)),
                 partial(judge_repeat, action=action, history=history))
            for name, action, history in repeat_situations()]


q4 = Exercise(
    id="action-fingerprint",
    number=4,
    set_name="controlling",
    title=N_("catch a repeated action, let a retry through"),
    variable="is_repeat",
    arguments=("action", "history"),
    noun="situations",
    hints=(
        N_("Two calls are 'the same action' when the tool, the arguments (however they are spelled) and the state "
        "version all match. Then ask how the latest such attempt went."),
        N_("fingerprint(tool, args, state_version) from agentloops.controller normalises the arguments for you "
        "(spacing, key order — whatever the controller treats as the same). Find the most recent attempt "
        "in history with an equal fingerprint."),
        N_("No such attempt → False. It brought something new → False. Its status is in TRANSIENT (timeout, "
        "rate_limited) → False: that is a retry. Otherwise → True."),
    ),
    build_cases=_repeat_cases,
)


# --------------------------------------------------------------------------- q5: route each tool result

Move = Literal["accept", "accept_not_found", "ask_user", "repair", "retry", "fallback", "degrade", "stop"]
"""The next moves a learner may return for ``q5``."""

MOVES: tuple[str, ...] = get_args(Move)


def _noop(args: dict[str, Any]) -> Any:
    return None


READ_TOOL = ToolSpec("read_tool", "a read-only lookup", {}, _noop, backend="svc-a", fallback="backup_tool")
BACKUP_TOOL = ToolSpec("backup_tool", "an independent fallback", {}, _noop, backend="svc-b")
MIRROR_TOOL = ToolSpec("mirror_tool", "a fallback on the same service", {}, _noop, backend="svc-a")
WRITE_TOOL = ToolSpec("write_tool", "a tool that changes the world (a refund)", {}, _noop, side_effects=True)


_ERRORS: dict[str, str | None] = {
    "ok": None,
    "empty": None,
    "invalid_arguments": N_("read_tool: order_id must be a string; got int 1042"),
    "missing_parameter": N_("read_tool needs order_id, which only the user can give"),
    "timeout": N_("the tool gave no answer within 5 s"),
    "rate_limited": N_("the tool's service answered: too many requests"),
    "permission_denied": N_("read_tool: the caller lacks orders:refund"),
    "not_found": N_("order B-9999 does not exist"),
    "permanent_error": N_("read_tool: the output format changed (no status field)"),
}


def _result(status: ToolStatus) -> ToolResult:
    return ToolResult(status, data={"status": "shipped"} if status == "ok" else None, error=_ERRORS[status],
                      retryable=status in TRANSIENT, question="Which order do you mean?", parameter="order_id")


ROUTING_CASES: tuple[tuple[str, ToolResult, RouteContext], ...] = (
    ("ok", _result("ok"), RouteContext(READ_TOOL, retries_left=3)),
    (N_("empty · the task accepts 'not found'"), _result("empty"),
     RouteContext(READ_TOOL, retries_left=3, allows_not_found=True)),
    (N_("empty · the task needs data, a fallback exists"), _result("empty"),
     RouteContext(READ_TOOL, retries_left=3, fallback=BACKUP_TOOL)),
    (N_("empty · the task needs data, no fallback"), _result("empty"), RouteContext(READ_TOOL, retries_left=3)),
    (N_("invalid_arguments · the first time"), _result("invalid_arguments"),
     RouteContext(READ_TOOL, retries_left=3, repairs_used=0)),
    (N_("invalid_arguments · after one repair"), _result("invalid_arguments"),
     RouteContext(READ_TOOL, retries_left=3, repairs_used=1)),
    ("missing_parameter", _result("missing_parameter"), RouteContext(READ_TOOL, retries_left=3)),
    (N_("timeout · 1st attempt, retries left"), _result("timeout"), RouteContext(READ_TOOL, 1, 3, BACKUP_TOOL)),
    (N_("timeout · 2nd attempt, a fallback exists"), _result("timeout"), RouteContext(READ_TOOL, 2, 2, BACKUP_TOOL)),
    (N_("timeout · 2nd attempt, the fallback is on the same service"), _result("timeout"),
     RouteContext(READ_TOOL, 2, 2, MIRROR_TOOL)),
    (N_("timeout · the shared retry budget is spent"), _result("timeout"), RouteContext(READ_TOOL, 1, 0, BACKUP_TOOL)),
    (N_("timeout · the tool has side effects"), _result("timeout"), RouteContext(WRITE_TOOL, 1, 3)),
    (N_("rate_limited · 1st attempt, retries left"), _result("rate_limited"), RouteContext(READ_TOOL, 1, 3)),
    (N_("rate_limited · the shared retry budget is spent"), _result("rate_limited"), RouteContext(READ_TOOL, 1, 0)),
    ("permission_denied", _result("permission_denied"), RouteContext(READ_TOOL, retries_left=3, fallback=BACKUP_TOOL)),
    ("not_found", _result("not_found"), RouteContext(READ_TOOL, retries_left=3, fallback=BACKUP_TOOL)),
    (N_("permanent_error · a fallback exists"), _result("permanent_error"),
     RouteContext(READ_TOOL, retries_left=3, fallback=BACKUP_TOOL)),
    (N_("permanent_error · no fallback"), _result("permanent_error"), RouteContext(READ_TOOL, retries_left=3)),
    (N_("permanent_error · a fallback exists, the retry budget is spent"), _result("permanent_error"),
     RouteContext(READ_TOOL, retries_left=0, fallback=BACKUP_TOOL)),
)
"""Named situations: (name, the tool result, what else the router knows)."""


ROUTING_RULES = N_(
    "The rules, by status. ok → accept. empty → accept_not_found when ctx.allows_not_found; else fallback "
    "when a usable fallback exists (not None, not on the tool's own backend) and a retry is left; else degrade. "
    "invalid_arguments → repair the first time (ctx.repairs_used == 0), stop after. missing_parameter → "
    "ask_user. timeout or rate_limited → stop when the tool has side effects or no retry is left "
    "(ctx.retries_left below 1; None means unlimited); else fallback from the 2nd attempt on "
    "(ctx.attempts_on_tool >= 2) when a usable fallback exists; else retry. permission_denied → stop. "
    "not_found → degrade. permanent_error → fallback when a usable fallback exists and a retry is left; "
    "else degrade."
)
"""The default policy's routes in words: ``q5`` states them up front, not only in its failure messages."""


def move_of(decision: Route) -> str:
    """A route as one of :data:`MOVES`: every ``stop:<status>`` is ``stop``."""
    name = route_name(decision)
    return "stop" if name.startswith("stop:") else name


def controller_move(result: ToolResult, ctx: RouteContext) -> tuple[str, str]:
    """The default policy's move for this result, with the route's full name and reason (a phrase, so a tool's
    error inside it is read back by its own catalog entry, not by a template that happens to match the line)."""
    decision = route(DEFAULT_POLICY, result, ctx)
    reason = getattr(decision, "reason", "")
    if not reason:
        return move_of(decision), route_name(decision)
    return move_of(decision), Phrase(N_("{code}: {reason}"), code=route_name(decision), reason=reason)


def describe_context(ctx: RouteContext) -> str:
    """What the router knew, in words: tool, attempts, retries left, fallback, repairs, 'not found' allowed."""
    parts = [_("tool {name} (side effects)").format(name=ctx.spec.name) if ctx.spec.side_effects
             else _("tool {name}").format(name=ctx.spec.name)]
    parts.append(_("attempt {count}").format(count=ctx.attempts_on_tool))
    parts.append(_("retries left: unlimited") if ctx.retries_left is None
                 else _("retries left: {count}").format(count=f"{ctx.retries_left:g}"))
    if ctx.fallback is not None:
        same = ctx.fallback.backend and ctx.fallback.backend == ctx.spec.backend
        parts.append(_("fallback {name} (same service)").format(name=ctx.fallback.name) if same
                     else _("fallback {name}").format(name=ctx.fallback.name))
    if ctx.repairs_used:
        parts.append(_("repairs used: {count}").format(count=ctx.repairs_used))
    if ctx.allows_not_found:
        parts.append(_("'not found' is an answer"))
    return _(", ").join(parts)


def move_outputs(function: Callable[[ToolResult, RouteContext], Any], result: ToolResult,
                 ctx: RouteContext) -> Any:
    """Worker side: the learner's move; a route value such as ``Retry(...)`` is named as its move here."""
    value = function(result, ctx)
    if type(value) is not str:
        with contextlib.suppress(Exception):
            return move_of(value)
    return value


def judge_move(raw: Any, result: ToolResult, ctx: RouteContext) -> Verdict:
    """Compare the learner's move with the controller's route."""
    expected, why = controller_move(result, ctx)
    if outputs.tag(raw) == "raised":
        raise LearnerError(_("your function raised {error} on status {status} ({context})").format(
            error=raised_text(raw), status=result.status, context=describe_context(ctx)))
    if type(raw) is not str:
        raise LearnerError(_("your function returned {value}; expected one of: {moves}").format(
            value=outputs.show(raw), moves=", ".join(map(repr, MOVES))))
    if raw not in MOVES:
        raise LearnerError(_("your function returned {value}, which is not a move; expected one of: {moves}").format(
            value=repr(raw), moves=", ".join(map(repr, MOVES))))
    if raw == expected:
        return True, _("{answer} — {why}").format(answer=raw, why=read_back(why))
    return False, _("you said {answer} ({context}); the controller says {expected} — {why}").format(
        answer=repr(raw), context=describe_context(ctx), expected=repr(expected), why=read_back(why))


_Q5_PROMPT = N_("Write next_move(result, ctx) returning one of: {moves}. {rules}")


def _routing_cases(function: Callable[..., Any]) -> list[Case]:
    return [Case(case_label(name), partial(guarded_call, partial(move_outputs, function), result, ctx),
                 partial(judge_move, result=result, ctx=ctx)) for name, result, ctx in ROUTING_CASES]


q5 = Exercise(
    id="error-routing",
    number=5,
    set_name="controlling",
    title=N_("route each tool result to the right move"),
    variable="next_move",
    arguments=("result", "ctx"),
    noun="situations",
    prompt=_Q5_PROMPT.format(moves=", ".join(MOVES), rules=ROUTING_RULES),
    prompt_template=_Q5_PROMPT,
    prompt_fields={"moves": ", ".join(MOVES), "rules": ROUTING_RULES},
    hints=(
        N_("Whose fault is it, and can it recover? Only the user can supply a missing detail; the model may fix "
        "its arguments once; a transient failure may be retried within the shared budget; a denial never goes "
        "away by trying again; a missing resource does not appear by asking twice."),
        N_("Start from result.status. Use ctx.retries_left (None = unlimited), ctx.attempts_on_tool, ctx.fallback "
        "(and its .backend: a fallback on the same service fails with it), ctx.spec.side_effects, "
        "ctx.repairs_used and ctx.allows_not_found."),
        N_("ok → accept; empty → accept_not_found if allowed, else fallback or degrade; invalid_arguments → repair "
        "once, then stop; missing_parameter → ask_user; timeout/rate_limited → stop if side effects or no "
        "retries left, fallback after 2 attempts, else retry; permission_denied → stop; not_found → degrade; "
        "permanent_error → fallback if usable and retries left, else degrade."),
    ),
    build_cases=_routing_cases,
)


# --------------------------------------------------------------------------- q6: a completion condition

Assessment = Literal["complete", "incomplete", "impossible"]
ASSESSMENTS: tuple[str, ...] = get_args(Assessment)


_A = (19.9, "EUR", "shop-a/prices#call_1")
_B = (21.5, "EUR", "shop-b/prices#call_2")
_C = (18.0, "EUR", "shop-c/prices#call_3")

COMPLETION_CASES: tuple[tuple[str, dict[str, PriceEntry], Assessment, str], ...] = (
    (N_("nothing found yet"), {}, "incomplete", N_("no price yet, and all three shops are still open")),
    (N_("one price"), {"shop-a": _A}, "incomplete", N_("1 of the 2 prices needed; two shops are still open")),
    (N_("two prices"), {"shop-a": _A, "shop-b": _B}, "complete", N_("two sourced EUR prices: the condition holds")),
    (N_("all three prices"), {"shop-a": _A, "shop-b": _B, "shop-c": _C}, "complete", N_("three sourced EUR prices")),
    (N_("two prices, one without a source"), {"shop-a": _A, "shop-b": (21.5, "EUR", "")}, "incomplete",
     N_("shop-b's price names no source, so it does not count; shop-c is still open")),
    (N_("two prices, one in USD"), {"shop-a": _A, "shop-b": (23.0, "USD", "shop-b/prices#call_2")}, "incomplete",
     N_("a USD price does not answer a EUR question; shop-c is still open")),
    (N_("two prices and a shop given up"), {"shop-a": _A, "shop-b": _B, "shop-c": "timed out twice"}, "complete",
     N_("two sourced EUR prices are enough; the third shop is not needed")),
    (N_("one price, one shop given up, one open"), {"shop-a": _A, "shop-b": "not found"}, "incomplete",
     N_("shop-c is still open and could give the second price")),
    (N_("one price, two shops given up"), {"shop-a": _A, "shop-b": "not found", "shop-c": "permission denied"},
     "impossible", N_("only 1 usable price and no shop left to ask")),
    (N_("EUR, USD and a shop given up"), {"shop-a": _A, "shop-b": (23.0, "USD", "shop-b/prices#call_2"),
                                      "shop-c": "not found"}, "impossible",
     N_("the USD price does not count and a settled item is not looked up again; nothing is left open")),
    (N_("no price, two shops given up"), {"shop-b": "not found", "shop-c": "not found"}, "impossible",
     N_("even a price from shop-a would be only 1 of 2")),
    (N_("a sourceless price, a shop given up"), {"shop-a": (19.9, "EUR", ""), "shop-b": _B, "shop-c": "not found"},
     "impossible", N_("only shop-b's price counts and no shop is left open")),
)
"""Named task states: (name, shop → price or reason, the expected assessment, why)."""


def _entry_text(entry: PriceEntry) -> str:
    if isinstance(entry, str):
        return _("given up ({reason})").format(reason=entry)
    amount, currency, source = entry
    return _("{amount} {currency} from {source}").format(amount=amount, currency=currency,
                                                         source=source or _("no source"))


def judge_completion(raw: Any, prices: Mapping[str, PriceEntry], expected: Assessment, why: str) -> Verdict:
    """Compare the learner's assessment of one task state with the expected one."""
    shown = _(", ").join(_("{shop}: {entry}").format(shop=shop, entry=_entry_text(v)) for shop, v in prices.items())
    shown = shown or _("an empty state")
    if outputs.tag(raw) == "raised":
        raise LearnerError(_("your function raised {error} on the state {state}").format(error=raised_text(raw),
                                                                                        state=shown))
    if type(raw) is not str or raw not in ASSESSMENTS:
        raise LearnerError(_("your function returned {value}; expected one of {assessments}").format(
            value=outputs.show(raw), assessments=", ".join(map(repr, ASSESSMENTS))))
    if raw == expected:
        return True, _("{answer} — {why}").format(answer=raw, why=_(why))
    return False, _("you said {answer} for {state}; expected {expected} — {why}").format(
        answer=repr(raw), state=shown, expected=repr(expected), why=_(why))


def _state_call(function: Callable[[TaskState], Any], prices: Mapping[str, PriceEntry]) -> Any:
    return guarded_call(function, price_state(prices))


def _completion_cases(function: Callable[..., Any]) -> list[Case]:
    return [Case(case_label(name), partial(_state_call, function, prices),
                 partial(judge_completion, prices=prices, expected=expected, why=read_back(why)))
            for name, prices, expected, why in COMPLETION_CASES]


q6 = Exercise(
    id="completion-condition",
    number=6,
    set_name="controlling",
    title=N_("write the completion condition of a new task type"),
    variable="price_compare_done",
    arguments=("state",),
    noun="task states",
    hints=(
        N_("A model that stops calling tools is a signal, not a success. Look only at the task state: which items "
        "are done, with what evidence, and which are still open."),
        N_("A fact counts only when it names its source (fact.source) and is in the task's currency "
        "(fact.value['currency'] == PRICE_TASK.currency). Compare the count with PRICE_TASK.minimum."),
        N_("complete when counted >= PRICE_TASK.minimum; impossible when counted + len(state.open_items()) < "
        "PRICE_TASK.minimum (a done or given-up item is not looked up again); otherwise incomplete."),
    ),
    build_cases=_completion_cases,
)

__all__ = ["MOVES", "PRICE_TASK", "Action", "Attempt", "price_state", "q4", "q5", "q6"]
