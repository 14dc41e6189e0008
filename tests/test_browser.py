"""A real browser drives the criteria explorer app page: change a finish_reason, watch the page redraw.

Optional: skipped, with the reason, when the system Chromium, Playwright or
Voilà is missing (``.ci/run`` installs Chromium from Debian's packages). The
test starts Voilà on a free 127.0.0.1 port with a token, opens the page in
headless Chromium through Playwright (the system browser; nothing is
downloaded), sets round 1's finish_reason to ``stop`` and checks that the
step table and the chart both change. A screenshot of the page after the
change is saved under ``artifacts/`` (git-ignored) as the run's artifact.

To see the test fail when the widget's callback is broken, run it with
``AGENTLOOPS_BROWSER_BREAK=callback``: the kernel then starts with an IPython
startup file that turns the explorer's edit callback into a no-op.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "notebooks" / "app" / "criteria-explorer.ipynb"
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SERVER_START_S = 30
PAGE_RENDER_S = 40
REDRAW_S = 15

BREAK_CALLBACK = """\
# Written by tests/test_browser.py because AGENTLOOPS_BROWSER_BREAK=callback: break the explorer's edit callback.
import agentloops.widgets as _widgets
_widgets.Explorer._on_edit = lambda self, change: None
"""


def _voila() -> str | None:
    return shutil.which("voila", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))


def _skip_reason() -> str | None:
    if not CHROMIUM.is_file():
        return f"Chromium not found at {CHROMIUM} (Debian: apt-get install chromium; .ci/run installs it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install 'agentloops[browser]')"
    if _voila() is None:
        return "Voilà is not installed (pip install 'agentloops[app]')"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """A Voilà process serving the page, with its log collected by a reader thread."""

    def __init__(self, home: Path, page: Path = PAGE, command: Callable[[int], list[str]] | None = None) -> None:
        self.port = _free_port()
        self.token = secrets.token_hex(16)
        self.lines: list[str] = []
        self.ready = threading.Event()
        env = dict(os.environ)
        env.update({
            "IPYTHONDIR": str(home / "ipython"),  # a clean IPython profile for the kernel
            "JUPYTER_DATA_DIR": str(home / "data"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "JUPYTER_PLATFORM_DIRS": "1",
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        })
        if os.environ.get("AGENTLOOPS_BROWSER_BREAK") == "callback":
            startup = home / "ipython" / "profile_default" / "startup"
            startup.mkdir(parents=True)
            (startup / "00-break-explorer-callback.py").write_text(BREAK_CALLBACK, encoding="utf-8")
        served = command(self.port) if command is not None else [
            str(_voila()), str(page), "--no-browser", f"--port={self.port}", "--show_tracebacks=True"]
        command_line = [*served, "--Voila.ip=127.0.0.1", f"--token={self.token}", "--Voila.port_retries=0"]
        self.process = subprocess.Popen(command_line, env=env, cwd=home, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.reader = threading.Thread(target=self._read, name="voila-log", daemon=True)
        self.reader.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip())
            if f"127.0.0.1:{self.port}" in line:
                self.ready.set()
        self.ready.set()  # the process ended: stop waiting

    def log(self) -> str:
        return "\n".join(self.lines[-25:])

    def stop(self) -> None:
        """Stop Voilà and its kernel: SIGTERM to its process group, SIGKILL if it lingers."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self.reader.join(timeout=5)
        if self.process.stdout is not None:
            self.process.stdout.close()


SKIP_REASON = _skip_reason()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = Server(tmp_path)
    try:
        if not running.ready.wait(SERVER_START_S) or running.process.poll() is not None:
            pytest.fail(f"Voilà did not start within {SERVER_START_S} s:\n{running.log()}")
        yield running
    finally:
        running.stop()


