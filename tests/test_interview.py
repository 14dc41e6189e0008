"""The interview drill: timed answers, follow-ups backed by runs, the framework fuses, the timer, and a grader
that a keyword list, a negated answer, a copied question or a repeated point cannot game cheaply."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentloops import interview
from agentloops.errors import UsageError
from agentloops.interview import (
    EVIDENCE,
    FOLLOW_UPS,
    FRAMEWORK_FUSES,
    HEURISTIC_NOTE,
    POINTS,
    THIRTY_SECONDS,
    TWO_MINUTES,
    DrillError,
    chinese,
    followups,
    grade,
    grader,
    negation,
    reading,
)

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
DRILL = NOTEBOOKS / "17-interview-drill.ipynb"
CORE = [p.key for p in POINTS if p.core]


# --------------------------------------------------------------------------- answers written for these tests

PLAIN_EN = [
    # jargon-free, sound
    ("The limit on steps only stops the bleeding, so I would find out why it keeps going. First I write down what "
     "finished means for each kind of job and have the code check it, because the model saying it is done is just "
     "its opinion. I keep a separate record of what has been done and what is still open, and each round has to add "
     "something new to it. When a tool fails I look at why: if it timed out I try again a couple of times from one "
     "allowance for the whole job, if something is missing I ask the person, and if access is refused I stop. "
     "Each kind of job also gets its own limits on time, tokens and tool calls, based on how long normal runs take. "
     "If the same call with the same inputs comes back and nothing has changed, I stop early, but a second try "
     "after a timeout is fine. When it stops I tell the user what got done and what is missing, and I log the "
     "reason for the team. I also log every round so I can play it back after a fix and compare before and after."),
    ("Capping the iterations is a last resort, not the fix, so my first question is what causes the loop. I make "
     "the system check a concrete definition of done, and it checks that against real evidence such as a source, "
     "because a model that stops calling tools may simply be guessing. Progress lives in its own checklist outside "
     "the chat, so every step must change that checklist or it counts as wasted. Failures are sorted by kind: "
     "a temporary outage gets a limited number of retries, a missing order number becomes a question to the "
     "customer, and a refused permission ends the run. Time, tokens and calls each get a limit per kind of task, "
     "set from measured runs. When the agent repeats the same call and nothing changed, it stops before the "
     "limit, while a retry after a transient failure is allowed. It ends in an honest status, such as partly "
     "done or waiting for the user, and I keep a log of each step so I can replay the run when I fix something."),
]
HANS = [
    ("最大步数只是止损的保险丝，所以我会先找根因。每种任务都要定义完成条件，系统用工具证据来验证，因为模型不再调用工具"
     "只是它自己的判断。我会在对话之外单独维护任务状态，记录已完成和还缺什么，每轮都要让状态有新变化，否则就算没有进展。"
     "工具出错时先看错误类型：超时就在统一的重试预算内重试，缺少参数就询问用户，权限拒绝就停止。耗时、Token 和工具调用"
     "都按任务类型设置预算，依据是正常任务的分布。如果同一个工具用相同参数重复调用而状态没有变化，就提前停止，但超时后的"
     "合理重试要放行。结束时要区分部分完成、等待用户和转人工，给用户说明完成了什么，同时给系统留下结构化记录。每轮都记录"
     " Trace，修复后用同一条轨迹回放，再跑故障注入回归。"),
    ("只设循环次数治标不治本，因为它不解释 Agent 为什么不停。我会先把业务完成条件写清楚，模型说完成了也要核对来源，"
     "这样才算真的完成。任务状态要独立维护，每轮都看有没有新增信息，否则说明在原地打转。错误要分流：短暂故障在有限重试"
     "内再试，参数缺失就向用户确认，没有权限就停下并说明原因。预算不只是步数，还包括耗时、成本和调用次数，要按任务类型"
     "根据真实任务统计来定。用工具名和规范化参数生成指纹来检测重复，同时允许合理重试。停止时告诉用户已完成和还缺的部分，"
     "系统记录停止原因，方便统计和回放，修改前后对比轨迹差异。"),
]
HANT = [
    ("最大步數只是止損的保險絲，所以我會先找根因。每種任務都要定義完成條件，系統用工具證據來驗證，因為模型不再調用工具"
     "只是它自己的判斷。我會在對話之外單獨維護任務狀態，記錄已完成和還缺什麼，每輪都要讓狀態有新變化，否則就算沒有進展。"
     "工具出錯時先看錯誤類型：超時就在統一的重試預算內重試，缺少參數就詢問用戶，權限拒絕就停止。耗時、Token 和工具調用"
     "都按任務類型設定預算，依據是正常任務的分佈。如果同一個工具用相同參數重複調用而狀態沒有變化，就提前停止，但超時後的"
     "合理重試要放行。結束時要區分部分完成、等待用戶和轉人工，給用戶說明完成了什麼，同時給系統留下結構化記錄。每輪都記錄"
     " Trace，修復後用同一條軌跡回放，再跑故障注入回歸。"),
    ("只設迴圈次數是治標不治本，因為它沒有解釋 Agent 為什麼停不下來。我會先把業務完成條件寫清楚，模型說完成了也要核對"
     "來源，這樣才算真的完成。任務狀態要獨立維護，每一輪都看有沒有新增資訊，否則就是在原地打轉。錯誤要分流：短暫故障在"
     "有限重試內再試，參數缺失就向使用者確認，沒有權限就停下並說明原因。預算不只是步數，還包括耗時、成本和調用次數，要"
     "按任務類型根據真實任務統計來定。用工具名和規範化參數產生指紋來偵測重複，同時允許合理重試。停止時告訴使用者已完成"
     "和還缺的部分，系統記錄停止原因，方便統計和回放，修改前後對比軌跡差異。"),
]
MIXED = [
    ("Max steps 只是保险丝，所以要找 root cause。每个 task type 都要有 completion condition，系统用 evidence 验证，"
     "因为模型不再调用工具只是 claim。Task state 要在对话之外单独维护，每轮都要有状态变化。Tool error 要分流：timeout "
     "就在统一的 retry budget 内重试，缺少参数就问用户，permission denied 就停止。相同参数的重复调用没有新信息就提前停止，"
     "但超时后的合理重试要放行。停止时区分部分完成和等待用户，给用户说明，并留下结构化记录。每轮记录 trace，修复后 replay。"),
    ("I treat the step cap as a fuse, because it only limits damage. 我会为每种任务定义完成条件，并用证据验证，因为模型说"
     "完成只是信号。I keep a task state outside the transcript so every turn has to change it. 超时在统一的重试预算内重试，"
     "缺少参数就询问用户，权限拒绝就停止。If the same call repeats with the same arguments and nothing changed, it stops as "
     "no progress, but a retry after a timeout is allowed. 结束时区分部分完成和等待用户，并给用户可行动的说明。Every turn "
     "writes a trace so I can replay it after a fix."),
]
KEYWORDS_EN = [
    "max steps, completion condition, task state, retry budget, fingerprint, trace, replay, waiting_for_user, timeout, permission denied, fault injection",
    "Fuse. Root cause. Completion condition. Evidence. Task state. State version. Timeout. Retry budget. Fingerprint. Normalized arguments. Waiting for user. Partially completed. Trace. Replay. Regression.",
    "Use max steps, completion conditions, task state, a retry budget, fingerprints, traces, replay and waiting_for_user statuses.",
    "I'd mention: step cap fuse root cause completion condition verify evidence task state outside transcript timeout retry budget per task type fingerprint tool name normalized arguments legitimate retry waiting for user partially completed trace replay regression",
]
KEYWORDS_HANS = [
    "最大步数、完成条件、任务状态、重试预算、指纹、Trace、回放、等待用户、超时、权限拒绝、故障注入",
    "保险丝，根因，完成条件，证据，任务状态，状态版本，超时，重试预算，指纹，规范化参数，等待用户，部分完成，Trace，回放，回归",
    "关键词：最大步数 保险丝 根因 业务完成条件 验证 任务状态 状态变化 错误分类 超时 询问用户 权限 重试预算 任务类型 指纹 合理重试 部分完成 转人工 结构化 轨迹 回放 故障注入",
]
KEYWORDS_HANT = [
    "最大步數、完成條件、任務狀態、重試預算、指紋、Trace、回放、等待用戶、超時、權限拒絕、故障注入",
    "保險絲，根因，完成條件，證據，任務狀態，狀態版本，超時，重試預算，指紋，規範化參數，等待用戶，部分完成，軌跡，回放，回歸",
]
NEGATED_EN = [
    ("I would never use a retry budget. There is no need for completion conditions or task state. Don't bother with "
     "fingerprints or traces; replaying runs is pointless. Just set max_steps to 50."),
    ("You do not need a completion condition, and you should not keep any task state outside the transcript. I "
     "wouldn't classify errors or ask the user anything. Budgets per task type are overkill. Never fingerprint the "
     "actions, never write a trace, and skip replay and fault injection. Raise the step cap until it stops."),
    ("Without any completion check, without task state and without a retry budget the agent still works fine, "
     "since I don't track what is done. I'd avoid fingerprints, avoid traces and avoid replay."),
]
NEGATED_ZH = [
    "不需要重试预算，也不用完成条件。没必要维护任务状态，不要做指纹，也不用记录 Trace 或回放。设置最大步数就够了。",
    ("我不会定义完成条件，也不会单独维护任务状态。错误不用分类，不用询问用户。不需要按任务类型配置预算，不用统一重试预算。"
     "不做指纹检测重复，不记录轨迹，也不做回放和故障注入。把最大步数调大就行。"),
    "不需要重試預算，也不用完成條件。沒必要維護任務狀態，不要做指紋，也不用記錄軌跡或回放。設定最大步數就夠了。",
]
QUESTION_COPIES = [
    "Your agent keeps calling tools and never stops. What do you do?",
    "your agent keeps calling tools and never stops what do you do",
    "你的 Agent 如果一直调用工具不结束，怎么办？",
    "你的 Agent 如果一直調用工具不結束，怎麼辦？",
    "Your agent keeps calling tools and never stops. What do you do? 你的 Agent 如果一直调用工具不结束，怎么办？",
]
REPEATED_ONE_POINT = [
    " ".join(["I keep one retry budget for the whole task, because otherwise fallbacks multiply the retries."] * 12),
    " ".join(["A step cap is a fuse, so it only limits the damage.", "The step cap is a fuse, so it limits damage.",
              "A step cap is just a fuse because it cannot fix the cause."] * 5),
    "".join(["超时就在统一的重试预算内重试，因为否则备用工具会放大重试次数。"] * 10),
]

GAMED_EXTRA = [
    # a keyword list with a verb per item, no reasons
    "Use a fuse. Use a completion condition. Use task state. Use a retry budget. Use fingerprints. Use traces. "
    "Use replay. Use statuses.",
    # every point stuffed into one sentence with a connective
    "Because of the step cap fuse, root cause, completion condition, evidence, task state, versioned state, "
    "timeouts, retry budget, task types, fingerprints, legitimate retries, waiting for the user, traces and replay, "
    "the agent works.",
]


@pytest.fixture
def no_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Grade one-sentence answers without the length floor, to see a single rule at work."""
    monkeypatch.setattr(grader, "LENGTH_FLOOR", 1)


