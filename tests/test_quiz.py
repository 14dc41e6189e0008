"""Self-check questions: verdicts, the hint ladder, and no traceback into a notebook."""

from __future__ import annotations

from agentloops import run
from agentloops.quiz import Question


def test_ellipsis_is_not_attempted_but_none_is_an_answer():
    q = Question("What did the loop return?", answer=lambda: run("truncated", "content").answer)
    assert q.check().status == "not attempted"
    assert q.check(None).passed
    assert q.check("").status == "incorrect"


def test_measured_answers_come_from_code_and_hints_climb():
    q = Question("Wasted calls?", answer=lambda: run("truncated", "content").wasted_calls,
                 hints=["vague", "concrete"])
    first, second, third = q.check(6), q.check(5), q.check(4)
    assert [r.hint for r in (first, second, third)] == ["vague", "concrete", "concrete"]
    assert q.check(7).passed


def test_multiple_choice_explains_each_option():
    q = Question("Which stops at once?", answer="tool_calls", options=["content", "finish_reason", "tool_calls"],
                 explanations={"content": "it waits for text", "tool_calls": "no calls means done"})
    assert q.check("Content").message == "it waits for text"
    assert q.check("TOOL_CALLS").passed
    assert "not one of the options" in q.check("cap").message


def test_a_broken_question_is_not_blamed_on_the_learner():
    q = Question("?", answer=lambda: 1 / 0)
    result = q.check(3)
    assert result.status == "not attempted" and "could not compute its answer" in result.message


def test_results_render_as_text_and_html():
    result = Question("?", answer=2, hints=["h"]).check(3)
    assert str(result).startswith("✗ Not yet") and "Hint: h" in str(result)
    assert "<b" in result._repr_html_()
    assert str(Question("?", answer=2).solution()).startswith("Solution: 2")
