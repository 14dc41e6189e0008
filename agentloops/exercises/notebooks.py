"""Instructor copies of the notebooks: the reference solutions and the quiz answers filled in.

The learner notebooks mark each answer cell with the tag ``exercise:<id>`` —
the exercise notebooks under ``notebooks/exercises/`` and the Part-1 lessons,
which embed one exercise each. :func:`render_solutions` copies every exercise
notebook and every lesson with an exercise or self-check questions into a
folder the instructor names, replaces each tagged cell's source with the
source of the reference solution (:mod:`agentloops.exercises.solutions`), and
turns each ``qN.check(...)`` of a self-check question into
``qN.check(<its answer>)`` — the answer read from the question's own
definition (the cell tagged ``self-check-definitions``), so the key is the
code that grades. A banner on top says what the copy is. The learner
notebooks are never modified, and existing files are not overwritten unless asked.

Both editions: in Chinese (``set_language("zh")`` or ``AGENTLOOPS_LANG=zh``) the helpers look up the
Chinese mirror under ``notebooks/zh/`` (same relative paths) and fall back, file by file, to the
English notebook where a mirror does not exist yet; the banner is written in the language in use.

Notebooks are plain JSON; this module reads and writes them with :mod:`json`
so that rendering needs nothing beyond the package.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from agentloops.errors import UsageError
from agentloops.exercises.registry import get_exercise
from agentloops.i18n import N_, _, language
from agentloops.resources import notebooks_dir

EXERCISE_TAG = "exercise:"
"""Prefix of the tag that marks a learner's answer cell: ``exercise:stop-criterion``."""

QUIZ_TAG = "self-check-definitions"
"""Tag of the cell that defines a notebook's self-check questions (``q1 = Question(...)``)."""

BANNER = N_(
    "> **Instructor copy — reference solutions and quiz answers filled in. Do not hand this out.**\n"
    "> Rendered by `agentloops solutions`; the learner's version is `notebooks/{name}`.\n"
    "> Every check below should say ✓ Correct. Each solution is one way to write it: a learner's may differ and "
    "still pass."
)
"""The instructor copy's banner (a message id: written in the language in use)."""

ZH_DIR = "zh"
"""The Chinese edition's folder under ``notebooks/``: a mirror of the English paths."""


def edition_dir() -> Path:
    """The notebooks folder of the language in use: ``notebooks/`` or its Chinese mirror ``notebooks/zh/``."""
    return notebooks_dir() / ZH_DIR if language() == "zh" else notebooks_dir()


def edition_of(path: Path) -> Path:
    """The notebook at ``path`` (an English one) in the language in use: its mirror when that exists, else itself."""
    mirror = edition_dir() / path.relative_to(notebooks_dir())
    return mirror if mirror.is_file() else path


def exercises_dir() -> Path:
    """The folder of the learner exercise notebooks, in the language in use."""
    return edition_dir() / "exercises"


