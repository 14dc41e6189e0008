"""The app pages: `agentloops app` builds the right Voilà invocation, and the pages run headless."""

from __future__ import annotations

import importlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from agentloops import cli
from agentloops.cli import APP_PAGES, DEFAULT_APP_PORT, app_command, main
from agentloops.resources import notebooks_dir

APP_DIR = notebooks_dir() / "app"
CULLING = ["--MappingKernelManager.cull_idle_timeout=60", "--MappingKernelManager.cull_interval=15",
           "--MappingKernelManager.cull_connected=False"]


def _code_cells(path: Path) -> list[str]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Record the command instead of starting Voilà."""
    recorded: list[list[str]] = []

    def fake_serve(command: list[str], *, cwd: Path) -> int:
        assert cwd == Path(command[1]).parent
        recorded.append(command)
        return 0

    monkeypatch.setattr(cli, "_find_tool", lambda name: f"/venv/bin/{name}")
    monkeypatch.setattr("agentloops.lab.serve", fake_serve)
    return recorded


def test_app_command_serves_one_notebook_without_its_code() -> None:
    page = APP_DIR / "criteria-explorer.ipynb"
    assert app_command("voila", page) == ["voila", str(page), f"--port={DEFAULT_APP_PORT}", "--strip_sources=True",
                                          "--show_tracebacks=False", *CULLING]
    assert app_command("voila", page, 9000, no_browser=True)[-2:] == [CULLING[-1], "--no-browser"]


def test_the_command_defaults_to_the_criteria_page(calls: list[list[str]], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["app"]) == 0
    assert calls == [["/venv/bin/voila", str(APP_DIR / "criteria-explorer.ipynb"), "--port=8866",
                      "--strip_sources=True", "--show_tracebacks=False", *CULLING]]
    assert "serving the criteria page on port 8866" in capsys.readouterr().err


def test_the_command_picks_the_page_the_port_and_no_browser(calls: list[list[str]]) -> None:
    assert main(["app", "controller", "--port", "9123", "--no-browser"]) == 0
    assert calls[0][1:3] == [str(APP_DIR / "controller-explorer.ipynb"), "--port=9123"]
    assert calls[0][-1] == "--no-browser"


@pytest.mark.parametrize(("argv", "message"), [
    (["app", "slides"], "argument page: invalid choice: 'slides' (choose from 'criteria', 'controller')"),
    (["app", "--port", "0"], "argument --port: expected a whole number from 1 to 65535; got 0"),
    (["app", "--port", "http"], "argument --port: expected a whole number from 1 to 65535, in digits 0-9; got 'http'"),
])
def test_mistakes_end_in_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"agentloops: error: {message}\n"


def test_a_missing_voila_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli, "_find_tool", lambda name: None)
    assert main(["app"]) == 2
    assert capsys.readouterr().err == ("agentloops: error: Voilà is not installed in this environment; run: "
                                       "pip install 'agentloops[app]'\n")


def test_a_failing_voila_is_reported(monkeypatch: pytest.MonkeyPatch, calls: list[list[str]],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("agentloops.lab.serve", lambda command, cwd: 1)
    assert main(["app"]) == 2
    assert capsys.readouterr().err.endswith("agentloops: error: voila exited with status 1\n")


def test_each_page_is_one_thin_code_cell() -> None:
    assert sorted(p.name for p in APP_DIR.glob("*.ipynb")) == sorted(APP_PAGES.values())
    criteria = _code_cells(APP_DIR / APP_PAGES["criteria"])[0]  # the page sets its language, then draws the widget
    assert "from agentloops.widgets import explorer\n" in criteria and criteria.endswith("\n\nexplorer()")
    assert "controller_explorer()" in _code_cells(APP_DIR / APP_PAGES["controller"])[0]
    for path in APP_DIR.glob("*.ipynb"):
        assert len(_code_cells(path)) == 1


def _controller_widget_missing() -> bool:
    if importlib.util.find_spec("agentloops.controller.teaching.widgets") is None:
        return True
    module = importlib.import_module("agentloops.controller.teaching.widgets")
    return not hasattr(module, "controller_explorer")


@pytest.mark.notebook
@pytest.mark.parametrize("page", list(APP_PAGES))
def test_the_pages_execute_headless(page: str) -> None:
    if page == "controller" and _controller_widget_missing():
        pytest.skip("agentloops.controller.teaching.widgets.controller_explorer does not exist yet")
    from tests.test_notebooks import execute_notebook

    executed: Any = execute_notebook(APP_DIR / APP_PAGES[page])
    text = "".join(o.get("data", {}).get("text/plain", "") for c in executed.cells if c.cell_type == "code"
                   for o in c.get("outputs", []))
    assert "Traceback" not in text
    if page == "criteria":
        assert text.startswith("Explorer — scenario: truncated")


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(port: int) -> bool:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/voila/static/", timeout=2):
            return True
    except urllib.error.HTTPError:
        return True  # the server answered, if only with an error
    except OSError:
        return False


@pytest.mark.skipif(cli.find_tool("voila") is None, reason="Voilà is not installed (pip install 'agentloops[app]')")
def test_sigterm_stops_the_app_and_its_voila_server(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    port = _free_port()
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"), JUPYTER_DATA_DIR=str(tmp_path / "data"),
               JUPYTER_CONFIG_DIR=str(tmp_path / "config"), JUPYTER_PLATFORM_DIRS="1")
    process = subprocess.Popen([sys.executable, "-m", "agentloops", "app", "--no-browser", "--port", str(port)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not _answers(port):
            assert process.poll() is None and time.monotonic() < deadline, "Voilà did not start within 60 s"
            time.sleep(0.5)
        children = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
        assert children, "the app runs Voilà as its child"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert not _answers(port), "the Voilà server still serves after the app was sent SIGTERM"
        for pid in map(int, children):
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    finally:
        if process.poll() is None:
            process.kill()
