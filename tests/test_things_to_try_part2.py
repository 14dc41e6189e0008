"""Notebooks 10, 11 and 12, both editions: play as each notebook invites, then run on — nothing may fail.

The harness is Part 1's (:mod:`tests.test_things_to_try`): every cell in turn in a fresh kernel,
and right after a cell that shows a widget — an explorer or a prediction — hidden *play* cells:
first the notebook's own "Things to try", step by step from the widget as it opens, each step
asserting what the notebook says it shows; then every control driven generically and every
prediction locked in and revealed. The widgets are left where the play ended; the remaining cells
run; then every ``sanity-check`` cell runs again.
A check that read a widget instead of recomputing from a fresh run fails here, with its source.

The "your turn" cells are checked too: their starting code is a naive first try that runs without
an error and fails its check (so "Run all" spoils nothing), the reference solution passes it, and
none of them is tagged as an exercise (those answer cells live in ``exercises/03``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_notebooks import NOTEBOOKS, _read
from tests.test_things_to_try import PLAY_EVERYTHING, drive

LESSONS = ("10-what-the-loop-updates.ipynb", "11-when-is-it-done.ipynb", "12-tool-errors.ipynb")
PATHS = [NOTEBOOKS / name for name in LESSONS] + [NOTEBOOKS / "zh" / name for name in LESSONS]
IDS = [f"{'zh' if p.parent.name == 'zh' else 'en'}/{p.name[:2]}" for p in PATHS]

THINGS_TO_TRY: dict[str, str] = {
    # 10: tick the block (converges however little the planner sees); block off, all messages (converges too);
    # back to the last 2 and add cities.
    "10": r"""
_e = explorer
_e.state_block.value = True
for _window in [v for _label, v in _e.window.options]:
    _e.window.value = _window
    assert _e.state.run.status == "succeeded", _window
_e.state_block.value = False
_e.window.value = None
assert _e.state.run.status == "succeeded"
_e.window.value = 2
for _cities in range(1, _e.cities.max + 1):
    _e.cities.value = _cities
    assert (_e.state.run.status == "succeeded") == (_cities == 1), _cities
""",
    # 11: the claims explorer's two controls, end to end; then the controller explorer: naive on the early
    # claimer "succeeds"; order-missing-id, then refund-handoff; steps lowered on weather-no-state until the fuse
    # blows before the fingerprint check can act.
    "11-claims": r"""
for _p in (claims.p.min, claims.p.max, 0.3):
    for _k in range(claims.pushback.min, claims.pushback.max + 1):
        claims.p.value, claims.pushback.value = _p, _k
        assert "unverified" not in claims.state.counts["default"]
""",
    "11": r"""
_e = explorer
_opening = _e.policy.value
_e.policy.value = "naive"
assert _e.state.run.status == "succeeded" and not _e.state.run.stop.verified
_e.scenario.value = "order-missing-id"
_e.scenario.value = "refund-handoff"
_e.policy.value = _opening
_e.scenario.value = "weather-no-state"
assert _e.state.run.status == "no_progress"
_steps = _e.budgets["steps"]
for _value in range(_steps.value, _steps.min - 1, -1):
    _steps.value = _value
    if _e.state.run.status == "budget_exhausted":
        break
assert _e.state.run.code == "budget:steps"
""",
    # 12: every fault of the menu; timeout always under degrade, then naive; the retry budget at 0 and 1.
    "12": r"""
_e = explorer
for _fault in [v for _label, v in _e.fault.options]:
    _e.fault.value = _fault
_e.fault.value = "timeout always"
_e.policy.value = "degrade"
_e.policy.value = "naive"
for _retries in (0, 1):
    _e.budgets["retries"].value = _retries
    assert _e.state.run.usage["retries"] <= _retries
""",
}


def _shows_a_widget(source: str) -> bool:
    return "predict(" in source or "_explorer(" in source


def _things_to_try(path: Path, source: str) -> list[str]:
    """The notebook's own "Things to try" for the widget this cell builds (none: only the generic play)."""
    number = path.name[:2]
    if "claims_explorer(" in source:
        return [THINGS_TO_TRY["11-claims"]]
    if "explorer = widgets." in source and number in THINGS_TO_TRY:
        return [THINGS_TO_TRY[number]]
    return []


def play_and_run_on(path: Path) -> list[str]:
    """Execute ``path``: after each widget cell its Things to try (from the widget as it opens, as the list says),
    then play with everything; then every sanity cell again. Returns what failed (empty: all fine)."""
    played = 0

    def after(cell: Any) -> list[tuple[str, str]]:
        nonlocal played
        if not _shows_a_widget(cell.source):
            return []
        played += 1
        return [*(("the Things to try", steps) for steps in _things_to_try(path, cell.source)),
                ("playing with the widgets", PLAY_EVERYTHING)]

    failures = drive(path, after, timeout=600)
    if played < 2:
        failures.append(f"{path}: expected a prediction and an explorer to play with; found {played} widget cells")
    return failures


@pytest.mark.notebook
@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_every_check_survives_play(path: Path) -> None:
    failures = play_and_run_on(path)
    assert not failures, "\n\n".join(failures)


# --------------------------------------------------------------------------- the lesson's own parts

