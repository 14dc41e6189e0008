"""No sanity cell in any notebook reads a widget's state — it recomputes what it checks from fresh runs.

A learner plays: moves a slider, locks in a prediction, types an answer into a box, then runs on. A check
that read the widget (``explorer.state…``, ``slider.value``, ``box.children``, ``Out[…]``) — or a value some
earlier cell took from it — then checks the learner's setting instead of the claim, and fails with a bare
``AssertionError``. The Things-to-try tests catch that by playing; this scan catches it in every notebook of
the repository, both editions, exercises, workshop and app included, without running any.

A sanity cell is a code cell tagged ``sanity-check`` or ``claim:<slug>`` (and a cell whose first line says it is
a check must carry the tag, so the scan is not blind to an untagged one). A name holds a widget when it is
bound to what a widget factory returns, and shown (a cell's last expression, or ``display``ed): every package function whose return type is a widget (found by
introspection, so a new factory is covered without editing this file), anything named ``…explorer``,
``interact``/``interactive`` and the ipywidgets classes. A name bound to an expression that reads a widget
(or such a name, or calls a function that does) is tainted too, in cell order; rebinding it cleanly clears it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import typing
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.test_notebooks import ALL, NOTEBOOKS, _id

FACTORY_MODULES = ("agentloops.widgets", "agentloops.controller.teaching.widgets", "agentloops.interview",
                   "agentloops.providers.widgets")
"""Where the package's widget factories live."""

DISPLAY_HISTORY = {"Out", "_oh"}
"""IPython's record of what cells displayed: a widget shown without a name is still reachable there."""

WIDGET_ONLY_ATTRIBUTES = {"children", "observe", "unobserve", "on_click"}
"""Attributes only a widget has: reading them in a check reads a widget, whatever the name."""

CHECK_HEADING = re.compile(r"^#\s*(sanity check|claim:|核对|自检)", re.IGNORECASE)


def _is_widget_class(cls: Any) -> bool:
    import ipywidgets

    if not inspect.isclass(cls):
        return False
    return issubclass(cls, ipywidgets.Widget) or (
        cls.__module__.startswith("agentloops") and hasattr(cls, "_repr_mimebundle_"))


@cache
def widget_factories() -> frozenset[str]:
    """Names whose call returns a widget: the package's factories (by return type), ``…explorer`` and ipywidgets."""
    import ipywidgets

    names = {"interact", "interactive"}
    names |= {name for name, obj in vars(ipywidgets).items() if _is_widget_class(obj)}
    for module_name in FACTORY_MODULES:
        module = importlib.import_module(module_name)
        for name, obj in vars(module).items():
            if name.startswith("_") or not callable(obj):
                continue
            if name.endswith("explorer") or _is_widget_class(obj):
                names.add(name)
                continue
            try:
                returned = typing.get_type_hints(obj).get("return")
            except Exception:  # an annotation that cannot be resolved here: judged by its name above
                continue
            if _is_widget_class(returned):
                names.add(name)
    return frozenset(names)


