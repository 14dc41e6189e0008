"""Stop criteria: pure functions from one response to a decision.

A criterion looks at a single round and answers with a tiny value —
:class:`Continue`, :class:`Finish` or :class:`Abort` — and the loop in
:mod:`agentloops.loop` acts on it. Because a criterion is a pure function, it
can be tested on one response, without running a loop.

Three criteria are the naive tests that tutorials and first drafts use; each
watches one field and so misreads some rounds (they compare the normalised
finish reason, so they are kinder than real naive code, which compares a
provider's raw string — ``"end_turn" != "stop"`` — and misreads even more):

- ``content``: non-empty text means done. Stops early on a round that talks
  *and* calls a tool; never stops on a round cut off with no text.
- ``finish_reason``: ``stop`` means done. Never stops on a cut-off round;
  stops early when a server sends a tool call with ``stop``.
- ``tool_calls``: no tool calls means done. Takes a cut-off or filtered round
  for a finished answer.

The fourth, ``correct``, separates two questions. The finish reason says *how*
the round ended: a cut-off, a filter or a refusal aborts at once, before
anything is appended or run. The tool calls alone say *whether to go on*. And
at the cap it raises rather than returning whatever text it has.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Union, get_args

from agentloops.errors import CriterionError, ErrorCode
from agentloops.response import FinishReason, Response


@dataclass(frozen=True, slots=True)
class Continue:
    """Go on: append the round, run its tool calls, ask the model again."""

    reason: str = ""


@dataclass(frozen=True, slots=True)
class Finish:
    """Stop and return ``answer`` (after running any tool calls of the round)."""

    answer: str | None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Abort:
    """Raise at once, before the round is appended or its tools run."""

    code: ErrorCode
    reason: str


Decision = Union[Continue, Finish, Abort]
"""What a criterion says about one round."""

AtCap = Literal["return_last", "raise"]
"""What the loop does when the step cap is reached: hand back the last text, or raise."""

CriterionFunction = Callable[[Response], Union[Decision, bool]]
"""A plain function a learner can pass: ``True`` means done, ``False`` means go on."""


@dataclass(frozen=True, slots=True)
class Criterion:
    """A named decision function plus what to do at the cap.

    Attributes:
        name: how tables and charts label it.
        decide: response → decision (or ``bool``: ``True`` finishes with the round's text).
        at_cap: ``"return_last"`` as naive loops do, or ``"raise"``.
        summary: one line for tables and widgets.
    """

    name: str
    decide: CriterionFunction
    at_cap: AtCap = "raise"
    summary: str = ""

    def __call__(self, response: Response) -> Decision:
        """Decide on ``response``, turning a ``bool`` into a decision and rejecting anything else."""
        decision = self.decide(response)
        if type(decision) in _DECISION_TYPES:
            return decision  # type: ignore[return-value]
        if decision is True:
            return Finish(response.content, f"{self.name} returned True")
        if decision is False:
            return Continue(f"{self.name} returned False")
        raise CriterionError(
            f"criterion {self.name!r} returned {type(decision).__name__}; "
            "expected True/False or a decision (Continue, Finish, Abort)"
        )


_NULL, _EMPTY = Continue("content is null"), Continue("content is empty")
_NOT_STOP = {reason: Continue(f"finish_reason is {reason}") for reason in get_args(FinishReason)}
_CALLS = {n: Continue(f"{n} tool call(s)") for n in range(1, 9)}
_CALLS_TO_RUN = {n: Continue(f"{n} tool call(s) to run") for n in range(1, 9)}


_DECISION_TYPES = frozenset({Continue, Finish, Abort})
_ABNORMAL_ENDS: dict[str, Abort] = {
    "length": Abort("truncated", "finish_reason is length: the output hit the token limit"),
    "content_filter": Abort("content_filter", "finish_reason is content_filter: the provider withheld output"),
    "refusal": Abort("refusal", "the model refused"),
    "malformed_tool_call": Abort("malformed_tool_call", "the provider reported a malformed tool call"),
}


def by_content(response: Response) -> Decision:
    """Naive: non-empty text means the answer has arrived."""
    if response.content:
        return Finish(response.content, "content is non-empty")
    return _NULL if response.content is None else _EMPTY


def by_finish_reason(response: Response) -> Decision:
    """Naive: ``finish_reason == "stop"`` means done."""
    if response.finish_reason == "stop":
        return Finish(response.content, "finish_reason is stop")
    return _NOT_STOP[response.finish_reason]


def by_tool_calls(response: Response) -> Decision:
    """Naive: a round without tool calls is the final answer."""
    count = len(response.tool_calls)
    if count:
        return _CALLS.get(count) or Continue(f"{count} tool call(s)")
    return Finish(response.content, "no tool calls")


def correct(response: Response) -> Decision:
    """The article's loop, made explicit: how it ended first, then whether to go on.

    1. A round that ended abnormally aborts before anything else happens:
       ``length`` (and any tool call whose arguments were cut off, whatever
       the finish value) → ``truncated``; ``content_filter``; ``refusal``;
       unparseable tool calls → ``malformed_tool_call``.
    2. Tool calls alone decide whether to go on, so a tool call that arrives
       with ``stop`` still runs.
    3. No tool calls: ``stop`` is an answer. ``pause`` asks to be called again.
       A ``tool_calls`` finish with no call, or an unknown stop value, is
       abnormal and aborts with its value named — never a silent success.
    """
    reason = response.finish_reason
    if reason in _ABNORMAL_ENDS:
        abort = _ABNORMAL_ENDS[reason]
        raw = response.raw_finish_reason
        return Abort(abort.code, f"{abort.reason} (the provider said {raw!r})") if raw and raw != reason else abort
    for call in response.tool_calls:
        if call.parsed_arguments is None:
            if call.is_cut_off:
                return Abort("truncated", f"the arguments of {call.name} were cut off: {call.arguments!r}")
            return Abort("malformed_tool_call", f"the arguments of {call.name} are not a JSON object: {call.arguments!r}")
    count = len(response.tool_calls)
    if count:
        return _CALLS_TO_RUN.get(count) or Continue(f"{count} tool call(s) to run")
    if reason == "pause":
        return Continue("the provider paused the turn; send the transcript back to resume")
    if reason == "unknown":
        return Abort("unknown_stop", f"unknown stop value {response.raw_finish_reason!r} and no tool calls")
    if reason == "tool_calls":
        return Abort("malformed_tool_call", "finish_reason is tool_calls but no tool call arrived")
    return Finish(response.content if response.content is not None else "", "no tool calls and finish_reason is stop")


CRITERIA: dict[str, Criterion] = {
    "content": Criterion("content", by_content, "return_last", "non-empty text means done"),
    "finish_reason": Criterion("finish_reason", by_finish_reason, "return_last", "finish_reason 'stop' means done"),
    "tool_calls": Criterion("tool_calls", by_tool_calls, "return_last", "no tool calls means done"),
    "correct": Criterion("correct", correct, "raise", "abnormal finish raises; tool calls decide; the cap raises"),
}
"""The four built-in criteria by name, in the order tables show them."""

CRITERION_NAMES: tuple[str, ...] = tuple(CRITERIA)
NAIVE_CRITERIA: tuple[str, ...] = ("content", "finish_reason", "tool_calls")


def resolve_criterion(criterion: str | Criterion | CriterionFunction) -> Criterion:
    """Turn a name, a :class:`Criterion` or a plain function into a :class:`Criterion`.

    A plain function raises at the cap: a loop that ran out of steps has no answer.
    Wrap it in ``Criterion(name, fn, at_cap="return_last")`` to mimic naive code.
    """
    if isinstance(criterion, Criterion):
        return criterion
    if isinstance(criterion, str):
        try:
            return CRITERIA[criterion]
        except KeyError:
            raise CriterionError(
                f"unknown criterion {criterion!r}; expected one of: {', '.join(CRITERIA)}, or a function"
            ) from None
    if callable(criterion):
        return Criterion(getattr(criterion, "__name__", "custom"), criterion, "raise", "your own criterion")
    raise CriterionError(
        f"criterion must be a name ({', '.join(CRITERIA)}) or a function; got {type(criterion).__name__}"
    )
