"""``agentloops doctor``: a pre-flight check for a learner's laptop, one line per check, each with its fix.

A workshop loses its first twenty minutes to laptops: an old Python, a missing
extra, a kernel that never starts, widgets that render as text, boxes where
the Chinese labels of a chart should be, a port already taken, a notebooks
folder that cannot be saved into. The doctor asks each question once and says
what to do about the ones that fail; the exit status is non-zero when any
fails, so a room can run it in a loop.

Each check is a :data:`Probe` — a function returning a :class:`Finding` — so
tests can swap any of them for a broken one without breaking the machine.

Chinese needs two fonts. The charts draw with matplotlib, which gets Noto Sans CJK SC
from the package's own ``mplfonts`` dependency (:mod:`agentloops.fonts`); the browser
draws the notebooks, the widgets and the app pages with the *system's* fonts, which
only the machine can provide (``fc-list :lang=zh`` where fontconfig exists). Each
has its own check. The doctor speaks the language in use (``--lang zh``).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentloops.errors import UsageError
from agentloops.fonts import register_cjk_font
from agentloops.i18n import _

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
        if self.ok:
            return _("{mark} {name}: {detail}").format(mark=mark, name=self.name, detail=self.detail)
        return _("{mark} {name}: {detail} — fix: {fix}").format(mark=mark, name=self.name, detail=self.detail,
                                                                fix=self.fix)


Probe = Callable[[], Finding]
"""One check, with everything it looks at already bound."""


# --------------------------------------------------------------------------- the checks


def check_python(version: tuple[int, ...] = tuple(sys.version_info[:3])) -> Finding:
    """Python is new enough."""
    shown = ".".join(map(str, version))
    if tuple(version[:2]) >= MIN_PYTHON:
        return Finding("Python", True, shown)
    need = ".".join(map(str, MIN_PYTHON))
    return Finding("Python", False, _("{shown}, older than {need}").format(shown=shown, need=need),
                   _("install Python {need} or newer, then reinstall: pip install -e '.[dev]'").format(need=need))


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
    name = _("the package and its extras")
    if own is None:
        return Finding(name, False, _("agentloops is not installed"),
                       _("from the checkout: pip install -e '.[dev,app]' (or make lab)"))
    if missing:
        return Finding(name, False, _("agentloops {version}; missing {names}").format(
            version=own, names=", ".join(missing)),
            _("pip install {names} (or pip install -e '.[dev,app]' in the checkout)").format(names=" ".join(missing)))
    names = ", ".join(name for names in extras.values() for name in names)
    return Finding(name, True, _("agentloops {version} with {names}").format(version=own, names=names))


def start_kernel(timeout: float = KERNEL_TIMEOUT_S) -> str:
    """Start a Python kernel, run one line in it, shut it down; the line's result (raises when it cannot)."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", startup_timeout=timeout,  # its own output (its
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warning) goes nowhere
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
        return Finding(_("a kernel that starts"), False, detail,
                       _("python -m ipykernel install --user, then run the doctor again"))
    if status != "ok":
        return Finding(_("a kernel that starts"), False, _("it started but answered {status!r}").format(status=status),
                       _("restart the machine's Jupyter: jupyter kernelspec list, then reinstall ipykernel"))
    return Finding(_("a kernel that starts"), True, _("python3 started and ran a line"))


def widget_extension_dirs() -> list[Path]:
    """Where JupyterLab looks for the widget manager extension."""
    bases = [Path(sys.prefix), Path.home() / ".local", Path("/usr/local"), Path("/usr")]
    return [base / "share" / "jupyter" / "labextensions" / "@jupyter-widgets" / "jupyterlab-manager"
            for base in bases]


def check_widgets(has_module: Callable[[str], bool] = lambda name: importlib.util.find_spec(name) is not None,
                  extension_dirs: Callable[[], list[Path]] = widget_extension_dirs) -> Finding:
    """ipywidgets is importable and JupyterLab has the extension that draws widgets."""
    name = _("the widget extension")
    if not has_module("ipywidgets"):
        return Finding(name, False, _("ipywidgets is not installed"), "pip install ipywidgets")
    found = [d for d in extension_dirs() if d.is_dir()]
    if not found:
        return Finding(name, False, _("ipywidgets is installed but JupyterLab has no widget manager"),
                       _("pip install jupyterlab_widgets, then restart JupyterLab (widgets otherwise show as text)"))
    return Finding(name, True, f"{found[0]}")


