"""Caps are not retries: each kind of stop calls for its own response, and retrying in place pays again.

A blind retry loop answers every failed run the same way — send the same
request again — as if the failure were a dropped connection. But the stops
the correct loop raises are not transient: a round cut off by the token limit
is cut off again at the same limit, a filtered input is filtered again, and a
tool that keeps failing makes the model spin to the step cap (步数上限) again.
Each retry pays the whole bill once more. What works is the response each
stop calls for:

======================  ===================================================
stop                    response
======================  ===================================================
``truncated``           raise the token limit (``max_tokens``)
``content_filter``      change the input; do not retry it in place
``max_steps``           look at the tool side: why do the calls not converge?
======================  ===================================================

The three cases are :mod:`agentloops.stop_cases`: stub models whose reply is a
function of what the caller controls (:class:`~agentloops.stop_cases.Setup`), so
"raise the limit" and "change the input" are measured, not assumed. Every number
here comes from the run records of the core loop (correct criterion), summed over
the attempts.

What this does not show: a real model samples, so a retry *can* come back
different. A length stop still recurs as long as the answer needs more tokens
than the limit, and a filter as long as the input asks for what it filters.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, get_args

from typing_extensions import assert_never

from agentloops.errors import ErrorCode, UsageError
from agentloops.i18n import N_, Phrase, _, shown
from agentloops.loop import DEFAULT_MAX_STEPS
from agentloops.record import RunRecord
from agentloops.stop_cases import CASES, Setup, StopCase, attempt, load_case
from agentloops.tables import text_table

if TYPE_CHECKING:
    import pandas as pd

Policy = Literal["blind_retry", "right_response"]
"""How a caller reacts to a failed run: the same request again, or the response the stop calls for."""

POLICY_LABELS: dict[Policy, str] = {"blind_retry": N_("blind retry"), "right_response": N_("right response")}
"""Each policy in words (English here; shown through ``_()``)."""

ADVICE: dict[ErrorCode, str] = {
    "truncated": N_("raise the token limit (max_tokens); the same limit cuts the same answer off again"),
    "content_filter": N_("change the input; the same input is filtered again"),
    "refusal": N_("change the request or ask a person; the same request is refused again"),
    "malformed_tool_call": N_("look at the tool side: its schema or the arguments the model cannot produce"),
    "provider_error": N_("the provider says the turn failed or never finished: retry later, with backoff inside a "
                         "budget, and alert if it persists; never read the partial round as an answer"),
    "unknown_stop": N_("stop and find out what the provider meant; never treat it as success"),
    "max_steps": N_("look at the tool side (a failing tool the model keeps calling), or split the task; "
                    "raise the cap only on purpose"),
    "model_error": N_("a transport error may be retried with backoff inside a budget; a bug in the model code is "
                      "fixed, not retried"),
}
"""What each way of ending badly calls for (the error codes of :mod:`agentloops.errors`)."""

@dataclass(frozen=True, slots=True)
class Remedy:
    """What a caller does about a failed run: an action in words and the setup of the next attempt.

    ``setup`` is ``None`` when nothing automatic helps (hand it to a person). ``advice`` and ``action`` stay
    English (``action`` is a :class:`~agentloops.i18n.Phrase`); :meth:`shown` is what a learner reads.
    """

    advice: str
    action: str
    setup: Setup | None

    def shown(self) -> str:
        """The advice and the action in the language in use."""
        return _("{advice} → {action}").format(advice=_(self.advice), action=shown(self.action))


@dataclass(frozen=True, slots=True)
class Attempt:
    """One run of the task: why it was made, with which setup, and its record."""

    number: int
    action: str
    setup: Setup
    record: RunRecord

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens billed by this attempt."""
        return self.record.billed_prompt_tokens + self.record.billed_completion_tokens


