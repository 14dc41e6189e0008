"""The charts' CJK font comes with the package's own dependencies and covers every Chinese character we ship."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest

from agentloops import fonts, plots

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


def shipped_chinese() -> set[str]:
    """Every CJK character (and full-width punctuation) in the catalogs and the Chinese notebooks."""
    chars: set[str] = set()
    for path in (ROOT / "agentloops" / "locale").rglob("*.po"):
        chars |= set(CJK.findall(path.read_text(encoding="utf-8")))
    for path in (ROOT / "notebooks" / "zh").rglob("*.ipynb"):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            chars |= set(CJK.findall("".join(cell["source"])))
    return chars


def test_the_font_is_shipped_by_a_dependency_and_registered() -> None:
    path = fonts.shipped_font()
    assert path is not None and path.is_file() and "mplfonts" in path.parts
    assert fonts.register_cjk_font() == fonts.CJK_FAMILY
    from matplotlib import font_manager

    assert any(Path(entry.fname) == path for entry in font_manager.fontManager.ttflist)
    assert fonts.CJK_FAMILY in plots.chart_style()["font.family"]


def test_the_font_covers_every_chinese_character_we_ship() -> None:
    from matplotlib.ft2font import FT2Font

    path = fonts.shipped_font()
    assert path is not None
    face = FT2Font(str(path))
    chars = shipped_chinese() | set("终止判据步数上限")
    missing = sorted(c for c in chars if face.get_char_index(ord(c)) == 0)
    assert not missing, f"{len(missing)} characters have no glyph: {''.join(missing[:40])}"
    assert face.get_char_index(ord("\uffff")) == 0, "the coverage check can fail"


@pytest.mark.filterwarnings("error")
def test_a_chart_with_chinese_text_draws_without_missing_glyphs() -> None:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph … missing from font" would raise
        with plt.rc_context(plots.chart_style()):
            figure, axes = plt.subplots()
            axes.set_title("终止判据：空转调用 7 次（步数上限 8）")
            figure.canvas.draw()
    plt.close(figure)
