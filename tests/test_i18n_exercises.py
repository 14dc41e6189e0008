"""The exercises in Chinese: the same verdicts, Chinese words.

English stays byte-identical (the other exercise tests and ``tests/test_workshop.py`` check it). Here the
facilitator guide's wrong answers, the reference solutions and a set of broken answers are judged in both
languages: the verdict, case by case, must not depend on the language, and in Chinese every message a
learner reads is Chinese while scenario names, function names and values stay as they are.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import agentloops as al
from agentloops.exercises import checking, inprocess, notebooks, progress, session
from agentloops.exercises.exercise import Exercise
from agentloops.exercises.failures import describe_raised, raised_text
from agentloops.exercises.registry import all_exercises
from agentloops.exercises.results import ExerciseResult, case_label
from agentloops.i18n import set_language
from agentloops.resources import notebooks_dir
from agentloops.scenario import list_scenarios
from tests.test_workshop import namespace as guide_namespace

CJK = re.compile(r"[\u4e00-\u9fff]")
EXERCISES: dict[str, Exercise] = {e.name: e for e in all_exercises()}
SCENARIOS = {s.name for s in list_scenarios()}


pytestmark = pytest.mark.usefixtures("no_language_from_the_environment")


def _chinese(text: str) -> bool:
    return bool(CJK.search(text))


def wrong_answers() -> list[tuple[str, str]]:
    """(exercise name, code) for every snippet the facilitator guide marks ``<!-- wrong: NAME -->``."""
    text = (notebooks_dir() / "workshop" / "facilitator-guide.md").read_text(encoding="utf-8")
    return re.findall(r"<!-- wrong: (\w+) -->\n```python\n(.*?)```", text, flags=re.DOTALL)


GUIDE = wrong_answers()
GUIDE_IDS = [f"{name}-{i}" for i, (name, _code) in enumerate(GUIDE)]


def _function(name: str, code: str) -> Callable[..., Any]:
    namespace = guide_namespace()  # what the exercise notebooks' setup cells give the learner's code
    exec(code, namespace)
    function: Callable[..., Any] = namespace[EXERCISES[name].variable]
    return function


def judge_in(lang: str, exercise: Exercise, answer: Any, **options: Any) -> ExerciseResult:
    set_language(lang)
    try:
        return exercise.judge(answer, **options)
    finally:
        set_language(None)


def _verdict(result: ExerciseResult) -> tuple[str, list[str]]:
    return result.status, [case.status for case in result.cases]


def _values(text: str) -> list[str]:
    """What a message quotes from the run, which no translation may change: quoted text, code names, numbers."""
    tokens = (t.strip(";,.:()[]").removeprefix("tools[") for t in text.split())  # a table cell says 工具[…]
    return [t for t in tokens if re.search(r'[="_\d]', t) and not re.search(r"[A-Z]?[a-z]+'s\b", t)]


def _unquoted(text: str) -> str:
    """``text`` with each double-quoted span (and a ``prompt='…'``) emptied: what a model or a user said is shown in
    the learner's language (``agentloops.scenario.SCENARIO_SAYS``), so only what lies outside must survive as it is."""
    return re.sub(r'"[^"]*"|(?<=prompt=)\'[^\']*\'', '""', text)


# --------------------------------------------------------------------------- the guide's wrong answers


def test_the_guide_still_has_its_wrong_answers() -> None:
    assert len(GUIDE) >= 19 and {name for name, _code in GUIDE} <= set(EXERCISES)


@pytest.mark.parametrize(("name", "code"), GUIDE, ids=GUIDE_IDS)
def test_a_wrong_answer_fails_in_chinese_case_by_case_as_in_english(name: str, code: str) -> None:
    exercise, answer = EXERCISES[name], _function(name, code)
    english, chinese = judge_in("en", exercise, answer), judge_in("zh", exercise, answer)
    assert chinese.status == english.status == "incorrect", str(chinese)
    assert _verdict(chinese) == _verdict(english)
    assert _chinese(str(chinese)) and _chinese(chinese._repr_html_()) and not _chinese(str(english))
    for mine, theirs in zip(chinese.cases, english.cases, strict=True):
        if theirs.name in SCENARIOS:
            assert mine.name == theirs.name  # a scenario is named as it is
        if not mine.passed:
            assert _chinese(mine.message), mine.message
            missing = [v for v in _values(_unquoted(theirs.message)) if v not in _unquoted(mine.message)]
            assert not missing, f"{mine.message!r} lost {missing}"


def test_the_guides_wrong_answers_fail_with_messages_as_distinct_in_chinese_as_in_english() -> None:
    english = [str(judge_in("en", EXERCISES[n], _function(n, c))) for n, c in GUIDE]
    chinese = [str(judge_in("zh", EXERCISES[n], _function(n, c))) for n, c in GUIDE]
    assert len(set(chinese)) == len(set(english)) == len(GUIDE)


