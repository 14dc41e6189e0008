"""The font the charts draw Chinese with: Noto Sans CJK SC, shipped by a dependency (``mplfonts``).

A system font would do, but a fresh machine may have none, and then every Chinese label is a
row of boxes. So the font comes with the package's own dependencies and is registered with
matplotlib on first use; a system CJK font is still used when the shipped one is missing.
(Browsers draw the notebooks with *system* fonts: ``agentloops doctor`` checks for one.)
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

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