def _percent(answer: str) -> int:
    return grade(answer).percent


# --------------------------------------------------------------------------- the gaming cases, several answers each

LOW, WELL = 25, 75
"""An answer scores low at or under 25 %, and well at or above 75 %."""


@pytest.mark.parametrize("answer", KEYWORDS_EN + KEYWORDS_HANS + KEYWORDS_HANT)
def test_a_keyword_list_scores_low_in_every_script(answer: str) -> None:
    result = grade(answer)
    assert result.percent <= LOW and not result.covered and not result.partly
    assert "keywords" in result.flags


@pytest.mark.parametrize("answer", GAMED_EXTRA)
def test_a_list_dressed_as_sentences_scores_low(answer: str) -> None:
    assert _percent(answer) <= LOW


@pytest.mark.parametrize("answer", NEGATED_EN + NEGATED_ZH)
def test_an_answer_that_negates_the_points_scores_low(answer: str) -> None:
    result = grade(answer)
    assert result.percent <= LOW and "negated" in result.flags
    assert sum(len(r.negated) for r in result.results) >= 3


@pytest.mark.parametrize("answer", QUESTION_COPIES)
def test_a_copy_of_the_question_is_not_an_answer(answer: str) -> None:
    result = grade(answer)
    assert not result.attempted and result.score == 0 and result.flags == ("question",)
    assert "repeats the question" in result.verdict() or "重复了问题" in result.verdict() or "重複了問題" in result.verdict()


def test_the_question_followed_by_an_answer_grades_the_answer_only() -> None:
    alone, after = grade(PLAIN_EN[1]), grade(interview.QUESTION + " " + PLAIN_EN[1])
    assert after.score == alone.score and after.attempted


@pytest.mark.parametrize("answer", REPEATED_ONE_POINT)
def test_repeating_one_point_scores_low(answer: str) -> None:
    result = grade(answer)
    assert result.percent <= LOW and "repeated" in result.flags
    assert len(result.covered) + len(result.partly) <= 2


def test_a_repeated_sentence_counts_once() -> None:
    once = "I keep one retry budget for the whole task, because otherwise fallbacks multiply the retries."
    assert grade(once * 1).score == grade(" ".join([once] * 6)).score
    assert grade(" ".join([once] * 6)).words == grade(once).words


@pytest.mark.parametrize("answer", PLAIN_EN)
def test_a_sound_answer_in_plain_words_scores_well(answer: str) -> None:
    result = grade(answer)
    assert result.percent >= WELL and not result.missed and result.language == "en"
    assert "keywords" not in result.flags and "negated" not in result.flags


@pytest.mark.parametrize("answer", HANS)
def test_a_sound_simplified_chinese_answer_scores_well(answer: str) -> None:
    result = grade(answer)
    assert result.percent >= WELL and result.language == "zh-Hans" and not result.missed


@pytest.mark.parametrize("answer", HANT)
def test_a_sound_traditional_chinese_answer_scores_well(answer: str) -> None:
    result = grade(answer)
    assert result.percent >= WELL and result.language == "zh-Hant" and not result.missed


def test_traditional_is_graded_like_its_simplified_original() -> None:
    simplified, traditional = grade(HANS[0]), grade(HANT[0])
    assert [r.status for r in traditional.results] == [r.status for r in simplified.results]
    assert ("names the step cap", "最大步數") in traditional.get("fuse").found  # the learner's own characters


@pytest.mark.parametrize(("answer", "language"), [(MIXED[0], "zh-Hans"), (MIXED[1], "en")])
def test_a_mixed_language_answer_scores_well_and_is_advised_in_its_main_language(answer: str, language: str) -> None:
    result = grade(answer)
    assert result.percent >= WELL and result.language == language


def test_our_own_two_minute_answer_covers_every_point() -> None:
    result = grade(TWO_MINUTES)
    assert result.covered == CORE and result.flags == ()


def test_the_thirty_second_answer_names_most_points_but_explains_few() -> None:
    result = grade(THIRTY_SECONDS)
    assert len(result.missed) <= 2 and result.percent < grade(TWO_MINUTES).percent
    assert "enumeration" in result.flags


# --------------------------------------------------------------------------- each rule, and what it catches