# --------------------------------------------------------------------------- verdicts never depend on the language


def _spin(*args: Any) -> Any:
    while True:
        pass


def _crash(*args: Any) -> Any:
    os.kill(os.getpid(), signal.SIGKILL)


def _raise_the_class(*args: Any) -> Any:
    # the mistake the checker names: the class without its message
    raise al.MaxStepsError


BROKEN: dict[str, Any] = {
    "stub": lambda *args: None,
    "not a function": 3,
    "wrong arity": lambda a, b, c, d, e: 1,
    "raises": lambda *args: 1 / 0,
    "exits": lambda *args: sys.exit(3),
    "an int": lambda *args: 7,
    "a str": lambda *args: "x",
    "a bool": lambda *args: True,
    "raises the class": _raise_the_class,
}


@pytest.mark.parametrize("exercise", all_exercises(), ids=lambda e: e.name)
def test_every_right_and_broken_answer_gets_the_same_verdict_in_both_languages(exercise: Exercise) -> None:
    answers = {"reference": exercise.reference(), **BROKEN}
    answers |= {f"guide {i}": _function(n, c) for i, (n, c) in enumerate(GUIDE) if n == exercise.name}
    for label, answer in answers.items():
        english, chinese = judge_in("en", exercise, answer), judge_in("zh", exercise, answer)
        assert _verdict(chinese) == _verdict(english), label
        if label == "reference":
            assert chinese.status == "correct" and _chinese(chinese.message)
        else:
            assert chinese.status != "correct", label
            assert _chinese(chinese.message), (label, chinese.message)
            assert all(_chinese(c.message) for c in chinese.failures), (label, str(chinese))


@pytest.mark.parametrize(("answer", "mode"), [(_spin, "fork"), (_spin, "inprocess"), (_crash, "fork")],
                         ids=["timeout-fork", "timeout-inprocess", "crash"])
def test_timeouts_skips_and_crashes_are_reported_in_chinese(answer: Any, mode: str) -> None:
    exercise = EXERCISES["q1"]
    limit = 10.0 if answer is _crash else 0.2  # a crash ends at once: a wide limit keeps a loaded machine from timing it out
    english = judge_in("en", exercise, answer, time_limit=limit, mode=mode)
    chinese = judge_in("zh", exercise, answer, time_limit=limit, mode=mode)
    assert _verdict(chinese) == _verdict(english) and chinese.status == "incorrect"
    assert all(_chinese(c.message) for c in chinese.cases)
    if answer is _crash:
        assert "9" in chinese.cases[0].message  # the signal, as in English


# --------------------------------------------------------------------------- the worker writes no sentence


def _raised_here() -> dict[str, Any]:
    try:
        _raise_the_class()
    except TypeError as exc:
        return describe_raised(exc)
    raise AssertionError("expected a TypeError")


def test_the_worker_describes_an_exception_as_facts_and_the_notebook_writes_the_sentence() -> None:
    set_language("zh")
    facts = _raised_here()
    assert not _chinese(json.dumps(facts, ensure_ascii=False))  # the worker's side says nothing in words
    assert facts["hint"] == "raised-a-class" and facts["name"] == "al.MaxStepsError"
    assert facts["where"]["function"] == "_raise_the_class"
    chinese = raised_text(facts)
    set_language("en")
    english = raised_text(facts)
    assert _chinese(chinese) and not _chinese(english)
    assert "give it a message: raise al.MaxStepsError" in english and "raise al.MaxStepsError(" in chinese
    assert "_raise_the_class" in chinese and "TypeError" in chinese


