"""The stop bugs the package teaches, found in one run at a time.

Each detector is a pure function of a :class:`~agentloops.diagnose.model.Run`
returning findings, so each can be tested on a hand-made run.

- ``reasked``: the same response came back while nothing new was sent (the
  article's tell: the call count rises, the response does not change).
- ``abnormal_answer``: a truncated, filtered or refused round became the answer.
- ``premature_answer``: the run ended (or the user was answered) with tool calls
  whose results the model never saw.
- ``repeated_tool_call`` / ``ping_pong``: the same call with the same arguments
  got the same result again (or two calls alternate, A B A B) — no new observation.
- ``failure_streak``: tool results failed several times in a row.
- ``cap_returned_last``: a cap stopped the run and the caller got the last text.
- ``work_pending``: the run stopped with tool calls unanswered after a number of
  calls that is a framework's default step cap (:data:`COMMON_CAPS`), and the log
  does not say whether a cap stopped it: probably a cap, not a premature answer.

Healthy repetition is not a finding: polling (the same call until its result
changes) and a retry after a transient error (a failure, then a success).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal

from agentloops.criteria import abnormal_end
from agentloops.diagnose.model import Msg, Run, Turn, canonical_text, results_for
from agentloops.i18n import N_, _, language, translate
from agentloops.providers.reply import Reply
from agentloops.stops import ABORT_CODES

Kind = Literal["reasked", "abnormal_answer", "premature_answer", "repeated_tool_call", "ping_pong",
               "failure_streak", "cap_returned_last", "work_pending"]

KIND_TITLES: dict[Kind, str] = {
    "reasked": N_("same response re-asked, nothing new sent"),
    "abnormal_answer": N_("truncated/filtered/refused round taken as the answer"),
    "premature_answer": N_("answer before the model saw its tool results"),
    "repeated_tool_call": N_("same tool call, same result, again"),
    "ping_pong": N_("two tool calls alternating with no new result"),
    "failure_streak": N_("tool failures in a row"),
    "cap_returned_last": N_("cap reached, last text returned"),
    "work_pending": N_("stopped with work pending (a step cap?)"),
}
"""One line per kind, for reports (English here; a report shows ``_(KIND_TITLES[kind])``)."""

COMMON_CAPS: dict[int, str] = {
    10: "OpenAI Agents SDK max_turns",
    13: "LangGraph recursion_limit 25 (a model step and a tool step per round)",
    15: "LangChain AgentExecutor max_iterations",
    20: "smolagents max_steps",
    25: "LangGraph recursion_limit",
    50: "Pydantic AI request_limit",
}
"""Model calls after which a framework's default step cap stops a run (``DEFAULT_MAX_TURNS = 10`` in the Agents
SDK's ``run_config.py``; ``UsageLimits.request_limit = 50``; ``AgentExecutor.max_iterations = 15``;
``MultiStepAgent.max_steps = 20`` since smolagents 1.14; LangGraph's ``recursion_limit`` of 25 graph steps before
1.0, which a ReAct graph spends as 13 model calls, or 25 when every step is a call)."""

FAILURE_STREAK = 3
"""Failures in a row that make a streak: one or two are what a retry after a transient error looks like."""

_ERROR_TEXT = re.compile(r"^\s*[\[{(]?\W*(error|exception|traceback|failed|failure|timeout|timed out)\b", re.I)


@dataclass(frozen=True, slots=True)
class Finding:
    """One stop bug in one run.

    Attributes:
        kind: which bug (see :data:`KIND_TITLES`).
        run: the run's name in the log.
        where: where the evidence starts in the file.
        calls: the model calls involved (``"2-8"``).
        count: how many times it happened (re-asks, repeats, failures; 1 for an ending).
        tokens: tokens the involved calls cost, when the log reports them.
        detail: one sentence saying what was seen, in English (the JSON's ``detail``).
        shown: the same sentence in the language in use when the finding was made (what a report shows).
    """

    kind: Kind
    run: str
    where: str
    calls: str
    count: int
    tokens: int | None
    detail: str
    shown: str = field(default="", compare=False, repr=False)

    @property
    def text(self) -> str:
        """The sentence a report shows: :attr:`shown`, else :attr:`detail`."""
        return self.shown or self.detail


def _sentence(template: str, nested: Mapping[str, str] | None = None, **fields: object) -> tuple[str, str]:
    """A finding's sentence in English and in the language in use: ``template`` and the ``nested`` texts are
    catalog messages (marked with ``N_``), ``fields`` are values (numbers, names, log lines) that stay as they are."""
    nested = nested or {}
    english = template.format(**fields, **nested)
    lang = language()  # looked up once (it reads the environment)
    if lang == "en":
        return english, english
    shown = translate(template, lang).format(**fields, **{key: translate(text, lang) for key, text in nested.items()})
    return english, shown


def _joined(items: list[str]) -> tuple[str, str]:
    """``A and B and C`` in English and in the language in use."""
    english, shown = items[0], items[0]
    for item in items[1:]:
        english = N_("{first} and {second}").format(first=english, second=item)
        shown = _("{first} and {second}").format(first=shown, second=item)
    return english, shown


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"


def _tokens(turns: list[Turn]) -> int | None:
    known = [t.tokens for t in {t.call: t for t in turns}.values() if t.tokens is not None]
    return sum(known) if known else None


def abort_code(reply: Reply) -> str | None:
    """The error code the correct loop aborts this round with (cut off, filtered, refused, malformed, unknown), or
    ``None``: :func:`~agentloops.criteria.correct` aborts exactly when ``abnormal_end`` names an end, so that is asked
    directly (a log's every last round is judged, and building the decision costs more than judging). An abnormal
    stop value is its rule 1, answered from the table alone: the reason's sentence it would build goes unread."""
    code = ABORT_CODES.get(reply.finish_reason)
    if code is not None:
        return code
    ended = abnormal_end(reply)
    return None if ended is None else ended[0]


def is_abnormal(reply: Reply) -> bool:
    """The correct loop would abort on this round."""
    return abort_code(reply) is not None


def looks_failed(result: Msg) -> bool:
    """A tool result marked as an error, or whose text opens like one (``Error: …``, ``{"error": …}``)."""
    return result.is_error or bool(result.text and (_ERROR_TEXT.match(result.text) or '"error":' in result.text[:40]))


Observed = list[tuple[Turn, tuple[str, str], Msg, bool]]
"""Every tool call with a known result, in order: (the turn that made it, its signature, its result, whether the
result looks failed)."""


def reasks(run: Run, seen: Observed | None = None) -> Iterator[Finding]:
    """Consecutive calls that got the previous response again although the request added nothing.

    A repeated round of tool calls whose results the log shows is left to the
    tool-call detectors, which can tell a repeat from polling and a retry.
    """
    group: list[Turn] = []
    turns = run.turns
    explained: set[int] | None = None  # worked out at the first candidate: most runs have none
    for previous, turn in pairwise(turns):
        if turn.fresh is False and turn.reply.same_as(previous.reply):
            if explained is None:
                explained = _calls_with_results(run, _observations(run) if seen is None else seen)
            if turn.call not in explained:
                group.append(turn)
                continue
        if group:
            yield from _reask_finding(run, group)
            group = []
    if group:
        yield from _reask_finding(run, group)


def _calls_with_results(run: Run, seen: Observed) -> set[int]:
    """Calls that made well-formed tool calls whose every result the log shows."""
    shown: dict[int, int] = {}
    for turn, _signature, _result, _failed in seen:
        shown[turn.call] = shown.get(turn.call, 0) + 1
    return {t.call for t in run.turns if t.reply.tool_calls and shown.get(t.call) == len(t.reply.tool_calls)
            and not is_abnormal(t.reply)}


def _reask_finding(run: Run, group: list[Turn]) -> Iterator[Finding]:
    if not group:
        return
    tokens = _tokens(group)
    template = (N_("call {call}'s response came back {n} more time(s) with nothing new sent ({summary})")
                if tokens is None else
                N_("call {call}'s response came back {n} more time(s) with nothing new sent ({summary}); "
                   "they cost {tokens} tokens"))
    yield Finding("reasked", run.name, group[0].where, _span(group[0].call, group[-1].call), len(group), tokens,
                  *_sentence(template, call=group[0].call - 1, n=len(group), summary=group[0].reply.summary(),
                             tokens=tokens))


def _observations(run: Run) -> Observed:
    """Every tool call with a known result, in order (see :data:`Observed`)."""
    seen: Observed = []
    turns = run.turns
    last = len(turns) - 1
    for i, turn in enumerate(turns):
        calls = turn.reply.tool_calls
        if not calls:
            continue  # no call: nothing observed
        pool = turns[i + 1].results if i < last else run.tail_results
        if not pool:
            continue  # no result shown: nothing observed
        matched = results_for(len(calls), pool, tuple([c.id for c in calls]))
        for index, call in enumerate(calls):
            result = matched[index]
            if result is not None and result.text is not None:
                seen.append((turn, (call.name, turn.signature(index)), result, looks_failed(result)))
    return seen


def tool_repeats(run: Run, seen: Observed | None = None) -> Iterator[Finding]:
    """Calls re-issued with the same arguments that got the same successful result: no new observation.

    Only the last stretch of identical results of a call counts: a call whose result
    later changed was polling, and a failed result belongs to :func:`failure_streaks`.
    Results are compared as JSON in canonical form when they are JSON.
    """
    tails: dict[tuple[str, str], list[tuple[Turn, str]]] = {}
    order: list[tuple[int, tuple[str, str]]] = []  # (the call that made it, its signature)
    for turn, signature, result, failed in _observations(run) if seen is None else seen:
        if failed:
            tails.pop(signature, None)
            continue
        text = canonical_text(result.text) or ""  # one result written compact or spaced is one result
        tail = tails.setdefault(signature, [])
        if tail and tail[-1][1] != text:
            tail.clear()
        tail.append((turn, text))
        order.append((turn.call, signature))
    repeated = {s: t for s, t in tails.items() if len(t) > 1}
    if not repeated:
        return
    alternating = _alternating(order, set(repeated))
    if alternating:
        turns = sorted({turn.call: turn for s in alternating for turn, _text in repeated[s][1:]}.values(),
                       key=lambda t: t.call)
        names_english, names_shown = _joined([f"{s[0]}({s[1]})" for s in alternating])
        template = N_("{names} alternate, each returning what it returned before")
        yield Finding("ping_pong", run.name, turns[0].where, _span(turns[0].call, turns[-1].call), len(turns),
                      _tokens(turns), template.format(names=names_english), _(template).format(names=names_shown))
    for signature, tail in repeated.items():
        if signature in alternating:
            continue
        turns = [turn for turn, _text in tail[1:]]
        yield Finding("repeated_tool_call", run.name, turns[0].where, _span(turns[0].call, turns[-1].call),
                      len(turns), _tokens(turns),
                      *_sentence(N_("{call} was called {n} times and returned the same result each time"),
                                 call=f"{signature[0]}({signature[1]})", n=len(tail)))


def _alternating(order: list[tuple[int, tuple[str, str]]], repeated: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The repeated calls that alternate (A B A B): a call seen again two calls later with another between,
    each from a later model call. A batch ``[A, B]`` sent again and again repeats; it does not alternate."""
    found: list[tuple[str, str]] = []
    for (at_a, a), (at_b, b), (at_c, c) in zip(order, order[1:], order[2:]):
        if a == c != b and at_a < at_b < at_c and a in repeated and b in repeated:
            found.extend(s for s in (a, b) if s not in found)
    return found


def failure_streaks(run: Run, threshold: int = FAILURE_STREAK, seen: Observed | None = None) -> Iterator[Finding]:
    """``threshold`` or more failed tool results in a row."""
    streak: list[tuple[Turn, Msg]] = []
    for turn, _signature, result, failed in _observations(run) if seen is None else seen:
        if failed:
            streak.append((turn, result))
            continue
        if streak:
            yield from _streak_finding(run, streak, threshold)
            streak = []
    yield from _streak_finding(run, streak, threshold)


def _streak_finding(run: Run, streak: list[tuple[Turn, Msg]], threshold: int) -> Iterator[Finding]:
    if len(streak) < threshold:
        return
    turns = [t for t, _msg in streak]
    names = sorted({m.name or "?" for _turn, m in streak})
    yield Finding("failure_streak", run.name, turns[0].where, _span(turns[0].call, turns[-1].call), len(streak),
                  _tokens(turns), *_sentence(N_("{n} tool results in a row failed ({names}): {last}"), n=len(streak),
                                             names=", ".join(names), last=repr((streak[-1][1].text or "")[:60])))


def endings(run: Run, max_steps: int | None = None) -> Iterator[Finding]:
    """How the run ended, and answers handed to the user mid-conversation."""
    turns = run.turns
    for turn, following in pairwise(turns):
        if following.user_spoke and not following.results:
            yield from _ended_on(run, turn, N_("the conversation went on after it"), abort_code(turn.reply))
    if not turns or not run.complete or run.ending.how == "raised":
        return
    last = turns[-1]
    code = abort_code(last.reply)  # once: three questions below ask it
    capped = run.ending.hit_cap
    if capped is None:
        spun = len(turns) > 1 and last.fresh is False and last.reply.same_as(turns[-2].reply)
        unfinished = bool(last.reply.tool_calls) or code is not None
        capped = spun or (max_steps is not None and len(turns) >= max_steps and unfinished)
    if capped:
        yield Finding("cap_returned_last", run.name, last.where, str(last.call), 1, last.tokens,
                      *_sentence(N_("the run stopped at call {call} without an answer and returned the last text "
                                    "({summary}); a cap should raise"), call=last.call,
                                 summary=last.reply.summary()))
        return
    if at_common_cap(run, max_steps, code is not None):
        names = ", ".join(c.name for c in last.reply.tool_calls)
        yield Finding("work_pending", run.name, last.where, str(last.call), 1, last.tokens,
                      *_sentence(N_("the run stopped at call {call} with {names} still unanswered; {call} calls is "
                                    "a common step cap ({cap}): pass --max-steps if you know yours"),
                                 call=last.call, names=names, cap=COMMON_CAPS[last.call]))
        return
    yield from _ended_on(run, last, N_("the run ended there"), code)


def at_common_cap(run: Run, max_steps: int | None, aborts: bool | None = None) -> bool:
    """The run ended with tool calls unanswered after a common cap's number of calls, its cap unknown.

    Only when nothing says otherwise: a run record's ``hit_cap`` and a given
    ``max_steps`` are facts, a common cap only a likely explanation. ``aborts``: whether the
    correct loop aborts on the last call, when known.
    """
    last = run.turns[-1]
    return (run.ending.hit_cap is None and max_steps is None and last.call in COMMON_CAPS
            and bool(last.reply.tool_calls)
            and not (is_abnormal(last.reply) if aborts is None else aborts))


def _ended_on(run: Run, turn: Turn, context: str, code: str | None) -> Iterator[Finding]:
    """The finding for an answer taken from ``turn``; ``context`` (a catalog message) says what came next;
    ``code``: what the correct loop aborts ``turn`` with (``None``: it does not)."""
    reply = turn.reply
    if reply.tool_calls and code is None:
        names = ", ".join(c.name for c in reply.tool_calls)
        yield Finding("premature_answer", run.name, turn.where, str(turn.call), 1, turn.tokens,
                      *_sentence(N_("call {call} asked for {names}, {context}, and the model never saw the results"),
                                 {"context": context}, call=turn.call, names=names))
    elif code is not None:
        template = (N_("call {call} ended abnormally ({code}: {summary}) and {context}")
                    if run.ending.how == "returned" else
                    N_("call {call} ended abnormally ({code}: {summary}) and {context} with no exception logged"))
        yield Finding("abnormal_answer", run.name, turn.where, str(turn.call), 1, turn.tokens,
                      *_sentence(template, {"context": context}, call=turn.call, code=code,
                                 summary=reply.summary()))


def find(run: Run, max_steps: int | None = None) -> list[Finding]:
    """Every finding in ``run``, in the order of the detectors above."""
    seen = _observations(run)  # once: three detectors read it
    found = [*reasks(run, seen)] if len(run.turns) > 1 else []  # a re-ask is a second call
    found += endings(run, max_steps)
    if len({signature for _turn, signature, _result, _failed in seen}) < len(seen):  # a call observed again
        found += tool_repeats(run, seen)
    if sum(failed for _turn, _signature, _result, failed in seen) >= FAILURE_STREAK:  # a streak's failures at least
        found += failure_streaks(run, FAILURE_STREAK, seen)
    return found
