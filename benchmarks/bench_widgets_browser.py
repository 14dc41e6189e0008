"""How long does a widget take to answer in the page? Measured in a real browser, as a learner sees it.

Each widget of the notebooks and app pages is served alone by Voilà (a one-cell notebook written to a
temporary folder, building the widget as its notebook does) and driven by headless Chromium through
Playwright (the system browser, ``/usr/bin/chromium``; nothing is downloaded). An answer is timed from the
moment a control is changed in the page (a value picked in a menu, a toggle or check box clicked, a number
typed into a slider's box and Enter) to the moment the widget's chart (its ``<img>``) shows new pixels —
or, for a setting whose chart is the same picture, its tables settle; or, for a widget without a chart,
its HTML is laid out: the kernel's work, both trips over the websocket and the browser's redraw. A change
after which nothing in the page changes within 8 s is listed, untimed.

For each widget, every control is changed ``--changes`` times (a menu or toggle to its next option, a
slider by one position), then each slider once to its far end (a "far move"), each after a pause in
which a learner reads the page (``--read`` seconds; the widgets work ahead in that time). The budget
explorer is driven as before: its steps slider one step down each time, back to a setting just shown
(only swaps in the kept PNG: the baseline within the page), then six steps up.

Run:  .venv/bin/python benchmarks/bench_widgets_browser.py [--changes N] [--read SECONDS] [--only WIDGET…]
(the before/after ratio: run it on a checkout of the commit before, in the same window, and divide.)
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

C = "from agentloops.controller.teaching import widgets\n"

WIDGETS: dict[str, str] = {
    "criteria explorer": "from agentloops.widgets import explorer\nexplorer()",
    "walkthrough": "from agentloops import widgets\nwidgets.walkthrough('normal')",
    "controller explorer": C + "widgets.controller_explorer()",
    "state explorer": C + "widgets.state_explorer()",
    "claims explorer": C + "widgets.claims_explorer()",
    "storm explorer": C + "widgets.storm_explorer(tools=2, retries=3)",
    "budget explorer": C + "widgets.budget_explorer(n=80)",
    "replay explorer": C + "widgets.replay_explorer()",
    "parallel explorer": C + "widgets.parallel_explorer()",
    "context explorer": C + "widgets.context_explorer()",
}
"""The widgets driven, each as the one code cell of its page (built as the notebooks build them)."""

CHART = {"criteria explorer": "img.agentloops-chart", "walkthrough": ".agentloops-walkthrough"}
"""What shows the answer: the widget's chart (``<img>``), else its HTML output; default the controller chart."""

CONTROLS: dict[str, list[tuple[str, str, str]]] = {
    "criteria explorer": [("criterion", ".agentloops-criterion", "toggle"), ("max_steps", ".agentloops-cap", "slider")],
    "walkthrough": [("call", ".agentloops-call", "slider"), ("criterion", ".agentloops-criterion", "toggle")],
    "controller explorer": [("policy", ".agentloops-ctl-policy", "menu"),
                            ("budget steps", ".agentloops-ctl-budget-steps", "slider")],
    "state explorer": [("TASK STATE", ".agentloops-ctl-send-state", "check"), ("cities", ".agentloops-ctl-cities",
                                                                             "slider"),
                       ("model sees", ".agentloops-ctl-window", "menu")],
    "claims explorer": [("pushback", ".agentloops-ctl-pushback", "slider"),
                        ("claim chance", ".agentloops-ctl-claim-chance", "slider:0.05")],
    "storm explorer": [("fallback tools", ".agentloops-ctl-chain", "slider"),
                       ("retry budget", ".agentloops-ctl-retries", "slider")],
    "replay explorer": [("scenario", ".agentloops-ctl-scenario", "menu"),
                        ("replayed policy", ".agentloops-ctl-policy", "toggle")],
    "parallel explorer": [("successes needed", ".agentloops-ctl-join", "slider"),
                          ("cancel at", ".agentloops-ctl-cancel", "slider:0.5")],
    "context explorer": [("check", ".agentloops-ctl-check", "check"), ("keep", ".agentloops-ctl-keep", "slider"),
                         ("compact over", ".agentloops-ctl-compact", "menu")],
}
"""Every other widget's controls driven, by their CSS class: a menu, a slider, toggle buttons or a check box.
A menu or toggle steps to the next option; a slider steps by one position, then moves far (to its far end).
In an order where a change shows something new (after "compaction: never", keeping turns changes nothing)."""


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
    page.wait_for_function("([sel, old]) => { const i = document.querySelector(sel); return i && (i.tagName !== 'IMG' "
                           "|| (i.src && i.src !== old)); }", arg=[selector, before], timeout=timeout_s * 1000)