def test_a_forked_worker_sends_raw_outputs_only(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[Any] = []
    real = inprocess.call_case

    def recording(case: checking.Case) -> Any:
        output = real(case)
        sent.append(output)
        return output

    monkeypatch.setattr(inprocess, "call_case", recording)
    set_language("zh")
    EXERCISES["q4"].judge(lambda *args: 1 / 0, mode="inprocess")
    assert sent and not any(_chinese(json.dumps(s, ensure_ascii=False)) for s in sent)


# --------------------------------------------------------------------------- what the exercise objects print


@pytest.mark.parametrize("exercise", all_exercises(), ids=lambda e: e.name)
def test_task_hints_and_solution_notes_are_chinese(exercise: Exercise) -> None:
    set_language("zh")
    assert _chinese(str(exercise.task()))
    if exercise.prompt:
        assert exercise.variable in str(exercise.task())
    for _step in range(len(exercise.hints)):
        assert _chinese(str(exercise.hint()))
    assert _chinese(exercise.solution().title) and exercise.solution().code == exercise.solution_source()
    assert _chinese(repr(exercise)) and exercise.name in repr(exercise)
    assert _chinese(exercise.label)
    not_attempted = exercise.judge(lambda *args: None)
    assert not_attempted.status == "not attempted" and exercise.variable in not_attempted.message
    assert _chinese(str(not_attempted))


def test_cases_are_counted_in_chinese_and_codes_and_scenario_names_stay_as_they_are() -> None:
    set_language("zh")
    assert EXERCISES["q3"].counted(10) == "10 次运行" and EXERCISES["q04_decide"].counted(55) == "55 轮"
    assert case_label("tool-call-with-stop") == "tool-call-with-stop" and case_label("pause") == "pause"
    assert _chinese(case_label("retry after a timeout"))
    set_language("en")
    assert all(e.counted(3) == f"3 {e.noun}" for e in all_exercises())


def test_the_progress_summary_speaks_chinese_and_keeps_its_colours() -> None:
    session.reset()
    try:
        q1 = EXERCISES["q1"]
        q1.check(q1.reference())
        q2 = EXERCISES["q2"]
        q2.check(lambda model, tools, max_steps: "x")
        english_html = progress.progress_html("stopping")
        set_language("zh")
        text, page = progress.progress_text("stopping"), progress.progress_html("stopping")
        assert text.startswith("本次会话的进度") and "已通过" in text and "还不对" in text
        assert all(h in text for h in ("练习", "状态", "检查次数"))
        assert page.count("#1a7f37") == english_html.count("#1a7f37")  # passed rows stay green
        assert page.count("#b35900") == english_html.count("#b35900")
    finally:
        session.reset()


# --------------------------------------------------------------------------- the instructor copies of both editions


@pytest.fixture
def shelf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the notebooks folder whose Chinese mirror has the first exercise notebook only."""
    root = tmp_path / "notebooks"
    source = notebooks_dir()
    for path in [*sorted((source / "exercises").glob("*.ipynb")), *sorted(source.glob("0[1-5]-*.ipynb"))]:
        target = root / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    first = sorted((root / "exercises").glob("*.ipynb"))[0]
    mirror = root / "zh" / "exercises" / first.name
    mirror.parent.mkdir(parents=True)
    notebook = json.loads(first.read_text(encoding="utf-8"))
    notebook["cells"][0]["source"] = ["# 中文版练习\n"]
    mirror.write_text(json.dumps(notebook, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(notebooks, "notebooks_dir", lambda: root)
    return root


def test_in_chinese_the_helpers_find_the_chinese_notebooks_and_fall_back_to_english(shelf: Path) -> None:
    english = notebooks.exercise_notebooks()
    assert all("zh" not in p.relative_to(shelf).parts for p in english)
    set_language("zh")
    chinese = notebooks.exercise_notebooks()
    assert [p.name for p in chinese] == [p.name for p in english]
    assert chinese[0] == shelf / "zh" / "exercises" / english[0].name
    assert chinese[1:] == english[1:]  # no mirror yet: the English notebook
    assert notebooks.exercises_dir() == shelf / "zh" / "exercises"


def test_in_chinese_the_solutions_are_rendered_from_the_chinese_notebook_with_a_chinese_banner(
        shelf: Path, tmp_path: Path) -> None:
    set_language("zh")
    written = notebooks.render_solutions(tmp_path / "instructor")
    first = json.loads(written[0].read_text(encoding="utf-8"))
    banner = "".join(first["cells"][0]["source"])
    assert "讲师版" in banner and "notebooks/zh/exercises/" in banner
    assert "".join(first["cells"][1]["source"]) == "# 中文版练习\n"
    assert any("solution" in c["metadata"].get("tags", []) for c in first["cells"])
    with pytest.raises(al.UsageError, match="学员"):
        notebooks.render_solutions(shelf / "zh" / "exercises", force=True)


def test_a_routes_reason_shows_the_tools_own_error_in_chinese() -> None:
    """q5's reason is a phrase: the tool error inside it reads back by its own catalog entry, not by a template that
    happens to match the whole line (``{tool} gave no answer within {seconds:g} s`` took "…; last error: the tool"
    for a tool name)."""
    from agentloops.controller.vocabulary.readback import read_back
    from agentloops.exercises.controlling import ROUTING_CASES, controller_move
    from agentloops.i18n import speaking, translate

    errors = 0
    for name, result, ctx in ROUTING_CASES:
        _move, why = controller_move(result, ctx)
        assert read_back(why) == str(why), name  # English: the line itself
        if result.error and result.error in why:
            errors += 1
            with speaking("zh"):
                assert translate(result.error, "zh") in read_back(why), (name, read_back(why))
    assert errors >= 5  # the check above ran on the reasons that quote an error (the shared-budget timeout among them)
