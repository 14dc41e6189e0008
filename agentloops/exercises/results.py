"""What a check says: a verdict per case and one for the exercise, as HTML and as text.

A learner reads the verdict in JupyterLab (HTML: a coloured badge and a table
of cases); tests, CI logs and executed notebooks read the ``text/plain`` form.
Both say the same thing: which cases passed, which failed, and why, in the
words of the scenario or situation — never a traceback.

The badges match :class:`agentloops.quiz.CheckResult`, so a self-check
question and an exercise look alike on the page.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Literal

from agentloops.i18n import N_, _, ngettext

Status = Literal["correct", "incorrect", "not attempted"]
"""The verdict on an exercise, as in Kaggle's learntools."""

CaseStatus = Literal["passed", "failed", "timeout", "error", "skipped"]
"""The verdict on one case.

- ``passed`` / ``failed``: the learner's code ran and was judged.
- ``timeout``: it did not finish within the time limit and was stopped.
- ``error``: the checker itself failed (not the learner's fault; the message says so).
- ``skipped``: not run, because earlier cases already ran out of time.
"""

BADGES: dict[Status, tuple[str, str]] = {
    "correct": (N_("✓ Correct"), "#1a7f37"),
    "incorrect": (N_("✗ Not yet"), "#b35900"),
    "not attempted": (N_("… Not attempted"), "#57606a"),
}
"""The verdict's badge (translated where it is shown) and colour."""

CASE_MARKS: dict[CaseStatus, tuple[str, str]] = {
    "passed": ("✓", "#1a7f37"),
    "failed": ("✗", "#b35900"),
    "timeout": ("◷", "#b35900"),  # a clock face every common font has (⏱ needs an emoji font)
    "error": ("!", "#cf222e"),
    "skipped": ("–", "#57606a"),
}

def case_label(name: str) -> str:
    """A case's name as the learner reads it: a descriptive name is translated; a name that is a code or an
    identifier (no space: ``ok``, ``pause``, a scenario name such as ``tool-call-with-stop``) stays as it is."""
    return _(name) if " " in name else name


COLLAPSE_ABOVE = 8
"""More cases than this and a check shows only the ones that did not pass; the passing ones fold into one line."""

OUTPUT_LIMIT = 2000
"""Characters of the learner's printed output shown under a verdict."""

