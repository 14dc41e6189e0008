"""The package's type hints are checked, not decorative: mypy over ``agentloops/`` reports nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error_in_the_package() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy", "agentloops"], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
