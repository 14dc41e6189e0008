"""The mock interview, driven without a browser: seeded order, a timer per answer, a grade per answer, a summary."""

from __future__ import annotations

import pytest

from agentloops.interview import FOLLOW_UPS, QUESTION, DrillError, mock_interview
from agentloops.interview.content import exemplars
from agentloops.interview.mock import FOLLOW_UP_TARGET_S, MAIN_TARGET_S, plan


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def _strong(key: str, language: str = "en") -> str:
    item = next(s for s in exemplars().sets if s.question == key and s.language == language)
    return item.exemplars[2].text


def test_the_same_seed_asks_the_same_follow_ups_in_the_same_order() -> None:
    orders = {seed: [a.key for a in plan(seed, 4)] for seed in range(6)}
    assert all(orders[seed] == [a.key for a in plan(seed, 4)] for seed in orders)
    assert len({tuple(o) for o in orders.values()}) > 1  # the seed matters
    assert all(o[0] == "main" and len(set(o)) == 5 for o in orders.values())
    assert {k for o in orders.values() for k in o[1:]} <= {f.key for f in FOLLOW_UPS}


@pytest.mark.parametrize("bad", [-1, 7, True, "2"])
def test_a_follow_up_count_out_of_range_is_refused(bad: object) -> None:
    with pytest.raises(DrillError, match=r"mock_interview: follow_ups=.*; expected 0 to 6"):
        plan(0, bad)  # type: ignore[arg-type]


def test_a_whole_interview_times_and_grades_every_answer() -> None:
    clock = Clock()
    mock = mock_interview(seed=3, follow_ups=2, clock=clock, language="en")
    assert mock.current is not None and QUESTION in mock.question.value and "1 of 3 · target 120 s" in mock.question.value
    assert mock.answers == [] and mock.result.value == ""  # nothing graded before Submit
    clock.now += 100
    mock.answer.value = _strong("main")
    mock.submit.click()
    first = mock.answers[0]
    assert first.seconds == 100 and first.within and first.asked.target_s == MAIN_TARGET_S
    assert first.grade.band == "strong" and "100 s of a 120 s target" in mock.result.value
    assert mock.answer.value == "" and "2 of 3" in mock.question.value
    for key in [a.key for a in mock.questions[1:]]:
        clock.now += 60
        answered = mock.submit_answer(_strong(key))
        assert answered is not None and answered.seconds == 60 and not answered.within
        assert answered.asked.target_s == FOLLOW_UP_TARGET_S
        assert {r.point.key for r in answered.grade.results} == set(answered.asked.points or ())
    assert mock.done and mock.submit.disabled and mock.submit_answer("more") is None
    summary = mock.summary()
    assert set(summary.made) | set(summary.missed) == {"fuse", "completion", "state", "errors", "budgets",
                                                        "progress", "statuses", "traces"}
    assert not set(summary.made) & set(summary.missed) and len(summary.made) >= 6
    assert "Mock interview:" in mock.summary_view.value and "over" in mock.question.value


def test_the_summary_lists_what_a_weak_interview_missed_and_its_wrong_claims() -> None:
    mock = mock_interview(seed=0, follow_ups=1, clock=Clock(), language="en")
    mock.submit_answer("A step cap is the real fix, because then it cannot run forever.")
    mock.submit_answer("")
    summary = mock.summary()
    assert summary.made == [] and "completion" in summary.missed and summary.wrong == ["cap_is_the_fix"]
    assert "Wrong claims: a step cap is the fix" in str(summary)


def test_start_again_asks_the_same_questions() -> None:
    mock = mock_interview(seed=5, follow_ups=3, clock=Clock(), language="en")
    order = [a.key for a in mock.questions]
    mock.submit_answer("We replay the trace, because it shows the loop.")
    mock.restart.click()
    assert mock.answers == [] and [a.key for a in mock.questions] == order and not mock.submit.disabled


def test_the_chinese_interview_asks_in_chinese() -> None:
    mock = mock_interview(seed=1, follow_ups=1, clock=Clock(), language="zh")
    assert "你的 Agent" in mock.question.value and mock.submit.description == "提交回答"
    mock.submit_answer(_strong("main", "zh"))
    assert "第 2 题，共 2 题 · 目标 45 秒" in mock.question.value
