"""``agentloops doctor``: one line per check, a fix for each failure, and an exit status a room can loop on.

Healthy and broken machines are simulated by handing each check what it would have found.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from agentloops import doctor
from agentloops.doctor import (
    DoctorError,
    Finding,
    check_folder,
    check_font,
    check_kernel,
    check_packages,
    check_port,
    check_python,
    check_widgets,
    report,
    run_checks,
)

EVERYTHING = {"agentloops": "0.1.0", "jupyterlab": "4.2", "ipywidgets": "8.1", "matplotlib": "3.9",
              "pandas": "2.2", "voila": "0.5.13"}


def healthy(tmp_path: Path) -> dict[str, doctor.Probe]:
    extension = tmp_path / "labextensions" / "@jupyter-widgets" / "jupyterlab-manager"
    extension.mkdir(parents=True)
    return {
        "python": lambda: check_python((3, 10, 0)),
        "packages": lambda: check_packages(EVERYTHING.get),
        "kernel": lambda: check_kernel(lambda: "ok"),
        "widgets": lambda: check_widgets(lambda name: True, lambda: [extension]),
        "font": lambda: check_font(lambda: ["DejaVu Sans", "Noto Sans CJK SC"], lambda: []),
        "port": lambda: check_port(8888, lambda port: True),
        "folder": lambda: check_folder(tmp_path / "notebooks"),
    }


def test_a_healthy_machine_passes_every_check(tmp_path: Path) -> None:
    text, status = report(run_checks(healthy(tmp_path)))
    lines = text.splitlines()
    assert status == 0 and len(lines) == 8
    assert all(line.startswith("✓ ") for line in lines[:7])
    assert lines[-1] == "All 7 checks passed: this machine is ready."
    assert "✓ a font for the Chinese text: Noto Sans CJK SC" in lines


def _broken(tmp_path: Path, name: str, probe: doctor.Probe) -> tuple[str, int]:
    probes = healthy(tmp_path)
    probes[name] = probe
    return report(run_checks(probes))


@pytest.mark.parametrize(("name", "probe", "line"), [
    ("python", lambda: check_python((3, 9, 18)),
     "✗ Python: 3.9.18, older than 3.10 — fix: install Python 3.10 or newer"),
    ("packages", lambda: check_packages({**EVERYTHING, "voila": None}.get),
     "✗ the package and its extras: agentloops 0.1.0; missing voila — fix: pip install voila"),
    ("packages", lambda: check_packages({**EVERYTHING, "agentloops": None}.get),
     "✗ the package and its extras: agentloops is not installed — fix: from the checkout: pip install -e"),
    ("kernel", lambda: check_kernel(lambda: (_ for _ in ()).throw(RuntimeError("Kernel died before replying"))),
     "✗ a kernel that starts: RuntimeError: Kernel died before replying — fix: python -m ipykernel install --user"),
    ("widgets", lambda: check_widgets(lambda name: True, lambda: [Path("/nonexistent/jupyterlab-manager")]),
     "✗ the widget extension: ipywidgets is installed but JupyterLab has no widget manager — fix: pip install "
     "jupyterlab_widgets"),
    ("font", lambda: check_font(lambda: ["DejaVu Sans"], lambda: ["/usr/share/fonts/DejaVuSans.ttf"]),
     "✗ a font for the Chinese text: no installed font covers Chinese — fix: install one (Debian/Ubuntu: apt "
     "install fonts-noto-cjk"),
    ("font", lambda: check_font(lambda: ["DejaVu Sans"], lambda: ["/usr/share/fonts/NotoSansCJK-Regular.ttc"]),
     "✗ a font for the Chinese text: NotoSansCJK-Regular.ttc is installed but matplotlib's font cache predates it "
     "— fix: delete the cache"),
    ("port", lambda: check_port(8888, lambda port: False),
     "✗ a free port: 8888 to 8907 are all taken — fix: stop other Jupyter servers"),
])
def test_each_broken_check_fails_with_one_line_and_a_fix(tmp_path: Path, name: str, probe: doctor.Probe,
                                                          line: str) -> None:
    text, status = _broken(tmp_path, name, probe)
    failed = [row for row in text.splitlines() if row.startswith("✗ ")]
    assert status == 1 and len(failed) == 1
    assert failed[0].startswith(line)
    assert text.splitlines()[-1] == "1 of 7 checks failed; fix them and run agentloops doctor again."


def test_a_taken_port_with_a_free_neighbour_passes_and_names_it() -> None:
    finding = check_port(8888, lambda port: port >= 8890)
    assert finding == Finding("a free port", True, "8888 is taken; 8890 is free (pass --port 8890)")


def test_a_folder_that_cannot_be_created_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    finding = check_folder(blocker / "notebooks")
    assert not finding.ok and finding.detail.startswith(f"{blocker / 'notebooks'}: ")
    assert finding.fix.startswith("pass --dir to a folder you own")


def test_a_check_that_raises_is_a_failed_finding_not_a_traceback(tmp_path: Path) -> None:
    def explodes() -> Finding:
        raise KeyError("surprise")

    text, status = _broken(tmp_path, "font", explodes)
    assert status == 1 and "✗ font: the check itself failed (KeyError: 'surprise') — fix: please report it" in text


def test_the_real_probes_of_this_machine_answer(tmp_path: Path) -> None:
    findings = {f.name: f for f in run_checks(doctor.default_probes(folder=tmp_path, kernel=False))}
    assert findings["Python"].ok and findings["the package and its extras"].ok
    assert findings["a writable notebooks folder"] == Finding("a writable notebooks folder", True, str(tmp_path))
    assert "a kernel that starts" not in findings


def test_the_kernel_check_starts_a_kernel_quietly_even_with_standard_output_closed() -> None:
    """``agentloops doctor >&-``: the kernel inherited the closed descriptor and died on it (a traceback, a failed
    check); a healthy kernel's start-up warning was printed as the doctor's own stderr."""
    code = "import sys; from agentloops.doctor import start_kernel; sys.exit(start_kernel() != 'ok')"
    done = subprocess.run(f"'{sys.executable}' -c \"{code}\" >&-", shell=True, executable="/bin/bash",
                          capture_output=True, cwd=Path(__file__).parents[1], timeout=120, check=False)
    assert (done.returncode, done.stderr) == (0, b"")


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    doctor.add_commands(parser.add_subparsers())
    return parser.parse_args(["doctor", *argv])


def test_the_command_checks_its_port_argument() -> None:
    args = _parse("--port", "70000", "--no-kernel")
    with pytest.raises(DoctorError, match=r"^doctor --port: expected a port from 1 to 65535; got 70000$"):
        args.handler(args)


def test_the_command_reports_and_exits_non_zero_on_a_failure(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "check_font", lambda: check_font(lambda: [], lambda: []))
    args = _parse("--no-kernel", "--dir", str(tmp_path))
    text, status = args.handler(args)
    assert status == 1 and "✗ a font for the Chinese text" in text and "a kernel" not in text


# --------------------------------------------------------------------------- the browser's font for Chinese


def _browser(found: list[str] | None, system: str = "Linux", files: tuple[str, ...] = (),
             release: dict[str, str] | None = None) -> Finding:
    return doctor.check_browser_font(lambda: found, lambda: system, lambda path: path in files,
                                     lambda: release or {"ID": "debian"})


def test_a_system_font_listed_by_fontconfig_passes_and_prefers_simplified_chinese() -> None:
    finding = _browser(["Noto Serif CJK JP", "Noto Sans CJK SC", "Noto Sans CJK TC"])
    assert finding == Finding("a browser font for Chinese", True, "Noto Sans CJK SC (fontconfig lists 3 for Chinese)")


@pytest.mark.parametrize(("release", "command"), [
    ({"ID": "debian"}, "sudo apt install fonts-noto-cjk"),
    ({"ID": "ubuntu", "ID_LIKE": "debian"}, "sudo apt install fonts-noto-cjk"),
    ({"ID": "linuxmint", "ID_LIKE": "ubuntu debian"}, "sudo apt install fonts-noto-cjk"),
    ({"ID": "fedora"}, "sudo dnf install google-noto-sans-cjk-fonts"),
    ({"ID": "rocky", "ID_LIKE": "rhel centos fedora"}, "sudo dnf install google-noto-sans-cjk-fonts"),
    ({"ID": "arch"}, "sudo pacman -S noto-fonts-cjk"),
    ({"ID": "alpine"}, "sudo apk add font-noto-cjk"),
])
def test_no_chinese_font_on_linux_names_the_distributions_package(release: dict[str, str], command: str) -> None:
    finding = _browser([], release=release)
    assert not finding.ok and finding.detail == "fc-list :lang=zh finds no font that covers Chinese"
    assert finding.fix == f"{command}, then restart the browser"
    assert finding.line().startswith("✗ a browser font for Chinese: fc-list :lang=zh finds no font")


def test_an_unknown_distribution_gets_the_common_commands() -> None:
    finding = _browser([], release={"ID": "gentoo"})
    assert not finding.ok and finding.fix.startswith("install a Noto Sans CJK font with your package manager")


def test_linux_without_fontconfig_says_so_and_how_to_fix_it() -> None:
    finding = _browser(None, release={"ID": "debian"})
    assert not finding.ok and finding.detail == "fontconfig (fc-list) is not installed, so no font can be found"
    assert finding.fix == "install fontconfig and a CJK font (sudo apt install fonts-noto-cjk, then restart the browser)"


@pytest.mark.parametrize(("system", "present"), [("Darwin", "/System/Library/Fonts/PingFang.ttc"),
                                                 ("Windows", "C:/Windows/Fonts/msyh.ttc")])
def test_macos_and_windows_are_checked_by_their_shipped_font_files(system: str, present: str) -> None:
    assert _browser(None, system, (present,)) == Finding("a browser font for Chinese", True, present)
    missing = _browser(None, system)
    assert not missing.ok and missing.detail == f"none of the Chinese fonts {system} ships is present"
    assert ("Font Book" if system == "Darwin" else "Chinese (Simplified)") in missing.fix


def test_the_browser_font_is_a_check_of_its_own_beside_the_charts_font(tmp_path: Path) -> None:
    probes = doctor.default_probes(folder=tmp_path, kernel=False)
    assert list(probes)[list(probes).index("font") + 1] == "browser font"
    text, status = _broken(tmp_path, "font", lambda: _browser([]))
    assert status == 1 and "✓ a font for the Chinese text: Noto Sans CJK SC" not in text
    assert "✗ a browser font for Chinese" in text


def test_fontconfig_is_asked_for_chinese_families(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    class Done:
        stdout = "Noto Sans CJK SC,Noto Sans CJK SC Regular\nWenQuanYi Zen Hei\n\n"

    monkeypatch.setattr(doctor.shutil, "which", lambda name: "/usr/bin/fc-list")
    monkeypatch.setattr(doctor.subprocess, "run", lambda command, **kw: seen.append(command) or Done())
    assert doctor.fontconfig_chinese_families() == ["Noto Sans CJK SC", "Noto Sans CJK SC Regular",
                                                    "WenQuanYi Zen Hei"]
    assert seen == [["/usr/bin/fc-list", ":lang=zh", "family"]]
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)
    assert doctor.fontconfig_chinese_families() is None


def test_os_release_is_read_and_a_missing_one_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "os-release"
    path.write_text('# comment\nID=ubuntu\nID_LIKE="debian"\nPRETTY_NAME="Ubuntu 24.04 LTS"\n')
    assert doctor.os_release(path) == {"ID": "ubuntu", "ID_LIKE": "debian", "PRETTY_NAME": "Ubuntu 24.04 LTS"}
    assert doctor.os_release(tmp_path / "absent") == {}


def test_the_charts_font_comes_with_the_package(tmp_path: Path) -> None:
    """The shipped font (mplfonts) is registered before matplotlib's fonts are read: the chart check passes here."""
    pytest.importorskip("mplfonts")
    finding = check_font()
    assert finding.ok and "CJK" in finding.detail


def test_the_no_font_fix_names_the_packages_own_font_dependency() -> None:
    finding = check_font(lambda: ["DejaVu Sans"], lambda: [])
    assert "pip install mplfonts" in finding.fix and "Noto Sans CJK SC" in finding.fix
