"""How long does a widget take to answer in the page? Measured in a real browser, as a learner sees it.

Each widget is served alone by Voilà (a one-cell notebook written to a temporary folder) and driven by
headless Chromium through Playwright (the system browser, ``/usr/bin/chromium``; nothing is downloaded).
An answer is timed from the moment the control is changed in the page (a value picked in a menu, a
number typed into a slider's box and Enter) to the moment the widget's chart (its ``<img>``) shows
new pixels: the kernel's work, both trips over the websocket and the browser's redraw.

For each widget, every change is a real change (cycling through values), after a pause in which a
learner reads the page (``--read`` seconds; the budget explorer works ahead in that time). The
baseline, measured in the same page, is a change that needs no kernel work: the budget explorer's
slider moved back to the setting just shown, which only swaps in the kept PNG.

Run:  .venv/bin/python benchmarks/bench_widgets_browser.py [--changes N] [--read SECONDS]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
TARGET_MS = 100.0

WIDGETS: dict[str, str] = {
    "criteria explorer": "from agentloops.widgets import explorer\nexplorer()",
    "controller explorer": "from agentloops.controller.teaching import widgets\nwidgets.controller_explorer()",
    "budget explorer": "from agentloops.controller.teaching import widgets\nwidgets.budget_explorer(n=80)",
}
"""The widgets driven, each as the one code cell of its page."""

CHART = {"criteria explorer": "img.agentloops-chart", "controller explorer": "img.agentloops-ctl-chart",
         "budget explorer": "img.agentloops-ctl-chart"}


def _notebook(code: str, folder: Path) -> Path:
    path = folder / "page.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {},
                                           "outputs": [], "source": code}],
                                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}},
                                "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    return path


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(page: Path) -> tuple[subprocess.Popen[bytes], str]:
    port, token = _port(), secrets.token_hex(8)
    voila = str(Path(sys.executable).parent / "voila")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_PLATFORM_DIRS": "1"}
    process = subprocess.Popen([voila, str(page), "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
                                f"--token={token}", "--Voila.port_retries=0"], env=env, cwd=page.parent,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    return process, f"http://127.0.0.1:{port}/?token={token}"


def _changed(page: Any, selector: str, before: str | None, timeout_s: float = 60.0) -> None:
    page.wait_for_function("([sel, old]) => { const i = document.querySelector(sel); return i && i.src && "
                           "i.src !== old; }", arg=[selector, before], timeout=timeout_s * 1000)


_CHANGE_AND_WAIT = """async ([control, chart, kind, value]) => {
    const img = document.querySelector(chart);
    const old = img.src;
    const shown = new Promise(resolve => {
        const watch = new MutationObserver(() => { if (img.src !== old) { watch.disconnect(); resolve(); } });
        watch.observe(img, {attributes: true, attributeFilter: ["src"]});
    });
    const start = performance.now();
    if (kind === "menu") {
        const menu = document.querySelector(control);
        menu.selectedIndex = Array.from(menu.options).findIndex(o => o.text === value);
        menu.dispatchEvent(new Event("change", {bubbles: true}));
    } else {  // a slider's readout box: type the number, leave the box (as Enter does)
        const box = document.querySelector(control);
        box.focus();
        box.textContent = String(value);
        const enter = {key: "Enter", code: "Enter", keyCode: 13, which: 13, bubbles: true, cancelable: true};
        box.dispatchEvent(new KeyboardEvent("keydown", enter));
        box.dispatchEvent(new KeyboardEvent("keypress", enter));
        box.dispatchEvent(new KeyboardEvent("keyup", enter));
        box.blur();
    }
    const late = new Promise(resolve => setTimeout(() => resolve("late"), 30000));
    if (await Promise.race([shown, late]) === "late") { return -1; }  // the chart did not change
    await img.decode().catch(() => null);
    return performance.now() - start;
}"""
"""Runs in the page: change the control, then wait for the chart's new image to be decoded; milliseconds."""


def _timed(page: Any, chart: str, control: str, kind: str, value: object) -> float:
    elapsed = float(page.evaluate(_CHANGE_AND_WAIT, [control, chart, kind, value]))
    if elapsed < 0:
        raise RuntimeError(f"{control} = {value!r}: the chart did not change within 30 s")
    return elapsed


def drive(name: str, page: Any, changes: int, read_s: float) -> dict[str, list[float]]:
    """Change the widget's controls ``changes`` times each, reading ``read_s`` between changes."""
    chart = CHART[name]
    found: dict[str, list[float]] = {}
    if name == "criteria explorer":  # stop ↔ length on round 1: the run, so the chart, changes every time
        found["finish_reason (stop ↔ length)"] = [
            _timed(page, chart, ".agentloops-finish-reason select", "menu", ("stop", "length")[i % 2])
            for i in range(changes) if not time.sleep(read_s)]
    elif name == "controller explorer":
        menu = ".agentloops-ctl-fault select"
        labels = page.locator(menu).first.locator("option").all_inner_texts()
        found["fault"] = [_timed(page, chart, menu, "menu", labels[(i + 1) % len(labels)])
                          for i in range(changes) if not time.sleep(read_s)]
    else:  # the steps budget is also the cap in the chart's title: every setting draws new pixels
        box = ".agentloops-ctl-budget-steps .widget-readout"
        start = int(page.locator(box).first.inner_text())
        values = [start - 1 - i for i in range(changes)]
        found["one step (steps -1)"] = [_timed(page, chart, box, "slider", v)
                                        for v in values if not time.sleep(read_s)]
        time.sleep(read_s)
        found["back to a setting shown (kept)"] = [_timed(page, chart, box, "slider", values[-2])]
        time.sleep(read_s)
        far = values[-1] + 6  # a setting no step so far led towards: not computed ahead
        found[f"multi-step move (steps {values[-1]} → {far})"] = [_timed(page, chart, box, "slider", far)]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=4)
    parser.add_argument("--read", type=float, default=2.0, help="seconds a learner reads between changes")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    print(f"{'widget':<22}{'control':<36}{'median ms':>10}{'max ms':>9}  target < {TARGET_MS:.0f} ms")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--headless"])
        try:
            for name, code in WIDGETS.items():
                with tempfile.TemporaryDirectory() as folder:
                    process, url = _serve(_notebook(code, Path(folder)))
                    try:
                        page = browser.new_page(viewport={"width": 1500, "height": 1400})
                        deadline = time.monotonic() + 60
                        while True:
                            try:
                                page.goto(url, wait_until="domcontentloaded", timeout=60000)
                                break
                            except Exception:
                                if time.monotonic() > deadline:
                                    raise
                                time.sleep(0.5)
                        _changed(page, CHART[name], None, 120)
                        for control, times in drive(name, page, args.changes, args.read).items():
                            verdict = "meets" if statistics.median(times) < TARGET_MS else "MISSES"
                            print(f"{name:<22}{control:<36}{statistics.median(times):>10.0f}{max(times):>9.0f}"
                                  f"  {verdict}")
                        page.close()
                    finally:
                        os.killpg(process.pid, signal.SIGTERM)
                        process.wait(30)
        finally:
            browser.close()
    print(f"reading pause between changes: {args.read:g} s; timed from the change in the page to new chart pixels")


if __name__ == "__main__":
    main()
