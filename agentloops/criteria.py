"""Stop criteria: pure functions from one response to a decision.

A criterion looks at a single round and answers with a tiny value —
:class:`Continue`, :class:`Finish` or :class:`Abort` — and the loop in
:mod:`agentloops.loop` acts on it. Because a criterion is a pure function, it
can be tested on one response, without running a loop.

Three criteria are the naive tests that tutorials and first drafts use; each
watches one field and so misreads some rounds. (They are kinder than real
naive code: they compare the normalised finish reason, not a provider's raw
string — ``"end_turn" != "stop"`` — and the loop answers broken tool calls for
them the way a framework would.)

- ``content``: non-empty text means done. Stops early on a round that talks
  *and* calls a tool; never stops on a round cut off with no text.
- ``finish_reason``: ``stop`` means done. Never stops on a cut-off round;
  stops early when a server sends a tool call with ``stop``.
- ``tool_calls``: no tool calls means done. Takes a cut-off or filtered round
  for a finished answer.

The fourth, ``correct``, separates two questions. The finish reason says *how*
the round ended: an abnormal end (a cut-off, a filter, a refusal, a provider
failure, a value nobody documented) aborts at once, before anything is
appended or run. The tool calls alone say *whether to go on*. And at the cap it
raises rather than returning whatever text it has.

A decision's ``reason`` is data (compared in tests, written to JSON, diffed in
replays), so it stays English; the built-in criteria give it as a :class:`~agentloops.i18n.Phrase`,
which *is* that English text and can also be :func:`~agentloops.i18n.shown` in the learner's
language.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from agentloops.errors import ERROR_CODES, CriterionError, ErrorCode
from agentloops.i18n import N_, Phrase, _
from agentloops.response import Response, shorten
from agentloops.stops import ABORT_CODES, FinishReason, kind_of


@dataclass(frozen=True, slots=True)
class Continue:
    """Go on: append the round, run its tool calls, ask the model again."""

    reason: str = ""


@dataclass(frozen=True, slots=True)
class Finish:
    """Stop and return ``answer`` (after running any tool calls of the round).

    ``fields_disagree`` marks an answer whose round said otherwise — a
    ``tool_calls`` finish that brought text and no tool call — so the run
    record (``Round.decision``) shows the mismatch.
    """

    answer: str | None
    reason: str = ""
    fields_disagree: bool = False


@dataclass(frozen=True, slots=True)
class Abort:
    """Raise at once, before the round is appended or its tools run."""

    code: ErrorCode
    reason: str


Decision = Continue | Finish | Abort
"""What a criterion says about one round."""


class _CallFields(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> str: ...
    @property
    def parsed_arguments(self) -> dict[str, Any] | None: ...
    @property
    def is_cut_off(self) -> bool: ...


class _UsageFields(Protocol):
    @property
    def completion_tokens(self) -> int | None: ...


class Ending(Protocol):
    """What :func:`correct` reads of a round: a :class:`~agentloops.response.Response`, or a log reader's reply
    as read (:class:`~agentloops.providers.reply.Reply`), which it judges without building the model."""

    @property
    def content(self) -> str | None: ...
    @property
    def tool_calls(self) -> Sequence[_CallFields]: ...
    @property
    def finish_reason(self) -> FinishReason: ...
    @property
    def raw_finish_reason(self) -> str | None: ...
    @property
    def reasoning(self) -> str | None: ...
    @property
    def usage(self) -> _UsageFields | None: ...
    @property
    def max_tokens(self) -> int | None: ...
    @property
    def stream_error(self) -> str | None: ...
    @property
    def at_token_limit(self) -> bool: ...
    @property
    def text_tool_call(self) -> str | None: ...


AtCap = Literal["return_last", "raise"]
"""What the loop does when the step cap is reached: hand back the last text, or raise."""

CriterionFunction = Callable[[Response], Decision | bool]
"""A plain function a learner can pass: ``True`` means done, ``False`` means go on."""


@dataclass(frozen=True, slots=True, init=False)
class Criterion:
    """A named decision function plus what to do at the cap.

    ``Criterion("mine", my_test, at_cap="return_last")`` names it; ``Criterion(my_test, at_cap="return_last")``
    takes the function's own name, as a learner wrapping a plain function writes it.

    Attributes:
        name: how tables and charts label it.
        decide: response → decision (or ``bool``: ``True`` finishes with the round's text).
        at_cap: ``"return_last"`` as naive loops do, or ``"raise"``.
        about: one line for tables and widgets, as written (English: the catalog's message id).
    """

    name: str
    decide: CriterionFunction
    at_cap: AtCap
    about: str

    def __init__(self, name: str | CriterionFunction, decide: CriterionFunction | None = None,
                 at_cap: AtCap = "raise", summary: str = "") -> None:
        if decide is None:
            if isinstance(name, str) or not callable(name):
                raise CriterionError(f"Criterion({name!r}) has no decision function; write Criterion(my_test) or "
                                     f"Criterion({name!r}, my_test)")
            decide, name = name, str(getattr(name, "__name__", "custom"))
        if not isinstance(name, str):
            raise CriterionError(f"a criterion's name must be text; got {type(name).__name__} "
                                 "(the function goes first only when no name is given)")
        if at_cap not in ("return_last", "raise"):
            raise CriterionError(f"at_cap must be 'return_last' or 'raise'; got {at_cap!r}")
        for field, value in (("name", name), ("decide", decide), ("at_cap", at_cap), ("about", summary)):
            object.__setattr__(self, field, value)

    @property
    def summary(self) -> str:
        """:attr:`about` in the language in use (a table a notebook builds shows it as it is)."""
        return _(self.about)

    def __call__(self, response: Response) -> Decision:
        """Decide on ``response``, turning a ``bool`` into a decision and rejecting anything else."""
        decision = self.decide(response)
        if isinstance(decision, Abort) and decision.code not in ERROR_CODES:
            raise CriterionError(f"criterion {self.name!r} aborted with unknown code {decision.code!r}; "
                                 f"expected one of: {', '.join(ERROR_CODES)}")
        if isinstance(decision, (Continue, Finish, Abort)):
            return decision
        if decision is True:
            return Finish(response.content, Phrase(N_("{name} returned True"), name=self.name))
        if decision is False:
            return Continue(Phrase(N_("{name} returned False"), name=self.name))
        raise CriterionError(f"criterion {self.name!r} returned {type(decision).__name__}; "
                             "expected True/False or a decision (Continue, Finish, Abort)")


def by_content(response: Response) -> Decision:
    """Naive: non-empty text means the answer has arrived."""
    if response.content:
        return Finish(response.content, _NON_EMPTY)
    return Continue(_NULL if response.content is None else _EMPTY)


def by_finish_reason(response: Response) -> Decision:
    """Naive: ``finish_reason == "stop"`` means done."""
    if response.finish_reason == "stop":
        return Finish(response.content, _finish_is("stop"))
    return Continue(_finish_is(response.finish_reason))


def by_tool_calls(response: Response) -> Decision:
    """Naive: a round without tool calls is the final answer."""
    if response.tool_calls:
        return Continue(_calls(len(response.tool_calls)))
    return Finish(response.content, _NO_CALLS)


def correct(response: Ending) -> Decision:
    """The article's loop, made explicit and taught by the field: first how the round ended, then whether to go on.

    1. An abnormal end (see :data:`agentloops.stops.KINDS`) aborts before the
       round is appended or any tool runs, whatever its tool calls look like:
       ``length`` → ``truncated``, ``content_filter``, ``refusal``, a
       provider-reported ``malformed_tool_call``, ``provider_error`` (the turn
       failed, was cancelled, never finished, or its stream broke) and
       ``unknown`` → ``unknown_stop``. A round cut off with only hidden
       reasoning says so: the limit went on reasoning, not on an answer.
    2. A tool call that cannot run aborts too: arguments cut off mid-JSON are a
       truncation whatever finish value the server reported; other unparseable
       arguments are a ``malformed_tool_call``.
    3. Output tokens that reached the request's ``max_tokens`` are a cut
       whatever the finish value says (servers have labelled such rounds
       ``tool_calls`` and ``stop``): ``truncated``.
    4. Tool calls alone decide whether to go on — even when they arrive with ``stop``.
    5. No tool calls: a text that *is* a tool call written as JSON is no answer
       and is not run either (guessing at a call the server failed to parse
       would run what nobody checked): ``malformed_tool_call``. ``stop`` is the
       answer and ``pause`` asks to be called again. A ``tool_calls`` finish
       with text but no call is an answer whose fields disagree (the reason
       says so); with no text either, it aborts.
    """
    ended = abnormal_end(response)
    if ended is not None:
        return Abort(*ended)
    if response.tool_calls:
        return Continue(_to_run(len(response.tool_calls)))
    if response.finish_reason == "pause":
        return Continue(_PAUSED)
    if response.finish_reason == "tool_calls":  # with text: abnormal_end let it through as an answer
        return Finish(response.content, _DISAGREE, fields_disagree=True)
    return Finish(response.content or "", _ANSWER)


def abnormal_end(response: Ending) -> tuple[ErrorCode, str] | None:
    """Rules 1–3 and the aborts of rule 5 of :func:`correct`: the error code and the reason when the round ended in
    a way no loop may take for an answer or for tool calls to run; ``None`` when it ended normally.

    The controller reads a reply with it too (its turn has its own words for going on and finishing).
    """
    reason = response.finish_reason
    if kind_of(reason) == "abnormal":
        return ABORT_CODES[reason], _abnormal(response)
    broken = _unrunnable(response)
    if broken is not None:
        return broken
    if response.at_token_limit:
        return "truncated", _at_limit(response)
    if response.tool_calls or reason == "pause":
        return None
    name = response.text_tool_call
    if name is not None:
        return "malformed_tool_call", Phrase(N_("the text is a call of {name} written as JSON: the server did not "
                                                "parse it, so it is neither an answer nor run"), name=name)
    if reason == "tool_calls" and not response.content:
        return "malformed_tool_call", _NO_CALL_NO_TEXT
    return None


def article_loop(response: Response) -> Decision:
    """The source article's correct loop as it was written: ``length`` and ``content_filter`` raise, tool calls decide.

    Kept beside :func:`correct` so that the field notebook can show where the
    article's two checks fall short on what real servers send (a cut the
    server labelled ``tool_calls``, a stream that broke, a value nobody
    documented). It compares the normalised finish reason, as the naive
    criteria do.
    """
    if response.finish_reason == "length":
        return Abort("truncated", _ABNORMAL_REASONS["length"])
    if response.finish_reason == "content_filter":
        return Abort("content_filter", _ABNORMAL_REASONS["content_filter"])
    if response.tool_calls:
        return Continue(_to_run(len(response.tool_calls)))
    return Finish(response.content or "", _NO_CALLS)


_NON_EMPTY = Phrase(N_("content is non-empty"))
_NULL = Phrase(N_("content is null"))
_EMPTY = Phrase(N_("content is empty"))
_NO_CALLS = Phrase(N_("no tool calls"))
_PAUSED = Phrase(N_("the provider paused the turn; send the transcript back to resume"))
_DISAGREE = Phrase(N_("the fields disagree: finish_reason is tool_calls but no tool call arrived; the text is the "
                      "answer"))
_NO_CALL_NO_TEXT = Phrase(N_("finish_reason is tool_calls but no tool call and no text arrived"))
_ANSWER = Phrase(N_("no tool calls and finish_reason is stop"))


def _finish_is(value: str) -> Phrase:
    return Phrase(N_("finish_reason is {value}"), value=value)


def _calls(n: int) -> Phrase:
    return Phrase(N_("{n} tool call(s)"), n=n)


def _to_run(n: int) -> Phrase:
    return Phrase(N_("{n} tool call(s) to run"), n=n)


_ABNORMAL_REASONS: dict[FinishReason, Phrase] = {
    "length": Phrase(N_("finish_reason is length: the output hit the token limit")),
    "content_filter": Phrase(N_("finish_reason is content_filter: the provider withheld output")),
    "refusal": Phrase(N_("the model refused")),
    "malformed_tool_call": Phrase(N_("the provider reported a malformed tool call")),
    "provider_error": Phrase(N_("the provider reported that the turn failed, was cancelled or never finished")),
}


def _abnormal(response: Ending) -> Phrase:
    """Why an abnormal end is one, naming the provider's value and the tool calls left unrun."""
    reason = response.finish_reason
    if response.stream_error:
        text = Phrase(N_("the stream broke: {problem}"), problem=response.stream_error)
    elif reason == "length" and not response.content and response.reasoning:
        text = Phrase(N_("finish_reason is length and only hidden reasoning arrived: the limit was spent on "
                         "reasoning before any answer"))
    elif reason == "unknown":
        text = Phrase(N_("unknown stop value {value}"), value=repr(response.raw_finish_reason))
    else:
        text = _said(_ABNORMAL_REASONS[reason], response)
    calls = len(response.tool_calls)
    if calls:
        text = Phrase(N_("{base}; its {n} tool call(s) were not run"), base=text, n=calls)
    elif reason == "unknown":
        text = Phrase(N_("{base} and no tool calls"), base=text)
    return text


def _at_limit(response: Ending) -> Phrase:
    """Why a round whose output reached the request's limit is a cut, naming the count and what the server said."""
    used = response.usage.completion_tokens if response.usage is not None else None
    if not response.content and response.reasoning and not response.tool_calls:
        return Phrase(N_("the output reached max_tokens={limit} with only hidden reasoning: the limit was spent on "
                         "reasoning before any answer"), limit=response.max_tokens)
    return Phrase(N_("the output reached max_tokens={limit} ({used} tokens) although finish_reason is {value}: "
                     "the round was cut off"), limit=response.max_tokens, used=used,
                  value=repr(response.raw_finish_reason or response.finish_reason))


def _unrunnable(response: Ending) -> tuple[ErrorCode, Phrase] | None:
    """The error code and reason for the first tool call whose arguments cannot be run, if any."""
    for call in response.tool_calls:
        if call.parsed_arguments is None:
            if call.is_cut_off:
                return "truncated", Phrase(N_("the arguments of {name} were cut off: {arguments}"), name=call.name,
                                           arguments=shorten(call.arguments))
            return "malformed_tool_call", Phrase(N_("the arguments of {name} are not a JSON object: {arguments}"),
                                                 name=call.name, arguments=shorten(call.arguments))
    return None


def _said(reason: Phrase, response: Ending) -> Phrase:
    """Append the provider's own stop value when it differs from the normalised one."""
    raw = response.raw_finish_reason
    if raw and raw != response.finish_reason:
        return Phrase(N_("{base} (the provider said {raw})"), base=reason, raw=repr(raw))
    return reason


CRITERIA: dict[str, Criterion] = {
    "content": Criterion("content", by_content, "return_last", N_("non-empty text means done")),
    "finish_reason": Criterion("finish_reason", by_finish_reason, "return_last",
                               N_("finish_reason 'stop' means done")),
    "tool_calls": Criterion("tool_calls", by_tool_calls, "return_last", N_("no tool calls means done")),
    "correct": Criterion("correct", correct, "raise", N_("abnormal finish raises; tool calls decide; the cap raises")),
}
"""The four built-in criteria by name, in the order tables show them (``summary`` in the language in use)."""

ARTICLE_LOOP = Criterion("article", article_loop, "raise", N_("length and content_filter raise; tool calls decide"))
"""The source article's own correct loop (not one of :data:`CRITERIA`: the field notebook compares it with ours)."""

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
            raise CriterionError(N_("unknown criterion {name}; expected one of: {names}, or a function").format(
                name=repr(criterion), names=", ".join(CRITERIA))) from None
    if callable(criterion):
        return Criterion(getattr(criterion, "__name__", "custom"), criterion, "raise", N_("your own criterion"))
    raise CriterionError(f"criterion must be a name ({', '.join(CRITERIA)}) or a function; "
                         f"got {type(criterion).__name__}")
