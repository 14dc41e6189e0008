"""The package's surface and set-up: exports, light import, conda/pip in step, wheel contents."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import agentloops
from agentloops.i18n import DOMAINS
from agentloops.resources import copy_notebooks

ROOT = Path(__file__).resolve().parents[1]


def test_all_is_exactly_the_public_surface():
    public = {name for name in vars(agentloops) if not name.startswith("_")} - {"annotations"}
    modules = {name for name in public if type(getattr(agentloops, name)).__name__ == "module"}
    assert set(agentloops.__all__) == public - modules | {"__version__"}
    assert all(hasattr(agentloops, name) for name in agentloops.__all__)


def test_import_stays_light():
    code = ("import sys, agentloops; heavy = [m for m in ('matplotlib', 'ipywidgets', 'pandas', 'jupyterlab', "
            "'IPython', 'openai', 'anthropic') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def _requirement_names(lines: list[str]) -> dict[str, str]:
    found = {}
    for line in lines:
        match = re.match(r"^\s*([A-Za-z0-9_.-]+)\s*(.*)$", line)
        if match:
            found[match.group(1).lower()] = match.group(2).replace(" ", "")
    return found


def test_environment_yml_matches_pyproject():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pip_deps = _requirement_names(pyproject["project"]["dependencies"])
    text = (ROOT / "environment.yml").read_text(encoding="utf-8")
    conda_lines = re.findall(r"^  - (?!pip\b)([^\n]+)$", text.split("dependencies:", 1)[1], re.M)
    pip_lines = re.findall(r"^      - (?!-e )([^\n#]+)$", text, re.M)  # what conda-forge lacks, from PyPI
    conda_deps = _requirement_names(conda_lines + [line.strip() for line in pip_lines])
    assert conda_deps.pop("python") == pyproject["project"]["requires-python"]
    assert conda_deps == pip_deps


def test_version_matches_pyproject():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert agentloops.__version__ == pyproject["project"]["version"]


def test_copy_notebooks_never_overwrites(tmp_path: Path):
    first = copy_notebooks(tmp_path)
    assert first, "no notebooks were copied"
    first[0].write_text("{}", encoding="utf-8")
    assert copy_notebooks(tmp_path) == []
    assert first[0].read_text(encoding="utf-8") == "{}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(ROOT)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{done.stderr[-2000:]}")
    return next(out.glob("agentloops-*.whl"))


def test_wheel_carries_scenarios_and_notebooks(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(p.relative_to(ROOT / "data").as_posix() for p in (ROOT / "data").rglob("*.json"))
    assert shipped and all(f"agentloops/_data/{p}" in names for p in shipped)
    notebooks = sorted(p.relative_to(ROOT / "notebooks").as_posix() for p in (ROOT / "notebooks").rglob("*.ipynb")
                       if ".ipynb_checkpoints" not in p.parts)
    assert notebooks and all(f"agentloops/_notebooks/{p}" in names for p in notebooks)
    modules = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "agentloops").rglob("*.py"))
    assert "agentloops/jsonfile.py" in modules and all(m in names for m in modules)


def test_wheel_carries_the_compiled_catalogs_and_the_chinese_edition(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    catalogs = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "agentloops" / "locale").rglob("*.mo"))
    assert len(catalogs) == len(DOMAINS) and all(c in names for c in catalogs), catalogs
    assert any(n.startswith("agentloops/_notebooks/zh/") and n.endswith(".ipynb") for n in names)
    assert "agentloops/_notebooks/glossary.md" in names


def test_installed_wheel_finds_its_own_data(wheel: Path, tmp_path: Path):
    zipfile.ZipFile(wheel).extractall(tmp_path)
    code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import agentloops, json; "
            "from agentloops.resources import data_dir, is_checkout; "
            "print(json.dumps([agentloops.__file__, str(data_dir()), is_checkout(), agentloops.run('truncated', 'content').steps]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    module, data, checkout, steps = json.loads(out)
    assert module.startswith(str(tmp_path)) and data.startswith(str(tmp_path))
    assert (checkout, steps) == (False, 8)