def test_a_negation_removes_the_concept_it_reaches() -> None:
    said, denied = grade("We use a retry budget."), grade("We never use a retry budget.")
    assert ("one shared retry budget", "retry budget") in said.get("budgets").found
    assert not denied.get("budgets").found and denied.get("budgets").negated == ("retry budget",)
    zh = grade("我们不需要重试预算。")
    assert not zh.get("budgets").found and "重试预算" in zh.get("budgets").negated


def test_a_negation_stops_at_its_clause() -> None:
    result = grade("The cap is not the fix, but a completion condition is, because it checks the evidence.")
    assert result.get("completion").found and not result.get("completion").negated
    for answer in ("Never guess, keep a retry budget.", "Do not guess but keep a retry budget.", "不要猜，用重试预算。",
                   "不要猜而是用重试预算。"):
        assert grade(answer).get("budgets").found and not grade(answer).get("budgets").negated, answer
    kept, denied = grade("不要只看步数上限，而是检查完成条件。"), grade("不要检查完成条件。")
    assert kept.get("completion").found and not kept.get("completion").negated
    assert denied.get("completion").negated == ("完成条件",) and not denied.get("completion").found


def test_a_negation_reaches_only_a_few_words() -> None:
    near = grade("We never set any retry budget.")
    far = grade("We never let the model alone decide things, and I keep a retry budget per task.")
    assert near.get("budgets").negated and not far.get("budgets").negated


def test_a_negation_that_names_a_cause_does_not_negate() -> None:
    result = grade("Loops run on because there is no completion condition, so I define one per task type.")
    assert result.get("completion").found and not result.get("completion").negated


def test_a_negation_inside_a_key_term_negates_nothing_after_it() -> None:
    result = grade("A reply without tool calls is only a claim, so the system verifies it against the state.")
    concepts = dict(result.get("completion").found)
    assert {"no tool calls is only a claim", "verifies against evidence"} <= set(concepts)
    assert concepts["no tool calls is only a claim"] in {"without tool calls", "claim"}
    assert not result.get("completion").negated


def test_a_point_needs_a_sentence_with_a_verb() -> None:
    fragment = grade("Completion condition, evidence.")
    sentence = grade("The system checks a completion condition and its evidence.")
    assert fragment.get("completion").status == "missed"
    assert sentence.get("completion").status == "partly"


def test_a_key_term_can_be_the_verb_when_the_sentence_has_a_subject() -> None:
    assert grade("We replay the trace.").get("traces").found
    assert grade("我们回放轨迹。").get("traces").found
    assert not grade("replay, trace").get("traces").found and not grade("回放、轨迹").get("traces").found


@pytest.mark.usefixtures("no_floor")
def test_a_point_is_covered_only_with_its_reason() -> None:
    plain = "The system checks a completion condition over the task state with evidence."
    reasoned = "The system checks a completion condition over the task state with evidence, because a claim is cheap."
    assert grade(plain).get("completion").status == "partly" and not grade(plain).get("completion").explained
    assert grade(reasoned).get("completion").status == "covered"


@pytest.mark.usefixtures("no_floor")
def test_one_concept_with_its_reason_is_partly_and_without_it_only_named() -> None:
    assert grade("The step cap stays, so runaway costs stay bounded.").get("fuse").status == "partly"
    assert grade("The step cap stays.").get("fuse").status == "named"


def test_a_sentence_naming_many_points_explains_none() -> None:
    three = ("The cap is a fuse, the completion condition is checked, and a retry budget is shared, because the "
             "loop must converge.")
    four = three.replace("shared,", "shared, traces are kept,")
    assert grade(three).get("completion").explained
    assert not grade(four).get("completion").explained and "enumeration" in grade(four).flags


def test_the_sentence_list_boundary_is_enumeration(monkeypatch: pytest.MonkeyPatch) -> None:
    three = ("The cap is a fuse, the completion condition is checked, and a retry budget is shared, because the "
             "loop must converge.")
    monkeypatch.setattr(grader, "ENUMERATION", 3)
    assert not grade(three).get("completion").explained


def test_the_length_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    answer = "The system checks a completion condition over the state with evidence, because a claim is cheap."
    words = grade(answer).words
    monkeypatch.setattr(grader, "LENGTH_FLOOR", words)
    assert "short" not in grade(answer).flags and grade(answer).get("completion").status == "covered"
    monkeypatch.setattr(grader, "LENGTH_FLOOR", words + 1)
    assert "short" in grade(answer).flags and grade(answer).get("completion").status == "partly"


def test_the_density_ceiling(monkeypatch: pytest.MonkeyPatch) -> None:
    answer = "The system checks a completion condition over the state with evidence, because a claim is cheap."
    density = grade(answer).density
    assert 0 < density < 1
    monkeypatch.setattr(grader, "LENGTH_FLOOR", 1)
    monkeypatch.setitem(grader.DENSITY_CEILING, "en", density)
    assert "keywords" not in grade(answer).flags
    monkeypatch.setitem(grader.DENSITY_CEILING, "en", density - 0.01)
    result = grade(answer)
    assert "keywords" in result.flags and result.get("completion").score == pytest.approx(0.1)


def test_density_counts_words_inside_key_terms() -> None:
    assert grade("We keep a retry budget.").density == pytest.approx(2 / 5)
    assert grade("我们有重试预算。").density == pytest.approx(4 / 7)


@pytest.mark.parametrize(("score", "status"), [(1.0, "covered"), (0.999, "partly"), (0.5, "partly"),
                                               (0.499, "named"), (0.001, "named"), (0.0, "missed")])
def test_status_thresholds(score: float, status: str) -> None:
    assert grader.status_of(score) == status


def test_the_score_is_the_sum_of_the_core_points() -> None:
    result = grade(PLAIN_EN[1])
    assert result.score == pytest.approx(sum(r.score for r in result.results if r.point.core))
    assert result.percent == round(100 * result.score / len(CORE))
    assert len(result.covered) + len(result.partly) + len(result.named) + len(result.missed) == len(CORE)


def test_a_cap_only_answer_is_called_out() -> None:
    result = grade("I'd set a maximum number of iterations, like 10, so it can't loop forever.")
    assert result.cap_only and result.percent <= LOW
    assert "names only the fuse" in result.verdict() and "what number, why" in result._repr_html_()
    assert not grade("I'd set max_steps to 10, and a retry budget so it can't loop forever.").cap_only


def test_evidence_spans_show_the_answers_own_words() -> None:
    result = grade("We Retry Timeouts within one shared budget, because the service may be back in a second.")
    assert ("retries transient failures", "Timeouts") in result.get("errors").found
    assert "<mark>Timeouts</mark>" in result._repr_html_() and "“Timeouts”" in str(result)


# --------------------------------------------------------------------------- advice in the answer's language

_HANT_ONLY = chinese.HANT_ONLY
_HANS_ONLY = chinese.HANS_ONLY


def _cjk(text: str) -> set[str]:
    return set(re.findall(r"[\u4e00-\u9fff]", text))


def test_english_answers_get_english_advice() -> None:
    text = str(grade(PLAIN_EN[1]))
    assert "points made with a reason" in text and not _cjk(text.split("add:")[1] if "add:" in text else "")


def test_simplified_answers_get_simplified_advice() -> None:
    result = grade(HANS[1][:120])
    text = str(result)
    assert result.verdict().startswith("8 个要点中") and "补充" in text and "这是启发式检查" in result._repr_html_()
    assert not (_cjk(text) & _HANT_ONLY)


def test_traditional_answers_get_traditional_advice() -> None:
    result = grade(HANT[1][:120])
    text = str(result)
    assert result.language == "zh-Hant" and result.verdict().startswith("8 個要點中") and "補充" in text
    assert "這是啟發式檢查" in result._repr_html_()
    advice = "".join(line for line in text.splitlines() if "補充" in line or "說明" in line or "!" in line)
    assert not (_cjk(advice) & _HANS_ONLY), _cjk(advice) & _HANS_ONLY