def _callee(node: ast.Call) -> str | None:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _targets(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _builds_a_widget(value: ast.AST | None) -> bool:
    return isinstance(value, ast.Call) and _callee(value) in widget_factories()


def _python(source: str) -> ast.Module | None:
    lines = ["pass" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n")]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def displayed(trees: list[ast.Module]) -> set[str]:
    """Names a cell shows — its last expression, or an argument of ``display(...)``: the widgets a learner can
    play with (one built and set by code but never shown is the notebook's own, like any other value)."""
    shown = set()
    for tree in trees:
        if tree.body and isinstance(tree.body[-1], ast.Expr) and isinstance(tree.body[-1].value, ast.Name):
            shown.add(tree.body[-1].value.id)
        shown |= {arg.id for n in ast.walk(tree) if isinstance(n, ast.Call) and _callee(n) == "display"
                  for arg in n.args if isinstance(arg, ast.Name)}
    return shown


def _track(tree: ast.Module, holding: set[str], shown: set[str]) -> None:
    """Update ``holding`` — the names that hold a widget or a value read from one — statement by statement."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if _loads(node) & holding:
                holding.add(node.name)
            else:
                holding.discard(node.name)
            continue
        value = getattr(node, "value", None) if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) \
            else getattr(node, "iter", None) if isinstance(node, (ast.For, ast.AsyncFor)) else None
        targets = _targets(node) if value is not None else set()
        if targets:
            reads = (_builds_a_widget(value) and bool(targets & shown)) or bool(_loads(value) & (holding | DISPLAY_HISTORY)) or (
                isinstance(node, ast.AugAssign) and bool(targets & holding))
            holding.difference_update(targets)
            if reads:
                holding.update(targets)
        for walrus in (n for n in ast.walk(node) if isinstance(n, ast.NamedExpr)):
            if (_builds_a_widget(walrus.value) and walrus.target.id in shown) or _loads(walrus.value) & holding:
                holding.add(walrus.target.id)


def widget_reads(source: str, holding: set[str]) -> list[str]:
    """What a check cell reads from a widget: names in ``holding``, the display history, widget-only attributes,
    ``interact``. Empty: it recomputes."""
    tree = _python(source)
    if tree is None:
        return []
    found = sorted(_loads(tree) & (holding | DISPLAY_HISTORY | {"interact", "interactive"}))
    found += sorted({f".{n.attr}" for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                     and n.attr in WIDGET_ONLY_ATTRIBUTES})
    return found


def _is_check(cell: dict[str, Any]) -> bool:
    tags = cell.get("metadata", {}).get("tags", [])
    return "sanity-check" in tags or any(str(t).startswith("claim:") for t in tags)


def _source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else str(source)


def scan(path: Path) -> tuple[list[str], int, int]:
    """(each check cell that reads a widget, with what it reads; check cells seen; shown widgets bound to a name)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    shown = displayed([tree for c in cells if c["cell_type"] == "code" and (tree := _python(_source(c))) is not None])
    holding: set[str] = set()
    widgets_bound, checks, problems = 0, 0, []
    for index, cell in enumerate(cells, 1):
        if cell["cell_type"] != "code":
            continue
        source = _source(cell)
        if _is_check(cell):
            checks += 1
            reads = widget_reads(source, holding)
            if reads:
                problems.append(f"{_id(path)} cell {index} ({cell.get('id')}) reads {', '.join(reads)}:\n{source}")
        tree = _python(source)
        if tree is not None:
            _track(tree, holding, shown)
            widgets_bound += sum(1 for n in ast.walk(tree) if isinstance(n, ast.Assign) and _builds_a_widget(n.value)
                                 and _targets(n) & shown)
    return problems, checks, widgets_bound


@pytest.mark.parametrize("path", ALL, ids=[_id(p) for p in ALL])
def test_no_sanity_cell_reads_widget_state(path: Path) -> None:
    problems, _checks, _bound = scan(path)
    assert not problems, "a check must recompute, not read a widget:\n\n" + "\n\n".join(problems)


@pytest.mark.parametrize("path", ALL, ids=[_id(p) for p in ALL])
def test_every_cell_that_says_it_is_a_check_is_tagged_as_one(path: Path) -> None:
    """The scan finds checks by their tags: a check without one would go unscanned."""
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code" and CHECK_HEADING.match(_source(cell).lstrip()):
            assert _is_check(cell), f"{_id(path)}: {cell.get('id')} says it is a check but carries no tag"


def test_the_scan_is_not_blind() -> None:
    """It sees the package's factories, and widgets and checks in the notebooks that have them."""
    factories = widget_factories()
    assert {"explorer", "budget_explorer", "controller_explorer", "predict", "practice", "speaking_timer",
            "mock_interview", "walkthrough", "IntSlider", "interactive"} <= factories
    assert not {"budget_comparison", "inject", "route_row", "claim_counts", "storm_runs"} & factories
    for name in ("06-explorer.ipynb", "13-budgets-and-no-progress.ipynb", "17-interview-drill.ipynb"):
        for path in (NOTEBOOKS / name, NOTEBOOKS / "zh" / name):
            _problems, checks, bound = scan(path)
            assert checks >= 2 and bound >= 1, (path, checks, bound)


def _synthetic(tmp_path: Path, cells: list[tuple[str, list[str]]]) -> Path:
    path = tmp_path / "made-up.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {"tags": tags},
                                            "source": source, "outputs": [], "execution_count": None}
                                           for i, (source, tags) in enumerate(cells)],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    return path


