"""How long do the notebooks take to run top to bottom? Target: part 1 (00–06) together under 60 s.

Each notebook runs as the test suite runs it: nbclient, a fresh ``python3``
kernel, the notebook's folder as working directory. The baseline, measured in
the same process, is an empty notebook in a fresh kernel — what starting a
kernel costs before any cell does work — so the printed ratio says how much of
each notebook's time is its own.

Run:  .venv/bin/python benchmarks/bench_notebooks.py [NAME_FRAGMENT ...]
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
PART_ONE = ("00-", "01-", "02-", "03-", "04-", "05-", "06-")
TARGET_S = 60.0


def run_seconds(nb: nbformat.NotebookNode, folder: Path) -> float:
    """Execute ``nb`` in a fresh kernel and return the wall time in seconds."""
    env = {**os.environ, "PYDEVD_DISABLE_FILE_VALIDATION": "1", "JUPYTER_PLATFORM_DIRS": "1"}
    start = time.perf_counter()
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}})
    client.execute(env=env)
    return time.perf_counter() - start


def main(argv: Sequence[str]) -> None:
    paths = sorted(p for p in NOTEBOOKS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    if argv:
        paths = [p for p in paths if any(fragment in p.name for fragment in argv)]
    empty = new_notebook(cells=[new_code_cell("pass")])
    empty.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    baseline = min(run_seconds(empty, NOTEBOOKS) for _ in range(3))

    print(f"{'notebook':<38}{'seconds':>9}{'× empty kernel':>16}")
    times: dict[Path, float] = {}
    for path in paths:
        times[path] = run_seconds(nbformat.read(path, as_version=4), path.parent)
        name = path.relative_to(NOTEBOOKS).as_posix()
        print(f"{name:<38}{times[path]:>9.1f}{times[path] / baseline:>16.1f}")
    part_one = sum(t for p, t in times.items() if p.parent == NOTEBOOKS and p.name.startswith(PART_ONE))
    print(f"{'all listed notebooks':<38}{sum(times.values()):>9.1f}")
    print(f"baseline: an empty notebook in a fresh kernel: {baseline:.2f} s")
    verdict = "meets" if part_one < TARGET_S else "MISSES"
    print(f"part 1 (00–06) together: {part_one:.1f} s — target < {TARGET_S:.0f} s: {verdict}")


if __name__ == "__main__":
    main(sys.argv[1:])