def test_every_chinese_message_has_a_traditional_rendering() -> None:
    said = [*interview.MESSAGES["zh"].values()]
    said += [p.title.zh for p in POINTS] + [p.advice.zh for p in POINTS]
    said += [c.name.zh for p in POINTS for c in p.concepts]
    said += [w.name.zh for p in POINTS for w in p.wrong_claims] + [w.why.zh for p in POINTS for w in p.wrong_claims]
    for text in said:
        assert not (_cjk(chinese.in_script(text, "zh-Hant")) & _HANS_ONLY), text


def test_folding_keeps_offsets() -> None:
    text = "權限拒絕就停止，重試預算統一核算。"
    assert len(interview.to_simplified(text)) == len(text) and interview.to_simplified(text) == "权限拒绝就停止，重试预算统一核算。"


@pytest.mark.parametrize(("answer", "language"), [("We retry.", "en"), ("我们重试。", "zh-Hans"),
                                                  ("我們重試。", "zh-Hant"), ("", "none"), ("12 34", "none")])
def test_language_detection(answer: str, language: str) -> None:
    assert grade(answer).language == language


# --------------------------------------------------------------------------- the grader never fails a learner


def test_the_grader_is_labelled_a_heuristic_everywhere() -> None:
    for result in (grade(TWO_MINUTES), grade(""), grade(NEGATED_EN[0]), grade(HANS[0]), grade(HANT[0])):
        assert result.say("heuristic") in str(result) and result.say("heuristic_label") in result._repr_html_()
    assert grade(HANT[0]).say("heuristic_label") == "這是啟發式檢查。"
    assert HEURISTIC_NOTE in str(grade("")) and "This is a heuristic." in grade("")._repr_html_()


@pytest.mark.parametrize("empty", ["", "   \n\t", None, ..., b"", "。。。", "..."])
def test_an_empty_answer_is_not_attempted(empty: object) -> None:
    result = grade(empty)
    assert not result.attempted and result.score == 0 and result.verdict().startswith("Not attempted")
    assert not result.cap_only and all(r.status == "missed" for r in result.results)


@pytest.mark.parametrize("odd", [b"\xff\xfe timeout \x80", 12345, 3.5, ["fuse", b"retry budget", None],
                                 {"answer": "trace"}, "x" * 200_000, "\u0000\ud800 replay", "不" * 500])
def test_odd_input_never_raises(odd: object) -> None:
    result = grade(odd)
    assert isinstance(str(result), str) and result._repr_html_().startswith("<div")
    assert len(result.text) <= grader.MAX_CHARS


def test_an_object_whose_str_fails_is_not_attempted() -> None:
    class Broken:
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert not grade(Broken()).attempted


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_any_text_grades_without_raising(text: str) -> None:
    result = grade(text)
    assert 0 <= result.score <= len(CORE) and 0 <= result.density <= 1
    assert all(0 <= r.score <= 1 for r in result.results)
    str(result)
    result._repr_html_()


def test_html_never_carries_the_learners_markup() -> None:
    html = grade("<script>alert(1)</script> We replay the trace, because it shows the loop.")._repr_html_()
    assert "<script>" not in html and "replay" in html


def test_asking_for_an_unknown_point_names_the_known_ones() -> None:
    with pytest.raises(DrillError, match="no point 'vibes'; expected one of: fuse, completion"):
        grade(TWO_MINUTES).get("vibes")
    assert issubclass(DrillError, UsageError)


