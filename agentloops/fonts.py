"""The font the charts draw Chinese with: Noto Sans CJK SC, shipped by a dependency (``mplfonts``).

A system font would do, but a fresh machine may have none, and then every Chinese label is a
row of boxes. So the font comes with the package's own dependencies and is registered with
matplotlib on first use; a system CJK font is still used when the shipped one is missing.
(Browsers draw the notebooks with *system* fonts: ``agentloops doctor`` checks for one.)
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

CJK_FAMILY = "Noto Sans CJK SC"
"""The family name matplotlib knows the shipped font by."""

SHIPPED_FILE = "fonts/NotoSansCJKsc-Regular.otf"
"""The font file inside the ``mplfonts`` package."""


def shipped_font() -> Path | None:
    """The shipped CJK font file, or ``None`` when ``mplfonts`` is not installed."""
    try:
        path = Path(str(resources.files("mplfonts") / SHIPPED_FILE))
    except ModuleNotFoundError:
        return None
    return path if path.is_file() else None


@functools.lru_cache(maxsize=1)
def register_cjk_font() -> str | None:
    """Register the shipped CJK font with matplotlib (once) and return its family, else ``None``."""
    path = shipped_font()
    if path is None:
        return None
    from matplotlib import font_manager

    if not any(Path(entry.fname) == path for entry in font_manager.fontManager.ttflist):
        font_manager.fontManager.addfont(str(path))
    return str(font_manager.FontProperties(fname=str(path)).get_name())


BOLD = 700
"""The weight matplotlib draws titles at (``"bold"``)."""


def regular_for_missing_bold(families: Iterable[str]) -> list[str]:
    """Let a bold request for a family that has no bold face draw its regular face, without a warning.

    The shipped font is Regular only, and so is many a system's CJK font. matplotlib then picks the
    regular face anyway but logs ``findfont: Failed to find font weight bold`` to stderr, which a notebook
    shows in red under every chart with a bold Chinese title. Registering the regular face once more at
    the bold weight says the same thing without the noise: the Chinese glyphs of a title are drawn at the
    weight that exists (regular), the Latin ones in DejaVu Sans Bold. Returns the families aliased.
    """
    from matplotlib import font_manager

    manager: Any = font_manager.fontManager
    aliased = []
    for family in families:
        faces = [entry for entry in manager.ttflist if entry.name == family and entry.style == "normal"]
        if not faces or any(_weight(entry.weight) == BOLD for entry in faces):
            continue
        regular = min(faces, key=lambda entry: abs(_weight(entry.weight) - 400))
        manager.ttflist.append(dataclasses.replace(regular, weight=BOLD))
        aliased.append(family)
    if aliased:
        manager._findfont_cached.cache_clear()  # an earlier lookup may have cached the warning's answer
    return aliased


def _weight(weight: object) -> int:
    """A font weight as a number, the way matplotlib compares them (``"bold"`` → 700)."""
    from matplotlib import font_manager

    return int(font_manager._normalize_weight(weight))  # type: ignore[arg-type]
