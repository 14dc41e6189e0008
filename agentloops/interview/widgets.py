"""The drill's two practice widgets: the practice box (write, check, read the checklist) and the speaking timer.

ipywidgets is imported only when one is built, so the grader stays light. Both draw once with their
defaults and need no click to run top to bottom; tests drive them without a browser.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from typing import Any

from agentloops.i18n import N_, _, translate
from agentloops.interview.content import DrillError, drill_language
from agentloops.interview.grader import Grade, grade
from agentloops.interview.speaking import (
    QUESTION,
    QUESTION_ZH,
    SCRIPT_TITLES,
    SCRIPTS,
    SCRIPTS_ZH,
    SPEAKING_PACE_WPM,
    Pace,
    pace,
    speaking_pace,
    word_count,
)


class Practice:
    """The practice box: write an answer, press the button, read the checklist (a heuristic, and it says so).

    Its labels are in the package's language; the checklist is in the language of the answer.
    """

    def __init__(self, answer: str = "") -> None:
        import ipywidgets as w

        self.question = w.HTML(_question_html())
        self.answer = w.Textarea(value=answer, placeholder=_("Your answer, in English or Chinese…"),
                                 layout=w.Layout(width="100%", height="180px"))
        self.button = w.Button(description=_("Check my answer"), button_style="primary")
        self.result = w.HTML()
        for widget, name in ((self.answer, "answer"), (self.button, "check"), (self.result, "result")):
            widget.add_class(f"agentloops-practice-{name}")
        self.box = w.VBox([self.question, self.answer, self.button, self.result])
        self.box.add_class("agentloops-practice")
        self.button.on_click(lambda _button: self.refresh())
        self.state = self.refresh()

    def check(self, text: str | None = None) -> Grade:
        """Grade ``text`` (or what is in the box) and show the checklist; returns the grade."""
        if text is not None:
            self.answer.value = str(text)
        return self.refresh()

    def refresh(self) -> Grade:
        """Grade the current answer and redraw."""
        self.state = grade(self.answer.value)
        self.result.value = self.state._repr_html_()
        return self.state

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.box._repr_mimebundle_(**kwargs)


def _question_html() -> str:
    """The question: in English with the article's Chinese under it; in the Chinese edition, the Chinese alone."""
    if drill_language(None, "practice") == "zh":
        return f"<div style='font-size:16px'><b>{html.escape(QUESTION_ZH)}</b></div>"
    return (f"<div style='font-size:16px'><b>{html.escape(QUESTION)}</b><br>"
            f"<span style='color:#555'>{html.escape(QUESTION_ZH)}</span></div>")


def practice(answer: str = "") -> Practice:
    """Build the practice box; it grades ``answer`` once (empty: not attempted), so "Run all" needs no click."""
    return Practice(answer)


OWN_WORDS = "my own answer"
"""The timer's choice for the candidate's own text (an id: the dropdown shows it translated)."""

_OWN_WORDS_TITLE = N_("my own answer")


class SpeakingTimer:
    """A spoken-practice timer: pick a script, press Start, say it aloud, press Stop, read the pace.

    The scripts and the pace are in ``language`` (default: the package's): the Chinese timer offers the Chinese
    scripts, counted in characters. The clock is injectable so tests can drive it without waiting; nothing runs
    until a button is pressed.
    """

    def __init__(self, script: str = "30-second answer", *, clock: Callable[[], float] = time.monotonic,
                 language: str | None = None) -> None:
        import ipywidgets as w

        if script not in (*SCRIPTS, OWN_WORDS):
            raise DrillError(f"speaking_timer: script {script!r} is unknown; expected one of: "
                             f"{', '.join((*SCRIPTS, OWN_WORDS))}")
        self.language = drill_language(language, "speaking_timer")
        self._scripts = SCRIPTS_ZH if self.language == "zh" else SCRIPTS
        self._clock = clock
        self._started: float | None = None
        self.last: Pace | None = None
        say = self._say
        self.script = w.Dropdown(options=[(say(SCRIPT_TITLES[name]), name) for name in self._scripts]
                                 + [(say(_OWN_WORDS_TITLE), OWN_WORDS)], value=script, description=say(N_("Say aloud")))
        self.own = w.Textarea(placeholder=say(N_("Paste your own answer here, then press Start.")),
                              layout=w.Layout(width="100%", height="90px"))
        self.start_button = w.Button(description=say(N_("Start")), button_style="primary")
        self.stop_button = w.Button(description=say(N_("Stop")), disabled=True)
        self.text = w.HTML()
        self.result = w.HTML()
        self.start_button.on_click(lambda _button: self.start())
        self.stop_button.on_click(lambda _button: self.stop())
        self.script.observe(lambda _change: self._draw(), names="value")
        self.own.observe(lambda _change: self._draw(), names="value")
        self.box = w.VBox([self.script, self.own, w.HBox([self.start_button, self.stop_button]), self.text,
                           self.result])
        self.box.add_class("agentloops-timer")
        self._draw()

    def _say(self, message: str) -> str:
        return translate(message, self.language)

    def target(self) -> tuple[str, float]:
        """The text to say and its target in seconds (own words: 30 s up to 100 words, else 2 minutes; in
        Chinese the same at the Chinese pace, 156 characters)."""
        if self.script.value == OWN_WORDS:
            text = str(self.own.value)
            short = round(100 * speaking_pace(self.language)[1] / SPEAKING_PACE_WPM[1])
            return text, 30.0 if word_count(text) <= short else 120.0
        return self._scripts[self.script.value]

    def start(self) -> None:
        """Start timing."""
        self._started = self._clock()
        self.start_button.disabled, self.stop_button.disabled = True, False
        speaking = self._say(N_("Speaking… press Stop when you finish."))
        self.result.value = f"<i>{html.escape(speaking)}</i>"

    def stop(self) -> Pace | None:
        """Stop timing and show the pace (``None`` if it was not started)."""
        if self._started is None:
            return None
        text, target = self.target()
        self.last = pace(word_count(text), max(0.0, self._clock() - self._started), target, language=self.language)
        self._started = None
        self.start_button.disabled, self.stop_button.disabled = False, True
        color = "#1a7f37" if self.last.within else "#b35900"
        self.result.value = f"<b style='color:{color}'>{html.escape(self.last.verdict())}</b>"
        return self.last

    def _draw(self) -> None:
        text, target = self.target()
        words = word_count(text)
        low, high = speaking_pace(self.language)
        self.own.layout.display = None if self.script.value == OWN_WORDS else "none"
        if self.language == "en":
            note = (f"{words} words · target {target:.0f} s · at {low}–{high} words a minute it takes "
                    f"{words * 60 / high:.0f}–{words * 60 / low:.0f} s")
        else:
            note = self._say(N_("{words} characters · target {target} s · at {low}–{high} characters a minute it "
                                "takes {fast}–{slow} s")).format(words=words, target=f"{target:.0f}", low=low,
                                                                 high=high, fast=f"{words * 60 / high:.0f}",
                                                                 slow=f"{words * 60 / low:.0f}")
        self.text.value = f"<div style='max-width:760px'>{html.escape(text)}</div><small>{html.escape(note)}</small>"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.box._repr_mimebundle_(**kwargs)


def speaking_timer(script: str = "30-second answer", *, clock: Callable[[], float] = time.monotonic,
                   language: str | None = None) -> SpeakingTimer:
    """Build the spoken-practice timer (see :class:`SpeakingTimer`); it draws once and waits for Start."""
    return SpeakingTimer(script, clock=clock, language=language)


