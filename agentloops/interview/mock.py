"""A mock interview: the main question, then follow-ups in a seeded random order, each answer timed and graded.

A workshop room that uses the same seed gets the same interview. The main answer is graded on every point;
a follow-up's answer only on the points that follow-up probes (``followups.json``). The summary lists the
points the candidate made (covered or partly, in any answer) and the ones never made, and the time each
answer took against its target. The clock is injectable, so tests drive a whole interview without waiting.
"""

from __future__ import annotations

import html
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentloops import i18n
from agentloops.i18n import N_, translate
from agentloops.interview.content import DrillError, drill_language
from agentloops.interview.followups import FOLLOW_UPS
from agentloops.interview.grader import Grade, grade
from agentloops.interview.reading import POINTS
from agentloops.interview.speaking import QUESTION, QUESTION_ZH

MAIN_TARGET_S = 120.0
"""The main question is answered in about two minutes."""

FOLLOW_UP_TARGET_S = 45.0
"""A follow-up is answered in well under a minute."""


@dataclass(frozen=True, slots=True)
class Asked:
    """One question of the interview: its key (``main`` or a follow-up's), words, points and target time."""

    key: str
    question: str
    points: tuple[str, ...] | None
    target_s: float


@dataclass(frozen=True, slots=True)
class Answered:
    """One answer: the question, what was said, how long it took, and its grade."""

    asked: Asked
    text: str
    seconds: float
    grade: Grade

    @property
    def within(self) -> bool:
        """Answered inside the target time."""
        return self.seconds <= self.asked.target_s


def plan(seed: int, follow_ups: int = 3, *, language: str | None = None) -> tuple[Asked, ...]:
    """The questions of one interview: the main question, then ``follow_ups`` follow-ups drawn with ``seed``.

    Raises:
        DrillError: ``follow_ups`` is not between 0 and the number of follow-ups.
    """
    if isinstance(follow_ups, bool) or not isinstance(follow_ups, int) or not 0 <= follow_ups <= len(FOLLOW_UPS):
        raise DrillError(f"mock_interview: follow_ups={follow_ups!r}; expected 0 to {len(FOLLOW_UPS)}")
    chosen = drill_language(language, "mock_interview")
    main = Asked("main", QUESTION_ZH if chosen == "zh" else QUESTION, None, MAIN_TARGET_S)
    drawn = random.Random(seed).sample(FOLLOW_UPS, follow_ups)
    return (main, *(Asked(f.key, f.question_in(chosen), f.points, FOLLOW_UP_TARGET_S) for f in drawn))


@dataclass(frozen=True)
class Summary:
    """The end of an interview: the points made and missed, and every answer's time."""

    answers: tuple[Answered, ...]
    language: i18n.Language = "en"

    @property
    def made(self) -> list[str]:
        """Core points covered or partly covered in at least one answer."""
        return [p.key for p in POINTS if p.core and any(
            r.point.key == p.key and r.status in ("covered", "partly") for a in self.answers for r in a.grade.results)]

    @property
    def missed(self) -> list[str]:
        """Core points no answer made."""
        return [p.key for p in POINTS if p.core and p.key not in self.made]

    @property
    def wrong(self) -> list[str]:
        """The wrong claims made, by key, in the order they were said."""
        return list(dict.fromkeys(key for a in self.answers for key, _ in a.grade.wrong))

    def _say(self, message: str) -> str:
        return translate(message, self.language)

    def _title(self, key: str) -> str:
        return next(p.title.said(self.language) for p in POINTS if p.key == key)

    def lines(self) -> list[str]:
        """The summary as lines of text."""
        out = [self._say(N_("Mock interview: {made} of {total} points made.")).format(
            made=len(self.made), total=len(self.made) + len(self.missed))]
        out += [f" ✓ {self._title(k)}" for k in self.made] + [f" ✗ {self._title(k)}" for k in self.missed]
        for a in self.answers:
            out.append(self._say(N_("{question} — {percent}%, {seconds} s of {target} s")).format(
                question=a.asked.question, percent=a.grade.percent, seconds=f"{a.seconds:.0f}",
                target=f"{a.asked.target_s:.0f}"))
        if self.wrong:
            names = [c.name.said(self.language) for p in POINTS for c in p.wrong_claims if c.key in self.wrong]
            out.append(self._say(N_("Wrong claims: {claims}")).format(claims="; ".join(names)))
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_html_(self) -> str:
        head, *rest = self.lines()
        body = "".join(f"<div>{html.escape(line)}</div>" for line in rest)
        return f"<div><b>{html.escape(head)}</b>{body}</div>"