def _notebooks(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def exercise_notebooks() -> list[Path]:
    """The learner exercise notebooks, in order: the Chinese ones in Chinese (each falls back to English)."""
    return [edition_of(path) for path in _notebooks(notebooks_dir() / "exercises")]


def lesson_notebooks() -> list[Path]:
    """The lessons with something to fill in: an embedded exercise or self-check questions."""
    found = []
    for path in (edition_of(p) for p in _notebooks(notebooks_dir())):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        if answer_cells(notebook) or quiz_cell(notebook) is not None:
            found.append(path)
    return found


class SolutionsError(UsageError):
    """The instructor copies cannot be written where asked, or a notebook's answers cannot be read."""


def quiz_cell(notebook: dict[str, Any]) -> int | None:
    """Index of the cell that defines the self-check questions, if any."""
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") == "code" and QUIZ_TAG in cell.get("metadata", {}).get("tags", []):
            return index
    return None


def quiz_answers(source: str, where: str = "notebook") -> dict[str, str]:
    """Question name → the source of its answer, from a definitions cell (``q1 = Question(answer=…)``).

    A function answer (``lambda: run(...).steps``) gives its body, so running the cell computes it.

    Raises:
        SolutionsError: the cell does not parse, or a question has no ``answer=``.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise SolutionsError(_("{where}: the self-check definitions do not parse (line {line})").format(
            where=where, line=exc.lineno)) from None
    answers = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "Question"):
            continue
        name = node.targets[0].id
        given = {k.arg: k.value for k in node.value.keywords}
        value = given.get("answer") or (node.value.args[1] if len(node.value.args) > 1 else None)
        if value is None:
            raise SolutionsError(_("{where}: question {name} has no answer=").format(where=where, name=name))
        expression = value.body if isinstance(value, ast.Lambda) else value
        answers[name] = ast.get_source_segment(source, expression) or ast.unparse(expression)
    return answers


_CHECK = re.compile(r"^(\w+)\.check\(\.\.\.\)")


def fill_quiz(notebook: dict[str, Any], where: str = "notebook") -> list[str]:
    """Fill every ``qN.check(...)`` with the question's answer, in place; the names filled."""
    index = quiz_cell(notebook)
    if index is None:
        return []
    answers = quiz_answers("".join(notebook["cells"][index]["source"]), where)
    filled = []
    for cell in notebook["cells"]:
        source = "".join(cell.get("source", ""))
        found = _CHECK.match(source) if cell.get("cell_type") == "code" else None
        if found and found.group(1) in answers:
            name = found.group(1)
            rest = source.partition("\n")[2]
            key = _("answer key")
            cell["source"] = _lines(f"{name}.check({answers[name]})  # {key}\n{rest}")
            filled.append(name)
    return filled


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
        The instructor copy and what it filled in: exercise ids, then quiz question names.

    Raises:
        UsageError: a cell is tagged with an unknown exercise id.
    """
    copy = json.loads(json.dumps(notebook))
    filled = []
    for index, exercise_id in answer_cells(copy):
        exercise = get_exercise(exercise_id)
        cell = copy["cells"][index]
        cell["source"] = _lines(exercise.solution_source())
        cell["metadata"]["tags"] = [*cell["metadata"].get("tags", []), "solution"]
        filled.append(exercise_id)
    filled += fill_quiz(copy, name)
    banner = {"cell_type": "markdown", "metadata": {"tags": ["instructor-banner"]},
              "source": _lines(_(BANNER).format(name=name))}
    if copy.get("nbformat", 4) >= 4 and copy.get("nbformat_minor", 0) >= 5:
        banner["id"] = "instructor-banner"
    copy["cells"].insert(0, banner)
    return copy, filled


def render_solutions(out_dir: Path, *, force: bool = False) -> list[Path]:
    """Write instructor copies of every exercise notebook and every lesson with answers into ``out_dir``.

    Args:
        out_dir: the folder to write into (created if needed).
        force: overwrite files that already exist there.

    Returns:
        The files written: the exercise notebooks, then the lessons.

    Raises:
        UsageError: ``out_dir`` is a learner notebooks folder, a file is in the way, a copy exists and ``force``
            is false, or the folder cannot be written (:class:`SolutionsError`).
    """
    out_dir = Path(out_dir)
    source_dir = exercises_dir()
    learner_dirs = {d.resolve() for d in (notebooks_dir(), notebooks_dir() / "exercises", notebooks_dir() / ZH_DIR,
                                          notebooks_dir() / ZH_DIR / "exercises")}
    if out_dir.resolve() in learner_dirs:
        raise UsageError(_("{folder}: this is the learner notebooks' own folder; choose another one").format(
            folder=out_dir))
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(_("{folder}: exists and is not a folder").format(folder=out_dir))
    sources = exercise_notebooks()
    if not sources:
        raise UsageError(_("{folder}: no exercise notebooks found").format(folder=source_dir))
    sources += lesson_notebooks()
    targets = [out_dir / path.name for path in sources]
    existing = [t for t in targets if t.exists()]
    if existing and not force:
        raise UsageError(_("{file} already exists; pass --force to overwrite it, or choose another folder").format(
            file=existing[0]))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for path, target in zip(sources, targets):
            notebook = json.loads(path.read_text(encoding="utf-8"))
            copy, _filled = fill_solutions(notebook, str(path.relative_to(notebooks_dir())))
            target.write_text(json.dumps(copy, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise SolutionsError(_("solutions --out {folder}: cannot write there ({error}); expected a folder you can "
                               "write into").format(folder=out_dir, error=exc.strerror or exc)) from None
    return targets
