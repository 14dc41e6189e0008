"""How long a learner spends in each notebook: the time its title states, from a timed walk.

The stated time ("about N minutes" under a notebook's title) is computed here, not guessed:

- **reading**: every word of the notebook's prose (markdown cells) at :data:`WORDS_PER_MINUTE`, and
  every line of code it shows at :data:`CODE_LINE_SECONDS` (a learner reads a cell before running it);
- **doing**: :data:`EXERCISE_MINUTES` for each checked exercise (write, check, read the verdict, fix),
  :data:`QUESTION_MINUTES` for each self-check question, :data:`WIDGET_MINUTES` for each widget to play with;
- **running**: the notebook's own execution time in a fresh kernel (``--run`` measures it with nbclient,
  as the tests run notebooks; without it the figure recorded in :data:`RUN_SECONDS` is used).

The total is rounded up to the next :data:`ROUND_TO` minutes. The Chinese edition states the same time
(its code is the same, cell by cell). ``tests/test_workshop.py`` checks that every notebook states the time
this model gives, so prose that grows makes its stated time, and the agendas, grow with it.

Run:  .venv/bin/python scripts/walk_times.py [--run] [NAME_FRAGMENT ...]
"""

from __future__ import annotations

import json
import math
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"

WORDS_PER_MINUTE = 120
"""Reading speed for technical prose in a second language: below the 200–250 of casual reading."""

CODE_LINE_SECONDS = 5
"""Reading one line of code before running its cell."""

EXERCISE_MINUTES = 10
"""One checked exercise: write it, check it, read the verdict, fix it once."""

QUESTION_MINUTES = 1
"""One self-check question."""

WIDGET_MINUTES = 2
"""One widget to try (move a slider, pick a value, read the redraw)."""

ROUND_TO = 5
"""Stated times are rounded up to this many minutes."""

RUN_SECONDS: dict[str, float] = {}
"""Execution seconds measured with ``--run`` (fresh kernel each); a notebook missing here counts 0 s."""

_WIDGET = re.compile(r"^\s*(?:\w+\s*=\s*)?widgets\.\w+\(", re.MULTILINE)
_QUESTION = re.compile(r"^\w+\.check\(\.\.\.\)", re.MULTILINE)
"""A self-check question: the learner replaces the ``...`` placeholder with an answer."""
_EXERCISE_IMPORT = re.compile(r"^from agentloops\.exercises\.\w+ import (.+)$", re.MULTILINE)
_CHECK = re.compile(r"^(\w+)\.check\(", re.MULTILINE)


def _exercises(code: str) -> int:
    """Checked exercises: names imported from ``agentloops.exercises`` whose ``.check(`` the notebook calls (with the
    learner's function or without), each counted once."""
    imported = {name.strip().split(" as ")[-1] for names in _EXERCISE_IMPORT.findall(code) for name in names.split(",")}
    return len(imported & set(_CHECK.findall(code)))


@dataclass(frozen=True)
class Walk:
    """The parts of one notebook's time, in minutes."""

    name: str
    reading: float
    exercises: int
    questions: int
    widgets: int
    running: float

    @property
    def total(self) -> float:
        """Every part, unrounded."""
        return (self.reading + self.exercises * EXERCISE_MINUTES + self.questions * QUESTION_MINUTES
                + self.widgets * WIDGET_MINUTES + self.running)

    @property
    def minutes(self) -> int:
        """The time to state: the total rounded up to :data:`ROUND_TO` minutes."""
        return int(math.ceil(self.total / ROUND_TO) * ROUND_TO)


def walk(path: Path, run_seconds: float | None = None) -> Walk:
    """The timed walk of one notebook (``run_seconds``: measured now, else :data:`RUN_SECONDS`)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    prose = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    shown = [c for c in code if not c.lstrip().startswith(("# Setup", "# Sanity check", "# The self-check"))]
    lines = sum(1 for c in shown for line in c.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    reading = len(prose.split()) / WORDS_PER_MINUTE + lines * CODE_LINE_SECONDS / 60
    joined = "\n".join(code)
    seconds = RUN_SECONDS.get(path.name, 0.0) if run_seconds is None else run_seconds
    return Walk(path.name, reading, _exercises(joined), len(_QUESTION.findall(joined)),
                len(_WIDGET.findall(joined)), seconds / 60)


def _run(path: Path) -> float:
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - start


def stated(path: Path) -> int | None:
    """The minutes a notebook states under its title, if any."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = re.search(r"about (\d+) minutes", "".join("".join(c["source"]) for c in cells
                                                      if c["cell_type"] == "markdown"))
    return int(found.group(1)) if found else None


def main(argv: Sequence[str]) -> None:
    run = "--run" in argv
    fragments = [a for a in argv if a != "--run"]
    paths = sorted(p for p in NOTEBOOKS.glob("*.ipynb") if stated(p) is not None)
    paths = [p for p in paths if not fragments or any(f in p.name for f in fragments)]
    print(f"{'notebook':<34}{'read':>6}{'ex':>4}{'q':>4}{'w':>4}{'run s':>7}{'total':>7}{'walk':>6}{'stated':>8}")
    for path in paths:
        w = walk(path, _run(path) if run else None)
        print(f"{path.name:<34}{w.reading:>6.1f}{w.exercises:>4}{w.questions:>4}{w.widgets:>4}"
              f"{w.running * 60:>7.1f}{w.total:>7.1f}{w.minutes:>6}{stated(path):>8}")
    print(f"reading at {WORDS_PER_MINUTE} words/min and {CODE_LINE_SECONDS} s per code line; {EXERCISE_MINUTES} min "
          f"per exercise, {QUESTION_MINUTES} per question, {WIDGET_MINUTES} per widget; rounded up to {ROUND_TO}")


if __name__ == "__main__":
    main(sys.argv[1:])