def test_importing_the_drill_imports_no_heavy_library() -> None:
    code = ("import sys, agentloops.interview as i; i.grade('We replay the trace.'); "
            "bad = [m for m in ('matplotlib', 'pandas', 'ipywidgets') if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------- the answers and the timer


def test_the_thirty_second_answer_is_at_most_80_words() -> None:
    assert interview.word_count(THIRTY_SECONDS) <= 80


def test_the_two_minute_answer_is_250_to_320_words() -> None:
    assert 250 <= interview.word_count(TWO_MINUTES) <= 320


def test_word_count_counts_words_and_chinese_characters() -> None:
    assert interview.word_count("Don't re-run the tool_call; 重试。") == 6
    assert interview.word_count("") == 0


@pytest.mark.parametrize(("seconds", "within"), [(29.9, True), (30.0, True), (30.1, False)])
def test_pace_is_within_the_target_up_to_the_target(seconds: float, within: bool) -> None:
    assert interview.pace(80, seconds, 30).within is within


def test_pace_measures_words_a_minute_and_what_to_cut() -> None:
    slow = interview.pace(80, 40, 30)
    assert slow.wpm == pytest.approx(120) and slow.words_to_cut() == 20
    assert "10 s over the 30 s target" in slow.verdict() and "cut about 20 words" in slow.verdict()
    assert interview.pace(80, 30, 30).words_to_cut() == 0
    assert "fast" in interview.pace(80, 20, 30).verdict() and "fast" not in interview.pace(80, 30, 30).verdict()
    assert interview.pace(10, 0, 30).wpm == 0


@pytest.mark.parametrize("bad", [(-1, 10, 30), (10, -1, 30), (10, 10, 0)])
def test_pace_rejects_nonsense(bad: tuple[int, float, float]) -> None:
    with pytest.raises(DrillError, match=r"pace: words=.*expected words and seconds of at least 0"):
        interview.pace(*bad)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_timer_times_a_spoken_answer_without_a_browser() -> None:
    clock = Clock()
    timer = interview.speaking_timer(clock=clock)
    assert timer.last is None and timer.stop() is None  # Stop before Start does nothing
    assert "78 words" in timer.text.value or f"{interview.word_count(THIRTY_SECONDS)} words" in timer.text.value
    timer.start_button.click()
    assert timer.start_button.disabled and not timer.stop_button.disabled
    clock.now += 33
    timer.stop_button.click()
    assert timer.last == interview.pace(interview.word_count(THIRTY_SECONDS), 33, 30)
    assert "3 s over the 30 s target" in timer.result.value and not timer.start_button.disabled


def test_the_timer_switches_scripts_and_targets() -> None:
    timer = interview.speaking_timer("2-minute answer", clock=Clock())
    assert timer.target() == (TWO_MINUTES, 120.0)
    timer.script.value = interview.OWN_WORDS
    timer.own.value = " ".join(["word"] * 100)
    assert timer.target()[1] == 30.0 and timer.own.layout.display is None
    timer.own.value += " word"
    assert timer.target()[1] == 120.0 and "101 words" in timer.text.value
    timer.script.value = "30-second answer"
    assert timer.own.layout.display == "none"


def test_the_timer_rejects_an_unknown_script() -> None:
    with pytest.raises(DrillError, match="script 'haiku' is unknown; expected one of: 30-second answer"):
        interview.speaking_timer("haiku")


def test_the_practice_box_grades_what_is_typed_and_what_is_clicked() -> None:
    box = interview.practice()
    assert not box.state.attempted and "heuristic" in box.result.value
    assert box.check("Set max_steps to 10.").cap_only
    box.answer.value = HANT[0]
    box.button.click()
    assert box.state.language == "zh-Hant" and "練習檢查" in str(box.state)
    assert "agentloops-practice-result" in box.result._dom_classes


def test_the_practice_box_asks_in_the_learners_language() -> None:
    """English: the question with the article's Chinese under it; the Chinese edition: the Chinese alone."""
    from agentloops.i18n import speaking

    with speaking("en"):
        english = interview.practice().question.value
    with speaking("zh"):
        chinese = interview.practice().question.value
    assert interview.QUESTION in english and interview.QUESTION_ZH in english
    assert interview.QUESTION_ZH in chinese and interview.QUESTION not in chinese


# --------------------------------------------------------------------------- follow-ups answered by runs


@pytest.mark.parametrize("number", range(1, len(FOLLOW_UPS) + 1))
def test_each_follow_up_is_shown_by_its_runs(number: int) -> None:
    answered = interview.follow_up(number)
    assert answered.holds, answered.failed()
    assert set(answered.runs) == set(FOLLOW_UPS[number - 1].scenarios) and len(answered.checks) >= 3
    assert f"Follow-up {number}" in str(answered) and "✓" in answered._repr_html_()


@dataclass
class FakeRun:
    """Just the public surface of a ControllerRun that the follow-ups read."""

    status: str
    code: str
    actions: list[str]
    message: str = ""
    record: dict[str, Any] = field(default_factory=dict)

    def user_message(self) -> str:
        return self.message

    def system_record(self) -> dict[str, Any]:
        return self.record


def _real(name: str) -> FakeRun:
    from agentloops.controller import run_scenario

    run = run_scenario(name)
    return FakeRun(run.status, run.code, list(run.actions), run.user_message(), run.system_record())


def _runner_with(name: str, **changes: Any) -> Any:
    return lambda scenario: replace(_real(scenario), **changes) if scenario == name else _real(scenario)


def _record_with(name: str, **changes: Any) -> dict[str, Any]:
    record = _real(name).record
    return {**record, **changes}


@pytest.mark.parametrize(("number", "scenario", "changes", "claim"), [
    (1, "order-missing-id", {"status": "failed_unrecoverable"}, "a run can end as waiting_for_user"),
    (1, "weather-cancelled", {"code": "budget:steps"}, "none of these endings is the step cap"),
    (2, "weather-timeout-once", {"status": "budget_exhausted"}, "a recoverable failure still succeeds"),
    (3, "weather-reask", {"actions": ["get_weather(city=Shanghai)"] * 2}, "the same call that brought nothing new"),
    (3, "weather-timeout-once", {"actions": ["get_weather(city=Beijing)", "answer"]}, "is a retry"),
    (4, "weather-early-claim", {"status": "succeeded"}, "the claim is not reported as success"),
    (4, "weather-early-claim", {"actions": ["get_weather(city=Shanghai)", "answer"]}, "claimed it was done"),
    (4, "weather-early-claim", {"message": "I could only partly finish this."}, "the user is told what is missing"),
    (5, "weather-timeout-always", {"code": "budget:steps"}, "retries stop when the shared retry budget"),
    (5, "weather-timeout-always", {"message": "Nothing was kept."}, "the verified result is kept"),
    (5, "refund-handoff", {"actions": ["issue_refund(order_id=A-1042, amount=25.0)", "retry:issue_refund("
                                       "order_id=A-1042, amount=25.0)"]}, "side effects goes to a person"),
    (6, "weather-no-state", {"actions": ["get_weather(city=Shanghai)", "get_weather(city=Beijing)"]},
     "where the loop began repeating"),
    (6, "weather-normal", {"actions": ["get_weather(city=Shanghai)", "get_weather(city=Shanghai)", "answer"]},
     "without a repeat"),
])
def test_a_run_that_contradicts_a_claim_fails_it(number: int, scenario: str, changes: dict[str, Any],
                                                  claim: str) -> None:
    answered = interview.follow_up(number, runner=_runner_with(scenario, **changes))
    assert not answered.holds and [c for c in answered.failed() if claim in c.claim], answered


@pytest.mark.parametrize(("number", "scenario", "budget", "claim"), [
    (2, "weather-normal", {"steps": 0}, "the happy path uses"),
    (3, "weather-reask", {"steps": 0}, "it stops before the step cap"),
    (5, "weather-timeout-always", {"retries": 1}, "retries stop when the shared retry budget"),
])
def test_a_budget_that_contradicts_a_claim_fails_it(number: int, scenario: str, budget: dict[str, int],
                                                    claim: str) -> None:
    left = {**_real(scenario).record["budgets_left"], **budget}
    answered = interview.follow_up(number, runner=_runner_with(scenario, record=_record_with(scenario,
                                                                                              budgets_left=left)))
    assert [c for c in answered.failed() if claim in c.claim], answered


@pytest.mark.parametrize("bad", [0, 7, "1", True, 1.0])
def test_asking_for_a_follow_up_that_does_not_exist(bad: Any) -> None:
    with pytest.raises(DrillError, match=r"follow_up: number .* is not a follow-up; expected 1 to 6"):
        interview.follow_up(bad)


def test_first_repeat_finds_the_first_repeated_action() -> None:
    assert followups._first_repeat(["a", "b", "a", "b"]) == 3
    assert followups._first_repeat(["a", "b"]) is None and followups._first_repeat([]) is None


@pytest.mark.parametrize("number", range(1, len(FOLLOW_UPS) + 1))
def test_each_follow_up_names_an_evidence_function_of_the_controller(number: int) -> None:
    import agentloops.controller as ctl

    assert callable(getattr(ctl, FOLLOW_UPS[number - 1].evidence))
    assert str(interview.evidence_for(number))


def test_status_scenarios_cover_every_stop_status() -> None:
    import agentloops.controller as ctl

    assert set(interview.STATUS_SCENARIOS) == set(ctl.STOP_STATUSES)


STATUS_PHRASES = {
    "succeeded": "completion condition", "partially_completed": "partial result",
    "waiting_for_user": "waiting for the user", "failed_unrecoverable": "unrecoverable failure",
    "system_failure": "system failure", "budget_exhausted": "other budgets", "no_progress": "no progress",
    "cancelled": "cancellation", "handed_off": "hand-off to a person",
}
"""How follow-up 1's answer names each stop status (a new status without a phrase fails the test below)."""


def test_follow_up_one_names_every_stop_status() -> None:
    import agentloops.controller as ctl

    assert set(STATUS_PHRASES) == set(ctl.STOP_STATUSES)
    answer = FOLLOW_UPS[0].answer
    assert [status for status, phrase in STATUS_PHRASES.items() if phrase not in answer] == []


def test_the_answers_say_which_version_a_fingerprint_uses_as_the_code_does() -> None:
    from agentloops.controller.stopping.progress import ProgressMonitor, fingerprint
    from agentloops.controller.task.state import TaskState

    state = TaskState("t", "goal", (), ("item",))
    state.record_failure("tool", "timeout", "no answer", 1)
    assert (state.version, state.progress_version) == (1, 0)  # a failure is a change, not progress
    monitor, fp = ProgressMonitor(), fingerprint("tool", {"x": 1}, state.progress_version)
    monitor.record(fp, 1, "timeout", new_observation=False)
    assert monitor.check(fp) is None  # the same fingerprint after a timeout is let through: a retry
    monitor.record(fp, 2, "not_found", new_observation=False)
    assert monitor.check(fp) is not None  # after any other fruitless outcome it is a repeat
    repeat_or_retry = FOLLOW_UPS[2].answer
    for text in (TWO_MINUTES, repeat_or_retry):  # the package's "progress version", in interview words
        assert "items" in text and "version" not in text
        assert re.search(r"failure (does not (move|change)|is not progress)", text), text
    assert "after a timeout" in repeat_or_retry and "retry budget" in repeat_or_retry


# --------------------------------------------------------------------------- frameworks, evidence, notebook


def test_three_frameworks_each_name_the_fuse_with_a_checked_version() -> None:
    assert [f.framework for f in FRAMEWORK_FUSES] == ["LangGraph", "OpenAI Agents SDK", "Pydantic AI"]
    for language in ("en", "zh"):  # the Chinese words name the same settings and exceptions
        settings_ = {f.framework: f.setting.said(language) for f in FRAMEWORK_FUSES}
        assert "recursion_limit" in settings_["LangGraph"] and "max_turns" in settings_["OpenAI Agents SDK"]
        assert "request_limit" in settings_["Pydantic AI"] and "tool_calls_limit" in settings_["Pydantic AI"]
        assert [re.search(r"[A-Z]\w+", f.raises.said(language)).group() for f in FRAMEWORK_FUSES] == [
            "GraphRecursionError", "MaxTurnsExceeded", "UsageLimitExceeded"]
    for fuse in FRAMEWORK_FUSES:
        assert re.fullmatch(r"\d+\.\d+\.\d+", fuse.version), fuse
        assert fuse.source and all(re.match(r"[\w/]+\.py:\d+", ref) for ref in fuse.source), fuse.source
    rows = interview.framework_rows("en")
    assert rows[0]["checked against"] == "langgraph 1.2.24" and len(rows) == 3
    assert rows[0]["one unit is"] == FRAMEWORK_FUSES[0].counts.en


def test_the_framework_table_is_chinese_in_the_chinese_edition() -> None:
    """Columns and words in Chinese; the versions and the source lines (data) are the English table's."""
    en, zh = interview.framework_rows("en"), interview.framework_rows("zh")
    assert list(zh[0]) == ["框架", "核对的版本", "设置", "默认值", "计一次的是", "撞上上限时", "源码出处"]
    for row_en, row_zh in zip(en, zh, strict=True):
        assert row_zh["框架"] == row_en["framework"] and row_zh["核对的版本"] == row_en["checked against"]
        assert row_zh["源码出处"] == row_en["read in"] and row_zh["计一次的是"] != row_en["one unit is"]


def test_six_follow_ups_and_six_pieces_of_evidence() -> None:
    assert len(FOLLOW_UPS) == 6 and len(EVIDENCE) == 6
    assert all(f.question_zh and f.answer for f in FOLLOW_UPS)
    import agentloops.controller as ctl

    assert [e.function for e in EVIDENCE] == ["completion_conditions", "budget_basis", "stop_statuses",
                                              "repeated_call_trace", "error_routing", "fault_regression"]
    assert all(callable(getattr(ctl, e.function)) for e in EVIDENCE)


def _cells(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else str(source)


@pytest.mark.parametrize("evidence", EVIDENCE, ids=[e.anchor for e in EVIDENCE])
def test_each_evidence_link_lands_on_the_cell_that_produces_it(evidence: interview.Evidence) -> None:
    cells = _cells(NOTEBOOKS / evidence.notebook)
    marker = f'<a id="{evidence.anchor}"></a>'
    index = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and marker in _source(c))
    assert f"### {evidence.heading.en}" in _source(cells[index])
    # a prediction may come first (the learner commits before the run is shown); the run is the next code cell
    following = next(c for c in cells[index + 1:] if c["cell_type"] == "code" and not _source(c).startswith("predict("))
    assert f"ctl.{evidence.function}(" in _source(following)
    assert evidence.link() in "".join(_source(c) for c in _cells(DRILL) if c["cell_type"] == "markdown")


def test_the_drill_answers_each_follow_up_with_a_run_and_asserts_it() -> None:
    code = "\n".join(_source(c) for c in _cells(DRILL) if c["cell_type"] == "code")
    for number in range(1, len(FOLLOW_UPS) + 1):
        assert f"interview.follow_up({number})" in code, number
    assert "interview.practice()" in code and "interview.speaking_timer()" in code
    assert "interview.framework_rows()" in code
    assert "agentloops.controller." not in code.replace("import agentloops.controller as ctl", "")


# --------------------------------------------------------------------------- the drill in Chinese

import opencc  # noqa: E402  (opencc-python-reimplemented: how the tests write Traditional text)

from agentloops.i18n import set_language, translate  # noqa: E402

RANK = {"missed": 0, "named": 1, "partly": 2, "covered": 3}
ZH_SCRIPTS = {name: text for name, (text, _) in interview.SCRIPTS_ZH.items()}
ZH_ANSWERS = {**ZH_SCRIPTS, **{f"follow-up {i}": f.answer_zh for i, f in enumerate(FOLLOW_UPS, start=1)}}
EN_ANSWERS = {**{name: text for name, (text, _) in interview.SCRIPTS.items()},
              **{f"follow-up {i}": f.answer for i, f in enumerate(FOLLOW_UPS, start=1)}}
TO_HANT = [opencc.OpenCC(config) for config in ("s2t", "s2tw", "s2hk")]
"""Three ways of writing Traditional: OpenCC's standard characters, Taiwan's and Hong Kong's."""


@pytest.fixture
def zh() -> Any:
    """The package speaks Chinese for one test, then goes back to the environment's choice."""
    set_language("zh")
    yield
    set_language(None)


@pytest.mark.parametrize("name", list(ZH_SCRIPTS))
def test_each_chinese_script_fits_its_target_at_the_stated_pace(name: str) -> None:
    text, target = interview.SCRIPTS_ZH[name]
    low, high = interview.SPEAKING_PACE_CPM
    assert 150 <= low < high <= 300  # characters a minute: spoken Mandarin, not a newsreader's sprint
    fast, slow = interview.speaking_seconds(text, language="zh")
    assert (fast, slow) == (interview.word_count(text) * 60 / high, interview.word_count(text) * 60 / low)
    assert fast <= target  # said briskly, it fits
    if target >= 120:
        assert slow >= target  # and said slowly it fills the two minutes: not a short answer stretched
    else:
        assert slow <= 1.25 * target  # the English 30-second answer is 29–36 s over its pace range: so is this


@pytest.mark.parametrize("name", list(ZH_ANSWERS))
def test_each_chinese_answer_scores_at_least_as_well_as_the_english_one(name: str) -> None:
    chinese, english = grade(ZH_ANSWERS[name]), grade(EN_ANSWERS[name])
    assert chinese.language == "zh-Hans" and chinese.score >= english.score, (chinese.percent, english.percent)
    assert "keywords" not in chinese.flags and "negated" not in chinese.flags


@pytest.mark.parametrize("name", list(ZH_SCRIPTS))
def test_each_chinese_script_makes_every_point_the_english_one_makes(name: str) -> None:
    chinese, english = grade(ZH_SCRIPTS[name]), grade(interview.SCRIPTS[name][0])
    weaker = [(e.point.key, e.status, c.status) for e, c in zip(english.results, chinese.results)
              if RANK[c.status] < RANK[e.status]]
    assert weaker == []


def test_the_chinese_two_minute_answer_covers_every_point() -> None:
    result = grade(interview.TWO_MINUTES_ZH)
    assert result.covered == CORE and result.flags == ()


def test_a_script_in_each_language() -> None:
    assert interview.script("2-minute answer", language="zh") == interview.TWO_MINUTES_ZH
    assert interview.script("30-second answer", language="en") == THIRTY_SECONDS
    assert interview.script(language="zh_TW") == interview.THIRTY_SECONDS_ZH  # a locale is a language too
    assert interview.script_title("2-minute answer", language="zh") == "两分钟回答"
    assert interview.speaking_pace("zh") == interview.SPEAKING_PACE_CPM
    assert interview.speaking_pace("en") == interview.SPEAKING_PACE_WPM
    with pytest.raises(DrillError, match="script: 'haiku' is unknown; expected one of: 30-second answer"):
        interview.script("haiku")
    with pytest.raises(DrillError, match="script: language 'fr' is unknown; expected one of: en, zh"):
        interview.script(language="fr")


@pytest.mark.usefixtures("zh")
def test_the_language_defaults_to_the_packages() -> None:
    assert interview.script() == interview.THIRTY_SECONDS_ZH
    assert FOLLOW_UPS[3].answer_in() == FOLLOW_UPS[3].answer_zh and FOLLOW_UPS[3].question_in() == "模型说完成了，为什么还不结束？"
    assert interview.follow_up(4).language == "zh" and interview.follow_up(4, language="en").language == "en"
    assert interview.speaking_timer(clock=Clock()).target() == (interview.THIRTY_SECONDS_ZH, 30.0)


@pytest.mark.parametrize("number", range(1, len(FOLLOW_UPS) + 1))
def test_each_follow_up_is_shown_by_its_runs_in_chinese(number: int) -> None:
    answered = interview.follow_up(number, language="zh")
    text, page = str(answered), answered._repr_html_()
    assert answered.holds and text.startswith(f"追问 {number}：{FOLLOW_UPS[number - 1].question_zh}")
    assert FOLLOW_UPS[number - 1].answer_zh in text and "运行给出的证据：" in text and "说法" in page
    for check in answered.checks:  # every claim in Chinese; what the run showed stays as data
        assert check.said("zh") != check.claim and _cjk(check.said("zh")) and check.seen in text
    english = interview.follow_up(number, language="en")
    assert str(english).startswith(f"Follow-up {number}: ") and not _cjk(str(english).split(" / ", 1)[1][20:])


def test_a_chinese_claim_keeps_its_values() -> None:
    check = interview.follow_up(2, language="zh").checks[0]
    used, limit = followups._steps(interview.follow_up(2).runs["weather-normal"])
    assert check.claim == f"the happy path uses {used} of the {limit} steps"
    assert check.said("zh") == f"正常路径只用了 {limit} 步中的 {used} 步"


STATUS_PHRASES_ZH = {
    "succeeded": "成功", "partially_completed": "部分完成", "waiting_for_user": "等待用户",
    "failed_unrecoverable": "不可恢复的失败", "system_failure": "系统故障", "budget_exhausted": "预算耗尽",
    "no_progress": "无进展", "cancelled": "取消", "handed_off": "转人工",
}
"""How the Chinese answer to follow-up 1 names each stop status (the glossary's terms)."""


def test_follow_up_one_names_every_stop_status_in_chinese() -> None:
    import agentloops.controller as ctl

    assert set(STATUS_PHRASES_ZH) == set(ctl.STOP_STATUSES)
    assert [s for s, phrase in STATUS_PHRASES_ZH.items() if phrase not in FOLLOW_UPS[0].answer_zh] == []


def test_the_chinese_answers_say_which_version_a_fingerprint_uses() -> None:
    for text in (interview.TWO_MINUTES_ZH, FOLLOW_UPS[2].answer_zh):
        assert "已完成的事项数" in text and "版本" not in text and "失败不算进展" in text, text
    assert "超时" in FOLLOW_UPS[2].answer_zh and "重试预算" in FOLLOW_UPS[2].answer_zh


def test_the_chinese_timer_offers_the_chinese_scripts_in_characters() -> None:
    clock = Clock()
    timer = interview.speaking_timer("2-minute answer", clock=clock, language="zh")
    assert timer.target() == (interview.TWO_MINUTES_ZH, 120.0) and timer.script.value == "2-minute answer"
    assert dict(timer.script.options)["两分钟回答"] == "2-minute answer" and timer.start_button.description == "开始"
    assert f"{interview.word_count(interview.TWO_MINUTES_ZH)} 字" in timer.text.value and "每分钟 200–250 字" in timer.text.value
    timer.start_button.click()
    clock.now += 130
    timer.stop_button.click()
    assert timer.last == interview.pace(interview.word_count(interview.TWO_MINUTES_ZH), 130, 120, language="zh")
    assert "超出 120 秒目标 10 秒" in timer.result.value and "字" in timer.result.value
    timer.script.value = interview.OWN_WORDS
    timer.own.value = "重" * 156
    assert timer.target()[1] == 30.0
    timer.own.value += "试"
    assert timer.target()[1] == 120.0


def test_the_chinese_pace_verdicts() -> None:
    slow = interview.pace(125, 40, 30, language="zh")
    assert slow.verdict() == "40 秒说了 125 字（每分钟 188 字）：超出 30 秒目标 10 秒——删掉约 31 字，或者把语速提到每分钟 250 字左右。"
    assert interview.pace(125, 30, 30, language="zh").verdict().endswith("在 30 秒目标之内。")
    assert "偏快" in interview.pace(125, 20, 30, language="zh").verdict()
    assert interview.pace(80, 40, 30).verdict() == interview.pace(80, 40, 30, language="en").verdict()


# --------------------------------------------------------------------------- the grader's words come from the catalog


def _grader_texts() -> list[str]:
    texts = list(interview.MESSAGES["en"].values())
    return texts


def test_every_text_the_grader_says_has_a_chinese_translation_in_the_catalog() -> None:
    untranslated = [text for text in _grader_texts() if not _cjk(translate(text, "zh"))]
    assert untranslated == []
    rubric_zh = [p.title.zh for p in POINTS] + [p.advice.zh for p in POINTS] + [c.name.zh for p in POINTS
                                                                               for c in p.concepts]
    assert [text for text in rubric_zh if not _cjk(text)] == []  # the rubric is bilingual data
    assert dict(interview.MESSAGES["zh"]) == {k: translate(v, "zh") for k, v in interview.MESSAGES["en"].items()}


def test_english_answers_get_the_english_text_byte_for_byte() -> None:
    result = grade(PLAIN_EN[1])
    assert result.verdict() == interview.MESSAGES["en"]["verdict"].format(
        covered=len(result.covered), total=len(CORE), partly=len(result.partly), named=len(result.named),
        missed=len(result.missed), percent=result.percent) + " " + interview.MESSAGES["en"][f"band_{result.band}"]
    for point in POINTS:
        assert result.title(point) == point.title.en and result.advice(point) == point.advice.en
    assert str(result).endswith(f"Note: {HEURISTIC_NOTE}") and not _cjk(str(result))


def test_chinese_answers_get_the_catalogs_chinese(zh: None) -> None:
    set_language("en")  # the advice follows the answer, not the package's language
    result = grade(HANS[0][:100])
    for point in POINTS:
        assert result.title(point) == point.title.zh and result.advice(point) == point.advice.zh
    assert result.say("heuristic") == interview.MESSAGES["zh"]["heuristic"] and "补充" in str(result)


# --------------------------------------------------------------------------- Traditional grades as Simplified


HAND_WRITTEN_ZH = {
    "good": ("光加最大迭代次数只能兜底，解决不了根本问题，所以我会先排查它为什么停不下来。每类任务都要定义什么算完成，"
             "由系统核对结果，因为模型说好了不一定真的好了。任务进度单独维护，记录已经查过什么、还差什么，每一步都要有新结果，"
             "否则就是在空转。工具报错分情况处理：网络超时有限次重试，缺少订单号就反问用户，没有权限就直接停下。"
             "时间、Token 和调用次数按任务类型设预算，阈值根据历史数据来定。相同参数反复调用同一个工具而结果没变，就提前终止，"
             "不过超时后的正常重试要允许。结束时告诉用户做完了哪些、还缺哪些，同时把停止原因结构化记录下来。每一轮都打日志，"
             "出问题就拿同样的输入重新运行，对比修改前后的差异。"),
    "good, spoken": ("步数上限是最后一道防线，不是解决办法，因为它没回答为什么会死循环。完成条件由系统检查，测试通过了才算完成；"
                     "任务状态放在对话之外，每轮看有没有新进展，没有就停。错误要区分：超时重试，参数错了修正一次，缺信息问用户，"
                     "权限不够直接停。重试次数整个任务统一算，这样换备用工具也不会无限重试。用工具名加参数做指纹，"
                     "重复出现又没新信息就判定无进展，不过超时后的重试要放行。停下来时区分等待用户、部分完成和转人工，"
                     "不要包装成成功。每轮记录轨迹，改完之后回放同一条轨迹，再跑一遍故障注入。"),
    "partial": "我会设一个最大步数，比如 20 步，防止无限循环。另外工具调用加超时，超时就重试三次，还不行就报错给用户。",
    "partial, reasoned": "步数上限只是保险丝。更重要的是定义完成条件，因为模型不调用工具不代表任务完成，系统要自己核对结果。",
    "cap only": "设置最大循环次数就行了，比如 max_steps=10，到了就停。",
    "negated": "不需要完成条件，也不用维护任务状态，更没必要做指纹和轨迹回放，直接把最大步数调大就好。",
    "negated retries": "我不会区分错误类型，所有错误都重试，也不需要重试预算，不需要重试上限。",
    "keywords": "最大步数、完成条件、任务状态、重试预算、指纹、轨迹、回放、等待用户、超时、权限拒绝、故障注入",
    "question": "你的 Agent 如果一直调用工具不结束，怎么办？",
}
"""Answers written for these tests, in Simplified: good, partial and bad ones, with negations (不需要重试…)."""


def _reading(result: interview.Grade) -> tuple[Any, ...]:
    """Everything a grade decides, without the learner's own characters."""
    points = tuple((r.point.key, r.score, r.status, tuple(n for n, _ in r.found), r.missing, len(r.negated),
                    r.explained) for r in result.results)
    return result.attempted, result.flags, result.score, result.words, round(result.density, 9), points


@pytest.mark.parametrize("convert", TO_HANT, ids=["s2t", "s2tw", "s2hk"])
@pytest.mark.parametrize("name", [*ZH_ANSWERS, *HAND_WRITTEN_ZH])
def test_a_traditional_answer_grades_exactly_as_its_simplified_original(name: str, convert: Any) -> None:
    simplified = {**ZH_ANSWERS, **HAND_WRITTEN_ZH}[name]
    traditional = convert.convert(simplified)
    assert traditional != simplified
    hans, hant = grade(simplified), grade(traditional)
    assert _reading(hant) == _reading(hans)
    assert hant.language == "zh-Hant" and hans.language == "zh-Hans"
    assert hant.verdict() == convert_script(hans.verdict()) and hant.cap_only == hans.cap_only


def convert_script(text: str) -> str:
    return opencc.OpenCC("s2tw").convert(text)


def test_the_hand_written_answers_grade_as_written() -> None:
    percent = {name: grade(text).percent for name, text in HAND_WRITTEN_ZH.items()}
    assert percent["good"] >= WELL and percent["good, spoken"] >= WELL
    assert all(percent[n] <= LOW for n in ("partial", "partial, reasoned", "cap only", "negated", "negated retries",
                                          "keywords", "question")), percent
    assert grade(HAND_WRITTEN_ZH["cap only"]).cap_only
    denied = grade(HAND_WRITTEN_ZH["negated retries"])
    assert not denied.get("budgets").found and {"重试预算", "重试上限"} <= set(denied.get("budgets").negated)


_SENTENCES_ZH = [text for answer in HAND_WRITTEN_ZH.values() for text in re.split(r"(?<=[。；])", answer) if text]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_SENTENCES_ZH), min_size=1, max_size=8), st.sampled_from(range(len(TO_HANT))))
def test_any_mix_of_chinese_sentences_grades_the_same_in_either_script(parts: list[str], which: int) -> None:
    simplified = "".join(parts)
    assert _reading(grade(TO_HANT[which].convert(simplified))) == _reading(grade(simplified))


