"""``agentloops doctor``: a pre-flight check for a learner's laptop, one line per check, each with its fix.

A workshop loses its first twenty minutes to laptops: an old Python, a missing
extra, a kernel that never starts, widgets that render as text, boxes where
the Chinese labels of a chart should be, a port already taken, a notebooks
folder that cannot be saved into. The doctor asks each question once and says
what to do about the ones that fail; the exit status is non-zero when any
fails, so a room can run it in a loop.

Each check is a :data:`Probe` — a function returning a :class:`Finding` — so
tests can swap any of them for a broken one without breaking the machine.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import socket
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentloops.errors import UsageError

MIN_PYTHON = (3, 10)
"""The oldest Python the package supports."""

EXTRAS: dict[str, tuple[str, ...]] = {
    "notebooks": ("jupyterlab", "ipywidgets", "matplotlib", "pandas"),
    "app": ("voila",),
}
"""What a workshop needs beyond the package, by purpose (distribution names)."""

CJK_FONT_HINTS = ("CJK", "WenQuanYi", "SimHei", "SimSun", "YaHei", "PingFang", "Hiragino Sans GB", "Heiti",
                  "Source Han", "Songti", "Arial Unicode", "Droid Sans Fallback")
"""Parts of font family names that cover Chinese (the charts label the article's terms in Chinese)."""

DEFAULT_PORT = 8888
"""The port JupyterLab asks for first."""

KERNEL_TIMEOUT_S = 60.0
"""How long a kernel may take to start and answer."""


@dataclass(frozen=True, slots=True)
class Finding:
    """The answer to one check.

    Attributes:
        name: what was checked, in a few words.
        ok: it passed.
        detail: what was found.
        fix: what to do when it failed ("" when it passed).
    """

    name: str
    ok: bool
    detail: str
    fix: str = ""

    def line(self) -> str:
        """``✓ Python: 3.11.7`` or ``✗ a free port: 8888 is taken — fix: …``."""
        mark = "✓" if self.ok else "✗"
        return f"{mark} {self.name}: {self.detail}" + ("" if self.ok else f" — fix: {self.fix}")


Probe = Callable[[], Finding]
"""One check, with everything it looks at already bound."""


# --------------------------------------------------------------------------- the checks


def check_python(version: tuple[int, ...] = tuple(sys.version_info[:3])) -> Finding:
    """Python is new enough."""
    shown = ".".join(map(str, version))
    if tuple(version[:2]) >= MIN_PYTHON:
        return Finding("Python", True, shown)
    need = ".".join(map(str, MIN_PYTHON))
    return Finding("Python", False, f"{shown}, older than {need}",
                   f"install Python {need} or newer, then reinstall: pip install -e '.[dev]'")


def installed_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or ``None``."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_packages(version_of: Callable[[str], str | None] = installed_version,
                   extras: Mapping[str, Iterable[str]] = EXTRAS) -> Finding:
    """The package and what the notebooks and the app pages need are installed."""
    own = version_of("agentloops")
    missing = [name for names in extras.values() for name in names if version_of(name) is None]
    if own is None:
        return Finding("the package and its extras", False, "agentloops is not installed",
                       "from the checkout: pip install -e '.[dev,app]' (or make lab)")
    if missing:
        return Finding("the package and its extras", False, f"agentloops {own}; missing {', '.join(missing)}",
                       f"pip install {' '.join(missing)} (or pip install -e '.[dev,app]' in the checkout)")
    names = ", ".join(name for names in extras.values() for name in names)
    return Finding("the package and its extras", True, f"agentloops {own} with {names}")


def start_kernel(timeout: float = KERNEL_TIMEOUT_S) -> str:
    """Start a Python kernel, run one line in it, shut it down; the line's result (raises when it cannot)."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", startup_timeout=timeout)
    try:
        reply = client.execute_interactive("import sys; print(sys.version_info[0])", timeout=timeout,
                                           output_hook=lambda message: None)
        return str(reply["content"]["status"])
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def check_kernel(start: Callable[[], str] = start_kernel) -> Finding:
    """A notebook kernel starts and runs code."""
    try:
        status = start()
    except Exception as exc:  # any failure to start is the finding: say it in one line
        text = str(exc).strip().splitlines()
        detail = f"{type(exc).__name__}: {text[0][:120]}" if text else type(exc).__name__
        return Finding("a kernel that starts", False, detail,
                       "python -m ipykernel install --user, then run the doctor again")
    if status != "ok":
        return Finding("a kernel that starts", False, f"it started but answered {status!r}",
                       "restart the machine's Jupyter: jupyter kernelspec list, then reinstall ipykernel")
    return Finding("a kernel that starts", True, "python3 started and ran a line")


def widget_extension_dirs() -> list[Path]:
    """Where JupyterLab looks for the widget manager extension."""
    bases = [Path(sys.prefix), Path.home() / ".local", Path("/usr/local"), Path("/usr")]
    return [base / "share" / "jupyter" / "labextensions" / "@jupyter-widgets" / "jupyterlab-manager"
            for base in bases]


def check_widgets(has_module: Callable[[str], bool] = lambda name: importlib.util.find_spec(name) is not None,
                  extension_dirs: Callable[[], list[Path]] = widget_extension_dirs) -> Finding:
    """ipywidgets is importable and JupyterLab has the extension that draws widgets."""
    if not has_module("ipywidgets"):
        return Finding("the widget extension", False, "ipywidgets is not installed", "pip install ipywidgets")
    found = [d for d in extension_dirs() if d.is_dir()]
    if not found:
        return Finding("the widget extension", False, "ipywidgets is installed but JupyterLab has no widget manager",
                       "pip install jupyterlab_widgets, then restart JupyterLab (widgets otherwise show as text)")
    return Finding("the widget extension", True, f"{found[0]}")


def font_families() -> list[str]:
    """The font families matplotlib will draw with (its cached list)."""
    from matplotlib import font_manager

    return sorted({font.name for font in font_manager.fontManager.ttflist})


def system_font_files() -> list[str]:
    """Font files installed on the system, whether or not matplotlib's cache knows them yet."""
    from matplotlib import font_manager

    return list(font_manager.findSystemFonts())


