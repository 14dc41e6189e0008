"""Notebooks 13 and 17, both editions: play as each notebook invites, then run on — nothing may fail.

The harness of ``tests/test_things_to_try.py`` (:func:`~tests.test_things_to_try.drive`): every cell in turn in
a fresh kernel; right after a cell that shows a widget, hidden *play* cells — the notebook's own "Things to
try", step by step, asserting what the notebook says they show, then every control driven generically — and
the widgets are left where the play ended. Then the rest runs, and every ``sanity-check`` cell runs again.

- 13: the prediction locked in and revealed; the budget explorer as its Things to try says (the step budget
  at 3, the shortest path; retries at 0, then 6; wall time at 15 s), then every slider to both ends; and a
  learner who solved both "your turn" cells (the reference stages pasted in) runs on.
- 17: a learner types their own answer into the practice box and presses the button, times an answer of
  their own with the speaking timer, sits the whole mock interview, and writes ``box.check("…")`` as the
  notebook's last words invite.

Notebook 13's lesson parts are checked as 10–12's are (``tests/test_things_to_try_part2.py``): the prediction
is the cell just before the run it predicts, each "your turn" cell is checked by its exercise, its starting
code runs and fails, and the reference solution passes — also pasted into the lesson with only its imports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_notebooks import NOTEBOOKS, _read
from tests.test_things_to_try import PLAY_EVERYTHING, drive

N13, N17 = "13-budgets-and-no-progress.ipynb", "17-interview-drill.ipynb"
PATHS = [NOTEBOOKS / name for name in (N13, N17)] + [NOTEBOOKS / "zh" / name for name in (N13, N17)]
IDS = [f"{'zh' if p.parent.name == 'zh' else 'en'}/{p.name[:2]}" for p in PATHS]

THINGS_TO_TRY_13 = r"""
from collections import Counter as _Counter
_e = budgets
_codes = lambda: _Counter(r["ctl_code"] for r in _e.state.comparison.rows)
_opening = _e.state.comparison.summary()["ctl_succeeded"], _codes()["budget:steps"]
_e.sliders["steps"].value = 3                                    # the shortest path
assert _e.state.comparison.summary()["ctl_succeeded"] < _opening[0]
assert _codes()["budget:steps"] > _opening[1], "budget_exhausted grows"
_e.sliders["retries"].value = 0
_no_retries = _codes()["budget:retries"]
_e.sliders["retries"].value = 6
assert _codes()["budget:retries"] < _no_retries
_e.sliders["wall_time_s"].value = 15                             # below the 95th percentile plus one timeout
assert _codes()["budget:wall_time_s"] > 0, "a few slow timeouts are enough to spend it"
"""

SOLVED_13 = {
    "def my_budget_check(": "from agentloops.exercises.solutions import my_budget_check\nassert q9.check().passed",
    "def my_repeat(": "from agentloops.exercises.solutions import my_repeat\nassert q10.check().passed",
}
"""A learner who solved a "your turn" cell: the reference pasted in, the check passing, then on."""

OWN_ANSWER = ("The step cap is only a fuse. I keep a task state, stop when the completion condition holds over it, "
              "give each task type its own budgets and one shared retry budget, and block a repeated call that "
              "brought nothing new.")

PLAY_17 = {
    "box = interview.practice()": rf"""
box.answer.value = {OWN_ANSWER!r}                                # typed into the practice box
box.button.click()                                               # "Check my answer"
assert box.state.percent > 0 and box.state.language == "en"
""",
    "timer = interview.speaking_timer()": rf"""
for _choice in [v for _label, v in timer.script.options]:
    timer.script.value = _choice
timer.own.value = {OWN_ANSWER!r}
timer.start_button.click()
timer.stop_button.click()
assert timer.last is not None
""",
    "mock = interview.mock_interview(seed=7)": rf"""
while not mock.done:
    mock.answer.value = {OWN_ANSWER!r}
    mock.submit.click()