SETUP = "from agentloops.controller.teaching import widgets\nbudgets = widgets.budget_explorer(n=5)\nbudgets"


@pytest.mark.parametrize("reading", [
    # 13 before the fix: a cell took the comparison from the explorer, and the check read that
    ["loose = budgets.state.comparison\ntight = widgets.budget_comparison(budgets.n, steps=3)",
     "assert loose.cap == 6 and tight.cap == 3"],
    ['assert budgets.sliders["steps"].value == 6'],                 # a slider's value
    ["assert len(widgets.budget_explorer(n=5).children) > 2"],       # an attribute only a widget has
    ["assert Out[1].state.comparison.cap == 6"],                     # the display history
    ["def cap():\n    return budgets.state.comparison.cap", "assert cap() == 6"],  # through a function
    ["from ipywidgets import interactive\nshown = interactive(lambda n: n, n=3)\nshown", "assert shown.result == 3"],
])
def test_a_check_that_reads_a_widget_is_caught(tmp_path: Path, reading: list[str]) -> None:
    *before, check = reading
    path = _synthetic(tmp_path, [(SETUP, []), *((s, []) for s in before), (check, ["sanity-check"])])
    problems, checks, _bound = scan(path)
    assert checks == 1 and len(problems) == 1, problems


@pytest.mark.parametrize("recomputing", [
    ['loose = widgets.budget_comparison(5, steps=6)', "assert loose.cap == 6"],
    ["loose = budgets.state.comparison", 'loose = widgets.budget_comparison(5, steps=6)',  # rebound cleanly
     "assert loose.cap == 6"],
    ['fact = {"value": 1}\nrun = type("Run", (), {"value": 2})()', 'assert run.value == 2 and fact["value"] == 1'],
    ["assert widgets.budget_comparison(5).rows"],
    # a widget the notebook builds and sets by code but never shows: the learner cannot move it (06 does this)
    ["made = widgets.budget_explorer(n=5)\nstate = made.refresh()", "assert state.comparison.cap == 6"],
])
def test_a_check_that_recomputes_passes(tmp_path: Path, recomputing: list[str]) -> None:
    *before, check = recomputing
    path = _synthetic(tmp_path, [(SETUP, []), *((s, []) for s in before), (check, ["claim:made-up"])])
    problems, checks, _bound = scan(path)
    assert checks == 1 and problems == [], problems


def test_the_scan_fails_on_13_as_it_was(tmp_path: Path) -> None:
    """Notebook 13 before this change read the explorer's comparison; the scan says so, naming the cell."""
    source = json.loads((NOTEBOOKS / "13-budgets-and-no-progress.ipynb").read_text(encoding="utf-8"))
    for cell in source["cells"]:
        if cell.get("id") == "13-45":
            cell["source"] = ["loose = budgets.state.comparison\n",
                              "tight = widgets.budget_comparison(budgets.n, steps=3)\n"]
    path = tmp_path / "13-as-it-was.ipynb"
    path.write_text(json.dumps(source), encoding="utf-8")
    problems, _checks, _bound = scan(path)
    assert len(problems) == 1 and "(13-46) reads loose" in problems[0]
