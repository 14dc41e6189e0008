"""The six follow-ups, each answered by runs: :func:`follow_up` runs a follow-up's shipped controller scenarios
through ``agentloops.controller``'s public API and checks every claim of its spoken answer against them.

The follow-ups' words live in ``data/interview/followups.json``; the checks are code, one function per
follow-up, because each reads runs.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentloops import i18n
from agentloops.i18n import N_, translate
from agentloops.interview.content import DrillError, FollowUpText, drill_language, follow_up_texts

Runner = Callable[[str], Any]
"""Runs a shipped controller scenario by name (``agentloops.controller.run_scenario``)."""


@dataclass(frozen=True, slots=True)
class Check:
    """One claim of a follow-up's answer, checked against a run.

    Attributes:
        claim: what the answer says, in English (tests and the English drill read it).
        holds: whether the run shows it.
        seen: what the run showed (status, code, actions…) — data, never translated.
        template: the catalog message ``claim`` was formatted from (empty: ``claim`` is the message).
        values: the values it was formatted with.
    """

    claim: str
    holds: bool
    seen: str
    template: str = ""
    values: tuple[tuple[str, Any], ...] = ()

    def said(self, language: i18n.Language = "en") -> str:
        """The claim as a learner reads it in ``language``."""
        if language == "en":
            return self.claim
        return translate(self.template or self.claim, language).format(**dict(self.values))


def _check(template: str, holds: bool, seen: str, **values: Any) -> Check:
    """A :class:`Check` whose claim is the catalog message ``template`` filled with ``values``."""
    return Check(template.format(**values), holds, seen, template, tuple(values.items()))


@dataclass(frozen=True, slots=True)
class FollowUp:
    """One follow-up question, its answer, and the runs that back the answer.

    Attributes:
        text: its words, both languages (from ``followups.json``).
        checks: turns the runs (by scenario name) into checked claims.
    """

    text: FollowUpText
    checks: Callable[[Mapping[str, Any]], list[Check]]

    @property
    def key(self) -> str:
        """Its id (``other_exits``, ``why_that_number`` …)."""
        return self.text.key

    @property
    def question(self) -> str:
        """The follow-up, in English."""
        return self.text.question.en

    @property
    def question_zh(self) -> str:
        """The follow-up, in Chinese."""
        return self.text.question.zh

    @property
    def answer(self) -> str:
        """A short spoken answer in our own words, in English."""
        return self.text.answer.en

    @property
    def answer_zh(self) -> str:
        """The same in spoken Chinese (our own words too, not a rendering of :attr:`answer`)."""
        return self.text.answer.zh

    @property
    def scenarios(self) -> tuple[str, ...]:
        """The shipped controller scenarios it runs."""
        return self.text.scenarios

    @property
    def evidence(self) -> str:
        """The controller evidence function that shows the same thing as a table."""
        return self.text.evidence

    @property
    def points(self) -> tuple[str, ...]:
        """The rubric points an answer to it is graded on (the mock interview uses them)."""
        return self.text.points

    def question_in(self, language: str | None = None) -> str:
        """The question in ``language`` (default: the package's language)."""
        return self.text.question.said(drill_language(language, "question_in"))

    def answer_in(self, language: str | None = None) -> str:
        """The spoken answer in ``language`` (default: the package's language)."""
        return self.text.answer.said(drill_language(language, "answer_in"))


@dataclass(frozen=True)
class FollowUpRun:
    """A follow-up answered: the runs and every claim checked; renders as text and as HTML."""

    number: int
    follow_up: FollowUp
    runs: Mapping[str, Any]
    checks: tuple[Check, ...]
    language: i18n.Language = "en"
    """The language it renders in: the question, the answer and the claims (what the runs show stays as data)."""

    @property
    def holds(self) -> bool:
        """Every claim is shown by the runs."""
        return all(check.holds for check in self.checks)

    def failed(self) -> list[Check]:
        """The claims the runs did not show (empty when the answer holds)."""
        return [check for check in self.checks if not check.holds]

    def __str__(self) -> str:
        if self.language == "en":
            lines = [f"Follow-up {self.number}: {self.follow_up.question} / {self.follow_up.question_zh}",
                     f"→ {self.follow_up.answer}", "Shown by runs:"]
        else:
            lines = [self._say(N_("Follow-up {number}: {question}")).format(
                         number=self.number, question=self.follow_up.question_in(self.language)),
                     f"→ {self.follow_up.answer_in(self.language)}", self._say(N_("Shown by runs:"))]
        lines += [f" {'✓' if c.holds else '✗'} {c.said(self.language)} — {c.seen}" for c in self.checks]
        return "\n".join(lines)

    def _say(self, message: str) -> str:
        return translate(message, self.language)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td style='color:{'#1a7f37' if c.holds else '#b35900'}'>{'✓' if c.holds else '✗'}</td>"
                       f"<td style='text-align:left'>{html.escape(c.said(self.language))}</td>"
                       f"<td style='text-align:left'><code>{html.escape(c.seen)}</code></td></tr>"
                       for c in self.checks)
        if self.language == "en":
            head = (f"<b>Follow-up {self.number}: {html.escape(self.follow_up.question)}</b> "
                    f"<span style='color:#555'>{html.escape(self.follow_up.question_zh)}</span>")
        else:
            head = "<b>{}</b>".format(html.escape(self._say(N_("Follow-up {number}: {question}")).format(
                number=self.number, question=self.follow_up.question_in(self.language))))
        claim, shows = self._say(N_("claim")), self._say(N_("what the run shows"))
        return (f"<div>{head}<p>→ {html.escape(self.follow_up.answer_in(self.language))}</p><table><tr><th></th>"
                f"<th>{html.escape(claim)}</th><th>{html.escape(shows)}</th></tr>{rows}</table></div>")


