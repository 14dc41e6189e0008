"""Every sentence the grader and the mock interview say, as messages of the ``interview`` catalog.

English is said byte for byte as written here; Chinese comes from the catalog, in the answer's script
(a Traditional answer gets Traditional feedback).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agentloops import i18n
from agentloops.i18n import N_, translate
from agentloops.interview.chinese import in_script, is_zh

_GRADER_SAYS: dict[str, str] = {
    "heading": N_("Practice check"),
    "not_attempted": N_("Not attempted: write your answer, then check it."),
    "question_only": N_("This only repeats the question: answer it in your own words."),
    "cap_only": N_("This answer names only the fuse (a step cap). An interviewer will ask: what number, why, and "
                   "what does the user get when it is hit? Add the points below."),
    "verdict": N_("{covered} of {total} points made with a reason, {partly} partly, {named} only named, {missed} "
                  "missed — about {percent}%."),
    "verdict_wrong": N_("{count} wrong claim(s) cost {penalty} points."),
    "band_strong": N_("Strong."), "band_adequate": N_("Adequate."), "band_weak": N_("Weak."),
    "flag_question": N_("Sentences that repeat the question are not graded."),
    "flag_keywords": N_("About {density}% of this answer is key terms: it reads like a keyword list. Make each "
                        "point a sentence that says what you do and why."),
    "flag_short": N_("Only {words} words (under {floor}): too short to give each point its reason."),
    "flag_negated": N_("These parts argue against a point, so they do not count: {negated}."),
    "flag_wrong": N_("These are common wrong claims, and each one subtracts: {wrong}."),
    "flag_repeated": N_("Repeated sentences are read once."),
    "flag_enumeration": N_("A sentence that lists many points names them but explains none: give the important "
                           "ones a sentence of their own, with the reason."),
    "found": N_("found"), "negated": N_("negated"), "wrong": N_("wrong claim"), "add": N_("add"),
    "bonus": N_("bonus"), "note": N_("Note"),
    "heuristic_label": N_("This is a heuristic."),
    "heuristic": N_("It compares your sentences with its rubric — the right claims, the common wrong claims and "
                    "the phrasings in its synonym table — and cannot tell whether a claim it has no entry for is "
                    "true, nor whether you could defend it when the interviewer digs in. Use it to find what you "
                    "left out or said the wrong way round, then compare with the 2-minute answer."),
}
"""Every sentence the grader says, in English: each a message of the ``interview`` catalog, looked up in the
answer's language when it is said (:func:`say`)."""


class _Catalog(Mapping[str, str]):
    """The grader's sentences in one language, looked up in the catalog on every read."""

    def __init__(self, language: i18n.Language) -> None:
        self._language = language

    def __getitem__(self, key: str) -> str:
        return translate(_GRADER_SAYS[key], self._language)

    def __iter__(self) -> Iterator[str]:
        return iter(_GRADER_SAYS)

    def __len__(self) -> int:
        return len(_GRADER_SAYS)


MESSAGES: dict[str, Mapping[str, str]] = {"en": _GRADER_SAYS, "zh": _Catalog("zh")}
"""Every sentence the grader says, by key: English as written, Simplified Chinese from the catalog."""

HEURISTIC_NOTE = MESSAGES["en"]["heuristic"]
"""Shown with every grade: what the grader can and cannot judge."""


def say(language: str, key: str, **values: Any) -> str:
    """One of the grader's sentences in the answer's language, its placeholders filled (English byte for byte)."""
    if not is_zh(language):
        return _GRADER_SAYS[key].format(**values)
    return in_script(translate(_GRADER_SAYS[key], "zh"), language).format(**values)
