"""Every notebook runs top to bottom from a fresh kernel, and is stored clean.

The harness discovers ``notebooks/**/*.ipynb`` by itself (checkpoint copies
excluded), so a notebook added later is tested with no edit here. Each one is
executed with nbclient in a new ``python3`` kernel whose working directory is
the notebook's own folder — the way a learner opens it. A failing cell is
reported with its source and its error, not as a wall of kernel protocol.

A Chinese notebook (``notebooks/zh/``) is, in the same run, also read for English a learner would see in
its outputs (``tests/latin_words.py``): executing each notebook once keeps the suite's time down.

A second test keeps notebooks stored without outputs, execution counts or
saved widget state: outputs in the repository go stale, bloat diffs and hide
whether "Run all" still works.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
ZH = NOTEBOOKS / "zh"
CELL_TIMEOUT = 300
"""Seconds a single cell may take: generous, so a slow CI machine fails only on a real hang."""

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def find_notebooks(folder: Path = NOTEBOOKS) -> list[Path]:
    """Every notebook under ``folder``, sorted, without Jupyter's checkpoint copies."""
    return sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def _id(path: Path) -> str:
    return path.relative_to(NOTEBOOKS).as_posix() if path.is_relative_to(NOTEBOOKS) else path.name


def _kernel_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # silence the debugger's frozen-modules note
    env.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    return env


def _read(path: Path) -> Any:
    import nbformat

    return nbformat.read(path, as_version=4)


def _describe_failure(path: Path, nb: Any) -> str | None:
    """The first cell whose outputs hold an error (or a printed traceback), with its source; ``None`` if clean."""
    for index, cell in enumerate(nb.cells, 1):
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                trace = _ANSI.sub("", "\n".join(output.get("traceback", [])))
                return (f"{_id(path)}: cell {index} raised {output.get('ename')}: {output.get('evalue')}\n"
                        f"--- cell source ---\n{cell.source}\n--- traceback ---\n{trace}")
            text = output.get("text", "") if output.get("output_type") == "stream" else ""
            if "Traceback (most recent call last)" in text:
                return (f"{_id(path)}: cell {index} printed a traceback\n--- cell source ---\n{cell.source}\n"
                        f"--- output ---\n{_ANSI.sub('', text)}")
    return None


def execute_notebook(path: Path, timeout: int = CELL_TIMEOUT) -> Any:
    """Run ``path`` from a fresh kernel in its own folder; return the executed notebook (the file is untouched).

    Raises:
        AssertionError: a cell raised or printed a traceback; the message names the cell and shows its source.
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = _read(path)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute(env=_kernel_env())
    except CellExecutionError as error:
        raise AssertionError(_describe_failure(path, nb) or f"{_id(path)}: {error}") from None
    problem = _describe_failure(path, nb)
    if problem:
        raise AssertionError(problem)
    return nb


def stored_dirt(path: Path) -> list[str]:
    """What a stored notebook should not carry: outputs, execution counts, saved widget state."""
    nb = _read(path)
    problems = []
    for index, cell in enumerate(nb.cells, 1):
        if cell.cell_type != "code":
            continue
        if cell.get("outputs"):
            problems.append(f"cell {index} has outputs")
        if cell.get("execution_count") is not None:
            problems.append(f"cell {index} has execution_count {cell.execution_count}")
    if "widgets" in nb.metadata:
        problems.append("notebook metadata holds saved widget state")
    return problems


ALL = find_notebooks()


def test_notebooks_are_found() -> None:
    assert ALL, f"no notebooks under {NOTEBOOKS}"


def test_discovery_skips_checkpoints_and_finds_subfolders(tmp_path: Path) -> None:
    (tmp_path / "exercises").mkdir()
    (tmp_path / ".ipynb_checkpoints").mkdir()
    for name in ("a.ipynb", "exercises/b.ipynb", ".ipynb_checkpoints/a-checkpoint.ipynb", "notes.md"):
        (tmp_path / name).write_text("{}")
    assert [p.relative_to(tmp_path).as_posix() for p in find_notebooks(tmp_path)] == ["a.ipynb", "exercises/b.ipynb"]


@pytest.mark.parametrize("path", ALL, ids=[_id(p) for p in ALL])
def test_stored_without_outputs(path: Path) -> None:
    problems = stored_dirt(path)
    assert not problems, (f"{_id(path)} is stored with {'; '.join(problems)}. Clear them before committing "
                          "(JupyterLab: Edit → Clear Outputs of All Cells, then save).")


def test_stored_dirt_is_detected(tmp_path: Path) -> None:
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    result = new_output("execute_result", {"text/plain": "2"}, execution_count=3)
    nb = new_notebook(cells=[new_code_cell("1 + 1", execution_count=3, outputs=[result])])
    path = tmp_path / "dirty.ipynb"
    nbformat.write(nb, path)
    assert stored_dirt(path) == ["cell 1 has outputs", "cell 1 has execution_count 3"]


def test_a_failing_cell_is_reported_with_its_source(tmp_path: Path) -> None:
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell("x = 1"), new_code_cell("raise ValueError('the learner sees this')")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "broken.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(AssertionError, match=r"(?s)cell 2 raised ValueError: the learner sees this.*raise ValueError"):
        execute_notebook(path)


def _run_cases(paths: list[Path]) -> list[Any]:
    """One case per notebook; a Chinese one is marked ``zh_outputs`` (run them alone with ``-m zh_outputs``)."""
    return [pytest.param(p, id=_id(p), marks=[pytest.mark.zh_outputs] if p.is_relative_to(ZH) else [])
            for p in paths]


@pytest.mark.notebook
@pytest.mark.parametrize("path", _run_cases(ALL))
def test_notebook_runs_from_a_fresh_kernel(path: Path) -> None:
    nb = execute_notebook(path)
    if path.is_relative_to(ZH):
        from tests.latin_words import notebook_words, summary

        words = notebook_words(nb, path.relative_to(ZH).as_posix())
        assert not words, (f"{_id(path)} shows English a Chinese learner reads: translate it, or add the word "
                           f"with its reason to the allow-list in notebooks/glossary.md.\n{summary(words)}")
