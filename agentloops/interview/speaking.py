"""The question and the two spoken scripts, and how long they take to say.

:data:`THIRTY_SECONDS` (at most 80 words) and :data:`TWO_MINUTES` (250–320 words) are read from
``data/interview/scripts.json`` with their Chinese editions, sized in characters at :data:`SPEAKING_PACE_CPM`;
:func:`pace` measures one spoken attempt against its target.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentloops import i18n
from agentloops.i18n import N_, translate
from agentloops.interview.content import DrillError, drill_language, scripts

QUESTION = scripts().question.en
QUESTION_ZH = scripts().question.zh

SCRIPTS: dict[str, tuple[str, float]] = {s.name: (s.en, s.target_s) for s in scripts().scripts}
"""The scripts a candidate practises aloud, with their target length in seconds."""

SCRIPTS_ZH: dict[str, tuple[str, float]] = {s.name: (s.zh, s.target_s) for s in scripts().scripts}
"""The Chinese scripts under the same names (the names are ids; :func:`script_title` shows them translated)."""

THIRTY_SECONDS, TWO_MINUTES = SCRIPTS["30-second answer"][0], SCRIPTS["2-minute answer"][0]
THIRTY_SECONDS_ZH, TWO_MINUTES_ZH = SCRIPTS_ZH["30-second answer"][0], SCRIPTS_ZH["2-minute answer"][0]

SPEAKING_PACE_WPM = (130, 160)
"""A comfortable interview pace, in words a minute: what the targets above are sized for."""

SPEAKING_PACE_CPM = (200, 250)
"""A comfortable pace for spoken Mandarin in an interview, in Chinese characters a minute (a Latin word such as
``Token`` counts as one): the figure usually given for ordinary speech, below a newsreader's 250–300. The Chinese
scripts are sized for it as the English ones are for :data:`SPEAKING_PACE_WPM`."""

SCRIPT_TITLES = {"30-second answer": N_("30-second answer"), "2-minute answer": N_("2-minute answer")}

def script(name: str = "30-second answer", *, language: str | None = None) -> str:
    """The script ``name`` (``"30-second answer"`` or ``"2-minute answer"``) in ``language``.

    ``language`` defaults to the package's (:func:`agentloops.i18n.language`), so the Chinese notebook shows
    the Chinese answer. Raises :class:`DrillError` for an unknown name or language.
    """
    scripts = SCRIPTS_ZH if drill_language(language, "script") == "zh" else SCRIPTS
    if name not in scripts:
        raise DrillError(f"script: {name!r} is unknown; expected one of: {', '.join(scripts)}")
    return scripts[name][0]


def script_title(name: str, *, language: str | None = None) -> str:
    """A script's name as a learner reads it ("2-minute answer", "两分钟回答")."""
    return translate(SCRIPT_TITLES.get(name, name), drill_language(language, "script_title"))


def speaking_pace(language: str | None = None) -> tuple[int, int]:
    """The pace the scripts in ``language`` are sized for: words a minute in English, characters in Chinese."""
    return SPEAKING_PACE_CPM if drill_language(language, "speaking_pace") == "zh" else SPEAKING_PACE_WPM


def speaking_seconds(text: str, *, language: str | None = None) -> tuple[float, float]:
    """How long ``text`` takes at the fast and at the slow end of :func:`speaking_pace`, in seconds."""
    low, high = speaking_pace(language)
    units = word_count(text)
    return units * 60 / high, units * 60 / low


_WORD = re.compile(r"[A-Za-z0-9]+(?:['’_\-][A-Za-z0-9]+)*")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")



def step_limit_example() -> Any:
    """The step budget the 2-minute answer quotes, derived again from uncapped runs of the controller.

    Returns ``agentloops.controller``'s ``DerivedLimit`` for the task and sample size in ``scripts.json``
    (its median, 95th percentile, what one recoverable failure adds, and the limit derived from them), so a
    test or a notebook cell can check the numbers the script says against a fresh measurement.
    """
    from agentloops.controller.teaching.evidence import derive_limits

    example = scripts().step_limit_example
    return next(d for d in derive_limits(example.task, example.measure, example.seed) if d.budget == "steps")


def word_count(text: str) -> int:
    """Spoken words: Latin words (``tool-call``, ``don't`` count once) plus one per Chinese character."""
    return len(_WORD.findall(text)) + len(_CJK.findall(text))


@dataclass(frozen=True, slots=True)
class Pace:
    """One spoken attempt measured against its target.

    Attributes:
        words: spoken words in the script (Chinese characters for a Chinese script: see :func:`word_count`).
        seconds: how long it took.
        target_s: the target length in seconds.
        language: the script's language: it sets the pace to compare with and the verdict's words.
    """

    words: int
    seconds: float
    target_s: float
    language: i18n.Language = "en"

    @property
    def wpm(self) -> float:
        """Words (in Chinese: characters) a minute."""
        return self.words * 60 / self.seconds if self.seconds > 0 else 0.0

    @property
    def within(self) -> bool:
        """Finished inside the target."""
        return self.seconds <= self.target_s

    def words_to_cut(self) -> int:
        """How many words to drop to fit the target at this pace (0 when it fits)."""
        return 0 if self.within else max(0, round(self.words - self.target_s * self.wpm / 60))

    def verdict(self) -> str:
        """One sentence: the time, the pace, and what to change."""
        if self.language == "en":
            said = f"{self.seconds:.0f} s for {self.words} words ({self.wpm:.0f} words a minute)"
            high = SPEAKING_PACE_WPM[1]
            if self.within:
                hint = " — fast: slow down so the interviewer can follow." if self.wpm > high + 30 else "."
                return f"{said}: within the {self.target_s:.0f} s target{hint}"
            return (f"{said}: {self.seconds - self.target_s:.0f} s over the {self.target_s:.0f} s target — cut about "
                    f"{self.words_to_cut()} words, or speak nearer {high} words a minute.")
        high = speaking_pace(self.language)[1]
        values = {"seconds": f"{self.seconds:.0f}", "words": self.words, "rate": f"{self.wpm:.0f}",
                  "target": f"{self.target_s:.0f}", "over": f"{self.seconds - self.target_s:.0f}",
                  "cut": self.words_to_cut(), "high": high}
        if self.within:
            fast = self.wpm > high * 1.2
            message = (N_("{seconds} s for {words} characters ({rate} a minute): within the {target} s target — fast: "
                          "slow down so the interviewer can follow.") if fast else
                       N_("{seconds} s for {words} characters ({rate} a minute): within the {target} s target."))
            return translate(message, self.language).format(**values)
        return translate(N_("{seconds} s for {words} characters ({rate} a minute): {over} s over the {target} s "
                            "target — cut about {cut} characters, or speak nearer {high} a minute."),
                         self.language).format(**values)


def pace(words: int, seconds: float, target_s: float, *, language: str | None = None) -> Pace:
    """Measure one attempt; raises :class:`DrillError` for a negative count or time, or a target not above 0.

    ``language`` is the script's (default: the package's): English counts words, Chinese counts characters.
    """
    if words < 0 or seconds < 0 or target_s <= 0:
        raise DrillError(f"pace: words={words!r}, seconds={seconds!r}, target_s={target_s!r}; expected words and "
                         "seconds of at least 0 and a target above 0")
    return Pace(int(words), float(seconds), float(target_s), drill_language(language, "pace"))


