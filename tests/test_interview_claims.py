"""The grader checks claims, not words: the failures issue 24 lists, one test each.

A fluent answer that argues every point the wrong way must not outscore a plain correct one; contrast and
negation scope must be read in both languages; the synonym table must cover the plain phrasings.
"""

from __future__ import annotations

import pytest

from agentloops.interview import POINTS, grade
from agentloops.interview import grader as grader_module
from agentloops.interview.content import calibration

FLUENT_WRONG = (
    "A step cap is the real fix here, because a loop that cannot run past ten steps cannot run forever. I would trust "
    "the model when it stops calling tools, since it knows better than any rule when the task is complete. I keep one "
    "global budget of 10 steps for every task, so the behaviour is predictable across the whole system. When a tool "
    "fails I retry every error the same way, because a uniform policy is simpler to reason about. And when the cap is "
    "hit I return the last text the model produced, so the user always gets an answer.")
PLAIN_RIGHT = (
    "Setting max steps only limits the damage, it doesn't explain the loop. I would make sure the system has a real "
    "definition of when the task is finished, and check it, because the model stopping is not proof it's done. I'd "
    "also keep track of what's already been done so the agent doesn't repeat lookups. And I would cap how long and "
    "how much money a job can spend, not only the number of steps, with different limits for different kinds of "
    "tasks. If a tool fails I'd look at why before retrying.")


def _labelled(label: str) -> list[str]:
    return [a.text for a in calibration().answers if a.label == label]


def test_a_fluent_wrong_answer_scores_below_a_plain_right_one_and_below_the_scripts() -> None:
    from agentloops.interview import TWO_MINUTES

    wrong, right = grade(FLUENT_WRONG), grade(PLAIN_RIGHT)
    assert wrong.percent < right.percent < grade(TWO_MINUTES).percent
    assert wrong.band == "weak" and right.band in ("adequate", "strong")


def test_the_feedback_names_every_wrong_claim() -> None:
    result = grade(FLUENT_WRONG)
    assert {key for key, _ in result.wrong} == {"cap_is_the_fix", "trust_the_stop", "one_budget_for_all",
                                                 "retry_everything", "last_text_at_cap"}
    assert "wrong" in result.flags
    text = str(result)
    assert "a step cap is the fix" in text and "return the last text when the cap is hit" in text
    assert "A cap only limits the damage" in text  # and says why it is wrong


@pytest.mark.parametrize(("sentence", "claim"), [
    ("Raising the maximum number of steps usually fixes it, because tasks need room.", "cap_is_the_fix"),
    ("The model decides when it is done, so we stop when it says so.", "trust_the_stop"),
    ("When a tool fails I retry every error the same way, because it is simpler.", "retry_everything"),
    ("I reset the retry counter whenever we switch to a fallback tool, so it gets a fair chance.", "reset_on_fallback"),
    ("At the limit we return whatever text we have, so the user is not left empty-handed.", "last_text_at_cap"),
    ("I keep one budget for all tasks, because a single number is easy to explain.", "one_budget_for_all"),
    ("最大步数才是真正的解决办法，因为步数有上限就不会无限跑。", "cap_is_the_fix"),
    ("模型不再调用工具就说明任务完成了，因为它最了解任务。", "trust_the_stop"),
    ("切换到备用工具时把重试计数清零，这样备用工具有公平的机会。", "reset_on_fallback"),
    ("到了上限就把模型最后一段文本返回给用户，保证总有答案。", "last_text_at_cap"),
    ("所有任务统一用 10 步的预算，这样系统行为一致。", "one_budget_for_all"),
    ("所有错误都统一重试，因为一套策略最简单。", "retry_everything"),
])
def test_a_common_wrong_claim_subtracts(sentence: str, claim: str) -> None:
    result = grade(sentence)
    assert claim in {key for key, _ in result.wrong}
    total = sum(r.score for r in result.core)
    assert result.score == round(max(0.0, total - grader_module.WRONG_PENALTY * len(result.wrong)), 3)


@pytest.mark.parametrize(("sentence", "point", "concept"), [
    ("The system checks the evidence rather than trusting the model's stop.", "completion",
     "no tool calls is only a claim"),
    ("让系统去核对，而不是模型说做完就算做完。", "completion", "no tool calls is only a claim"),
    ("预算按任务类型从实测运行里定，不背固定数字。", "budgets", "sized per task type, with a basis"),
    ("We never reset the retry count when we switch to a backup tool, because that hides a storm.", "budgets",
     "one shared retry budget"),
    ("I don't retry every error the same way, because a permission denial never heals.", "errors",
     "classifies tool results"),
])
def test_a_rejected_wrong_claim_counts_as_the_concept_it_contradicts(sentence: str, point: str, concept: str) -> None:
    result = grade(sentence)
    assert not result.wrong and concept in dict(result.get(point).found), result
    assert "negated" not in result.flags


