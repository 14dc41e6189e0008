"""The grader's ranking of the labelled set (``data/interview/calibration.json``), and the rank correlations.

The labelled answers were written and labelled before the grader was tuned, and are never edited to make a
test pass: if one of these tests fails, the grader is wrong, not the label.
"""

from __future__ import annotations

import pandas as pd
import pytest

from agentloops.interview import calibrate, kendall_tau, spearman
from agentloops.interview.calibration import KENDALL_FLOOR, LABEL_ORDER, SPEARMAN_FLOOR, ranks
from agentloops.interview.content import calibration


@pytest.fixture(scope="module")
def graded():  # type: ignore[no-untyped-def]
    return calibrate()


def test_the_labelled_set_is_large_varied_and_bilingual() -> None:
    answers = calibration().answers
    assert len(answers) >= 40 and len({a.id for a in answers}) == len(answers)
    for language in ("en", "zh"):
        labels = {a.label for a in answers if a.language == language}
        assert labels == set(LABEL_ORDER), language
    assert {a.language for a in answers if a.article_points} == {"en", "zh"}


def test_the_grader_ranks_the_labelled_set(graded) -> None:  # type: ignore[no-untyped-def]
    assert SPEARMAN_FLOOR == 0.75 and KENDALL_FLOOR == 0.6  # stated in the module, chosen before tuning
    assert graded.spearman >= SPEARMAN_FLOOR, str(graded)
    assert graded.kendall >= KENDALL_FLOOR, str(graded)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_ranking_holds_in_each_language(graded, language: str) -> None:  # type: ignore[no-untyped-def]
    rows = [r for r in graded.rows if r.answer.language == language]
    assert spearman([LABEL_ORDER[r.answer.label] for r in rows], [r.percent for r in rows]) >= SPEARMAN_FLOOR


def test_every_fluent_but_wrong_answer_scores_below_every_adequate_one(graded) -> None:  # type: ignore[no-untyped-def]
    assert max(graded.scores("fluent_wrong")) < min(graded.scores("adequate")), str(graded)


def test_the_articles_points_in_plain_words_score_adequate_or_better(graded) -> None:  # type: ignore[no-untyped-def]
    plain = [r for r in graded.rows if r.answer.article_points]
    assert plain and all(r.band in ("adequate", "strong") for r in plain), [(r.answer.id, r.percent) for r in plain]


def test_keyword_lists_negations_and_off_topic_answers_stay_weak(graded) -> None:  # type: ignore[no-untyped-def]
    for label in ("keywords", "negated", "off_topic", "fluent_wrong"):
        assert all(r.band == "weak" for r in graded.rows if r.answer.label == label), label


def test_the_table_shows_every_answer_and_both_correlations(graded) -> None:  # type: ignore[no-untyped-def]
    text = str(graded)
    assert all(r.answer.id in text for r in graded.rows) and "Spearman" in text and "Kendall" in text
    assert len(graded.records()) == len(graded.rows) and set(graded.records()[0]) >= {"id", "label", "score %"}


def test_the_chinese_table_names_columns_labels_and_bands_in_chinese(graded) -> None:  # type: ignore[no-untyped-def]
    en, zh = graded.records("en"), graded.records("zh")
    assert list(en[0]) == ["id", "language", "label", "article's points", "score %", "band", "wrong claims"]
    assert list(zh[0]) == ["id", "语言", "人工标签", "讲出原文要点", "得分 %", "评分档", "错误说法"]
    for row_en, row_zh, row in zip(en, zh, graded.rows, strict=True):
        assert row_en["label"] == row.answer.label and row_en["band"] == row.band  # English: the data's ids
        assert row_zh["id"] == row.answer.id and row_zh["得分 %"] == row.percent
        assert row_zh["讲出原文要点"] == ("是" if row.answer.article_points else "否")
    names = {row.answer.label: r["人工标签"] for row, r in zip(graded.rows, zh, strict=True)}
    assert names["strong"] == "出色" and names["fluent_wrong"] == "通顺但说反" and names["negated"] == "否定"
    assert {r["评分档"] for r in zh} <= {"出色", "合格", "较弱"}


def test_ranks_share_ties() -> None:
    assert ranks([10, 20, 20, 5]) == [2.0, 3.5, 3.5, 1.0]


@pytest.mark.parametrize(("x", "y"), [([1, 2, 3, 4], [1, 3, 2, 4]), ([0, 0, 1, 2, 2, 3], [5, 1, 2, 2, 9, 7]),
                                      ([3, 3, 3, 0], [1, 2, 3, 4])])
def test_spearman_is_the_pearson_correlation_of_pandas_ranks(x: list[int], y: list[int]) -> None:
    assert spearman(x, y) == pytest.approx(pd.Series(x).rank().corr(pd.Series(y).rank()))  # Pearson of ranks


def test_kendall_tau_b_by_hand() -> None:
    assert kendall_tau([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    # pairs of (1,1,2) vs (1,2,3): concordant (1,2)->… one tie in x: (nc - nd) / sqrt((n0 - n1)(n0 - n2))
    assert kendall_tau([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / (2 * 3) ** 0.5)
    assert kendall_tau([1, 1], [2, 2]) == 0.0
