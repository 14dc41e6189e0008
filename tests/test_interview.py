"""The interview drill: the practice grader on good, cap-only, empty, Chinese and odd answers; the evidence links."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentloops import interview
from agentloops.interview import EVIDENCE, FOLLOW_UPS, FULL_ANSWER, HEURISTIC_NOTE, POINTS, THIRTY_SECONDS, grade

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
DRILL = NOTEBOOKS / "17-interview-drill.ipynb"
CORE = [p.key for p in POINTS if p.core]

GOOD = (
    "A max_steps cap is only a fuse; I would look for the root cause. Each task type gets a completion condition "
    "that the system verifies against evidence, because a reply with no tool calls is just a claim. I keep a "
    "versioned task state outside the transcript, so each turn must change the state. Tool errors are classified: "
    "timeouts are retried within budget, a missing parameter means asking the user, permission denied stops, an "
    "empty result may be an answer, otherwise we fall back or degrade, and side effects are never retried blindly. "
    "Budgets cover time, tokens and tool calls per task type, with one shared retry budget. I fingerprint each "
    "action by tool name and normalized arguments to detect repeated calls, but a legitimate retry after a timeout "
    "is allowed. Runs end in explicit statuses — waiting_for_user, partially completed, handed off — with a "
    "user-facing message and a structured record, never a fake success. Every turn is traced; I replay the trace "
    "after a fix and keep a fault-injection regression suite."
)
CAP_ONLY = "I'd set a maximum number of iterations, like 10, so it can't loop forever."
CHINESE = (
    "最大步数只是保险丝，关键是根因。每种任务要有业务完成条件，模型不调用工具只是信号，必须用证据验证。"
    "单独维护任务状态和状态版本。工具错误要分流：超时在统一重试预算内重试，缺少参数就询问用户，权限拒绝就停止，"
    "空结果看任务是否接受，必要时降级。耗时、Token 和工具调用都要有预算，按任务类型配置。用动作指纹检测重复，"
    "允许合理重试。停止时区分部分完成、等待用户、转人工，给用户可行动的说明，同时保留结构化记录。"
    "每轮记录 Trace，修复后回放，并做故障注入回归。"
)


def test_importing_the_grader_imports_no_heavy_library() -> None:
    code = ("import sys, agentloops.interview; "
            "bad = [m for m in ('matplotlib', 'pandas', 'ipywidgets') if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_good_answer_covers_every_point() -> None:
    result = grade(GOOD)
    assert result.covered == CORE and not result.missed and not result.cap_only
    assert result.language == "en" and result.score == len(CORE)
    assert "8 of 8 points covered" in result.verdict()


def test_our_own_answers_pass_our_own_grader() -> None:
    assert grade(FULL_ANSWER).covered == CORE
    short = grade(THIRTY_SECONDS)
    assert len(short.covered) >= len(CORE) - 1 and not short.missed


def test_a_cap_only_answer_is_called_out() -> None:
    result = grade(CAP_ONLY)
    assert result.cap_only and result.covered == [] and result.partly == ["fuse"]
    assert result.get("fuse").found[0][0] == "names the step cap"
    assert "names only the fuse" in result.verdict() and "names only the fuse" in str(result)
    assert "what number, why" in result._repr_html_()


@pytest.mark.parametrize("empty", ["", "   \n\t", None, ..., b""])
def test_an_empty_answer_is_not_attempted(empty: object) -> None:
    result = grade(empty)
    assert not result.attempted and result.language == "none" and result.score == 0
    assert result.verdict().startswith("Not attempted") and not result.cap_only
    assert all(r.status == "missed" and not r.found for r in result.results)


def test_a_chinese_answer_is_graded_with_chinese_keywords() -> None:
    result = grade(CHINESE)
    assert result.language == "zh" and result.covered == CORE
    assert ("names the step cap", "最大步数") in result.get("fuse").found
    assert any(words == "指纹" for _, words in result.get("progress").found)


def test_a_mixed_answer_counts_both_languages() -> None:
    result = grade("Fingerprint the action; 超时在统一重试预算内重试; 权限拒绝就停止; ask the user for missing parameters.")
    assert result.language == "mixed" and result.get("errors").status == "covered"


def test_partly_covered_points_say_what_to_add() -> None:
    result = grade("We retry timeouts.")
    errors = result.get("errors")
    assert errors.status == "partly" and "retries transient failures" in dict(errors.found)
    assert "asks the user for a missing parameter" in errors.missing
    assert f"add: {errors.point.advice}" in str(result)


def test_the_grader_is_honest_about_being_a_heuristic() -> None:
    wrong_but_worded = grade("I would never use a retry budget or any budgets at all.")
    assert "retry budget" in [w for _, w in wrong_but_worded.get("budgets").found]  # negation is not understood
    for result in (grade(GOOD), grade(""), wrong_but_worded):
        assert HEURISTIC_NOTE in str(result)
        assert "This is a heuristic." in result._repr_html_()


@pytest.mark.parametrize("odd", [b"\xff\xfe timeout \x80", 12345, 3.5, ["fuse", b"retry budget", None],
                                 {"answer": "trace"}, "x" * 200_000, "\u0000\ud800 replay"])
def test_odd_input_never_raises(odd: object) -> None:
    result = grade(odd)
    assert isinstance(str(result), str) and result._repr_html_().startswith("<div")
    assert len(result.text) <= interview.MAX_CHARS


def test_an_object_whose_str_fails_is_not_attempted() -> None:
    class Broken:
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert not grade(Broken()).attempted


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_any_text_grades_without_raising(text: str) -> None:
    result = grade(text)
    assert {r.status for r in result.results} <= {"covered", "partly", "missed"}
    assert len(result.covered) + len(result.partly) + len(result.missed) == len(CORE)
    assert 0 <= result.score <= len(CORE)
    assert result.attempted == bool(text.strip())
    str(result)
    result._repr_html_()


def test_html_never_carries_the_learners_markup() -> None:
    html = grade("<script>alert(1)</script> replay the trace")._repr_html_()
    assert "<script>" not in html and "replay" in html


def test_asking_for_an_unknown_point_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="no point 'vibes'; expected one of: fuse, completion"):
        grade(GOOD).get("vibes")


def test_six_follow_ups_and_six_pieces_of_evidence() -> None:
    assert len(FOLLOW_UPS) == 6 and len(EVIDENCE) == 6
    assert all(f.question_zh and f.answer for f in FOLLOW_UPS)
    import agentloops.controller as ctl

    assert [e.function for e in EVIDENCE] == ["completion_conditions", "budget_basis", "stop_statuses",
                                              "repeated_call_trace", "error_routing", "fault_regression"]
    assert all(callable(getattr(ctl, e.function)) for e in EVIDENCE)


def _cells(path: Path) -> list[dict[str, object]]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict[str, object]) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else str(source)


@pytest.mark.parametrize("evidence", EVIDENCE, ids=[e.anchor for e in EVIDENCE])
def test_each_evidence_link_lands_on_the_cell_that_produces_it(evidence: interview.Evidence) -> None:
    cells = _cells(NOTEBOOKS / evidence.notebook)
    marker = f'<a id="{evidence.anchor}"></a>'
    index = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and marker in _source(c))
    assert f"### {evidence.heading}" in _source(cells[index])
    following = next(c for c in cells[index + 1:] if c["cell_type"] == "code")
    assert f"ctl.{evidence.function}(" in _source(following)
    assert evidence.link() in "".join(_source(c) for c in _cells(DRILL) if c["cell_type"] == "markdown")


def test_the_drill_answers_each_follow_up_with_a_cell() -> None:
    code = [_source(c) for c in _cells(DRILL) if c["cell_type"] == "code"]
    for number in range(len(FOLLOW_UPS)):
        assert any(f"interview.FOLLOW_UPS[{number}]" in c for c in code), number
    assert any("widgets.practice()" in c for c in code)
