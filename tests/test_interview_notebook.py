"""Notebook 17's sanity cells recompute rather than read widget state: run the notebook, play with its widgets
(type into the practice box, sit the whole mock interview, time a speech), then run every sanity cell again."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
DRILLS = [NOTEBOOKS / "17-interview-drill.ipynb", NOTEBOOKS / "zh" / "17-interview-drill.ipynb"]

PLAY = '''
box.answer.value = "Set max_steps to 10."
box.button.click()
box.check("不需要完成条件。")
for text in ["A step cap is the real fix.", "", "我们回放轨迹，因为它显示循环从哪开始。", "trust the model", "x"]:
    mock.answer.value = text
    mock.submit.click()
assert mock.done
mock.restart.click()
mock.submit_answer("We replay the trace, because it shows where the loop began.")
timer.start_button.click()
timer.stop_button.click()
'''


@pytest.mark.parametrize("path", DRILLS, ids=["en", "zh"])
def test_the_sanity_cells_still_pass_after_the_widgets_are_played_with(path: Path) -> None:
    """The notebook, then a cell that plays with every widget, then every sanity cell again — one ordinary
    execution (nbclient starts and shuts down the kernel and its event loop), failing on the first error."""
    nb = nbformat.read(path, as_version=4)
    sanity = [copy.deepcopy(c) for c in nb.cells if "sanity-check" in c.metadata.get("tags", [])]
    assert len(sanity) >= 12
    nb.cells += [nbformat.v4.new_code_cell(PLAY), *sanity]
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index}"  # the copies would repeat their originals' ids
    env = {**os.environ, "PYDEVD_DISABLE_FILE_VALIDATION": "1", "JUPYTER_PLATFORM_DIRS": "1"}
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    client.execute(env=env)  # raises CellExecutionError, with the cell's source, if a cell fails
