"""The controller's folder listing is its architecture, bottom to top: the base vocabulary, three layers,
persistence and the simulated world, the engine, what drives it (running), and the teaching UI apart.

Each rule is a function over a folder that returns what breaks it, so each is run twice: on the package
(nothing breaks it) and on a small folder built to break it (the rule notices).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agentloops
import agentloops.controller

PACKAGE = Path(agentloops.__file__).parent
CONTROLLER = Path(agentloops.controller.__file__).parent
SUBPACKAGES = {"vocabulary", "task", "policy", "stopping", "persistence", "sim", "running", "teaching"}
LAYERS = ("task", "policy", "stopping")
"""The three layers: task & state, budgets & error policy, progress & stopping."""
FLOORS = {"vocabulary": 0, "task": 1, "policy": 1, "stopping": 1, "persistence": 2, "sim": 2, "": 3,
          "running": 4, "teaching": 5}
"""Each folder's floor (``""``: the engine, the controller's top-level modules). A module imports only its own
floor or lower ones, so the listing read bottom to top is the order in which the package can be understood."""
UI = ("agentloops.controller.teaching", "agentloops.plots", "agentloops.widgets", "agentloops.cli", "matplotlib",
      "ipywidgets", "IPython")
"""What the engine (everything in the controller outside ``teaching/``) never imports, not even lazily."""


def modules(root: Path, name: str) -> dict[str, Path]:
    """Dotted module name → file, for every module under ``root`` (a package called ``name``)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = (name, *path.relative_to(root).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports(module: str, path: Path, known: dict[str, Path], *, lazy: bool = True) -> set[str]:
    """The modules ``module`` imports: at module level, and (``lazy``) inside functions and ``if`` blocks too.

    ``from p import m`` counts as importing ``p.m`` when that is a module; relative imports are resolved;
    ``importlib.import_module("…")`` with a literal name counts as an import. Imports under
    ``if TYPE_CHECKING:`` never run, so they do not count.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for n in ast.walk(node)}
    found: set[str] = set()
    for node in ast.walk(tree) if lazy else tree.body:
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known)
        elif (lazy and isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"):
            found.add(node.args[0].value)
    return found - {module}


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _in(module: str, name: str, sub: str) -> bool:
    return module.startswith(f"{name}.{sub}.") or module == f"{name}.{sub}"


# -- the rules ---------------------------------------------------------------------------------------------------


def wrong_subpackages(root: Path) -> list[str]:
    """Every folder is one of the six subpackages, and each of the six is there, as a package."""
    folders = {p.name for p in root.iterdir() if p.is_dir() and p.name != "__pycache__"}
    problems = [f"{name}/: not one of the layers" for name in sorted(folders - SUBPACKAGES)]
    problems += [f"{name}/: missing" for name in sorted(SUBPACKAGES - folders)]
    problems += [f"{name}/: no __init__.py" for name in sorted(folders & SUBPACKAGES) if not (root / name / "__init__.py").exists()]
    return problems


def engine_imports_ui(root: Path, name: str = "agentloops.controller") -> list[str]:
    known = modules(root, name)
    return [f"{module} imports {dep}" for module, path in known.items() if not _in(module, name, "teaching")
            for dep in sorted(imports(module, path, known)) if _under(dep, UI) or _in(dep, name, "teaching")]


def layers_import_sim(root: Path, name: str = "agentloops.controller") -> list[str]:
    known = modules(root, name)
    return [f"{module} imports {dep}" for module, path in known.items() if any(_in(module, name, s) for s in LAYERS)
            for dep in sorted(imports(module, path, known)) if _in(dep, name, "sim")]


def _floor(module: str, name: str) -> int | None:
    """The floor of a controller module; ``None`` for the package's own ``__init__`` (a lazy index of names)."""
    if module == name:
        return None
    parts = module[len(name) + 1:].split(".")
    return FLOORS.get(parts[0] if len(parts) > 1 else "", 3)


def imports_upward(root: Path, name: str = "agentloops.controller") -> list[str]:
    """Every import of a module on a higher floor than the importer's (imports inside functions count)."""
    known = modules(root, name)
    problems = []
    for module, path in known.items():
        floor = _floor(module, name)
        for dep in sorted(d for d in imports(module, path, known) if d in known):
            above = _floor(dep, name)
            if floor is not None and above is not None and above > floor:
                problems.append(f"{module} imports {dep}, a floor above it")
    return problems


def import_circles(root: Path, name: str) -> list[str]:
    """Every import circle, counting imports inside functions (an import moved into a function still runs,
    so it hides a circle rather than breaking it): each group of modules that reach one another, sorted."""
    known = modules(root, name)
    graph = {module: {d for d in imports(module, path, known) if d in known} for module, path in known.items()}

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for dep in graph[todo.pop()] - seen:
                seen.add(dep)
                todo.append(dep)
        return seen

    reached = {module: reach(module) for module in graph}
    groups = {frozenset(m for m in reached[module] if module in reached[m]) for module in graph if module in reached[module]}
    return sorted(" <-> ".join(sorted(group)) for group in groups)


def subpackage_inits_define_names(root: Path) -> list[str]:
    """Each subpackage's ``__init__`` is a docstring only, and the docstring names each of its modules."""
    problems = []
    for sub in sorted(SUBPACKAGES):
        init = root / sub / "__init__.py"
        if not init.exists():
            continue
        tree = ast.parse(init.read_text(encoding="utf-8"))
        doc = ast.get_docstring(tree)
        if doc is None:
            problems.append(f"{sub}/__init__.py: no docstring")
        extra = tree.body[1:] if doc is not None else tree.body
        problems += [f"{sub}/__init__.py:{node.lineno}: {type(node).__name__} (a docstring only, no names)" for node in extra]
        problems += [f"{sub}/__init__.py: the docstring does not name ``{m.stem}``"
                     for m in sorted((root / sub).glob("*.py")) if m.stem != "__init__" and f"``{m.stem}``" not in (doc or "")]
    return problems


# -- the package keeps them --------------------------------------------------------------------------------------


def test_the_controller_folder_has_exactly_the_six_subpackages():
    problems = wrong_subpackages(CONTROLLER)
    assert not problems, "\n".join(problems)


def test_the_engine_never_imports_the_teaching_ui_not_even_lazily():
    problems = engine_imports_ui(CONTROLLER)
    assert not problems, "\n".join(problems)


def test_the_three_layers_do_not_import_the_simulation():
    problems = layers_import_sim(CONTROLLER)
    assert not problems, "\n".join(problems)


def test_every_import_goes_down_the_floors():
    problems = imports_upward(CONTROLLER)
    assert not problems, "\n".join(problems)


def test_the_package_has_no_import_circle():
    problems = import_circles(PACKAGE, "agentloops")
    assert not problems, "\n".join(problems)


def test_each_subpackage_init_is_a_docstring_naming_its_modules():
    problems = subpackage_inits_define_names(CONTROLLER)
    assert not problems, "\n".join(problems)


def test_the_rules_read_the_package_itself():
    known = modules(CONTROLLER, "agentloops.controller")
    assert {"agentloops.controller.teaching.plots", "agentloops.controller.task.state", "agentloops.controller"} <= set(known)
    cli = imports("agentloops.cli", PACKAGE / "cli.py", modules(PACKAGE, "agentloops"))
    assert "agentloops.controller.teaching.cli" in cli  # a lazy import inside a function is read


# -- and each rule notices when it is broken -----------------------------------------------------------------------


def _tree(root: Path, files: dict[str, str]) -> Path:
    """A controller folder with the six subpackages, ``files`` in it, and honest docstrings where none is given."""
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    for sub in SUBPACKAGES:
        init = root / sub / "__init__.py"
        if not init.exists():
            init.parent.mkdir(parents=True, exist_ok=True)
            names = ", ".join(f"``{m.stem}``" for m in sorted(init.parent.glob("*.py")))
            init.write_text(f'"""A layer: {names}."""\n', encoding="utf-8")
    return root


@pytest.mark.parametrize(("files", "rule", "expected"), [
    ({"helpers/__init__.py": ""}, wrong_subpackages, ["helpers/: not one of the layers"]),
    ({"engine.py": "from agentloops.controller.task import state\n", "task/state.py": ""}, imports_upward, []),
    ({"engine.py": "def draw():\n    from agentloops.controller.teaching import plots\n"}, engine_imports_ui,
     ["agentloops.controller.engine imports agentloops.controller.teaching",
      "agentloops.controller.engine imports agentloops.controller.teaching.plots"]),
    ({"policy/budgets.py": "import matplotlib.pyplot\n"}, engine_imports_ui,
     ["agentloops.controller.policy.budgets imports matplotlib.pyplot"]),
    ({"turn.py": "import importlib\nimportlib.import_module('agentloops.controller.teaching.widgets')\n"},
     engine_imports_ui, ["agentloops.controller.turn imports agentloops.controller.teaching.widgets"]),
    ({"task/tasks.py": "from ..sim.faults import Fault\n"}, layers_import_sim,
     ["agentloops.controller.task.tasks imports agentloops.controller.sim.faults"]),
    ({"stopping/status.py": "def f():\n    from agentloops.controller.sim import faults\n"}, layers_import_sim,
     ["agentloops.controller.stopping.status imports agentloops.controller.sim",
      "agentloops.controller.stopping.status imports agentloops.controller.sim.faults"]),
    ({"task/state.py": "def f():\n    from agentloops.controller.engine import Run\n", "engine.py": ""}, imports_upward,
     ["agentloops.controller.task.state imports agentloops.controller.engine, a floor above it"]),
    ({"persistence/trace.py": "from agentloops.controller.running import replaying\n",
      "running/replaying.py": ""}, imports_upward,
     ["agentloops.controller.persistence.trace imports agentloops.controller.running, a floor above it",
      "agentloops.controller.persistence.trace imports agentloops.controller.running.replaying, a floor above it"]),
    ({"vocabulary/tools.py": "from agentloops.controller.policy import budgets\n", "policy/budgets.py": ""},
     imports_upward, ["agentloops.controller.vocabulary.tools imports agentloops.controller.policy, a floor above it",
                      "agentloops.controller.vocabulary.tools imports agentloops.controller.policy.budgets, "
                      "a floor above it"]),
    ({"sim/__init__.py": '"""A layer: ``planners``."""\nfrom .planners import TaskPlanner\n'}, subpackage_inits_define_names,
     ["sim/__init__.py:2: ImportFrom (a docstring only, no names)", "sim/__init__.py: the docstring does not name ``faults``"]),
])
def test_each_rule_notices_when_it_is_broken(tmp_path, files, rule, expected):
    root = _tree(tmp_path / "controller", {"sim/planners.py": "TaskPlanner = None\n", "sim/faults.py": "",
                                           "teaching/plots.py": "", "teaching/widgets.py": "", **files})
    assert rule(root) == expected


def test_a_teaching_module_may_import_the_engine_and_the_layers_may_use_persistence(tmp_path):
    root = _tree(tmp_path / "controller", {
        "teaching/plots.py": "from agentloops.controller import engine\nimport matplotlib\n",
        "task/state.py": "from agentloops.controller.persistence import trace\n", "engine.py": ""})
    assert engine_imports_ui(root) == [] and layers_import_sim(root) == []


def test_an_import_circle_is_found_even_through_an_import_inside_a_function(tmp_path):
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "a.py").write_text("from pkg.b import x\n", encoding="utf-8")
    (root / "b.py").write_text("from pkg import a\nx = 1\n", encoding="utf-8")
    assert import_circles(root, "pkg") == ["pkg.a <-> pkg.b"]
    (root / "b.py").write_text("x = 1\ndef f():\n    from pkg import a\n", encoding="utf-8")
    assert import_circles(root, "pkg") == ["pkg.a <-> pkg.b"]  # hidden in a function: still a circle
    (root / "c.py").write_text("import importlib\ndef g():\n    importlib.import_module('pkg.a')\n", encoding="utf-8")
    (root / "a.py").write_text("from pkg.b import x\nfrom pkg import c\n", encoding="utf-8")
    assert import_circles(root, "pkg") == ["pkg.a <-> pkg.b <-> pkg.c"]
    (root / "b.py").write_text("from typing import TYPE_CHECKING\nx = 1\nif TYPE_CHECKING:\n    from pkg import a\n",
                               encoding="utf-8")
    (root / "c.py").write_text("", encoding="utf-8")
    assert import_circles(root, "pkg") == []  # a typing-only import never runs
