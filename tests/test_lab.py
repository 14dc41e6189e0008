"""The lab serves the learner's own copy, never the tracked notebooks, and stops its server when stopped.

Three layers: the folder logic (where the copies go, bad ``--dir`` in one
line with exit status 2, a learner's edits never overwritten); the process
logic (SIGTERM and Ctrl-C stop the server child); and two end-to-end tests —
``agentloops lab`` run on a copy of this checkout (made a git repository in a
temporary folder), a notebook saved *with outputs* through JupyterLab's own
contents API, and ``git status`` still clean; and a wheel built from the
working tree holding no outputs and no checkpoints.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

import agentloops.lab as lab
from agentloops.cli import main
from agentloops.resources import notebooks_dir

ROOT = Path(__file__).resolve().parents[1]
_NOT_COPIED = (".venv", ".git", "lab", "artifacts", "__pycache__", ".mypy_cache", ".ruff_cache", ".hypothesis",
               ".pytest_cache", "build", "dist", "agentloops-notebooks", ".ipynb_checkpoints", ".benchmarks",
               "*.egg-info")


def _run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


# --------------------------------------------------------------------------- where the copies go


def test_a_checkout_serves_a_git_ignored_lab_folder_never_the_tracked_notebooks() -> None:
    target = lab.lab_folder()
    assert target == ROOT / "lab"
    assert not target.is_relative_to(ROOT / "notebooks")
    ignored = subprocess.run(["git", "check-ignore", "-q", "lab/00-start-here.ipynb"], cwd=ROOT, check=False)
    assert ignored.returncode == 0, "lab/ must be listed in .gitignore"


def test_copies_every_notebook_and_never_overwrites_an_edit(tmp_path: Path) -> None:
    target, copied = lab.prepare_folder(tmp_path / "mine")
    shipped = sorted(p.relative_to(notebooks_dir()) for p in notebooks_dir().rglob("*.ipynb")
                     if ".ipynb_checkpoints" not in p.parts)
    assert sorted(p.relative_to(target) for p in copied) == shipped
    edited = target / "00-start-here.ipynb"
    edited.write_text("my edits")
    _, again = lab.prepare_folder(target)
    assert again == [] and edited.read_text() == "my edits"
    edited.unlink()
    _, restored = lab.prepare_folder(target)
    assert restored == [edited]


def test_dir_on_a_file_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    code, err = _run_cli(capsys, "lab", "--dir", str(a_file), "--no-browser")
    assert code == 2
    assert err == f"agentloops: error: lab --dir {a_file}: is a file; expected a folder to copy the notebooks into\n"


def test_dir_that_cannot_be_created_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    below_a_file = tmp_path / "notes.txt" / "lab"
    code, err = _run_cli(capsys, "lab", "--dir", str(below_a_file))
    assert code == 2
    assert err.startswith(f"agentloops: error: lab --dir {below_a_file}: cannot create the folder (")
    assert err.count("\n") == 1


def test_an_unwritable_dir_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # root may write anywhere, so the permission check is driven through os.access itself
    monkeypatch.setattr(lab.os, "access", lambda path, mode: Path(path) != tmp_path)
    code, err = _run_cli(capsys, "lab", "--dir", str(tmp_path))
    assert code == 2
    assert err == f"agentloops: error: lab --dir {tmp_path}: the folder is not writable; expected a folder you can save into\n"
    assert not list(tmp_path.iterdir()), "nothing is copied into a folder that failed the check"


@pytest.mark.parametrize(("uid", "allow_root"), [(0, True), (1000, False)])
def test_the_command_serves_the_folder_and_allows_root_only_as_root(monkeypatch: pytest.MonkeyPatch, uid: int,
                                                                     allow_root: bool, tmp_path: Path) -> None:
    monkeypatch.setattr(lab.os, "geteuid", lambda: uid, raising=False)
    command = lab.lab_command(tmp_path, no_browser=True)
    assert command[1:] == ["lab", str(tmp_path), "--no-browser"] + (["--allow-root"] if allow_root else [])


def test_a_missing_jupyterlab_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(lab, "find_tool", lambda name: None)
    with pytest.raises(lab.LabError, match=r"^JupyterLab is not installed in this environment; run: pip install"):
        lab.lab_command(tmp_path)


# --------------------------------------------------------------------------- stopping stops the server


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


SERVE_A_SLEEPER = """
import sys
from pathlib import Path
from agentloops.lab import serve
status = serve([sys.executable, "-c", "import os, time; print(os.getpid(), flush=True); time.sleep(600)"],
               cwd=Path("."))
