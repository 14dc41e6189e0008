"""``agentloops lab``: open the notebooks in JupyterLab."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agentloops.errors import UsageError
from agentloops.resources import copy_notebooks, find_tool, is_checkout, notebooks_dir


class LabError(UsageError):
    """JupyterLab could not be opened on the notebooks."""


def open_lab(folder: Path | None = None, *, no_browser: bool = False) -> None:
    """Open JupyterLab on the notebooks (copied into ``folder`` when installed from a wheel)."""
    if is_checkout() and folder is None:
        target = notebooks_dir()
    else:
        target = (folder or Path("agentloops-notebooks")).resolve()
        copied = copy_notebooks(target)
        print(f"copied {len(copied)} notebook(s) into {target}", file=sys.stderr)
    jupyter = find_tool("jupyter")
    if jupyter is None:
        raise LabError("JupyterLab is not installed in this environment; run: pip install jupyterlab")
    command = [jupyter, "lab", str(target)] + (["--no-browser"] if no_browser else [])
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers often run as root; Jupyter refuses without this
        command.append("--allow-root")
    return_code = subprocess.call(command)
    if return_code:
        raise LabError(f"jupyter lab exited with status {return_code}")
