"""A learner walks notebook 02 in a real JupyterLab: predict, then a wrong and a right stop test.

Optional: skipped, with the reason, when the system Chromium, Playwright or
JupyterLab is missing (``.ci/run`` installs Chromium from Debian's packages).
The test copies the notebooks the way ``agentloops lab`` does into a temporary
folder, starts JupyterLab on a free 127.0.0.1 port with a token (settings in a
temporary folder: every cell rendered, no news pop-up), opens notebook 02 in
headless Chromium through Playwright (the system browser; nothing is
downloaded) and, as a learner would:

1. runs all cells — the prediction widget waits, the exercise says "not attempted";
2. picks "content" in the prediction, locks it in, reveals: the widget says it was right;
3. types a wrong stop test (``bool(response.content)``) into the exercise cell and
   runs it and its check: "Not yet", naming talk-and-call;
4. types the right one and runs both again: "Correct".

A screenshot of the page at the end goes to ``artifacts/`` (git-ignored).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentloops.exercises.part1 import q02_stop_test
from agentloops.lab import prepare_folder
from agentloops.resources import find_tool

CASES_02 = len(q02_stop_test.build_cases(lambda response: not response.tool_calls))
"""The scenarios 02's check asks (those 01–02 teach), counted from the exercise itself."""

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"]
NOTEBOOK = "02-talk-and-call.ipynb"
SERVER_START_S = 90
STEP_S = 60

WRONG = "def my_stop_test(response):\n    return bool(response.content)"
RIGHT = "def my_stop_test(response):\n    return not response.tool_calls and response.finish_reason == 'stop'"

SETTINGS = {  # JupyterLab user settings: render every cell (no windowing), no news or update pop-ups
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                        "checkForUpdates": False},
}


def _skip_reason() -> str | None:
    if not CHROMIUM.is_file():
        return f"Chromium not found at {CHROMIUM} (Debian: apt-get install chromium; .ci/run installs it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install 'agentloops[browser]')"
    if find_tool("jupyter") is None:
        return "JupyterLab is not installed (pip install jupyterlab)"
    return None


pytestmark = [pytest.mark.browser, pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[str]:
    """JupyterLab serving a learner's copy of the notebooks; yields ``URL/{notebook}?token=…`` to format."""
    folder, _ = prepare_folder(tmp_path / "lab")
    port, token = _free_port(), secrets.token_hex(16)
    config, settings = tmp_path / "config", tmp_path / "settings"
    config.mkdir()
    (config / "jupyter_server_config.json").write_text(json.dumps(
        {"ServerApp": {"port": port, "port_retries": 0, "ip": "127.0.0.1", "open_browser": False},
         "IdentityProvider": {"token": token}}))
    for name, values in SETTINGS.items():
        path = settings / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config), JUPYTERLAB_SETTINGS_DIR=str(settings),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"), JUPYTER_RUNTIME_DIR=str(tmp_path / "run"),
               JUPYTER_PLATFORM_DIRS="1")
    jupyter = find_tool("jupyter")
    assert jupyter is not None
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen([jupyter, "lab", str(folder), "--no-browser", "--allow-root"], env=env,
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            assert server.poll() is None, f"JupyterLab exited: {(tmp_path / 'server.log').read_text()[-2000:]}"
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "JupyterLab did not answer in time"
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/lab/tree/{{notebook}}?token={token}"
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _menu(page: Any, *path: str) -> None:
    for name in path:
        page.locator("li[role='menuitem']", has_text=name).filter(has_text=name).first.click()


def _wait_idle(page: Any) -> None:
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=STEP_S * 1000)


def _cell(page: Any, text: str) -> Any:
    return page.locator(".jp-CodeCell", has=page.locator(".jp-InputArea", has_text=text)).first


def _open_and_run_all(page: Any, url: str) -> None:
    """Open the notebook, wait for its kernel, run all cells, and wait until the first code cell has run."""
    page.goto(url, wait_until="domcontentloaded", timeout=STEP_S * 1000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=STEP_S * 1000)
    page.locator(".jp-StatusBar-Item", has_text="| Idle").first.wait_for(timeout=STEP_S * 1000)
    first_prompt = page.locator(".jp-CodeCell .jp-InputPrompt").first
    for _ in range(3):  # a click that lands while the kernel is still connecting runs nothing: try again
        _menu(page, "Run", "Run All Cells")
        try:
            page.wait_for_function("el => /\\[\\d+\\]/.test(el.textContent)", arg=first_prompt.element_handle(),
                                   timeout=20_000)
            break
        except Exception:  # Playwright's TimeoutError: retry the menu
            continue
    _wait_idle(page)


def _write_and_check(page: Any, source: str) -> str:
    """Replace the exercise cell's code with ``source``, run it and its check; the check's output text."""
    editor = _cell(page, "def my_stop_test").locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(source)  # no key events: no auto-indent or auto-closed brackets
    page.keyboard.press("Shift+Enter")  # runs the cell, moves to the check cell
    page.keyboard.press("Shift+Enter")  # runs q02_stop_test.check()
    _wait_idle(page)
    check = _cell(page, "q02_stop_test.check()")
    output = check.locator(".jp-OutputArea-output").first
    output.wait_for(timeout=STEP_S * 1000)
    return str(output.inner_text())


