"""Answers to learn from: a weak, an adequate and a strong answer to each question, with what makes each one
weaker or stronger; the self-review checklist a candidate or a peer ticks; and the grader's synonym table.

All of it is data (``data/interview/exemplars.json`` and ``rubric.json``); this module renders it as
Markdown for the notebook, in either language.
"""

from __future__ import annotations

from agentloops.i18n import N_, translate
from agentloops.interview.content import DrillError, ExemplarSet, drill_language, exemplars
from agentloops.interview.followups import FOLLOW_UPS
from agentloops.interview.grader import grade
from agentloops.interview.reading import POINTS
from agentloops.interview.speaking import QUESTION, QUESTION_ZH

QUESTIONS: tuple[str, ...] = ("main", *(f.key for f in FOLLOW_UPS))
"""The questions with exemplars: ``main``, then the follow-ups' keys in order."""

_LEVELS = {"en": {"weak": "Weak", "adequate": "Adequate", "strong": "Strong"},
           "zh": {"weak": "较弱", "adequate": "合格", "strong": "出色"}}


def exemplars_for(question: str = "main", language: str | None = None) -> ExemplarSet:
    """The weak, adequate and strong answers to ``question`` (``main`` or a follow-up's key) in ``language``.

    Raises:
        DrillError: no exemplars for that question.
    """
    chosen = drill_language(language, "exemplars_for")
    for item in exemplars().sets:
        if item.question == question and item.language == chosen:
            return item
    raise DrillError(f"exemplars_for: question {question!r} is unknown; expected one of: {', '.join(QUESTIONS)}")


def points_of(question: str) -> tuple[str, ...] | None:
    """The rubric points an answer to ``question`` is graded on (``None``: all of them, for the main question)."""
    return None if question == "main" else next(f.points for f in FOLLOW_UPS if f.key == question)


def question_text(question: str, language: str) -> str:
    """The question's words in ``language``."""
    if question == "main":
        return QUESTION_ZH if language == "zh" else QUESTION
    return next(f.question_in(language) for f in FOLLOW_UPS if f.key == question)


def exemplar_scores(question: str = "main", language: str | None = None) -> tuple[int, ...]:
    """The grader's percent for the weak, the adequate and the strong answer to ``question``, in that order
    (a follow-up's answers graded on its points only)."""
    chosen = drill_language(language, "exemplar_scores")
    return tuple(grade(e.text, points_of(question)).percent for e in exemplars_for(question, chosen).exemplars)


def exemplars_markdown(question: str = "main", language: str | None = None) -> str:
    """The three answers to ``question`` as Markdown: each quoted, with its notes and the grader's score."""
    chosen = drill_language(language, "exemplars_markdown")
    item = exemplars_for(question, chosen)
    score = "评分器" if chosen == "zh" else "grader"
    parts = [f"**{question_text(question, chosen)}**"]
    for e, percent in zip(item.exemplars, exemplar_scores(question, chosen)):
        said = f"（{score}：{percent}%）" if chosen == "zh" else f" ({score}: {percent}%)"
        parts.append(f"*{_LEVELS[chosen][e.level]}*{said}\n\n> {e.text}\n\n{e.notes}")
    return "\n\n".join(parts)


def self_review_markdown(language: str | None = None) -> str:
    """The self-review checklist: one box per point, then the wrong claims to avoid."""
    chosen = drill_language(language, "self_review_markdown")
    lines = [f"- [ ] {item.item.said(chosen)}" for item in exemplars().checklist]
    avoid = "不要说：" if chosen == "zh" else "Avoid saying:"
    claims = [c.name.said(chosen) for p in POINTS for c in p.wrong_claims]
    return "\n".join(lines) + f"\n\n**{avoid}** " + ("；" if chosen == "zh" else "; ").join(claims)


def synonym_table(language: str | None = None) -> list[dict[str, str]]:
    """The grader's synonym table: per point and concept, the plain phrases it accepts (one row each; the columns
    named in ``language``)."""
    chosen = drill_language(language, "synonym_table")
    rows = []
    for point in POINTS:
        for concept in point.concepts:
            phrases = concept.synonyms.zh if chosen == "zh" else concept.synonyms.en
            if phrases:
                rows.append({translate(N_("point"), chosen): point.title.said(chosen),
                             translate(N_("concept"), chosen): concept.name.said(chosen),
                             translate(N_("synonyms"), chosen): " · ".join(phrases)})
    return rows
