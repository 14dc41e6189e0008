"""Answers to learn from, the self-review checklist, the synonym table, and the scripts' content."""

from __future__ import annotations

import re

import pytest

from agentloops import interview
from agentloops.interview import grade
from agentloops.interview.content import exemplars
from agentloops.interview.exemplars import QUESTIONS, exemplars_for, exemplars_markdown, points_of

SETS = [(s.question, s.language) for s in exemplars().sets]


def test_every_question_has_exemplars_in_both_languages() -> None:
    assert sorted(SETS) == sorted((q, language) for q in QUESTIONS for language in ("en", "zh"))
    assert len(QUESTIONS) == 7


@pytest.mark.parametrize(("question", "language"), SETS)
def test_the_grader_orders_weak_adequate_strong(question: str, language: str) -> None:
    weak, adequate, strong = (grade(e.text, points_of(question)).percent
                              for e in exemplars_for(question, language).exemplars)
    assert weak < adequate <= strong, (weak, adequate, strong)


@pytest.mark.parametrize(("question", "language"), SETS)
def test_each_exemplar_is_annotated_in_its_language(question: str, language: str) -> None:
    for e in exemplars_for(question, language).exemplars:
        assert len(e.notes) > 10 and bool(re.search(r"[\u4e00-\u9fff]", e.notes + e.text)) == (language == "zh")
    shown = exemplars_markdown(question, language)
    assert all(e.text in shown and e.notes in shown for e in exemplars_for(question, language).exemplars)


def test_an_unknown_question_is_refused() -> None:
    with pytest.raises(interview.DrillError, match="exemplars_for: question 'vibes' is unknown; expected one of: main"):
        exemplars_for("vibes", "en")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_self_review_checklist_covers_every_core_point_and_every_wrong_claim(language: str) -> None:
    checklist = interview.self_review_markdown(language)
    assert {c.point for c in exemplars().checklist} == {p.key for p in interview.POINTS if p.core}
    assert checklist.count("- [ ]") == len(exemplars().checklist)
    assert all(c.name.said(language) in checklist for p in interview.POINTS for c in p.wrong_claims)


def test_the_synonym_table_lists_the_plain_phrasings() -> None:
    rows = interview.synonym_table("en")
    assert any("how long and how much" in r["synonyms"] for r in rows)
    zh = interview.synonym_table("zh")
    assert any("总次数要有个数" in r["同义说法"] for r in zh) and list(zh[0]) == ["要点", "概念", "同义说法"]
    assert list(rows[0]) == ["point", "concept", "synonyms"]


@pytest.mark.parametrize(("language", "phrases"), [
    ("en", ["structured trace", "consecutive failures", "hands off to a person", "success", "missing information",
            "budget spent", "system failure", "every turn"]),
    ("zh", ["结构化", "连续失败", "转人工", "成功", "缺信息", "预算耗尽", "系统故障", "每轮"]),
])
def test_the_thirty_second_answer_covers_the_articles_short_answer(language: str, phrases: list[str]) -> None:
    text = interview.script("30-second answer", language=language)
    assert [p for p in phrases if p not in text] == []
    fast, _slow = interview.speaking_seconds(text, language=language)
    assert fast <= 30


def test_the_two_minute_answer_quotes_a_step_limit_derived_from_runs() -> None:
    derived = interview.step_limit_example()
    en, zh = interview.TWO_MINUTES, interview.TWO_MINUTES_ZH
    said = re.search(r"(\d+) runs took (\d+) steps at the median and (\d+) at the 95th percentile; a retried "
                     r"timeout added (\w+), so the derived limit is (\d+) steps", en)
    assert said, en
    runs, median, p95, added, limit = said.groups()
    assert (int(runs), float(median), float(p95), float(limit)) == (200, derived.median, derived.p95, derived.limit)
    assert (added == "none") == (derived.one_failure == 0)
    assert (f"跑 {runs} 次，中位数 {median} 步，95 分位 {p95} 步" in zh and f"推出的上限是 {limit} 步" in zh)
    assert "version" not in en and "版本" not in zh  # the package's words, said in interview words