def _record(run: Any) -> Mapping[str, Any]:
    """The run's stop as the system keeps it (a method today; a property would work too)."""
    record = run.system_record
    return record() if callable(record) else record


def _user_text(run: Any) -> str:
    message = run.user_message
    return str(message() if callable(message) else message)


def _steps(run: Any) -> tuple[int, int]:
    """Steps used and the step limit, both read from the run's system record."""
    record = _record(run)
    used = int(record.get("budgets_used", {}).get("steps", 0))
    return used, used + int(record.get("budgets_left", {}).get("steps", 0))


def _ending(run: Any) -> str:
    return f"{run.status} ({run.code})"


def _first_repeat(actions: Sequence[str]) -> int | None:
    """1-based position of the first action that repeats an earlier one, ``None`` if none does."""
    seen: set[str] = set()
    for position, action in enumerate(actions, start=1):
        if action in seen:
            return position
        seen.add(action)
    return None


STATUS_SCENARIOS: dict[str, str] = {
    "succeeded": "weather-normal",
    "partially_completed": "weather-early-claim",
    "waiting_for_user": "order-missing-id",
    "failed_unrecoverable": "refund-permission-denied",
    "system_failure": "weather-provider-outage",
    "budget_exhausted": "weather-timeout-always",
    "no_progress": "weather-reask",
    "cancelled": "weather-cancelled",
    "handed_off": "refund-handoff",
}
"""One shipped scenario per stop status: follow-up 1 runs them all."""


def _other_exits(runs: Mapping[str, Any]) -> list[Check]:
    checks = [_check(N_("a run can end as {status}"), runs[name].status == status, f"{name}: {_ending(runs[name])}",
                     status=status)
              for status, name in STATUS_SCENARIOS.items()]
    capped = [name for name, run in runs.items() if run.code == "budget:steps"]
    checks.append(_check(N_("none of these endings is the step cap"), not capped,
                         ", ".join(capped) or "no budget:steps"))
    return checks


def _why_that_number(runs: Mapping[str, Any]) -> list[Check]:
    used, limit = _steps(runs["weather-normal"])
    recoverable = {name: _steps(runs[name])[0] for name in ("weather-timeout-once", "weather-format-change")}
    return [
        _check(N_("the happy path uses {used} of the {limit} steps"), used < limit, f"weather-normal: {used}/{limit}",
               used=used, limit=limit),
        _check(N_("a recoverable failure still succeeds inside the limit"),
              all(runs[n].status == "succeeded" and s < limit for n, s in recoverable.items()),
              ", ".join(f"{n}: {_ending(runs[n])}, {s}/{limit} steps" for n, s in recoverable.items())),
        _check(N_("the limit leaves room above every normal run"), limit > max([used, *recoverable.values()]),
              f"largest normal run: {max([used, *recoverable.values()])} steps, limit {limit}"),
    ]


def _repeat_or_retry(runs: Mapping[str, Any]) -> list[Check]:
    reask, retried = runs["weather-reask"], runs["weather-timeout-once"]
    used, limit = _steps(reask)
    return [
        _check(N_("the same call that brought nothing new is stopped as no progress"),
              (reask.status, reask.code) == ("no_progress", "repeated_action")
              and any(a.startswith("blocked:") for a in reask.actions), f"weather-reask: {_ending(reask)}"),
        _check(N_("it stops before the step cap"), used < limit, f"{used} of {limit} steps used"),
        _check(N_("the same call after a timeout is a retry, and the run succeeds"),
              retried.status == "succeeded" and "retry:get_weather(city=Beijing)" in retried.actions,
              "weather-timeout-once: " + " → ".join(retried.actions)),
    ]


