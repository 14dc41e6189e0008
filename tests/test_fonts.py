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


_FRESH_CHART = """
import matplotlib
matplotlib.use("Agg")
from matplotlib import font_manager
if {only_shipped}:  # a machine whose only CJK font is the shipped Regular face
    font_manager.fontManager.ttflist[:] = [e for e in font_manager.fontManager.ttflist if "CJK" not in e.name]
import agentloops as al
from agentloops import plots
from agentloops.i18n import speaking
with speaking("zh"):
    figure = plots.wasted_chart(al.compare(), title="终止判据浪费了什么")
    figure.savefig(__import__("io").BytesIO(), format="png")
    print(figure.texts[0].get_fontweight())
"""


@pytest.mark.parametrize("only_shipped", [True, False])
def test_a_chart_drawn_in_a_fresh_process_writes_nothing_to_stderr(only_shipped: bool) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _FRESH_CHART.format(only_shipped=only_shipped)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and done.stdout.strip() == "bold"


def test_a_family_without_a_bold_face_gets_its_regular_face_at_the_bold_weight() -> None:
    from matplotlib import font_manager

    fonts.register_cjk_font()
    entries = font_manager.fontManager.ttflist
    saved = list(entries)
    try:
        entries[:] = [e for e in entries if not (e.name == fonts.CJK_FAMILY and e.weight in (700, "bold"))]
        assert fonts.regular_for_missing_bold([fonts.CJK_FAMILY, "DejaVu Sans"]) == [fonts.CJK_FAMILY]
        assert fonts.regular_for_missing_bold([fonts.CJK_FAMILY]) == []  # once is enough
        bold = font_manager.FontProperties(family=fonts.CJK_FAMILY, weight="bold")
        regular = font_manager.FontProperties(family=fonts.CJK_FAMILY)
        assert font_manager.findfont(bold) == font_manager.findfont(regular)
    finally:
        entries[:] = saved
        font_manager.fontManager._findfont_cached.cache_clear()