STAGES = {"10": ("my_update", "q11"), "11": ("my_completion", "q7"), "12": ("my_route", "q8")}


def _cells(path: Path) -> list[Any]:
    return list(_read(path).cells)


def _your_turn(path: Path) -> Any:
    variable = STAGES[path.name[:2]][0]
    found = [c for c in _cells(path) if c.cell_type == "code" and f"def {variable}(" in c.source]
    assert len(found) == 1, f"{path}: expected one cell defining {variable}"
    return found[0]


SHOWN = {"10": 'no_state = ctl.run_scenario("weather-no-state")', "11": "early = ctl.Controller(weather, eager",
         "12": "six = {fault:"}
"""The cell that shows the run each notebook's prediction is about."""


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_a_prediction_comes_just_before_the_run_it_predicts(path: Path) -> None:
    code = [c.source for c in _cells(path) if c.cell_type == "code"]
    predictions = [i for i, source in enumerate(code) if source.lstrip().startswith("predict(")]
    assert len(predictions) == 1, f"{path}: expected one prediction"
    shown = [i for i, source in enumerate(code) if SHOWN[path.name[:2]] in source]
    assert shown == [predictions[0] + 1], f"{path}: the prediction must be the code cell just before the run"
    assert "lambda:" in code[predictions[0]] and "explanations=" in code[predictions[0]]


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_the_your_turn_cell_is_checked_by_its_exercise_and_never_tagged(path: Path) -> None:
    exercise = STAGES[path.name[:2]][1]
    cells = _cells(path)
    turn = _your_turn(path).source
    at = next(i for i, c in enumerate(cells) if c.source == turn)
    following = [c.source for c in cells[at + 1:at + 3]]
    assert following == [f"{exercise}.check()", f"# {exercise}.hint()\n# {exercise}.solution()"]
    assert not any(tag.startswith("exercise:") for c in cells for tag in c.metadata.get("tags", []))
    setup = next(c.source for c in cells if c.cell_type == "code")
    assert f"from agentloops.exercises.building import {exercise}" in setup
    prose = cells[at - 1].source
    assert "exercises/03-build-the-controller.ipynb" in prose and f"{exercise}.check()" in prose


@pytest.mark.parametrize("number", sorted(STAGES))
def test_the_starting_code_runs_fails_its_check_and_the_solution_passes(number: str) -> None:
    """"Run all" spoils nothing: the stub runs, and the check says it is wrong; the reference passes."""
    import agentloops.exercises.building as building
    from agentloops.controller.policy.routes import Accept, Retry
    from agentloops.exercises import solutions

    variable, exercise = STAGES[number]
    path = NOTEBOOKS / next(name for name in LESSONS if name.startswith(number))
    namespace: dict[str, Any] = {"Accept": Accept, "Retry": Retry}
    exec(_your_turn(path).source, namespace)  # our own notebook's cell, to run its starting code as a learner would
    check = getattr(building, exercise)
    starting = check.check(namespace[variable])
    assert starting.status == "incorrect" and starting.failures, starting
    assert all(failure.name in str(starting) for failure in starting.failures)
    assert check.check(getattr(solutions, variable)).passed


def test_a_check_that_reads_the_explorer_is_caught(tmp_path: Path) -> None:
    """The harness is not blind: a sanity cell reading the played explorer fails after the play."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    source = _read(NOTEBOOKS / LESSONS[2])
    setup = next(c for c in source.cells if c.cell_type == "code")
    nb = new_notebook(cells=[
        new_code_cell(setup.source),
        new_code_cell('weather = ctl.make_task("weather_compare")\n'
                      'explorer = widgets.controller_explorer("weather-normal", fault="timeout once")\nexplorer'),
        new_code_cell('assert explorer.state.run.status == "succeeded"', metadata={"tags": ["sanity-check"]}),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "12-made-up.ipynb"
    nbformat.write(nb, path)
    failures = play_and_run_on(path)
    assert any("explorer.state.run.status" in failure for failure in failures)


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_no_sanity_cell_reads_a_widget(path: Path) -> None:
    """Statically too: no check names an explorer the notebook built (the play above shows why it matters)."""
    from tests.test_part2_claims import reads_widget_state, widget_names

    built = widget_names(str(path.relative_to(NOTEBOOKS)))
    assert built, f"{path}: no explorer found; the scan would be blind"
    for cell in _cells(path):
        if "sanity-check" in cell.metadata.get("tags", []):
            assert not reads_widget_state(cell.source, built), f"{path}: {cell.get('id')} reads a widget"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_the_solution_a_learner_pastes_runs_with_the_lessons_imports(path: Path) -> None:
    """``q.solution()`` shows the reference's source; pasted into the lesson, it must find every name it uses."""
    import ast
    import inspect

    from agentloops.exercises import solutions

    variable, exercise = STAGES[path.name[:2]]
    setup = next(c.source for c in _cells(path) if c.cell_type == "code")
    imports = [node for node in ast.parse(setup).body if isinstance(node, (ast.Import, ast.ImportFrom))]
    namespace: dict[str, Any] = {}
    exec(compile(ast.Module(body=imports, type_ignores=[]), str(path), "exec"), namespace)
    exec(inspect.getsource(getattr(solutions, variable)), namespace)
    assert namespace[exercise].check(namespace[variable]).passed