def _claim_is_a_signal(runs: Mapping[str, Any]) -> list[Check]:
    claimed, normal = runs["weather-early-claim"], runs["weather-normal"]
    return [
        _check(N_("the model claimed it was done more than once"), claimed.actions.count("answer") >= 2,
              "weather-early-claim: " + " → ".join(claimed.actions)),
        _check(N_("the claim is not reported as success"), claimed.status != "succeeded"
              and _record(claimed).get("verified") is False, f"weather-early-claim: {_ending(claimed)}"),
        _check(N_("the user is told what is missing"), "Beijing" in _user_text(claimed),
              next((line.strip() for line in _user_text(claimed).splitlines() if "Beijing" in line), "no Beijing")),
        _check(N_("a claim made when the condition holds succeeds"), normal.status == "succeeded"
              and _record(normal).get("verified") is True, f"weather-normal: {_ending(normal)}"),
    ]


def _keeps_timing_out(runs: Mapping[str, Any]) -> list[Check]:
    timeout, refund = runs["weather-timeout-always"], runs["refund-handoff"]
    left = _record(timeout).get("budgets_left", {})
    return [
        _check(N_("retries stop when the shared retry budget is spent"), timeout.code == "budget:retries"
              and left.get("retries") == 0 and left.get("steps", 0) > 0,
              f"weather-timeout-always: {_ending(timeout)}, left: {dict(left)}"),
        _check(N_("the fallback tool spends the same budget"),
              any(a.startswith("fallback:") for a in timeout.actions), " → ".join(timeout.actions)),
        _check(N_("the verified result is kept for the user"), "Shanghai" in _user_text(timeout),
              " | ".join(_user_text(timeout).splitlines()[:2])),
        _check(N_("a call with side effects goes to a person, not a retry"),
              refund.status == "handed_off" and not any(a.startswith("retry:") for a in refund.actions),
              f"refund-handoff: {_ending(refund)}, " + " → ".join(refund.actions)),
    ]


def _review_a_loop(runs: Mapping[str, Any]) -> list[Check]:
    looped, fixed = runs["weather-no-state"], runs["weather-normal"]
    repeat = _first_repeat(looped.actions)
    return [
        _check(N_("the trace shows where the loop began repeating"), repeat is not None,
              f"weather-no-state: action {repeat} repeats an earlier one: " + " → ".join(looped.actions)),
        _check(N_("the loop was stopped for no progress"), looped.status == "no_progress", _ending(looped)),
        _check(N_("with the task state sent, the same task runs without a repeat"),
              _first_repeat(fixed.actions) is None and fixed.status == "succeeded",
              "weather-normal: " + " → ".join(fixed.actions)),
    ]


_CHECKS: dict[str, Callable[[Mapping[str, Any]], list[Check]]] = {
    "other_exits": _other_exits, "why_that_number": _why_that_number, "repeat_or_retry": _repeat_or_retry,
    "claim_is_a_signal": _claim_is_a_signal, "keeps_timing_out": _keeps_timing_out, "review_a_loop": _review_a_loop,
}


def _bind(text: FollowUpText) -> FollowUp:
    if text.key not in _CHECKS:
        raise DrillError(f"followups.json: follow-up {text.key!r} has no checks; expected one of: {', '.join(_CHECKS)}")
    return FollowUp(text, _CHECKS[text.key])


FOLLOW_UPS: tuple[FollowUp, ...] = tuple(_bind(text) for text in follow_up_texts().follow_ups)
"""The six follow-up questions of the drill, in the source article's order."""


def _run_scenario(name: str) -> Any:
    from agentloops.controller import run_scenario

    return run_scenario(name)


def follow_up(number: int, *, runner: Runner | None = None, language: str | None = None) -> FollowUpRun:
    """Answer follow-up ``number`` (1–6) by running its scenarios and checking every claim.

    Args:
        number: which follow-up, 1 to 6.
        runner: runs a scenario by name (default ``agentloops.controller.run_scenario``);
            a test passes its own to see a wrong run fail a claim.
        language: the language the answer and its claims are shown in (``"en"``, ``"zh"``);
            default: the package's (:func:`agentloops.i18n.language`).

    Raises:
        DrillError: ``number`` is not 1–6, or ``language`` is unknown.
    """
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(FOLLOW_UPS):
        raise DrillError(f"follow_up: number {number!r} is not a follow-up; expected 1 to {len(FOLLOW_UPS)}")
    chosen = drill_language(language, "follow_up")
    run = runner or _run_scenario
    item = FOLLOW_UPS[number - 1]
    runs = {name: run(name) for name in item.scenarios}
    return FollowUpRun(number, item, runs, tuple(item.checks(runs)), chosen)


def evidence_for(number: int) -> Any:
    """The controller's evidence table for follow-up ``number`` (the same fact as a table)."""
    import agentloops.controller as ctl

    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(FOLLOW_UPS):
        raise DrillError(f"evidence_for: number {number!r} is not a follow-up; expected 1 to {len(FOLLOW_UPS)}")
    return getattr(ctl, FOLLOW_UPS[number - 1].evidence)()