def test_a_learner_predicts_then_writes_a_wrong_and_a_right_stop_test(lab: str) -> None:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        try:
            _open_and_run_all(page, lab.format(notebook=NOTEBOOK))
            page.wait_for_selector(".agentloops-prediction", timeout=STEP_S * 1000)
            _wait_idle(page)
            untouched = _cell(page, "q02_stop_test.check()").locator(".jp-OutputArea-output").first
            assert "Not attempted" in untouched.inner_text()

            prediction = page.locator(".agentloops-prediction").first
            assert prediction.locator(".agentloops-prediction-reveal button, button.agentloops-prediction-reveal"
                                      ).first.is_disabled()
            prediction.locator(".agentloops-prediction-choice button", has_text="content").first.click()
            prediction.locator("button.agentloops-prediction-lock").click()
            prediction.locator("button.agentloops-prediction-reveal").click()
            result = prediction.locator(".agentloops-prediction-result")
            result.get_by_text("Correct").wait_for(timeout=STEP_S * 1000)
            assert "You predicted 'content'" in result.inner_text()

            wrong = _write_and_check(page, WRONG)
            assert "Not yet" in wrong and "talk-and-call" in wrong, wrong
            right = _write_and_check(page, RIGHT)
            assert "Correct" in right and f"all {CASES_02} scenarios pass" in right, right
        finally:
            page.screenshot(path=str(ARTIFACTS / "browser-lesson-02.png"), full_page=False)
            browser.close()


def _in_view(box: dict[str, float] | None, area: dict[str, float] | None) -> bool:
    """``box`` lies wholly inside ``area`` (the notebook's visible scroll area, below JupyterLab's toolbars)."""
    return (box is not None and area is not None and box["y"] >= area["y"] - 1
            and box["y"] + box["height"] <= area["y"] + area["height"] + 1)


def test_the_explorer_chart_stays_in_view_while_a_round_is_edited_at_1440_by_900(lab: str) -> None:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        try:
            _open_and_run_all(page, lab.format(notebook="06-explorer.ipynb"))
            explorer = page.locator(".agentloops-explorer").first
            explorer.wait_for(timeout=STEP_S * 1000)
            _wait_idle(page)
            chart = explorer.locator("img.agentloops-chart")
            before = chart.get_attribute("src")
            finish = explorer.locator(".agentloops-round-1 .agentloops-finish-reason select")
            # the learner scrolls to the explorer; its first round must then be reachable without more scrolling
            explorer.evaluate("el => el.scrollIntoView({block: 'start'})")
            area = page.locator(".jp-NotebookPanel-notebook").first.bounding_box()
            assert _in_view(finish.bounding_box(), area), "round 1 of the script is below the fold"
            finish.select_option("stop")  # truncated's only round, now a plain stop: every test changes
            page.wait_for_function("([img, old]) => img.getAttribute('src') !== old",
                                   arg=[chart.element_handle(), before], timeout=STEP_S * 1000)
            assert _in_view(finish.bounding_box(), area), "the edited control left the screen"
            assert _in_view(chart.bounding_box(), area), "after the change the chart is not wholly in view"
        finally:
            page.screenshot(path=str(ARTIFACTS / "browser-lesson-06-explorer.png"), full_page=False)
            browser.close()


def test_a_learner_walks_the_chinese_edition_of_the_same_lesson(lab: str) -> None:
    """The same walk in ``zh/02``: the widgets, the checker's verdicts and its hints all speak Chinese."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        try:
            _open_and_run_all(page, lab.format(notebook="zh/" + NOTEBOOK))
            page.wait_for_selector(".agentloops-prediction", timeout=STEP_S * 1000)
            _wait_idle(page)
            untouched = _cell(page, "q02_stop_test.check()").locator(".jp-OutputArea-output").first
            assert "还没作答" in untouched.inner_text()

            prediction = page.locator(".agentloops-prediction").first
            prediction.locator(".agentloops-prediction-choice button", has_text="content").first.click()
            prediction.locator("button.agentloops-prediction-lock").click()
            prediction.locator("button.agentloops-prediction-reveal").click()
            result = prediction.locator(".agentloops-prediction-result")
            result.get_by_text("正确").first.wait_for(timeout=STEP_S * 1000)
            assert "你预测的是" in result.inner_text()

            wrong = _write_and_check(page, WRONG)
            assert "还不对" in wrong and "talk-and-call" in wrong, wrong
            right = _write_and_check(page, RIGHT)
            assert "正确" in right and f"{CASES_02} 个场景全部通过" in right, right
        finally:
            page.screenshot(path=str(ARTIFACTS / "browser-lesson-zh-02.png"), full_page=False)
            browser.close()