print("status", status, flush=True)
"""


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT])
def test_stopping_the_lab_stops_the_server_child(how: signal.Signals, tmp_path: Path) -> None:
    parent = subprocess.Popen(_python(SERVE_A_SLEEPER), cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert _alive(child)
        parent.send_signal(how)
        out, _ = parent.communicate(timeout=30)
        assert out.strip() == "status 0" and parent.returncode == 0
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), f"the server child {child} outlived the lab after {how.name}"
    finally:
        if parent.poll() is None:
            parent.kill()


def test_a_server_that_fails_on_its_own_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(lab, "lab_command", lambda target, no_browser=False: _python("raise SystemExit(3)"))
    with pytest.raises(lab.LabError, match=r"^jupyter lab exited with status 3$"):
        lab.open_lab(tmp_path)


# --------------------------------------------------------------------------- end to end


def _copy_checkout(destination: Path) -> Path:
    """The working tree (uncommitted edits included), without caches, committed into a fresh git repository."""
    shutil.copytree(ROOT, destination, ignore=shutil.ignore_patterns(*_NOT_COPIED))
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "snapshot"]):
        subprocess.run([*git, *args], cwd=destination, check=True, capture_output=True)
    return destination


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _api(port: int, token: str, path: str, method: str = "GET", body: object = None) -> object:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/contents/{path}", data=data, method=method,
                                     headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read() or b"null")


def _wait_for_server(port: int, token: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert process.poll() is None, f"agentloops lab exited early with status {process.returncode}"
        try:
            _api(port, token, "")
            return
        except OSError:
            time.sleep(0.5)
    pytest.fail("JupyterLab did not answer within 90 s")


def test_saving_with_outputs_in_the_lab_leaves_git_status_clean(tmp_path: Path) -> None:
    pytest.importorskip("jupyterlab")
    checkout = _copy_checkout(tmp_path / "checkout")
    port, token = _free_port(), secrets.token_hex(16)
    config = tmp_path / "jupyter-config"
    config.mkdir()
    (config / "jupyter_server_config.json").write_text(json.dumps(
        {"ServerApp": {"port": port, "port_retries": 0, "ip": "127.0.0.1"}, "IdentityProvider": {"token": token}}))
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               JUPYTER_DATA_DIR=str(tmp_path / "data"), HOME=str(tmp_path / "home"), JUPYTER_PLATFORM_DIRS="1")
    # python -m from the copy's root imports the copy's package, so the lab resolves the copy as its checkout
    process = subprocess.Popen([sys.executable, "-m", "agentloops", "lab", "--no-browser"], cwd=checkout, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    try:
        _wait_for_server(port, token, process)
        model = _api(port, token, "02-talk-and-call.ipynb?content=1")
        assert isinstance(model, dict)
        notebook = model["content"]
        code_cell = next(c for c in notebook["cells"] if c["cell_type"] == "code")
        code_cell["execution_count"] = 1
        code_cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "a learner's output\n"}]
        _api(port, token, "02-talk-and-call.ipynb", "PUT", {"type": "notebook", "format": "json", "content": notebook})
        _api(port, token, "02-talk-and-call.ipynb/checkpoints", "POST")
        saved = json.loads((checkout / "lab" / "02-talk-and-call.ipynb").read_text())
        assert any(c.get("outputs") for c in saved["cells"]), "the save did not reach the learner's copy"
        assert (checkout / "lab" / ".ipynb_checkpoints").is_dir()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=checkout,
                                capture_output=True, text=True, check=True).stdout
        assert status == "", f"the lab changed tracked or unignored files:\n{status}"
        tracked = json.loads((checkout / "notebooks" / "02-talk-and-call.ipynb").read_text())
        assert not any(c.get("outputs") for c in tracked["cells"] if c["cell_type"] == "code")
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        with pytest.raises(OSError):
            _api(port, token, "")
    finally:
        if process.poll() is None:
            process.kill()


def _build_wheel(source: Path, out: Path) -> list[tuple[str, bytes]]:
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(out)],
                   check=True, capture_output=True)
    (wheel,) = out.glob("agentloops-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return [(name, archive.read(name)) for name in archive.namelist()]


def _assert_clean(files: list[tuple[str, bytes]]) -> None:
    notebooks = [(name, data) for name, data in files if name.endswith(".ipynb")]
    assert notebooks, "the wheel ships no notebooks at all"
    stray = [name for name, _ in files if ".ipynb_checkpoints" in name or name.startswith("lab/")]
    assert not stray, f"the wheel ships checkpoints or a learner's lab folder: {stray}"
    for name, data in notebooks:
        cells = json.loads(data)["cells"]
        dirty = [i for i, c in enumerate(cells, 1) if c.get("outputs") or c.get("execution_count") is not None]
        assert not dirty, f"{name} is shipped with outputs in cells {dirty}"


def test_a_wheel_of_the_working_tree_holds_no_outputs_and_no_checkpoints(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*_NOT_COPIED))
    (source / "lab").mkdir()  # a learner's lab folder, with an output-laden copy, is never packaged
    (source / "lab" / "00-start-here.ipynb").write_text('{"cells": [{"outputs": [1]}]}')
    _assert_clean(_build_wheel(source, tmp_path / "dist"))


def test_a_wheel_never_ships_the_checkpoints_jupyter_leaves_beside_the_notebooks(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*_NOT_COPIED))
    (source / "notebooks" / ".ipynb_checkpoints").mkdir()
    (source / "notebooks" / ".ipynb_checkpoints" / "00-start-here-checkpoint.ipynb").write_text("{}")
    _assert_clean(_build_wheel(source, tmp_path / "dist"))