def _chinese_patterns() -> list[str]:
    patterns = [p for point in POINTS for c in point.concepts for p in c.patterns.zh + c.synonyms.zh]
    patterns += [p for point in POINTS for w in point.wrong_claims for p in w.patterns.zh]
    patterns += [r.pattern for r in (negation.ZH_NEGATION, negation.ZH_SCOPE_END, negation.ZH_EXEMPT,
                                     negation.ZH_AFTER, negation.ZH_CAUSE, reading.ZH_VERBS, reading.ZH_REASON,
                                     reading.SUBJECT)]
    return patterns


_CLASS = re.compile(r"\[[^\]]*\]")


def _accepts(pattern: str, back: str) -> bool:
    """``pattern`` accepts whatever ``back`` (the pattern after a trip through Traditional) describes: the same
    text outside character classes, and each class of ``back`` within the matching class of ``pattern``
    (``用不[着著]`` comes back as ``用不[著著]``: Taiwan writes 著, and 著 is Simplified too)."""
    if _CLASS.split(pattern) != _CLASS.split(back):
        return False
    return all(set(b) <= set(a) for a, b in zip(_CLASS.findall(pattern), _CLASS.findall(back)))


@pytest.mark.parametrize("convert", TO_HANT, ids=["s2t", "s2tw", "s2hk"])
def test_every_chinese_pattern_survives_the_round_trip_through_traditional(convert: Any) -> None:
    """A pattern written in Simplified matches an answer written in Traditional once that is converted: each
    pattern comes back unchanged from Traditional, and each plain phrase among them is found in its own
    Traditional spelling."""
    broken = [p for p in _chinese_patterns() if not _accepts(p, interview.to_simplified(convert.convert(p)))]
    assert broken == []
    plain = [p for point in POINTS for c in point.concepts for p in c.patterns.zh + c.synonyms.zh
             if re.escape(p) == p]
    assert len(plain) > 100
    unmatched = [p for p in plain if not re.search(p, interview.to_simplified(convert.convert(f"我们{p}。")))]
    assert unmatched == []


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.sampled_from(sorted(chinese.HANT_ONLY | chinese.HANS_ONLY | set("，。’'a "))),
               max_size=80))