@pytest.mark.parametrize(("sentence", "point", "concept"), [
    ("If the user never gave us the order number, ask them rather than guess.", "errors",
     "asks the user for a missing parameter"),
    ("如果用户没给订单号，就问他，因为猜测会让错误传下去。", "errors", "asks the user for a missing parameter"),
    ("A run that cannot finish ends as partially completed, so the user knows what is missing.", "statuses",
     "names several endings"),
    ("逐轮读轨迹，看哪一轮没有改变状态，再修根因。", "state", "each turn must change the state"),
    ("超时、参数缺失和权限拒绝分别进入重试、澄清和停止，因为原因不同。", "errors",
     "asks the user for a missing parameter"),  # 分别 is "each", not 别 "don't"
])
def test_a_negation_inside_a_condition_or_a_description_rejects_nothing(sentence: str, point: str,
                                                                        concept: str) -> None:
    result = grade(sentence)
    assert concept in dict(result.get(point).found) and not result.get(point).negated, result


@pytest.mark.parametrize(("sentence", "point"), [
    ("Replaying the trace is never worth it, since models are random.", "traces"),
    ("Per-task budgets are pointless, and I keep it simple.", "budgets"),
    ("Classifying errors is not necessary, so I keep one branch.", "errors"),
    ("故障注入从来不值得做，因为太麻烦。", "traces"),
    ("错误分类没有必要，统一处理就行。", "errors"),
])
def test_a_negation_after_the_term_rejects_it(sentence: str, point: str) -> None:
    result = grade(sentence)
    assert result.get(point).negated and not result.get(point).found, result
    assert "negated" in result.flags


@pytest.mark.parametrize(("sentence", "point", "kept"), [
    ("It is not the cap but a completion condition that ends the run, because the model may stop early.",
     "completion", "a checkable completion condition"),
    ("不是调大上限，而是检查完成条件，因为模型会提前停。", "completion", "a checkable completion condition"),
    ("与其把上限调小，不如定义完成条件，因为模型会乱停。", "completion", "a checkable completion condition"),
    ("We keep a retry budget rather than a bigger cap, because fallbacks multiply retries.", "budgets",
     "one shared retry budget"),
])
def test_contrast_ends_a_negations_reach(sentence: str, point: str, kept: str) -> None:
    result = grade(sentence)
    assert kept in dict(result.get(point).found) and not result.get(point).negated, result


def test_rather_than_rejects_what_follows_it() -> None:
    result = grade("We trust the completion condition rather than a retry budget, because budgets get spent.")
    assert result.get("budgets").negated and "one shared retry budget" not in dict(result.get("budgets").found)


@pytest.mark.parametrize(("sentence", "point", "concept"), [
    ("I cap how long and how much money a job can spend, because slow tools burn both.", "budgets",
     "budgets beyond steps"),
    ("I keep a record of every round, so a loop shows where it began.", "traces", "a structured trace per turn"),
    ("After a fix I play the run back, so I see the same inputs again.", "traces", "replays the same trace"),
    ("时间和 Token 都有上限，总次数要有个数，因为重试也要花钱。", "budgets", "budgets beyond steps"),
])
def test_the_synonym_table_covers_plain_words(sentence: str, point: str, concept: str) -> None:
    assert concept in dict(grade(sentence).get(point).found)


def test_a_wrong_claim_described_as_a_cause_is_not_the_candidates() -> None:
    result = grade("Loops run on because nothing checks what done means, or every error is retried.")
    assert not result.wrong
    assert grade("什么错都重试，所以不会停。").wrong and not grade("不停多半是因为什么错都重试。").wrong


def test_every_wrong_claim_names_a_concept_of_its_point_and_says_why() -> None:
    claims = [(p, c) for p in POINTS for c in p.wrong_claims]
    assert len(claims) >= 10
    for point, claim in claims:
        assert point.concept(claim.corrects) and claim.why.en and claim.why.zh and claim.patterns.en
        assert claim.patterns.zh, claim.key


@pytest.mark.parametrize(("share", "band"), [(0.0, "weak"), (0.2999, "weak"), (0.3, "adequate"),
                                             (0.6499, "adequate"), (0.65, "strong"), (1.0, "strong")])
def test_the_bands(monkeypatch: pytest.MonkeyPatch, share: float, band: str) -> None:
    result = grade("We retry.")
    monkeypatch.setattr(type(result), "score", property(lambda self: share * len(self.core)))
    assert grader_module.BANDS.adequate == 0.3 and grader_module.BANDS.strong == 0.65
    assert result.band == band


def test_grading_a_follow_ups_points_only() -> None:
    result = grade("I fingerprint each action by tool and arguments, so the same call with nothing new stops early.",
                   ("progress",))
    assert [r.point.key for r in result.results] == ["progress"] and result.percent == 100
    assert "short" not in result.flags  # a follow-up's answer is short by design
    with pytest.raises(Exception, match=r"grade: points \['vibes'\]; expected keys among: fuse"):
        grade("x", ("vibes",))