@dataclass(frozen=True, slots=True)
class PolicyResult:
    """Every attempt one policy made on one case, and what they cost together."""

    case: str
    policy: Policy
    attempts: tuple[Attempt, ...]

    @property
    def calls(self) -> int:
        """Model calls over all attempts."""
        return sum(a.record.steps for a in self.attempts)

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens billed over all attempts (every call resends its context)."""
        return sum(a.record.billed_prompt_tokens for a in self.attempts)

    @property
    def completion_tokens(self) -> int:
        """Completion tokens billed over all attempts (a cut-off round bills up to the limit)."""
        return sum(a.record.billed_completion_tokens for a in self.attempts)

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens over all attempts."""
        return self.prompt_tokens + self.completion_tokens

    @property
    def succeeded(self) -> bool:
        """True when the last attempt returned a real answer."""
        return self.attempts[-1].record.succeeded

    @property
    def errors(self) -> tuple[str | None, ...]:
        """The error code of each attempt (``None`` for the one that answered)."""
        return tuple(a.record.error for a in self.attempts)

    def __str__(self) -> str:
        rows = [
            [a.number, shown(a.action), a.record.steps, a.tokens, a.record.error or a.record.outcome]
            for a in self.attempts
        ]
        table = text_table([_(h) for h in _ATTEMPT_HEADERS], rows)
        verdict = _("answer") if self.succeeded else _("no answer")
        return _("{case} × {policy}: {attempts} attempts, {calls} calls, {tokens} tokens, {verdict}\n{table}").format(
            case=self.case, policy=_(POLICY_LABELS[self.policy]), attempts=len(self.attempts), calls=self.calls,
            tokens=self.tokens, verdict=verdict, table=table)


_ATTEMPT_HEADERS: tuple[str, ...] = (N_("attempt"), N_("before it"), N_("calls"), N_("tokens"), N_("ended with"))


def advice(code: ErrorCode) -> str:
    """What to do about a run that raised ``code`` (:data:`ADVICE`), in the language in use."""
    return _(ADVICE[code])


# --------------------------------------------------------------------------- the policies


def _quoted(text: str) -> str:
    """``repr(text)``, shown with the text in the learner's language (a stub's words, listed for the catalog)."""
    return Phrase(N_("'{text}'"), text=Phrase(text)) if "'" not in text else repr(text)


def failing_tools(record: RunRecord) -> dict[str, tuple[str, int]]:
    """Tools whose results the model saw as errors: name → (the first error text, how many times).

    Reads the last request of the run: it holds every tool result the model was sent.
    """
    found: dict[str, tuple[str, int]] = {}
    last = record.rounds[-1].request if record.rounds else ()
    for message in last:
        text = message.content or ""
        if message.role == "tool" and text.startswith("error"):
            name = message.name or "?"
            first, count = found.get(name, (text, 0))
            found[name] = (first, count + 1)
    return found


def prescribe(record: RunRecord, setup: Setup, case: StopCase | None = None) -> Remedy:
    """The response a failed run calls for, read from its record.

    Args:
        record: a run that ended badly (``record.error`` is set).
        setup: the settings it ran with.
        case: the case, for the changed input of a filtered request.

    Raises:
        UsageError: the run did not fail, so there is nothing to respond to.
    """
    code = record.error
    if code is None:
        raise UsageError(_("the run ended with {outcome}, not an error; there is nothing to respond to").format(
            outcome=repr(record.outcome)))
    advice = ADVICE[code]
    if code == "truncated":
        limit = setup.max_tokens * 2
        return Remedy(advice, Phrase(N_("raised max_tokens {before} → {after}"), before=setup.max_tokens, after=limit),
                      replace(setup, max_tokens=limit))
    if code == "content_filter" or code == "refusal":
        safer = case.safer_prompt if case is not None else None
        if safer is None or safer == setup.prompt:
            return Remedy(advice, Phrase(N_("no other input to try: ask a person")), None)
        return Remedy(advice, Phrase(N_("changed the input to {prompt}"), prompt=_quoted(safer)),
                      replace(setup, prompt=safer))
    if code == "max_steps":
        broken = failing_tools(record)
        if not broken:
            return Remedy(advice, Phrase(N_("no tool failed: the task needs more steps or a split; decide on "
                                            "purpose")), None)
        name, (text, count) = next(iter(broken.items()))
        return Remedy(advice, Phrase(N_("{name} returned {text} {count}×: fixed the tool"), name=name,
                                     text=_quoted(text), count=count), replace(setup, tool_fixed=True))
    if code == "malformed_tool_call" or code == "unknown_stop":
        return Remedy(advice, Phrase(N_("nothing automatic helps: hand it to a person")), None)
    if code == "model_error" or code == "provider_error":
        return Remedy(advice, Phrase(N_("look at the error: retry a transport or provider failure within a budget, "
                                        "fix a bug")), None)
    assert_never(code)


