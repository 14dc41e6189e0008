"""Instructor copies of the exercise notebooks, with the reference solutions filled in.

The learner notebooks under ``notebooks/exercises/`` mark each answer cell
with the tag ``exercise:<id>``. :func:`render_solutions` copies every
exercise notebook into a folder the instructor names and replaces each tagged
cell's source with the source of the reference solution
(:mod:`agentloops.exercises.solutions`), under a banner that says what the
copy is. The learner notebooks are never modified, and existing files are
not overwritten unless asked.

Notebooks are plain JSON; this module reads and writes them with :mod:`json`
so that rendering needs nothing beyond the package.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentloops.errors import UsageError
from agentloops.resources import notebooks_dir

EXERCISE_TAG = "exercise:"
"""Prefix of the tag that marks a learner's answer cell: ``exercise:stop-criterion``."""

BANNER = (
    "> **Instructor copy — reference solutions filled in. Do not hand this out.**\n"
    "> Rendered by `agentloops solutions`; the learner's version is `notebooks/exercises/{name}`.\n"
    "> Every check below should say ✓ Correct. Each solution is one way to write it: a learner's may differ and "
    "still pass."
)


def exercises_dir() -> Path:
    """The folder of the learner exercise notebooks."""
    return notebooks_dir() / "exercises"


def exercise_notebooks() -> list[Path]:
    """The learner exercise notebooks, in order."""
    return sorted(p for p in exercises_dir().glob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def answer_cells(notebook: dict[str, Any]) -> list[tuple[int, str]]:
    """(cell index, exercise id) of every answer cell, in order."""
    found = []
    for index, cell in enumerate(notebook.get("cells", [])):
        for tag in cell.get("metadata", {}).get("tags", []):
            if cell.get("cell_type") == "code" and tag.startswith(EXERCISE_TAG):
                found.append((index, tag[len(EXERCISE_TAG):]))
    return found


def _lines(text: str) -> list[str]:
    """Notebook JSON keeps source as a list of lines, each but the last ending in a newline."""
    lines = text.rstrip("\n").splitlines(keepends=True)
    return lines or [""]


def fill_solutions(notebook: dict[str, Any], name: str) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``notebook`` with every answer cell replaced by its reference solution, and a banner on top.

    Args:
        notebook: the learner notebook, as parsed JSON.
        name: its file name, for the banner.

    Returns:
        The instructor copy and the ids of the exercises it filled in.

    Raises:
        UsageError: a cell is tagged with an unknown exercise id.
    """
    from agentloops.exercises.registry import get_exercise

    copy = json.loads(json.dumps(notebook))
    filled = []
    for index, exercise_id in answer_cells(copy):
        exercise = get_exercise(exercise_id)
        cell = copy["cells"][index]
        cell["source"] = _lines(exercise.solution_source())
        cell["metadata"]["tags"] = [*cell["metadata"].get("tags", []), "solution"]
        filled.append(exercise_id)
    banner = {"cell_type": "markdown", "metadata": {"tags": ["instructor-banner"]},
              "source": _lines(BANNER.format(name=name))}
    if copy.get("nbformat", 4) >= 4 and copy.get("nbformat_minor", 0) >= 5:
        banner["id"] = "instructor-banner"
    copy["cells"].insert(0, banner)
    return copy, filled


def render_solutions(out_dir: Path, *, force: bool = False) -> list[Path]:
    """Write instructor copies of every exercise notebook into ``out_dir``.

    Args:
        out_dir: the folder to write into (created if needed).
        force: overwrite files that already exist there.

    Returns:
        The files written.

    Raises:
        UsageError: ``out_dir`` is the learner notebooks' own folder, a file is in the way, or a copy exists
            and ``force`` is false.
    """
    out_dir = Path(out_dir)
    source_dir = exercises_dir()
    if out_dir.resolve() == source_dir.resolve():
        raise UsageError(f"{out_dir}: this is the learner notebooks' own folder; choose another one")
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"{out_dir}: exists and is not a folder")
    sources = exercise_notebooks()
    if not sources:
        raise UsageError(f"{source_dir}: no exercise notebooks found")
    targets = [out_dir / path.name for path in sources]
    existing = [t for t in targets if t.exists()]
    if existing and not force:
        raise UsageError(f"{existing[0]} already exists; pass --force to overwrite it, or choose another folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    for path, target in zip(sources, targets):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        copy, _ = fill_solutions(notebook, path.name)
        target.write_text(json.dumps(copy, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return targets
