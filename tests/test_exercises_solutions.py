"""Reference solutions pass their checkers; learner notebooks spoil nothing; instructor copies render and run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentloops.cli import main
from agentloops.errors import UsageError
from agentloops.exercises import session
from agentloops.exercises.notebooks import (
    EXERCISE_TAG,
    SolutionsError,
    answer_cells,
    exercise_notebooks,
    exercises_dir,
    fill_solutions,
    lesson_notebooks,
    quiz_answers,
    quiz_cell,
    render_solutions,
)
from agentloops.exercises.registry import SETS, all_exercises, get_exercise

EXERCISES = all_exercises()


@pytest.fixture(autouse=True)
def _fresh_progress():
    session.reset()
    yield
    session.reset()


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else source


@pytest.mark.parametrize("exercise", EXERCISES, ids=[e.id for e in EXERCISES])
def test_every_reference_solution_passes_its_checker(exercise: Any) -> None:
    result = exercise.judge(exercise.reference())
    assert result.passed, str(result)
    assert len(result.cases) >= 4


def test_each_set_has_its_notebook_and_each_exercise_one_answer_cell() -> None:
    assert [f"exercises/{p.name}" for p in exercise_notebooks()] == [
        s.notebook for s in SETS.values() if s.notebook.startswith("exercises/")]
    tagged = [exercise_id for path in exercise_notebooks() for _, exercise_id in answer_cells(_load(path))]
    assert tagged == [e.id for e in EXERCISES if e.set_name != "part1"]


@pytest.mark.parametrize("path", exercise_notebooks(), ids=lambda p: p.name)
def test_learner_notebooks_spoil_nothing(path: Path) -> None:
    notebook = _load(path)
    code = [_source(c) for c in notebook["cells"] if c["cell_type"] == "code"]
    setup = code[0]
    assert setup.startswith("# Setup")
    for index, exercise_id in answer_cells(notebook):
        exercise = get_exercise(exercise_id)
        starting = _source(notebook["cells"][index])
        assert starting.strip() != exercise.solution_source().strip()
        namespace: dict[str, Any] = {}
        exec(setup, namespace)
        exec(starting, namespace)
        assert exercise.judge(namespace[exercise.variable]).status in ("not attempted", "incorrect")
        name = exercise.name
        assert f"{name}.check()" in code and f"# {name}.hint()\n# {name}.solution()" in code
        assert not any(line.strip().startswith(f"{name}.solution()") for cell in code for line in cell.splitlines())


def test_rendering_fills_every_answer_cell_with_its_solution(tmp_path: Path) -> None:
    sources = [*exercise_notebooks(), *lesson_notebooks()]
    before = {p: p.read_bytes() for p in sources}
    written = render_solutions(tmp_path / "instructor")
    assert [p.name for p in written] == [p.name for p in sources]
    assert {p: p.read_bytes() for p in sources} == before  # the learner notebooks are untouched
    filled_ids = []
    for path in written:
        notebook = _load(path)
        assert _source(notebook["cells"][0]).startswith("> **Instructor copy — reference solutions and quiz answers")
        for index, exercise_id in answer_cells(notebook):
            cell = notebook["cells"][index]
            assert _source(cell).strip() == get_exercise(exercise_id).solution_source().strip()
            assert "solution" in cell["metadata"]["tags"]
            filled_ids.append(exercise_id)
    assert sorted(filled_ids) == sorted(e.id for e in EXERCISES)  # every exercise, Part 1 included


def test_every_quiz_question_gets_its_answer_from_its_own_definition(tmp_path: Path) -> None:
    for source, copy in zip(lesson_notebooks(), render_solutions(tmp_path)[len(exercise_notebooks()):]):
        learner, instructor = _load(source), _load(copy)
        index = quiz_cell(learner)
        if index is None:
            continue
        answers = quiz_answers(_source(learner["cells"][index]))
        checks = [_source(c) for c in instructor["cells"] if c["cell_type"] == "code" and ".check(" in _source(c)]
        assert answers and not any(".check(...)" in c for c in checks), source.name
        for name, expression in answers.items():
            assert any(c.startswith(f"{name}.check({expression})  # answer key") for c in checks), (source.name, name)


def test_quiz_answers_read_literals_and_function_bodies() -> None:
    source = ('q1 = Question(prompt="?", answer=lambda: al.run("truncated").steps)\n'
              'q2 = Question("?", "stop", options=["stop", "length"])\nother = 3\n')
    assert quiz_answers(source) == {"q1": 'al.run("truncated").steps', "q2": '"stop"'}
    with pytest.raises(SolutionsError, match=r"^03.ipynb: question q3 has no answer=$"):
        quiz_answers('q3 = Question(prompt="?")', "03.ipynb")
    with pytest.raises(SolutionsError, match=r"^03.ipynb: the self-check definitions do not parse \(line 1\)$"):
        quiz_answers("q1 = Question(", "03.ipynb")


def test_an_unwritable_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a-file").write_text("")
    target = tmp_path / "a-file" / "instructor"  # cannot be created, for root as for anyone
    with pytest.raises(SolutionsError, match=r"^solutions --out .*a-file/instructor: cannot write there \(.*\); "
                                             "expected a folder you can write into$"):
        render_solutions(target)
    assert main(["solutions", "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "cannot write there" in err


def test_rendering_refuses_to_overwrite_unless_forced(tmp_path: Path) -> None:
    render_solutions(tmp_path)
    with pytest.raises(UsageError, match=r"01-stop-the-loop.ipynb already exists; pass --force to overwrite it"):
        render_solutions(tmp_path)
    assert render_solutions(tmp_path, force=True)
    with pytest.raises(UsageError, match="this is the learner notebooks' own folder; choose another one"):
        render_solutions(exercises_dir(), force=True)
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="file: exists and is not a folder"):
        render_solutions(tmp_path / "file")


def test_an_unknown_exercise_tag_is_named() -> None:
    notebook = {"cells": [{"cell_type": "code", "metadata": {"tags": [f"{EXERCISE_TAG}nope"]}, "source": ["..."],
                           "outputs": [], "execution_count": None}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    with pytest.raises(UsageError, match="unknown exercise 'nope'"):
        fill_solutions(notebook, "x.ipynb")


def test_the_solutions_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solutions", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    count = len(exercise_notebooks()) + len(lesson_notebooks())
    assert out.startswith(f"wrote {count} instructor notebook(s) into {tmp_path}:")
    assert main(["solutions", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agentloops: error: ") and "pass --force" in err and len(err.strip().splitlines()) == 1
    assert main(["solutions", "--out", str(tmp_path), "--force"]) == 0
    assert main(["solutions"]) == 2
    assert "the following arguments are required: --out" in capsys.readouterr().err


@pytest.mark.notebook
def test_instructor_notebooks_run_and_every_check_passes(tmp_path: Path) -> None:
    from tests.test_notebooks import execute_notebook

    written = render_solutions(tmp_path)
    lesson = tmp_path / "03-truncated.ipynb"  # one lesson stands for the rest: running all 16 costs minutes
    sizes = {s.notebook: len(all_exercises(name)) for name, s in SETS.items()}
    for path in [*written[:len(exercise_notebooks())], lesson]:
        executed = execute_notebook(path)
        texts = ["".join(o.get("data", {}).get("text/plain", "")) for c in executed.cells if c.cell_type == "code"
                 for o in c.get("outputs", [])]
        verdicts = [t for t in texts if t.startswith(("✓ Correct — q", "✗ Not yet — q", "… Not attempted — q"))]
        assert verdicts and all(v.startswith("✓ Correct") for v in verdicts), verdicts
        if path == lesson:
            quiz = [t for t in texts if t.startswith(("✓ Correct", "✗ Not yet", "… Not attempted"))
                    and " — q" not in t.splitlines()[0]]
            assert len(quiz) == 3 and all(t.startswith("✓ Correct") for t in quiz), quiz
        else:
            size = sizes[f"exercises/{path.name}"]
            assert len(verdicts) == size
            assert any(t.startswith(f"Progress this session: {size} of {size} passed (all done)") for t in texts)