_CELL = "padding:2px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top"


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The verdict on one case (one scenario, one situation, one task state).

    Plain strings only, so a forked checker process can send it back to the notebook.

    Attributes:
        name: the case, as the learner would name it (``truncated``, ``timeout · 1st attempt``…).
        status: see :data:`CaseStatus`.
        message: what happened and, when it failed, what was expected and why.
    """

    name: str
    status: CaseStatus
    message: str

    @property
    def passed(self) -> bool:
        """True when the case passed."""
        return self.status == "passed"

    def line(self) -> str:
        """``✗ truncated: …`` — one line of the text form."""
        return _("{mark} {case}: {message}").format(mark=CASE_MARKS[self.status][0], case=self.name,
                                                     message=self.message)


@dataclass(frozen=True)
class ExerciseResult:
    """The verdict on one exercise; renders as HTML in JupyterLab and as text elsewhere.

    Attributes:
        exercise: the exercise's title.
        status: correct, incorrect or not attempted.
        message: one or two sentences: the count of passing cases, or what to do next.
        cases: the per-case verdicts, in the order they ran.
        hint: where to get help next (for example ``q1.hint()``).
        output: what the learner's code printed during the check (trimmed).
    """

    exercise: str
    status: Status
    message: str
    cases: tuple[CaseResult, ...] = ()
    hint: str = ""
    output: str = ""

    @property
    def passed(self) -> bool:
        """True when every case passed."""
        return self.status == "correct"

    @property
    def failures(self) -> tuple[CaseResult, ...]:
        """The cases that did not pass."""
        return tuple(case for case in self.cases if not case.passed)

    def case(self, name: str) -> CaseResult:
        """The verdict of the case called ``name`` (for tests and curious learners)."""
        for case in self.cases:
            if case.name == name:
                return case
        raise KeyError(_("no case named {name}; cases: {cases}").format(name=repr(name),
                                                                       cases=", ".join(c.name for c in self.cases)))

    def shown_cases(self) -> tuple[tuple[CaseResult, ...], tuple[CaseResult, ...]]:
        """The cases shown one per line, and the passing ones folded away (a long check shows its failures).

        A check of 58 rounds that lists every one buries the two that failed; above
        :data:`COLLAPSE_ABOVE` cases only those that did not pass get a line of their own
        (:attr:`cases` still holds them all).
        """
        if len(self.cases) <= COLLAPSE_ABOVE:
            return self.cases, ()
        return self.failures, tuple(case for case in self.cases if case.passed)

    def _folded(self, count: int) -> str:
        if not self.failures:
            return ngettext("✓ {n} case passed", "✓ {n} cases passed", count).format(n=count)
        return ngettext("✓ {n} more case passed", "✓ {n} more cases passed", count).format(n=count)

    def __str__(self) -> str:
        lines = [_("{badge} — {exercise}: {message}").format(badge=_(BADGES[self.status][0]), exercise=self.exercise,
                                                            message=self.message)]
        shown, folded = self.shown_cases()
        lines += [f"  {case.line()}" for case in shown]
        if folded:
            lines.append(f"  {self._folded(len(folded))}")
        if self.output:
            lines.append(_("Your code printed:\n{output}").format(output=_trim(self.output)))
        if self.hint:
            lines.append(self.hint)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        label, colour = BADGES[self.status]
        label = _(label)
        shown, folded = self.shown_cases()
        table = _case_table(shown)
        if folded:
            table += (f"<details><summary style='color:{CASE_MARKS['passed'][1]}'>"
                      f"{html.escape(self._folded(len(folded)))}</summary>{_case_table(folded)}</details>")
        printed = html.escape(_("Your code printed"))
        output = (f"<details><summary>{printed}</summary><pre>{html.escape(_trim(self.output))}</pre></details>"
                  if self.output else "")
        hint = f"<div style='color:#57606a'>{html.escape(self.hint)}</div>" if self.hint else ""
        return (
            f"<div class='agentloops-check' style='border-left:4px solid {colour};padding:4px 8px'>"
            + _("{badge} — {exercise}: {message}").format(badge=f"<b style='color:{colour}'>{label}</b>",
                                                          exercise=html.escape(self.exercise),
                                                          message=html.escape(self.message))
            + f"{table}{output}{hint}</div>"
        )


def _case_table(cases: tuple[CaseResult, ...]) -> str:
    rows = "".join(
        f"<tr><td style='{_CELL};color:{CASE_MARKS[c.status][1]};font-weight:bold'>{CASE_MARKS[c.status][0]}</td>"
        f"<td style='{_CELL};white-space:nowrap'><code>{html.escape(c.name)}</code></td>"
        f"<td style='{_CELL}'>{html.escape(c.message)}</td></tr>"
        for c in cases
    )
    return f"<table style='border-collapse:collapse;margin:4px 0'>{rows}</table>" if rows else ""


@dataclass(frozen=True)
class Note:
    """A hint or a solution: a title, prose and optionally code; renders as HTML and as text."""

    title: str
    text: str = ""
    code: str = ""

    def __str__(self) -> str:
        parts = [_("{title}: {text}").format(title=self.title, text=self.text) if self.text
                 else _("{title}:").format(title=self.title)]
        if self.code:
            parts.append(self.code.rstrip())
        return "\n".join(parts)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        title = f"<b>{html.escape(self.title)}</b>"
        head = (_("{title}: {text}").format(title=title, text=html.escape(self.text)) if self.text
                else title)
        code = f"<pre style='margin:4px 0'>{html.escape(self.code.rstrip())}</pre>" if self.code else ""
        return f"<div class='agentloops-note'>{head}{code}</div>"


def _trim(text: str) -> str:
    if len(text) <= OUTPUT_LIMIT:
        return text
    return text[:OUTPUT_LIMIT] + more_characters(len(text) - OUTPUT_LIMIT)


def more_characters(count: int) -> str:
    """``\n… (120 more characters)``: the note under output that was cut."""
    return _("\n… ({count} more characters)").format(count=count)