class MockInterview:
    """The mock interview widget: read the question, answer in the box, press Submit; the next one follows.

    The timer for an answer starts when its question is shown and stops at Submit. Nothing is graded until
    Submit is pressed, so "Run all" draws the first question and waits.
    """

    def __init__(self, seed: int = 0, follow_ups: int = 3, *, clock: Callable[[], float] = time.monotonic,
                 language: str | None = None) -> None:
        import ipywidgets as w

        self.language = drill_language(language, "mock_interview")
        self.seed = seed
        self.questions = plan(seed, follow_ups, language=self.language)
        self._clock = clock
        self.answers: list[Answered] = []
        self._shown_at = clock()
        self.question = w.HTML()
        self.answer = w.Textarea(placeholder=self._say(N_("Your answer, in English or Chinese…")),
                                 layout=w.Layout(width="100%", height="140px"))
        self.submit = w.Button(description=self._say(N_("Submit answer")), button_style="primary")
        self.restart = w.Button(description=self._say(N_("Start again")))
        self.result = w.HTML()
        self.summary_view = w.HTML()
        self.submit.on_click(lambda _button: self.submit_answer())
        self.restart.on_click(lambda _button: self.start())
        self.box = w.VBox([self.question, self.answer, w.HBox([self.submit, self.restart]), self.result,
                           self.summary_view])
        self.box.add_class("agentloops-mock-interview")
        self._draw()

    def _say(self, message: str) -> str:
        return translate(message, self.language)

    @property
    def done(self) -> bool:
        """Every question has been answered."""
        return len(self.answers) == len(self.questions)

    @property
    def current(self) -> Asked | None:
        """The question being asked (``None`` once the interview is over)."""
        return None if self.done else self.questions[len(self.answers)]

    def start(self) -> None:
        """Start the same interview again (same seed, same order)."""
        self.answers.clear()
        self._shown_at = self._clock()
        self.result.value = self.summary_view.value = ""
        self._draw()

    def submit_answer(self, text: str | None = None) -> Answered | None:
        """Grade the answer in the box (or ``text``), time it, and move on; ``None`` once the interview is over."""
        asked = self.current
        if asked is None:
            return None
        said = self.answer.value if text is None else str(text)
        answered = Answered(asked, said, max(0.0, self._clock() - self._shown_at), grade(said, asked.points))
        self.answers.append(answered)
        self.answer.value = ""
        self._shown_at = self._clock()
        self.result.value = self._said(answered) + answered.grade._repr_html_()
        self._draw()
        return answered

    def summary(self) -> Summary:
        """The summary of the answers given so far."""
        return Summary(tuple(self.answers), self.language)

    def _said(self, answered: Answered) -> str:
        color = "#1a7f37" if answered.within else "#b35900"
        timing = self._say(N_("{seconds} s of a {target} s target")).format(
            seconds=f"{answered.seconds:.0f}", target=f"{answered.asked.target_s:.0f}")
        return f"<div style='color:{color}'>{html.escape(timing)}</div>"

    def _draw(self) -> None:
        asked = self.current
        self.submit.disabled = asked is None
        if asked is None:
            over = self._say(N_("The interview is over."))
            self.question.value = f"<b>{html.escape(over)}</b>"
            self.summary_view.value = self.summary()._repr_html_()
            return
        number = self._say(N_("Question {number} of {total} · target {target} s")).format(
            number=len(self.answers) + 1, total=len(self.questions), target=f"{asked.target_s:.0f}")
        self.question.value = (f"<div style='font-size:16px'><small>{html.escape(number)}</small><br>"
                               f"<b>{html.escape(asked.question)}</b></div>")

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.box._repr_mimebundle_(**kwargs)


def mock_interview(seed: int = 0, follow_ups: int = 3, *, clock: Callable[[], float] = time.monotonic,
                   language: str | None = None) -> MockInterview:
    """Build the mock interview (see :class:`MockInterview`): the same ``seed`` asks the same follow-ups in the
    same order."""
    return MockInterview(seed, follow_ups, clock=clock, language=language)