def test_conversion_keeps_the_length_so_offsets_hold(text: str) -> None:
    assert len(interview.to_simplified(text)) == len(text)


# --------------------------------------------------------------------------- the Chinese notebook

DRILL_ZH = NOTEBOOKS / "zh" / "17-interview-drill.ipynb"


def test_the_chinese_drill_shows_the_shipped_chinese_answers() -> None:
    prose = "\n".join(_source(c) for c in _cells(DRILL_ZH) if c["cell_type"] == "markdown")
    code = "\n".join(_source(c) for c in _cells(DRILL_ZH) if c["cell_type"] == "code")
    assert interview.checklist_markdown("zh") in prose
    if 'interview.script("30-second answer")' in code and 'interview.script("2-minute answer")' in code:
        return  # the code prints them, in the notebook's language
    # Until then the English code prints the English scripts, and the prose quotes the Chinese ones: verbatim.
    quoted = re.sub(r"\n>\s?", "\n", prose)
    assert interview.THIRTY_SECONDS_ZH in prose
    assert all(paragraph in quoted for paragraph in interview.TWO_MINUTES_ZH.split("\n\n"))
    for name, (text, _) in interview.SCRIPTS_ZH.items():  # the counts it quotes are the package's
        fast, slow = interview.speaking_seconds(text, language="zh")
        assert f"{interview.word_count(text)} 字" in prose and f"{fast:.0f}–{slow:.0f} 秒" in prose, name