def _covers_chinese(name: str) -> bool:
    return any(hint.lower() in name.lower() for hint in CJK_FONT_HINTS)


def check_font(families: Callable[[], list[str]] = font_families,
               files: Callable[[], list[str]] = system_font_files) -> Finding:
    """A font that covers Chinese, known to matplotlib, so the charts' Chinese labels are not boxes."""
    cjk = [name for name in families() if _covers_chinese(name)]
    if cjk:
        return Finding("a font for the Chinese text", True, cjk[0])
    installed = [Path(f).name for f in files() if _covers_chinese(Path(f).name)]
    if installed:
        return Finding("a font for the Chinese text", False,
                       f"{installed[0]} is installed but matplotlib's font cache predates it",
                       "delete the cache (rm ~/.cache/matplotlib/fontlist-*.json) and restart the kernel")
    return Finding("a font for the Chinese text", False, "no installed font covers Chinese",
                   "install one (Debian/Ubuntu: apt install fonts-noto-cjk; macOS and Windows have one), then "
                   "delete matplotlib's font cache (rm ~/.cache/matplotlib/fontlist-*.json) and restart the kernel")


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True when ``port`` can be bound on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def check_port(port: int = DEFAULT_PORT, is_free: Callable[[int], bool] = port_is_free, tries: int = 20) -> Finding:
    """The lab's port is free, or a nearby one is (the lab then uses it: say so)."""
    if is_free(port):
        return Finding("a free port", True, f"{port}")
    for candidate in range(port + 1, port + tries):
        if is_free(candidate):
            return Finding("a free port", True, f"{port} is taken; {candidate} is free (pass --port {candidate})")
    return Finding("a free port", False, f"{port} to {port + tries - 1} are all taken",
                   "stop other Jupyter servers (jupyter server list; jupyter server stop PORT) or pass --port N")


def check_folder(folder: Path) -> Finding:
    """The folder the notebooks are copied into can be created and written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-", delete=True):
            pass
    except OSError as exc:
        return Finding("a writable notebooks folder", False, f"{folder}: {exc.strerror or exc}",
                       "pass --dir to a folder you own (agentloops lab --dir ~/agentloops-notebooks)")
    return Finding("a writable notebooks folder", True, str(folder))


def default_probes(*, port: int = DEFAULT_PORT, folder: Path | None = None, kernel: bool = True) -> dict[str, Probe]:
    """Every check, in the order they are shown; ``kernel=False`` skips the slowest one."""
    from agentloops.lab import lab_folder

    target = lab_folder(folder)
    probes: dict[str, Probe] = {
        "python": check_python,
        "packages": check_packages,
        "kernel": check_kernel,
        "widgets": check_widgets,
        "font": check_font,
        "port": lambda: check_port(port),
        "folder": lambda: check_folder(target),
    }
    if not kernel:
        del probes["kernel"]
    return probes


# --------------------------------------------------------------------------- the report


def run_checks(probes: Mapping[str, Probe]) -> list[Finding]:
    """Run every probe; a probe that raises is itself a failed finding, never a traceback."""
    findings = []
    for name, probe in probes.items():
        try:
            findings.append(probe())
        except Exception as exc:
            findings.append(Finding(name, False, f"the check itself failed ({type(exc).__name__}: {exc})",
                                    "please report it, with this line"))
    return findings


def report(findings: list[Finding]) -> tuple[str, int]:
    """The text to print and the exit status: 0 when every check passed, 1 otherwise."""
    failed = [f for f in findings if not f.ok]
    summary = (f"All {len(findings)} checks passed: this machine is ready." if not failed
               else f"{len(failed)} of {len(findings)} checks failed; fix them and run agentloops doctor again.")
    return "\n".join([*(f.line() for f in findings), summary]), 1 if failed else 0


class DoctorError(UsageError):
    """The doctor was asked something it cannot check (a port out of range)."""


def _doctor(args: argparse.Namespace) -> tuple[str, int]:
    if not 1 <= args.port <= 65535:
        raise DoctorError(f"doctor --port: expected a port from 1 to 65535; got {args.port}")
    probes = default_probes(port=args.port, folder=args.dir, kernel=not args.no_kernel)
    return report(run_checks(probes))


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``agentloops doctor`` to the command line."""
    parser = sub.add_parser("doctor", help="check this machine for the workshop: Python, packages, kernel, widgets, "
                                           "font, port, folder")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"the port to check (default {DEFAULT_PORT})")
    parser.add_argument("--dir", type=Path, default=None, help="the notebooks folder to check (default: the lab's)")
    parser.add_argument("--no-kernel", action="store_true", help="skip starting a kernel (the slowest check)")
    parser.set_defaults(handler=_doctor)


__all__ = ["Finding", "Probe", "add_commands", "default_probes", "report", "run_checks"]
