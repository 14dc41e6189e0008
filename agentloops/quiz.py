"""Self-check questions for the notebooks: check, hint, solution — never a traceback.

Modelled on Kaggle's learntools: ``q.check(answer)`` says correct, incorrect
or not attempted; ``q.hint()`` climbs a ladder from vague to concrete;
``q.solution()`` reveals the answer. A learner's answer starts as ``...``
(Ellipsis), so "Run all" shows "not attempted" and spoils nothing. ``None``
is a real answer (the loop returned nothing) and is judged like any other.

The expected answer may be a value or a zero-argument function; a function is
evaluated at check time, so a question about a measured number asks the code,
not the prose.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentloops.i18n import N_, _, shown

Status = Literal["correct", "incorrect", "not attempted"]

_BADGES: dict[Status, tuple[str, str]] = {
    "correct": (N_("✓ Correct"), "#1a7f37"),
    "incorrect": (N_("✗ Not yet"), "#b35900"),
    "not attempted": (N_("… Not attempted"), "#57606a"),
}
"""The verdict's badge and colour; the badge is translated when the result is shown."""


@dataclass(frozen=True)
class CheckResult:
    """The verdict on one answer; renders as HTML in JupyterLab and as text elsewhere.

    Attributes:
        status: correct, incorrect or not attempted.
        message: why, in one or two sentences.
        hint: a nudge shown with a wrong answer (may be empty).
    """

    status: Status
    message: str
    hint: str = ""

    @property
    def passed(self) -> bool:
        """True when the answer was correct."""
        return self.status == "correct"

    def __str__(self) -> str:
        text = _("{badge}: {message}").format(badge=_(_BADGES[self.status][0]), message=self.message)
        return _("{text}\nHint: {hint}").format(text=text, hint=self.hint) if self.hint else text

    def _repr_html_(self) -> str:
        label, colour = _BADGES[self.status]
        label = _(label)
        hint = _("<br><i>Hint:</i> {hint}").format(hint=html.escape(self.hint)) if self.hint else ""
        text = _("{badge}: {message}").format(badge=f"<b style='color:{colour}'>{label}</b>",
                                              message=html.escape(self.message))
        return f"<div style='border-left:4px solid {colour};padding:4px 8px'>{text}{hint}</div>"

    def __repr__(self) -> str:
        return str(self)


@dataclass(frozen=True)
class Note:
    """Text that renders in both HTML and plain text (hints and solutions)."""

    title: str
    text: str

    def __str__(self) -> str:
        return _("{title}: {text}").format(title=self.title, text=self.text)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        text = _("{title}: {text}").format(title=f"<b>{html.escape(self.title)}</b>", text=html.escape(self.text))
        return f"<div>{text}</div>"


@dataclass
class Question:
    """One self-check question.

    Attributes:
        prompt: the question as the learner reads it.
        answer: the expected answer, or a zero-argument function computing it.
        hints: from vague to concrete; :meth:`hint` shows the next one each call.
        options: for multiple choice, the allowed answers (compared case-insensitively).
        explanations: option → why it is right or wrong (every wrong option should have one).
        solution: text shown by :meth:`solution`; defaults to the expected answer.
        tolerance: for numbers, how far off still counts as correct.
    """

    prompt: str
    answer: Any | Callable[[], Any]
    hints: Sequence[str] = ()
    options: Sequence[str] = ()
    explanations: Mapping[str, str] = field(default_factory=dict)
    solution_text: str = ""
    tolerance: float = 0.0
    _hints_shown: int = field(default=0, init=False, repr=False)

    def expected(self) -> Any:
        """The expected answer (evaluated now when it is a function)."""
        return self.answer() if callable(self.answer) else self.answer

    def check(self, response: Any = ...) -> CheckResult:
        """Judge ``response``. Never raises: a broken answer is reported, not thrown."""
        if response is ...:
            return CheckResult("not attempted", _("replace the ... with your answer and run the cell again"))
        try:
            expected = self.expected()
        except Exception as exc:  # the question's own code failed: not the learner's fault
            return CheckResult("not attempted", _("this question could not compute its answer "
                                                  "({error}: {exc}); please report it").format(
                                                      error=type(exc).__name__, exc=exc))
        try:
            ok = self._matches(response, expected)
        except Exception as exc:  # a learner's odd value must not crash the notebook
            return CheckResult("incorrect", _("could not compare your answer ({error}: {exc})").format(
                error=type(exc).__name__, exc=exc), self._next_hint())
        key = _norm(response)
        explanation = next((v for k, v in self.explanations.items() if _norm(k) == key), "")
        if ok:
            return CheckResult("correct", explanation or _("{answer} is right.").format(answer=repr(response)))
        if self.options and key not in {_norm(o) for o in self.options}:
            options = ", ".join(map(repr, self.options))
            return CheckResult("incorrect", _("{answer} is not one of the options: {options}").format(
                answer=repr(response), options=options))
        return CheckResult("incorrect", explanation or _("{answer} is not it.").format(answer=repr(response)),
                           self._next_hint())

    def hint(self) -> Note:
        """The next hint on the ladder (the last one repeats)."""
        if not self.hints:
            return Note(_("Hint"), _("no hint for this one — re-run the cell above and read its output"))
        text = self.hints[min(self._hints_shown, len(self.hints) - 1)]
        self._hints_shown += 1
        return Note(_("Hint {n}/{total}").format(n=min(self._hints_shown, len(self.hints)), total=len(self.hints)),
                    text)

    def solution(self) -> Note:
        """The answer, with its explanation."""
        expected = self.expected()
        explanation = next((v for k, v in self.explanations.items() if _norm(k) == _norm(expected)), "")
        said = shown(expected) if isinstance(expected, str) else expected
        return Note(_("Solution"), self.solution_text or f"{said!r}. {explanation}".strip())

    def _next_hint(self) -> str:
        if not self.hints:
            return ""
        text = self.hints[min(self._hints_shown, len(self.hints) - 1)]
        self._hints_shown += 1
        return text

    def _matches(self, response: Any, expected: Any) -> bool:
        if isinstance(expected, bool) or isinstance(response, bool):
            return response is expected or _norm(response) == _norm(expected)
        if isinstance(expected, (int, float)) and isinstance(response, (int, float)):
            return abs(response - expected) <= self.tolerance
        if isinstance(expected, (list, tuple)) and isinstance(response, (list, tuple)):
            return [_norm(v) for v in response] == [_norm(v) for v in expected]
        return _norm(response) == _norm(expected)


def _norm(value: Any) -> str:
    """How an answer is compared: text as the learner reads it (a scenario's words in their language, see
    :func:`~agentloops.i18n.shown`), trimmed, case-insensitively."""
    return str(shown(value) if isinstance(value, str) else value).strip().lower()
