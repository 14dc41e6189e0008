"""The Chinese edition in a real browser: its text is drawn with a font that has the glyphs, not boxes.

Optional, like the other browser tests: skipped with the reason when Chromium, Playwright,
JupyterLab or Voilà is missing. Two pages are opened in headless Chromium:

1. ``zh/00-start-here.ipynb`` in JupyterLab, run from the top as a learner would;
2. the Chinese criteria-explorer app page, served by Voilà.

For every element whose own text holds Chinese, Chromium is asked (DevTools protocol,
``CSS.getPlatformFontsForNode``) which platform fonts drew its text and how many glyphs each
drew. The test fails when the fonts that cover Chinese drew fewer glyphs than the element has
Chinese characters — that is what a fallback box is. Screenshots go to ``artifacts/``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, PAGE_RENDER_S, Server
from tests.test_browser import SKIP_REASON as APP_SKIP
from tests.test_browser_lesson import _open_and_run_all, _skip_reason, lab  # noqa: F401  (lab is a fixture)

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
ZH_APP_PAGE = ROOT / "notebooks" / "zh" / "app" / "criteria-explorer.ipynb"
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
CJK_FONT = re.compile(r"CJK|WenQuanYi|Hei|Song|Ming|Kai|PingFang|YaHei|Source Han|Droid Sans Fallback", re.I)

MARK = """(selector) => {
  const found = [];
  for (const root of document.querySelectorAll(selector)) {
    for (const el of [root, ...root.querySelectorAll('*')]) {
      const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('');
      const style = getComputedStyle(el), box = el.getBoundingClientRect();
      const onScreen = box.width > 0 && box.height > 0 && box.bottom > 0 && box.top < innerHeight;
      if (/[\\u3400-\\u9fff]/.test(own) && onScreen && el.tagName !== 'OPTION' && style.visibility !== 'hidden') {
        el.setAttribute('data-cjk-probe', String(found.length));
        found.push(own);
      }
    }
  }
  return found;
}"""
"""Marks every element on screen under ``selector`` whose own text nodes hold Chinese; returns those texts.

Only what is laid out on screen has fonts to ask about: JupyterLab skips the layout of cells far below the
fold, and a closed drop-down's options are not drawn."""


def glyph_report(page: Any, selector: str) -> list[tuple[str, int, dict[str, int]]]:
    """(own text, Chinese characters in it, {font family: glyphs drawn}) per marked element."""
    texts = page.evaluate(MARK, selector)
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    nodes = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-cjk-probe]"})["nodeIds"]
    report = []
    for node in nodes:
        attributes = cdp.send("DOM.getAttributes", {"nodeId": node})["attributes"]  # [name, value, name, …]
        index = int(dict(zip(attributes[0::2], attributes[1::2]))["data-cjk-probe"])
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
        text = texts[index]
        report.append((text, len(CJK.findall(text)), {f["familyName"]: int(f["glyphCount"]) for f in fonts}))
    cdp.detach()
    return report


def boxes(report: list[tuple[str, int, dict[str, int]]]) -> list[str]:
    """The elements whose Chinese characters were not all drawn by a font that covers Chinese."""
    bad = []
    for text, chinese, fonts in report:
        drawn = sum(count for family, count in fonts.items() if CJK_FONT.search(family))
        if drawn < chinese:
            bad.append(f"{text[:40]!r}: {chinese} Chinese characters, fonts used {fonts}")
    return bad


def test_the_box_detector_flags_text_drawn_without_a_cjk_font() -> None:
    assert boxes([("终止判据", 4, {"DejaVu Sans": 4})])
    assert boxes([("终止判据 stop", 4, {"Noto Sans CJK SC": 3, "DejaVu Sans": 5})])
    assert not boxes([("终止判据 stop", 4, {"Noto Sans CJK SC": 4, "DejaVu Sans": 5})])


def _check_page(page: Any, selector: str, name: str) -> None:
    report = glyph_report(page, selector)
    page.screenshot(path=str(ARTIFACTS / name), full_page=False)
    assert len(report) >= 5, f"too little Chinese text found under {selector}: {report}"
    bad = boxes(report)
    assert not bad, "Chinese drawn without a CJK font (fallback boxes):\n" + "\n".join(bad[:10])


@pytest.mark.browser
@pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))
def test_a_chinese_notebook_is_drawn_with_a_cjk_font(lab: str) -> None:  # noqa: F811
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        try:
            _open_and_run_all(page, lab.format(notebook="zh/00-start-here.ipynb"))
            page.locator(".jp-RenderedMarkdown h1").first.wait_for(timeout=PAGE_RENDER_S * 1000)
            _check_page(page, ".jp-Notebook", "browser-zh-notebook-00.png")
        finally:
            browser.close()


NO_CJK_FONTS = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir>{dejavu}</dir><cachedir>{cache}</cachedir></fontconfig>
"""
"""A fontconfig that knows only DejaVu: what a machine without a CJK font looks like to Chromium."""


def _app_page_report(tmp_path: Path, browser_env: dict[str, str] | None, shot: str) -> list[Any]:
    import os

    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    server = Server(tmp_path, page=ZH_APP_PAGE)
    try:
        if not server.ready.wait(30) or server.process.poll() is not None:
            pytest.fail(f"Voilà did not start:\n{server.log()}")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                                 env={**os.environ, **(browser_env or {})})
            try:
                page = browser.new_page(viewport={"width": 1500, "height": 1400})
                page.goto(server.url, wait_until="domcontentloaded", timeout=PAGE_RENDER_S * 1000)
                page.wait_for_selector(".agentloops-table table", timeout=PAGE_RENDER_S * 1000)
                report = glyph_report(page, "body")
                page.screenshot(path=str(ARTIFACTS / shot), full_page=False)
            finally:
                browser.close()
    finally:
        server.stop()
    assert len(report) >= 5, f"too little Chinese text on the app page: {report}"
    return report


@pytest.mark.browser
@pytest.mark.skipif(APP_SKIP is not None, reason=APP_SKIP or "")
def test_the_chinese_app_page_is_drawn_with_a_cjk_font(tmp_path: Path) -> None:
    bad = boxes(_app_page_report(tmp_path, None, "browser-zh-app-criteria.png"))
    assert not bad, "Chinese drawn without a CJK font (fallback boxes):\n" + "\n".join(bad[:10])


DEJAVU = Path("/usr/share/fonts/truetype/dejavu")


@pytest.mark.browser
@pytest.mark.skipif(APP_SKIP is not None or not DEJAVU.is_dir(), reason=APP_SKIP or f"no {DEJAVU}")
def test_without_a_cjk_font_the_same_page_is_caught_drawing_boxes(tmp_path: Path) -> None:
    config = tmp_path / "fonts.conf"
    config.write_text(NO_CJK_FONTS.format(dejavu=DEJAVU, cache=tmp_path / "fc-cache"), encoding="utf-8")
    report = _app_page_report(tmp_path, {"FONTCONFIG_FILE": str(config)}, "browser-zh-app-no-cjk-font.png")
    assert len(boxes(report)) == len(report), "with no CJK font every Chinese text must be reported"
