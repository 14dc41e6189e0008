"""``agentloops lab``: open the learner's own copy of the notebooks in JupyterLab.

JupyterLab autosaves: within minutes every opened notebook is written back
with its outputs, and checkpoints appear beside it. Served from the tracked
``notebooks/`` folder that would dirty the repository, fail the "stored
without outputs" test and leak into a wheel built from the checkout. So the
lab never serves the shipped notebooks: it copies them (never overwriting a
learner's edits) into a folder the learner owns — ``lab/`` at the root of a
checkout (git-ignored), ``./agentloops-notebooks`` when installed from a
wheel, or ``--dir`` — and serves that.

The server runs as a child in its own session, so stopping ``agentloops lab``
with Ctrl-C or SIGTERM stops the server too, without Jupyter's "shut down?"
prompt.

``agentloops lab --lang zh`` (or ``AGENTLOOPS_LANG=zh``, or a Chinese locale) opens
the Chinese edition — the mirror ``notebooks/zh/``, copied with the rest — at its
first notebook.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path, PurePosixPath
from types import FrameType
from urllib.parse import quote

from agentloops.errors import UsageError
from agentloops.i18n import _, ngettext
from agentloops.resources import checkout_root, copy_notebooks, find_tool, is_checkout, notebooks_dir

CHECKOUT_FOLDER = "lab"
"""The learner's folder inside a checkout (listed in ``.gitignore``; not under ``notebooks/``, which tests run)."""

WHEEL_FOLDER = "agentloops-notebooks"
"""The learner's folder, relative to the working directory, when installed from a wheel."""

EDITIONS: dict[str, str] = {"zh": "zh"}
"""Language → the folder of its edition, under the notebooks (English is the notebooks' own top level)."""

STOP_TIMEOUT_S = 15.0
"""How long the server may take to shut down after SIGTERM before it is killed."""


class LabError(UsageError):
    """JupyterLab could not be opened on the learner's copy of the notebooks."""


def lab_folder(folder: Path | None = None) -> Path:
    """Where the learner's copies live: ``folder``, else ``lab/`` in a checkout, else ``./agentloops-notebooks``."""
    if folder is not None:
        return folder.expanduser().resolve()
    if is_checkout():
        return checkout_root() / CHECKOUT_FOLDER
    return Path(WHEEL_FOLDER).resolve()


def prepare_folder(folder: Path | None = None) -> tuple[Path, list[Path]]:
    """Create the learner's folder and copy in the notebooks it does not have yet.

    Returns:
        The folder and the files copied into it (a learner's existing files are left alone).

    Raises:
        LabError: the path is a file, cannot be created, or is not writable (one line naming it).
    """
    target = lab_folder(folder)
    if target.exists() and not target.is_dir():
        raise LabError(_("lab --dir {target}: is a file; expected a folder to copy the notebooks into").format(
            target=target))
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LabError(_("lab --dir {target}: cannot create the folder ({reason})").format(
            target=target, reason=exc.strerror or exc)) from None
    if not os.access(target, os.W_OK | os.X_OK):
        raise LabError(_("lab --dir {target}: the folder is not writable; expected a folder you can save into").format(
            target=target))
    try:
        copied = copy_notebooks(target)
    except OSError as exc:
        raise LabError(_("lab --dir {target}: cannot copy the notebooks ({reason})").format(
            target=target, reason=exc.strerror or exc)) from None
    return target, copied


def first_notebook(lang: str = "en") -> PurePosixPath | None:
    """The notebook the lab opens for ``lang``, relative to the learner's folder (``zh/00-start-here.ipynb``);
    ``None`` for English, which opens on the folder itself.

    Raises:
        LabError: the edition is missing from this installation.
    """
    edition = EDITIONS.get(lang)
    if edition is None:
        return None
    found = sorted((notebooks_dir() / edition).glob("*.ipynb"))
    if not found:
        raise LabError(_("the {lang} edition of the notebooks ({folder}) is missing from this installation").format(
            lang=lang, folder=notebooks_dir() / edition))
    return PurePosixPath(edition, found[0].name)


def lab_command(target: Path, *, no_browser: bool = False) -> list[str]:
    """The ``jupyter lab`` command line that serves ``target``.

    Raises:
        LabError: JupyterLab is not installed in this environment.
    """
    jupyter = find_tool("jupyter")
    if jupyter is None:
        raise LabError(_("JupyterLab is not installed in this environment; run: pip install jupyterlab"))
    command = [jupyter, "lab", str(target)] + (["--no-browser"] if no_browser else [])
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers often run as root; Jupyter refuses without this
        command.append("--allow-root")
    return command


def start_option(notebook: PurePosixPath) -> str:
    """The ``jupyter lab`` option that opens ``notebook`` (relative to the served folder) instead of the folder."""
    return f"--LabApp.default_url=/lab/tree/{quote(str(notebook))}"


class _Stop(Exception):
    """SIGTERM arrived: unwind to the ``finally`` that stops the server."""


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def serve(command: list[str], *, cwd: Path) -> int:
    """Run the server until it exits, or until Ctrl-C / SIGTERM — then stop it, and return its status."""
    server = subprocess.Popen(command, cwd=cwd, start_new_session=True)
    previous = signal.signal(signal.SIGTERM, _raise_stop)
    try:
        return server.wait()
    except (KeyboardInterrupt, _Stop):
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def open_lab(folder: Path | None = None, *, no_browser: bool = False, lang: str = "en") -> None:
    """Copy the notebooks into the learner's folder and serve it with JupyterLab until stopped.

    Args:
        folder: the learner's folder (default: :func:`lab_folder`).
        no_browser: start the server without opening a browser.
        lang: ``zh`` opens the Chinese edition at its first notebook.

    Raises:
        LabError: a bad ``folder``, JupyterLab missing, the edition missing, or the server failing on its own.
    """
    start = first_notebook(lang)
    target, copied = prepare_folder(folder)
    copies = ngettext("{n} new copy", "{n} new copies", len(copied)).format(n=len(copied))
    print(_("your notebooks: {target} ({copies}; edits are yours and are never overwritten)").format(
        target=target, copies=copies), file=sys.stderr)
    if start is not None:
        print(_("opening the Chinese edition at {notebook}").format(notebook=target / start), file=sys.stderr)
    command = lab_command(target, no_browser=no_browser)
    if start is not None:
        command.append(start_option(start))
    status = serve(command, cwd=target)
    if status:
        raise LabError(_("jupyter lab exited with status {status}").format(status=status))