def font_families() -> list[str]:
    """The font families matplotlib will draw with (its cached list, with the package's shipped CJK font)."""
    from matplotlib import font_manager

    register_cjk_font()  # what the charts do before they draw: the mplfonts dependency's Noto Sans CJK SC
    return sorted({font.name for font in font_manager.fontManager.ttflist})


def system_font_files() -> list[str]:
    """Font files installed on the system, whether or not matplotlib's cache knows them yet."""
    from matplotlib import font_manager

    return list(font_manager.findSystemFonts())


def _covers_chinese(name: str) -> bool:
    return any(hint.lower() in name.lower() for hint in CJK_FONT_HINTS)


def check_font(families: Callable[[], list[str]] = font_families,
               files: Callable[[], list[str]] = system_font_files) -> Finding:
    """A font that covers Chinese, known to matplotlib, so the charts' Chinese labels are not boxes.

    The package's ``mplfonts`` dependency ships one (Noto Sans CJK SC), so this fails only when that
    dependency is missing and the system has none either; the browser's font is :func:`check_browser_font`.
    """
    name = _("a font for the Chinese text")
    cjk = [family for family in families() if _covers_chinese(family)]
    if cjk:
        return Finding(name, True, cjk[0])
    installed = [Path(f).name for f in files() if _covers_chinese(Path(f).name)]
    if installed:
        return Finding(name, False, _("{font} is installed but matplotlib's font cache predates it").format(
            font=installed[0]), _("delete the cache (rm ~/.cache/matplotlib/fontlist-*.json) and restart the kernel"))
    return Finding(name, False, _("no installed font covers Chinese"),
                   _("install one (Debian/Ubuntu: apt install fonts-noto-cjk; macOS and Windows have one), or "
                     "reinstall the package's own font dependency (pip install mplfonts, which ships Noto Sans CJK "
                     "SC); then restart the kernel"))


BROWSER_FONT_FILES: dict[str, tuple[str, ...]] = {
    "Darwin": ("/System/Library/Fonts/PingFang.ttc", "/System/Library/Fonts/STHeiti Light.ttc",
               "/System/Library/Fonts/Hiragino Sans GB.ttc"),
    "Windows": ("C:/Windows/Fonts/msyh.ttc", "C:/Windows/Fonts/simsun.ttc", "C:/Windows/Fonts/simhei.ttf"),
}
"""Where macOS and Windows keep the Chinese fonts they ship (neither has fontconfig to ask)."""

LINUX_FONT_FIXES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("debian", "ubuntu"), "sudo apt install fonts-noto-cjk"),
    (("fedora", "rhel", "centos"), "sudo dnf install google-noto-sans-cjk-fonts"),
    (("arch",), "sudo pacman -S noto-fonts-cjk"),
    (("opensuse", "suse"), "sudo zypper install noto-sans-sc-fonts"),
    (("alpine",), "sudo apk add font-noto-cjk"),
)
"""Linux distributions (``ID`` / ``ID_LIKE`` of ``/etc/os-release``) and the command that installs a CJK font."""


def fontconfig_chinese_families() -> list[str] | None:
    """The families fontconfig says cover Chinese (``fc-list :lang=zh family``), or ``None`` without fontconfig."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return None
    done = subprocess.run([fc_list, ":lang=zh", "family"], capture_output=True, text=True, timeout=60, check=False)
    return sorted({name.strip() for line in done.stdout.splitlines() for name in line.split(",") if name.strip()})


def os_release(path: Path = Path("/etc/os-release")) -> dict[str, str]:
    """The fields of ``/etc/os-release`` (empty when there is none)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return {}
    fields = (line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))
    return {key.strip(): value.strip().strip('"') for key, value in fields}


def browser_font_fix(system: str, release: Mapping[str, str]) -> str:
    """What to run on this system to give the browser a font that covers Chinese."""
    if system == "Darwin":
        return _("macOS ships PingFang SC: restore it in Font Book (File → Restore Standard Fonts), then reload the "
                 "page")
    if system == "Windows":
        return _("Settings → Time & language → Language & region → Add a language → Chinese (Simplified) installs "
                 "Microsoft YaHei; then reload the page")
    names = {release.get("ID", "").lower(), *release.get("ID_LIKE", "").lower().split()}
    for distros, command in LINUX_FONT_FIXES:
        if names & set(distros):
            return _("{command}, then restart the browser").format(command=command)
    return _("install a Noto Sans CJK font with your package manager (Debian/Ubuntu: sudo apt install "
             "fonts-noto-cjk; Fedora: sudo dnf install google-noto-sans-cjk-fonts), then restart the browser")