_CHANGE_AND_WAIT = """async ([control, chart, kind, value]) => {
    const out = document.querySelector(chart);
    const image = out.tagName === "IMG";
    const tables = image ? Array.from(out.closest(".widget-vbox").querySelectorAll(".widget-html")) : [];
    const old = image ? out.src : out.innerHTML;
    let last = null;  // when an output last changed
    const shown = new Promise(resolve => {
        const drawn = new MutationObserver(() => {
            if ((image ? out.src : out.innerHTML) !== old) { last = performance.now(); drawn.disconnect(); resolve(); }
        });
        drawn.observe(out, image ? {attributes: true, attributeFilter: ["src"]}
                                 : {subtree: true, childList: true, characterData: true, attributes: true});
        // a setting whose chart is the same picture: the answer is its tables (given a second to settle)
        let settle = null;
        const written = new MutationObserver(() => {
            last = performance.now();
            clearTimeout(settle);
            settle = setTimeout(resolve, 1000);
        });
        tables.forEach(t => written.observe(t, {subtree: true, childList: true, characterData: true}));
    });
    const root = document.querySelector(control);
    const start = performance.now();
    if (kind === "menu") {
        const menu = root.tagName === "SELECT" ? root : root.querySelector("select");
        menu.selectedIndex = Array.from(menu.options).findIndex(o => o.text === value);
        menu.dispatchEvent(new Event("change", {bubbles: true}));
    } else if (kind === "toggle") {
        Array.from(root.querySelectorAll("button")).find(b => b.textContent.trim() === value).click();
    } else if (kind === "check") {
        root.querySelector("input[type=checkbox]").click();
    } else {  // a slider's readout box: type the number, leave the box (as Enter does)
        const box = root.classList.contains("widget-readout") ? root : root.querySelector(".widget-readout");
        box.focus();
        box.textContent = String(value);
        const enter = {key: "Enter", code: "Enter", keyCode: 13, which: 13, bubbles: true, cancelable: true};
        box.dispatchEvent(new KeyboardEvent("keydown", enter));
        box.dispatchEvent(new KeyboardEvent("keypress", enter));
        box.dispatchEvent(new KeyboardEvent("keyup", enter));
        box.blur();
    }
    const late = new Promise(resolve => setTimeout(() => resolve("late"), 8000));
    if (await Promise.race([shown, late]) === "late") { return -1; }  // nothing changed: this setting looks the same
    if (image && out.src !== old) { await out.decode().catch(() => null); last = performance.now(); }
    else if (!image) { await new Promise(resolve => requestAnimationFrame(() => resolve())); last = performance.now(); }
    return last - start;
}"""
"""Runs in the page: change the control, then wait for the new chart decoded (or, when the chart stays the
same picture, for the tables to settle; or the HTML output laid out); milliseconds to the last change."""


_READ = """([control, kind]) => {
    const root = document.querySelector(control);
    if (kind === "menu") { const m = root.querySelector("select"); return [Array.from(m.options).map(o => o.text),
                                                                          m.selectedIndex]; }
    if (kind === "toggle") {
        const b = Array.from(root.querySelectorAll("button"));
        return [b.map(x => x.textContent.trim()), b.findIndex(x => x.classList.contains("mod-active"))];
    }
    const handle = root.querySelector(".noUi-handle");
    return [[Number(handle.getAttribute("aria-valuemin")), Number(handle.getAttribute("aria-valuemax"))],
            Number(root.querySelector(".widget-readout").textContent)];
}"""
"""Runs in the page: a control's options and the one chosen (menu, toggle), or a slider's range and value."""


SAME: list[str] = []
"""Changes after which no output changed within 8 s (a setting that shows what the one before showed): untimed."""


def _timed(page: Any, chart: str, control: str, kind: str, value: object) -> float | None:
    elapsed = float(page.evaluate(_CHANGE_AND_WAIT, [control, chart, kind, value]))
    if elapsed < 0:
        SAME.append(f"{control} = {value!r}")
        return None
    return elapsed