@pytest.mark.browser
@pytest.mark.skipif(SKIP_REASON is not None, reason=SKIP_REASON or "")
def test_changing_a_finish_reason_redraws_the_table_and_the_chart(server: Server) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1400})
            page.goto(server.url, wait_until="domcontentloaded", timeout=PAGE_RENDER_S * 1000)
            table = page.locator(".agentloops-table")
            chart = page.locator("img.agentloops-chart")
            try:
                page.wait_for_selector(".agentloops-table table", timeout=PAGE_RENDER_S * 1000)
                page.wait_for_function("document.querySelector('img.agentloops-chart')?.getAttribute('src')",
                                       timeout=PAGE_RENDER_S * 1000)
            except PlaywrightTimeout:
                page.screenshot(path=str(ARTIFACTS / "browser-criteria-explorer-not-rendered.png"), full_page=True)
                pytest.fail(f"the explorer did not render within {PAGE_RENDER_S} s; server log:\n{server.log()}")
            table_before = table.inner_text()
            chart_before = chart.get_attribute("src")
            assert "length" in table_before, "the page should open on the truncated scenario (finish_reason length)"

            page.locator(".agentloops-finish-reason select").first.select_option(label="stop")

            try:
                page.wait_for_function(
                    "([old]) => document.querySelector('.agentloops-table').innerText !== old",
                    arg=[table_before], timeout=REDRAW_S * 1000)
            except PlaywrightTimeout:
                page.screenshot(path=str(ARTIFACTS / "browser-criteria-explorer-no-redraw.png"), full_page=True)
                pytest.fail(f"the step table did not change within {REDRAW_S} s after finish_reason was set to "
                            "stop: the widget's callback did not redraw the page")
            try:
                page.wait_for_function(
                    "([old]) => document.querySelector('img.agentloops-chart').getAttribute('src') !== old",
                    arg=[chart_before], timeout=REDRAW_S * 1000)
            except PlaywrightTimeout:
                pytest.fail(f"the chart did not change within {REDRAW_S} s after finish_reason was set to stop")
            table_after = table.inner_text()
            page.screenshot(path=str(ARTIFACTS / "browser-criteria-explorer.png"), full_page=True)
        finally:
            browser.close()
    assert "stop" in table_after and "length" not in table_after, table_after


def _kernels(server: Server) -> int:
    """How many kernels the Voilà server runs now (its ``ipykernel`` children; Voilà has no kernels API)."""
    found = subprocess.run(["pgrep", "-P", str(server.process.pid), "-f", "ipykernel"], capture_output=True,
                           text=True, check=False).stdout
    return len(found.split())


LOADS = 5
CULL_AFTER_S, CULL_EVERY_S = 4, 2
"""Shorter than ``agentloops app``'s (60 s, 15 s) so that the test waits seconds, not minutes; same settings."""


@pytest.mark.browser
@pytest.mark.skipif(SKIP_REASON is not None, reason=SKIP_REASON or "")
def test_five_loads_of_the_app_page_leave_one_kernel_each_only_while_open(tmp_path: Path) -> None:
    import time

    from playwright.sync_api import sync_playwright

    from agentloops.cli import app_command

    def command(port: int) -> list[str]:
        return app_command(str(_voila()), PAGE, port, no_browser=True, cull_after_s=CULL_AFTER_S,
                           cull_every_s=CULL_EVERY_S)

    server = Server(tmp_path, command=command)
    try:
        if not server.ready.wait(SERVER_START_S) or server.process.poll() is not None:
            pytest.fail(f"Voilà did not start within {SERVER_START_S} s:\n{server.log()}")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                kept = browser.new_page()  # stays open the whole time: its kernel must survive the culler
                kept.goto(server.url, wait_until="domcontentloaded", timeout=PAGE_RENDER_S * 1000)
                kept.wait_for_selector(".agentloops-table table", timeout=PAGE_RENDER_S * 1000)
                for _ in range(LOADS):
                    page = browser.new_page()
                    page.goto(server.url, wait_until="domcontentloaded", timeout=PAGE_RENDER_S * 1000)
                    page.wait_for_selector(".agentloops-table table", timeout=PAGE_RENDER_S * 1000)
                    page.close(run_before_unload=True)
                assert _kernels(server) >= 2, "each load starts a kernel"
                deadline = time.monotonic() + CULL_AFTER_S + 4 * CULL_EVERY_S + 20
                while _kernels(server) > 1 and time.monotonic() < deadline:
                    time.sleep(1)
                assert _kernels(server) == 1, f"closed pages kept their kernels:\n{server.log()}"
                kept.locator(".agentloops-finish-reason select").first.select_option(label="stop")
                kept.wait_for_function("!document.querySelector('.agentloops-table').innerText.includes('length')",
                                       timeout=REDRAW_S * 1000)  # the open page still has its kernel
            finally:
                browser.close()
    finally:
        server.stop()