def _preferred(families: list[str]) -> str:
    """A Simplified Chinese family when there is one (``Noto Sans CJK SC``), else the first."""
    simplified = [f for f in families if f.endswith((" SC", "SC")) or "GB" in f or "YaHei" in f]
    return (simplified or families)[0]


def check_browser_font(families: Callable[[], list[str] | None] = fontconfig_chinese_families,
                       system: Callable[[], str] = platform.system,
                       exists: Callable[[str], bool] = lambda path: Path(path).is_file(),
                       release: Callable[[], Mapping[str, str]] = os_release) -> Finding:
    """The *system* has a font that covers Chinese, so the browser draws the Chinese notebooks, widgets and app
    pages as text, not boxes (matplotlib's font is :func:`check_font`)."""
    name = _("a browser font for Chinese")
    found = families()
    kind = system()
    if found:
        return Finding(name, True, _("{font} (fontconfig lists {n} for Chinese)").format(
            font=_preferred(found), n=len(found)))
    if found is None:
        shipped = [path for path in BROWSER_FONT_FILES.get(kind, ()) if exists(path)]
        if shipped:
            return Finding(name, True, shipped[0])
        if kind not in BROWSER_FONT_FILES:
            return Finding(name, False, _("fontconfig (fc-list) is not installed, so no font can be found"),
                           _("install fontconfig and a CJK font ({fix})").format(fix=browser_font_fix(kind, release())))
        return Finding(name, False, _("none of the Chinese fonts {system} ships is present").format(system=kind),
                       browser_font_fix(kind, release()))
    return Finding(name, False, _("fc-list :lang=zh finds no font that covers Chinese"),
                   browser_font_fix(kind, release()))


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
    name = _("a free port")
    if is_free(port):
        return Finding(name, True, f"{port}")
    for candidate in range(port + 1, port + tries):
        if is_free(candidate):
            return Finding(name, True, _("{port} is taken; {free} is free (pass --port {free})").format(
                port=port, free=candidate))
    return Finding(name, False, _("{port} to {last} are all taken").format(port=port, last=port + tries - 1),
                   _("stop other Jupyter servers (jupyter server list; jupyter server stop PORT) or pass --port N"))


def check_folder(folder: Path) -> Finding:
    """The folder the notebooks are copied into can be created and written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-", delete=True):
            pass
    except OSError as exc:
        return Finding(_("a writable notebooks folder"), False, f"{folder}: {exc.strerror or exc}",
                       _("pass --dir to a folder you own (agentloops lab --dir ~/agentloops-notebooks)"))
    return Finding(_("a writable notebooks folder"), True, str(folder))


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
        "browser font": check_browser_font,
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
            findings.append(Finding(name, False, _("the check itself failed ({error})").format(
                error=f"{type(exc).__name__}: {exc}"), _("please report it, with this line")))
    return findings


def report(findings: list[Finding]) -> tuple[str, int]:
    """The text to print and the exit status: 0 when every check passed, 1 otherwise."""
    failed = [f for f in findings if not f.ok]
    summary = (_("All {n} checks passed: this machine is ready.").format(n=len(findings)) if not failed
               else _("{failed} of {n} checks failed; fix them and run agentloops doctor again.").format(
                   failed=len(failed), n=len(findings)))
    return "\n".join([*(f.line() for f in findings), summary]), 1 if failed else 0


class DoctorError(UsageError):
    """The doctor was asked something it cannot check (a port out of range)."""


def _doctor(args: argparse.Namespace) -> tuple[str, int]:
    if not 1 <= args.port <= 65535:
        raise DoctorError(_("doctor --port: expected a port from 1 to 65535; got {port}").format(port=args.port))
    probes = default_probes(port=args.port, folder=args.dir, kernel=not args.no_kernel)
    return report(run_checks(probes))


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``agentloops doctor`` to the command line."""
    parser = sub.add_parser("doctor", help=_("check this machine for the workshop: Python, packages, kernel, widgets, "
                                             "fonts, port, folder"))
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=_("the port to check (default {port})").format(port=DEFAULT_PORT))
    parser.add_argument("--dir", type=Path, default=None, help=_("the notebooks folder to check (default: the lab's)"))
    parser.add_argument("--no-kernel", action="store_true", help=_("skip starting a kernel (the slowest check)"))
    parser.set_defaults(handler=_doctor)


__all__ = ["Finding", "Probe", "add_commands", "check_browser_font", "default_probes", "report", "run_checks"]