@pytest.mark.parametrize("evidence", EVIDENCE, ids=[e.anchor for e in EVIDENCE])
def test_each_chinese_evidence_link_lands_on_the_chinese_heading(evidence: interview.Evidence) -> None:
    cells = _cells(NOTEBOOKS / "zh" / evidence.notebook)
    marker = f'<a id="{evidence.anchor}"></a>'
    index = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and marker in _source(c))
    assert f"### {evidence.heading.zh}" in _source(cells[index])


@pytest.mark.parametrize("name", ["2-minute answer", "good", "good, spoken"])
def test_taiwan_vocabulary_still_grades_well(name: str) -> None:
    """OpenCC ``s2twp`` also swaps words (调用 → 呼叫, 用户 → 使用者, 参数 → 引数): not the same grade to the point,
    but a sound answer written the Taiwan way still scores well."""
    simplified = {**ZH_SCRIPTS, **HAND_WRITTEN_ZH}[name]
    taiwan = opencc.OpenCC("s2twp").convert(simplified)
    assert "呼叫" in taiwan or "使用者" in taiwan or "資訊" in taiwan
    result = grade(taiwan)
    assert result.language == "zh-Hant" and result.percent >= WELL and result.percent >= grade(simplified).percent - 10
    assert ("asks the user for a missing parameter", "詢問使用者") in grade("缺少參數時，我會詢問使用者。").get("errors").found