def _slider_moves(low: float, high: float, value: float, step: float, changes: int) -> tuple[list[float], float]:
    """``changes`` one-step moves (down while there is room, then back up), then a far move (to the far end)."""
    moves, direction = [], -1 if value - step >= low else 1
    for _ in range(changes):
        if not low <= value + direction * step <= high:
            direction = -direction
        value = round(value + direction * step, 6)
        moves.append(value)
    return moves, (high if value - low < high - value else low)


def drive(name: str, page: Any, changes: int, read_s: float) -> dict[str, list[float | None]]:
    """Change the widget's controls ``changes`` times each, reading ``read_s`` between changes."""
    chart = CHART.get(name, "img.agentloops-ctl-chart")
    found: dict[str, list[float | None]] = {}
    if name == "budget explorer":  # the steps budget is also the cap in the chart's title: new pixels every time
        box = ".agentloops-ctl-budget-steps .widget-readout"
        start = int(page.locator(box).first.inner_text())
        values = [start - 1 - i for i in range(changes)]
        found["one step (steps -1)"] = [_timed(page, chart, box, "slider", v)
                                        for v in values if not time.sleep(read_s)]
        time.sleep(read_s)
        found["back to a setting shown (kept)"] = [_timed(page, chart, box, "slider", values[-2])]
        time.sleep(read_s)
        far = values[-1] + 6  # a setting no step so far led towards
        found[f"far move (steps {values[-1]} → {far})"] = [_timed(page, chart, box, "slider", far)]
        return found
    if name == "criteria explorer":  # stop ↔ length on round 1: the run, so the chart, changes every time
        found["finish_reason (stop ↔ length)"] = [
            _timed(page, chart, ".agentloops-finish-reason select", "menu", ("stop", "length")[i % 2])
            for i in range(changes) if not time.sleep(read_s)]
    for label, control, kind in CONTROLS[name]:
        base, _colon, step = kind.partition(":")
        if base == "check":
            found[label] = [_timed(page, chart, control, "check", None) for _ in range(changes)
                            if not time.sleep(read_s)]
        elif base in ("menu", "toggle"):
            options, index = page.evaluate(_READ, [control, base])
            found[label] = [_timed(page, chart, control, base, options[(index + 1 + i) % len(options)])
                            for i in range(changes) if not time.sleep(read_s)]
        else:
            (low, high), value = page.evaluate(_READ, [control, base])
            moves, far = _slider_moves(low, high, value, float(step or 1), changes)
            found[f"{label}: one step"] = [_timed(page, chart, control, base, v) for v in moves
                                           if not time.sleep(read_s)]
            time.sleep(read_s)
            found[f"{label}: far move (→ {far:g})"] = [_timed(page, chart, control, base, far)]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=4)
    parser.add_argument("--read", type=float, default=2.0, help="seconds a learner reads between changes")
    parser.add_argument("--only", nargs="*", default=list(WIDGETS), choices=list(WIDGETS), metavar="WIDGET",
                        help="widgets to drive (default: all)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    print(f"{'widget':<22}{'control':<40}{'median ms':>10}{'max ms':>9}  target < {TARGET_MS:.0f} ms")
    every: dict[str, list[float]] = {}  # widget → every answer timed
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--headless"])
        try:
            for name, code in ((n, WIDGETS[n]) for n in args.only):
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
                        _changed(page, CHART.get(name, "img.agentloops-ctl-chart"), None, 120)
                        for control, timed in drive(name, page, args.changes, args.read).items():
                            times = [t for t in timed if t is not None]
                            if not times:
                                continue
                            every.setdefault(name, []).extend(times)
                            verdict = "meets" if statistics.median(times) < TARGET_MS else "MISSES"
                            print(f"{name:<22}{control:<40}{statistics.median(times):>10.0f}{max(times):>9.0f}"
                                  f"  {verdict}", flush=True)
                        page.close()
                    finally:
                        os.killpg(process.pid, signal.SIGTERM)
                        process.wait(30)
        finally:
            browser.close()
    print(f"\n{'widget':<22}{'answers':>8}{'median ms':>10}{'worst ms':>9}  (every answer of the widget)")
    for name, times in every.items():
        print(f"{name:<22}{len(times):>8}{statistics.median(times):>10.0f}{max(times):>9.0f}"
              f"  {'meets' if max(times) < TARGET_MS else 'MISSES'}")
    if SAME:
        print(f"untimed, the page showed the same after them: {'; '.join(SAME)}")
    print(f"reading pause between changes: {args.read:g} s; timed from the change in the page to new chart pixels")


if __name__ == "__main__":
    main()