assert len(mock.summary().answers) == len(mock.questions)
mock.restart.click()
mock.submit_answer({OWN_ANSWER!r})
box.check({OWN_ANSWER!r})                                        # "or box.check('…') in a new cell"
""",
}


def _after(path: Path) -> Any:
    def after(cell: Any) -> list[tuple[str, str]]:
        source = cell.source
        steps = []
        if path.name == N13:
            steps += [("the Things to try", THINGS_TO_TRY_13)] if "budgets = widgets.budget_explorer(" in source else []
            steps += [("a solved your-turn cell", play) for marker, play in SOLVED_13.items() if marker in source]
            if "predict(" in source or "budget_explorer(" in source:
                steps.append(("playing with the widgets", PLAY_EVERYTHING))
        else:
            steps += [("the learner's own answer", play) for marker, play in PLAY_17.items() if marker in source]
        return steps

    return after


@pytest.mark.notebook
@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_every_check_survives_play(path: Path) -> None:
    played: list[str] = []
    after = _after(path)

    def counting(cell: Any) -> list[tuple[str, str]]:
        steps = after(cell)
        played.extend(label for label, _source in steps)
        return steps

    failures = drive(path, counting, timeout=600)
    assert not failures, "\n\n".join(failures)
    expected = ({"the Things to try": 1, "a solved your-turn cell": 2, "playing with the widgets": 2}
                if path.name == N13 else {"the learner's own answer": 3})
    assert {label: played.count(label) for label in expected} == expected, played


# --------------------------------------------------------------------------- 13's own parts

LESSON = [NOTEBOOKS / N13, NOTEBOOKS / "zh" / N13]
STAGES = {"my_budget_check": "q9", "my_repeat": "q10"}


def _cells(path: Path) -> list[Any]:
    return list(_read(path).cells)


def _your_turn(path: Path, variable: str) -> Any:
    found = [c for c in _cells(path) if c.cell_type == "code" and f"def {variable}(" in c.source]
    assert len(found) == 1, f"{path}: expected one cell defining {variable}"
    return found[0]


@pytest.mark.parametrize("path", LESSON, ids=["en", "zh"])
def test_the_prediction_comes_just_before_the_run_it_predicts(path: Path) -> None:
    code = [c.source for c in _cells(path) if c.cell_type == "code"]
    predictions = [i for i, source in enumerate(code) if source.lstrip().startswith("predict(")]
    assert len(predictions) == 1, f"{path}: expected one prediction"
    assert code[predictions[0] + 1].strip() == "ctl.repeated_call_trace()"
    assert "lambda:" in code[predictions[0]] and "explanations=" in code[predictions[0]]
    assert "from agentloops.widgets import predict" in code[0]


@pytest.mark.parametrize("variable", sorted(STAGES))
@pytest.mark.parametrize("path", LESSON, ids=["en", "zh"])
def test_each_your_turn_cell_is_checked_by_its_exercise_and_never_tagged(path: Path, variable: str) -> None:
    exercise = STAGES[variable]
    cells = _cells(path)
    turn = _your_turn(path, variable).source
    at = next(i for i, c in enumerate(cells) if c.source == turn)
    assert [c.source for c in cells[at + 1:at + 3]] == [f"{exercise}.check()", f"# {exercise}.hint()\n# {exercise}.solution()"]
    assert not any(tag.startswith("exercise:") for c in cells for tag in c.metadata.get("tags", []))
    assert "from agentloops.exercises.building import q9, q10" in cells[1].source
    prose = cells[at - 1].source
    assert "exercises/03-build-the-controller.ipynb" in prose and f"{exercise}.check()" in prose


@pytest.mark.parametrize("variable", sorted(STAGES))
def test_the_starting_code_runs_fails_naming_the_scenarios_and_the_solution_passes(variable: str) -> None:
    """"Run all" spoils nothing: the stub runs and its check says which scenarios went differently."""
    import agentloops.exercises.building as building
    from agentloops.exercises import solutions
    from agentloops.i18n import speaking

    namespace: dict[str, Any] = {}
    exec(_your_turn(NOTEBOOKS / N13, variable).source, namespace)  # our own notebook's cell, as a learner runs it
    exercise = getattr(building, STAGES[variable])
    with speaking("en"):
        starting = exercise.check(namespace[variable])
        shown = str(starting)
    assert starting.status == "incorrect" and starting.failures, starting
    assert all(f"✗ {failure.name}: with your " in shown for failure in starting.failures)
    assert exercise.check(getattr(solutions, variable)).passed


@pytest.mark.parametrize("path", LESSON, ids=["en", "zh"])
def test_a_solution_a_learner_pastes_runs_with_the_lessons_imports(path: Path) -> None:
    """``q.solution()`` shows the reference's source; pasted into the lesson, it must find every name it uses."""
    import ast
    import inspect

    from agentloops.exercises import solutions

    setup = _cells(path)[1].source
    imports = [node for node in ast.parse(setup).body if isinstance(node, (ast.Import, ast.ImportFrom))]
    for variable, exercise in STAGES.items():
        namespace: dict[str, Any] = {}
        exec(compile(ast.Module(body=imports, type_ignores=[]), str(path), "exec"), namespace)
        exec(inspect.getsource(getattr(solutions, variable)), namespace)
        assert namespace[exercise].check(namespace[variable]).passed, variable


@pytest.mark.notebook
def test_the_play_catches_13_as_it_was(tmp_path: Path) -> None:
    """Not blind: with the cell that took the comparison from the explorer (as 13 had it), the Things to try
    leave the step budget at 3 and the shortest-path check fails — when the learner runs on, and re-run."""
    import json

    notebook = json.loads((NOTEBOOKS / N13).read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell.get("id") == "13-45":
            cell["source"] = ["loose = budgets.state.comparison\n",
                              "tight = widgets.budget_comparison(budgets.n, steps=3)\n",
                              "print(tight.summary())"]
    path = tmp_path / N13
    path.write_text(json.dumps(notebook), encoding="utf-8")
    failures = drive(path, _after(path), timeout=600)
    assert len(failures) == 2 and all("assert loose.cap == 6 and tight.cap == 3" in f for f in failures), failures


def test_13_states_the_time_its_walk_gives_in_both_editions() -> None:
    """The exercises, questions and prediction added here lengthen 13: its stated time follows the timed walk."""
    import importlib.util
    import re
    import sys

    spec = importlib.util.spec_from_file_location("walk_times", NOTEBOOKS.parent / "scripts" / "walk_times.py")
    assert spec is not None and spec.loader is not None
    walk_times = sys.modules.setdefault("walk_times", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(walk_times)  # registered first: its dataclass looks its module up
    walked = walk_times.walk(NOTEBOOKS / N13)
    assert walked.exercises == 2 and walk_times.stated(NOTEBOOKS / N13) == walked.minutes
    title = next(c.source for c in _cells(NOTEBOOKS / "zh" / N13) if c.cell_type == "markdown")
    assert re.search(rf"约 {walked.minutes} 分钟", title)
