"""Where the shipped scenarios and notebooks live, in a checkout and in a wheel.

A source checkout keeps them at the top of the repository (``data/``,
``notebooks/``); the wheel carries copies inside the package
(``agentloops/_data``, ``agentloops/_notebooks``). Callers never need to know
which one they got.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _locate(packaged: str, checkout: str) -> Path:
    inside = _PACKAGE / packaged
    return inside if inside.is_dir() else _PACKAGE.parent / checkout


def data_dir() -> Path:
    """The folder of shipped data (``scenarios/`` and friends)."""
    return _locate("_data", "data")


def notebooks_dir() -> Path:
    """The folder of shipped notebooks."""
    return _locate("_notebooks", "notebooks")


def checkout_root() -> Path:
    """The root of the source checkout this package runs from (meaningful when :func:`is_checkout`)."""
    return _PACKAGE.parent


def is_checkout() -> bool:
    """True when running from a source checkout rather than an installed wheel."""
    return not (_PACKAGE / "_notebooks").is_dir() and (_PACKAGE.parent / "pyproject.toml").is_file()


def copy_notebooks(destination: Path) -> list[Path]:
    """Copy the shipped notebooks into ``destination``, never overwriting a learner's file.

    Returns:
        The files that were copied (files already present are left alone).
    """
    source = notebooks_dir()
    copied: list[Path] = []
    for path in sorted(source.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        target = destination / path.relative_to(source)
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        copied.append(target)
    return copied


def find_tool(name: str) -> str | None:
    """``name`` next to this Python first (the same environment), then on the PATH."""
    return shutil.which(name, path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))


@dataclass(frozen=True)
class ArticleCell:
    """One cell of the source article's table, as it printed it: calls, whether the cap was hit, tools run."""

    steps: int
    hit_cap: bool
    tools: tuple[str, ...]


def article_table() -> dict[str, dict[str, ArticleCell]]:
    """The source article's table, transcribed from the article (``data/article/table.json``), not computed.

    Kept as data so a notebook compares the package's runs with what the
    article printed — not the package with itself.

    Returns:
        scenario → criterion → :class:`ArticleCell`, in the article's order.
    """
    raw = json.loads((data_dir() / "article" / "table.json").read_text(encoding="utf-8"))
    return {
        row["scenario"]: {
            criterion: ArticleCell(cell["steps"], cell["hit_cap"], tuple(cell["tools"]))
            for criterion, cell in row["cells"].items()
        }
        for row in raw["rows"]
    }
