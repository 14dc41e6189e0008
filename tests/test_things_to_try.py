"""Play with every widget of notebooks 00–07 as the notebook invites, then run on: nothing may fail.

A learner does not run a notebook straight through. They run a widget cell,
play — move every slider, pick every option, follow the "Things to try" list —
and then run the cells below it. So this harness executes each notebook cell
by cell in a fresh kernel and, right after every cell that displays a widget,
runs a hidden *play* cell in the same kernel:

- every widget is driven generically: each option of every dropdown and
  toggle, each end of every slider, every prediction locked in and revealed;
- notebook 06 also gets its numbered "Things to try", step by step, ending on
  the state the list leaves (long-chain with a raised cap — after ``max_steps``
  3 on truncated);
- the widget is left where the play ended, as a learner would leave it.

Then the remaining cells run, and finally every ``sanity-check`` cell runs
again. A check that read a widget's state instead of recomputing from a fresh
run fails here, with the cell's source.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.test_notebooks import NOTEBOOKS, _kernel_env, _read

PART1 = sorted(NOTEBOOKS.glob("0[0-7]-*.ipynb"))  # Part 1; 08 on belongs to later notebooks

PLAY_EVERYTHING = r"""
import ipywidgets as _w
from agentloops.widgets import Prediction as _Prediction

def _controls(widget, seen=None):
    seen = set() if seen is None else seen
    if id(widget) in seen:
        return []
    seen.add(id(widget))
    found = [widget]
    for child in getattr(widget, "children", ()):
        found += _controls(child, seen)
    return found

def _play(widget):
    if isinstance(widget, _Prediction):
        widget.reveal()                        # too early: said on screen, not raised
        widget.lock(widget.question.options[-1] if widget.question.options else 3)
        assert widget.reveal() is not None, "a locked-in prediction must reveal"
        return
    for control in _controls(widget):
        if getattr(control, "disabled", False):
            continue
        if isinstance(control, (_w.Dropdown, _w.ToggleButtons, _w.RadioButtons, _w.Select)):
            for value in [v[1] if isinstance(v, tuple) else v for v in control.options]:
                control.value = value
        elif isinstance(control, (_w.IntSlider, _w.BoundedIntText)):
            for value in (control.min, control.max, control.min):
                control.value = value

_played = 0
for _value in list(Out.values()):
    if isinstance(_value, _w.DOMWidget) and not getattr(_value, "_e4_played", False):
        _play(_value)
        _value._e4_played = True
        _played += 1
_played
"""

THINGS_TO_TRY_06 = r"""
_e = explorer
for _name in ("normal", "talk-and-call", "truncated", "talk-only"):       # 1. the article's four
    _e.scenario.value = _name
_e.scenario.value = "custom"                                               # 2. build two rounds by hand
_e.round_count.value = 2
_r1, _r2 = _e.rounds[0], _e.rounds[1]
_r1.content.value, _r1.tool_calls.value, _r1.finish_reason.value = "text", 1, "tool_calls"
_r2.content.value, _r2.tool_calls.value, _r2.finish_reason.value = "null", 0, "length"
_e.scenario.value = "truncated"; _e.cap.value = 3                          # 3. max_steps 3 on truncated
assert _e.state.records["content"].wasted_calls == 2
_e.scenario.value = "normal"; _e.cap.value = 8                             # 4. round 3 cut off
_e.rounds[2].finish_reason.value = "length"
_e.scenario.value = "long-chain"                                           # 5. raise the cap until it answers
for _cap in range(8, 13):
    _e.cap.value = _cap
    if _e.state.records["correct"].succeeded:
        break
assert _e.state.records["correct"].succeeded
"""


def _is_widget_cell(cell: Any) -> bool:
    source = cell.source
    return cell.cell_type == "code" and any(
        marker in source for marker in ("widgets.", "provider_explorer(", "explorer\n", "explorer =")
    )


def drive(path: Path, after: Callable[[Any], list[tuple[str, str]]], *, timeout: int = 300) -> list[str]:
    """Execute ``path`` cell by cell in one kernel, running the (label, source) steps ``after(cell)`` gives after
    each code cell, then every sanity cell again. Returns what failed, each with its source (empty: all fine)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    from nbformat.v4 import new_code_cell

    nb = _read(path)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(path.parent)}})
    failures: list[str] = []
    with client.setup_kernel(env=_kernel_env()):
        def run(source: str, index: int, label: str) -> None:
            try:
                client.execute_cell(new_code_cell(source), index)
            except CellExecutionError as error:
                failures.append(f"{path.name}: {label} failed\n--- source ---\n{source}\n--- error ---\n{error}")

        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            run(cell.source, index, f"cell {index + 1}")
            for label, source in after(cell):
                run(source, index, f"{label} after cell {index + 1}")
        for index, cell in enumerate(nb.cells):
            if "sanity-check" in cell.metadata.get("tags", []):
                run(cell.source, index, f"re-running check cell {index + 1} after the play")
    return failures


def play_and_run_on(path: Path) -> list[str]:
    """Execute ``path`` with play after each widget cell (and 06's Things to try); return what failed."""
    def after(cell: Any) -> list[tuple[str, str]]:
        if not _is_widget_cell(cell):
            return []
        steps = [("playing with the widgets", PLAY_EVERYTHING)]
        if path.name.startswith("06-") and cell.source.strip().endswith("explorer"):
            steps.append(("06's Things to try", THINGS_TO_TRY_06))
        return steps

    return drive(path, after)


def test_part1_notebooks_are_found() -> None:
    assert [p.name[:2] for p in PART1] == ["00", "01", "02", "03", "04", "05", "06", "07"]


def _notebook(tmp_path: Path, check: str) -> Path:
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell("from agentloops import widgets\nshown = widgets.explorer()\nshown"),
                             new_code_cell(check, metadata={"tags": ["sanity-check"]})])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "06-made-up.ipynb"
    nbformat.write(nb, path)
    return path


def test_a_check_that_reads_widget_state_is_caught_and_one_that_recomputes_is_not(tmp_path: Path) -> None:
    reads_state = play_and_run_on(_notebook(tmp_path, "assert shown.cap.value == 8"))
    assert len(reads_state) == 2  # once when the learner runs on, once when the checks are re-run
    assert all("assert shown.cap.value == 8" in failure for failure in reads_state)
    assert play_and_run_on(_notebook(tmp_path, "assert widgets.explorer().cap.value == 8")) == []


@pytest.mark.notebook
@pytest.mark.parametrize("path", PART1, ids=[p.name for p in PART1])
def test_every_check_survives_play(path: Path) -> None:
    failures = play_and_run_on(path)
    assert not failures, "\n\n".join(failures)
