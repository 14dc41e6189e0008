"""The grader's decisions at their edges, where a mutation sample found no test: which points get advice, what
counts as a bonus, how Chinese is counted as spoken words, and a negation or a cause at a sentence's first word."""

from __future__ import annotations

import html

import pytest

from agentloops.interview import grade
from agentloops.interview.evidence import checklist_markdown
from agentloops.interview.exemplars import exemplars_for
from agentloops.interview.grader import units
from agentloops.interview.negation import described_as_cause, rejected_before

BONUS = (" Parallel tool calls run together and are joined under one deadline, because one slow call must not hold"
         " up the batch. Long runs compact their context from the task state, because old turns crowd out the goal.")


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("level", [0, 1, 2], ids=["weak", "adequate", "strong"])
def test_advice_is_given_for_every_core_point_not_covered_and_for_no_other(language: str, level: int) -> None:
    graded = grade(exemplars_for("main", language).exemplars[level].text)
    text, page = str(graded), graded._repr_html_()
    statuses = {r.status for r in graded.core}
    assert statuses - {"covered"}  # every exemplar leaves a point to improve
    for r in graded.core:
        advice = graded.advice(r.point)
        assert (advice in text) is (r.status != "covered"), (r.point.key, r.status)
        assert (html.escape(advice) in page) is (r.status != "covered"), (r.point.key, r.status)


def test_each_point_is_marked_with_its_status_symbol_in_the_text_feedback() -> None:
    graded = grade(exemplars_for("main", "en").exemplars[1].text)
    lines = str(graded).splitlines()
    for r in graded.core:
        title = graded.title(r.point)
        line = next(line for line in lines if line.rstrip().endswith(title))
        assert (line.split()[0] == "✓") is (r.status == "covered")


def test_a_bonus_counts_only_when_the_answer_touches_it() -> None:
    strong = exemplars_for("main", "en").exemplars[2].text
    assert grade(strong).bonus == []
    assert grade(strong + BONUS).bonus == ["context", "parallel"]


@pytest.mark.parametrize(("text", "words"), [("好", 1), ("你好", 1), ("你好吗", 2), ("two words", 2), ("", 0),
                                             ("cap 上限", 2)])
def test_chinese_counts_one_spoken_word_per_two_characters_rounded_up(text: str, words: int) -> None:
    assert units(text) == words


@pytest.mark.parametrize(("sentence", "phrase", "negated"), [
    ("never retry a timeout", "retry", True),
    ("we retry a timeout", "retry", False),
    ("because it never checks the state, the loop runs on", "checks", False),  # a cause, not a rejection
])
def test_a_negation_or_a_cause_at_the_first_word_of_a_sentence_is_read(sentence: str, phrase: str,
                                                                        negated: bool) -> None:
    assert rejected_before(sentence, sentence.index(phrase)) is negated


@pytest.mark.parametrize("sentence", ["because every error is retried, the loop runs on",
                                      "因为每个错误都重试，循环停不下来"])
def test_a_cause_named_at_the_first_word_makes_the_sentence_a_cause(sentence: str) -> None:
    assert described_as_cause(sentence, len(sentence) - 3)
    assert not described_as_cause("every error is retried, the loop runs on", 30)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_evidence_checklist_is_numbered_from_one(language: str) -> None:
    items = checklist_markdown(language).splitlines()
    assert [item.split("**")[1].split(".")[0] for item in items] == [str(n) for n in range(1, len(items) + 1)]