def blind_retry(case: str | StopCase, retries: int = 3, *, max_steps: int = DEFAULT_MAX_STEPS) -> PolicyResult:
    """Run the case; on any failure run the very same request again, up to ``retries`` more times."""
    chosen = load_case(case)
    _check_count("retries", retries, minimum=0)
    attempts: list[Attempt] = []
    for number in range(1, retries + 2):
        record = attempt(chosen, chosen.setup, max_steps=max_steps)
        action = _FIRST_TRY if number == 1 else _SAME_AGAIN
        attempts.append(Attempt(number, action, chosen.setup, record))
        if record.succeeded:
            break
    return PolicyResult(chosen.name, "blind_retry", tuple(attempts))


def right_response(case: str | StopCase, max_attempts: int = 4, *,
                   max_steps: int = DEFAULT_MAX_STEPS) -> PolicyResult:
    """Run the case; after each failure apply :func:`prescribe` and try again, or stop when nothing helps."""
    chosen = load_case(case)
    _check_count("max_attempts", max_attempts, minimum=1)
    setup = chosen.setup
    action: str = _FIRST_TRY
    attempts: list[Attempt] = []
    for number in range(1, max_attempts + 1):
        record = attempt(chosen, setup, max_steps=max_steps)
        attempts.append(Attempt(number, action, setup, record))
        if record.succeeded or record.error is None:
            break
        remedy = prescribe(record, setup, chosen)
        if remedy.setup is None:
            break
        setup, action = remedy.setup, remedy.action
    return PolicyResult(chosen.name, "right_response", tuple(attempts))


_FIRST_TRY = Phrase(N_("first try"))
_SAME_AGAIN = Phrase(N_("same request again"))


def _check_count(name: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise UsageError(_("{name} must be a whole number of at least {minimum}; got {value}").format(
            name=name, minimum=minimum, value=repr(value)))


# --------------------------------------------------------------------------- the comparison


@dataclass(frozen=True, repr=False)
class RetryComparison:
    """Both policies on every case: the data of notebook 05's table and chart."""

    cases: tuple[StopCase, ...]
    results: tuple[PolicyResult, ...]
    retries: int
    max_steps: int
    _index: Mapping[tuple[str, str], PolicyResult] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {(r.case, r.policy): r for r in self.results})

    def case_names(self) -> list[str]:
        """Case names, in order."""
        return [c.name for c in self.cases]

    def case_title(self, name: str) -> str:
        """The title of a case."""
        return next(c.title for c in self.cases if c.name == name)

    def get(self, case: str, policy: Policy) -> PolicyResult:
        """The result of one policy on one case."""
        try:
            return self._index[(case, policy)]
        except KeyError:
            raise KeyError((case, policy)) from None

    def headers(self) -> list[str]:
        """Column headers of :meth:`rows`, in the language in use."""
        return [_(h) for h in _COMPARISON_HEADERS]

    def rows(self) -> list[list[Any]]:
        """One row per case and policy (the case and the error codes stay code; the words are translated)."""
        return [
            [r.case, _(POLICY_LABELS[r.policy]), len(r.attempts), r.calls, r.prompt_tokens, r.completion_tokens,
             r.tokens, _("answer") if r.succeeded else _("no answer ({error})").format(error=r.errors[-1])]
            for r in self.results
        ]

    def to_frame(self) -> pd.DataFrame:
        """The table as a DataFrame (imports pandas)."""
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=self.headers())

    def __str__(self) -> str:
        return text_table(self.headers(), self.rows())

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.headers())
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
                       for row in self.rows())
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_COMPARISON_HEADERS: tuple[str, ...] = (
    N_("stop"), N_("policy"), N_("attempts"), N_("calls"), N_("prompt tokens"), N_("completion tokens"), N_("tokens"),
    N_("ended with"),
)


def compare_policies(cases: Sequence[str | StopCase] | None = None, *, retries: int = 3,
                     max_steps: int = DEFAULT_MAX_STEPS) -> RetryComparison:
    """Run a blind retry loop and the right response on every case.

    Args:
        cases: names or cases; default: all of :data:`CASES`.
        retries: how many times the blind loop repeats a failed request; the right response may
            make as many attempts in total as the blind loop (``retries + 1``).
        max_steps: the cap of every attempt.
    """
    chosen = tuple(load_case(c) for c in (cases if cases is not None else CASES))
    results = []
    for case in chosen:
        results.append(blind_retry(case, retries, max_steps=max_steps))
        results.append(right_response(case, retries + 1, max_steps=max_steps))
    return RetryComparison(chosen, tuple(results), retries, max_steps)


POLICIES: tuple[Policy, ...] = get_args(Policy)
