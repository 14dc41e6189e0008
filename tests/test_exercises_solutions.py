"""Reference solutions pass their checkers; learner notebooks spoil nothing; instructor copies render and run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentloops.cli import main
from agentloops.errors import UsageError
from agentloops.exercises import progress
from agentloops.exercises.notebooks import (
    EXERCISE_TAG,
    answer_cells,
    exercise_notebooks,
    exercises_dir,
    fill_solutions,
    render_solutions,
)
from agentloops.exercises.registry import SETS, all_exercises, get_exercise

EXERCISES = all_exercises()


@pytest.fixture(autouse=True)
def _fresh_progress():
    progress.reset()
    yield
    progress.reset()


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else source


@pytest.mark.parametrize("exercise", EXERCISES, ids=[e.id for e in EXERCISES])
def test_every_reference_solution_passes_its_checker(exercise: Any) -> None:
    result = exercise.judge(exercise.reference())
    assert result.passed, str(result)
    assert len(result.cases) >= 6


def test_each_set_has_its_notebook_and_each_exercise_one_answer_cell() -> None:
    assert [p.name for p in exercise_notebooks()] == [s.notebook for s in SETS.values()]
    tagged = [exercise_id for path in exercise_notebooks() for _, exercise_id in answer_cells(_load(path))]
    assert tagged == [e.id for e in EXERCISES]


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
        number = exercise.number
        assert f"q{number}.check()" in code and f"# q{number}.hint()\n# q{number}.solution()" in code
        assert not any(line.strip().startswith(f"q{number}.solution()") for cell in code for line in cell.splitlines())


def test_rendering_fills_every_answer_cell_with_its_solution(tmp_path: Path) -> None:
    before = {p: p.read_bytes() for p in exercise_notebooks()}
    written = render_solutions(tmp_path / "instructor")
    assert [p.name for p in written] == [p.name for p in before]
    assert {p: p.read_bytes() for p in exercise_notebooks()} == before  # the learner notebooks are untouched
    for path in written:
        notebook = _load(path)
        assert _source(notebook["cells"][0]).startswith("> **Instructor copy — reference solutions filled in.")
        for index, exercise_id in answer_cells(notebook):
            cell = notebook["cells"][index]
            assert _source(cell).strip() == get_exercise(exercise_id).solution_source().strip()
            assert "solution" in cell["metadata"]["tags"]


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
    assert out.startswith(f"wrote 2 instructor notebook(s) into {tmp_path}:")
    assert main(["solutions", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agentloops: error: ") and "pass --force" in err and len(err.strip().splitlines()) == 1
    assert main(["solutions", "--out", str(tmp_path), "--force"]) == 0
    assert main(["solutions"]) == 2
    assert "the following arguments are required: --out" in capsys.readouterr().err


@pytest.mark.notebook
def test_instructor_notebooks_run_and_every_check_passes(tmp_path: Path) -> None:
    from tests.test_notebooks import execute_notebook

    for path in render_solutions(tmp_path):
        executed = execute_notebook(path)
        texts = ["".join(o.get("data", {}).get("text/plain", "")) for c in executed.cells if c.cell_type == "code"
                 for o in c.get("outputs", [])]
        verdicts = [t for t in texts if t.startswith(("✓ Correct — q", "✗ Not yet — q", "… Not attempted — q"))]
        assert len(verdicts) == 3 and all(v.startswith("✓ Correct") for v in verdicts), verdicts
        assert any(t.startswith("Progress this session: 3 of 3 passed (all done)") for t in texts)
