"""The Chinese edition (notebooks/zh/) is a mirror whose code cannot drift from the English one.

Cell by cell: the same cell types and tags; code cells parse to the same program once comments
are dropped, where every string literal is either the English one unchanged or a translation
(it holds Chinese text) — so names, numbers, calls and control flow are identical, and only
prose changes. The one intended difference is ``set_language("en")`` → ``set_language("zh")``.
Markdown cells are translated: a cell holding English words must hold Chinese too.
(An id translated by mistake — ``run("截断")`` — passes this comparison; running the Chinese
notebook from a fresh kernel, as ``tests/test_notebooks.py`` does, catches it.)
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
ZH = NOTEBOOKS / "zh"
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
ENGLISH_WORDS = re.compile(r"\b[A-Za-z]{3,}\b(?:\W+\b[A-Za-z]{3,}\b){3,}")
"""Four English words in a row: prose that the Chinese edition must translate."""


def english_notebooks() -> list[Path]:
    return sorted(p for p in NOTEBOOKS.rglob("*.ipynb")
                  if ".ipynb_checkpoints" not in p.parts and not p.is_relative_to(ZH))


EN = english_notebooks()


def _cells(path: Path) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text(encoding="utf-8"))["cells"])


def _source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else str(source)


def _python(source: str) -> str:
    """Cell source without IPython magics, so ``ast`` can read it."""
    return "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n"))


def _is_language_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "set_language")


def compare_code(en: str, zh: str) -> list[str]:
    """Where two code cells differ other than by translated strings and comments (empty: they agree)."""
    problems: list[str] = []
    try:
        tree_en, tree_zh = ast.parse(_python(en)), ast.parse(_python(zh))
    except SyntaxError as exc:
        return [f"does not parse: {exc}"]

    def walk(a: Any, b: Any, where: str) -> None:
        if type(a) is not type(b):
            problems.append(f"{where}: {type(a).__name__} in English, {type(b).__name__} in Chinese")
            return
        if isinstance(a, ast.Call) and _is_language_call(a):
            args_en = [ast.literal_eval(x) for x in a.args if isinstance(x, ast.Constant)]
            args_zh = [ast.literal_eval(x) for x in b.args if isinstance(x, ast.Constant)]
            if args_en != ["en"] or args_zh != ["zh"]:
                problems.append(f"{where}: set_language({args_en}) / ({args_zh}); expected 'en' and 'zh'")
            return
        if isinstance(a, ast.JoinedStr):  # an f-string: Chinese word order may move its fields
            fields_en = sorted(ast.dump(v) for v in a.values if isinstance(v, ast.FormattedValue))
            fields_zh = sorted(ast.dump(v) for v in b.values if isinstance(v, ast.FormattedValue))
            if fields_en != fields_zh:
                problems.append(f"{where}: the f-string's fields differ")
            text_en = "".join(str(v.value) for v in a.values if isinstance(v, ast.Constant))
            text_zh = "".join(str(v.value) for v in b.values if isinstance(v, ast.Constant))
            if text_en != text_zh and not CJK.search(text_zh):
                problems.append(f"{where}: f-string text {text_en!r} became {text_zh!r} (only prose may change)")
            return
        if isinstance(a, ast.Constant):
            if a.value != b.value and not (isinstance(a.value, str) and isinstance(b.value, str)
                                           and CJK.search(b.value)):
                problems.append(f"{where}: {a.value!r} became {b.value!r} (only prose may change, into Chinese)")
            return
        if isinstance(a, ast.AST):
            for name in a._fields:
                walk(getattr(a, name, None), getattr(b, name, None), f"{where}.{name}")
        elif isinstance(a, list):
            if len(a) != len(b):
                problems.append(f"{where}: {len(a)} elements in English, {len(b)} in Chinese")
                return
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{where}[{i}]")
        elif a != b:
            problems.append(f"{where}: {a!r} became {b!r}")

    walk(tree_en, tree_zh, "cell")
    return problems


def compare_notebooks(en_path: Path, zh_path: Path) -> list[str]:
    en, zh = _cells(en_path), _cells(zh_path)
    if [c["cell_type"] for c in en] != [c["cell_type"] for c in zh]:
        return [f"cell types differ: {[c['cell_type'][0] for c in en]} vs {[c['cell_type'][0] for c in zh]}"]
    problems: list[str] = []
    for i, (a, b) in enumerate(zip(en, zh)):
        if a.get("metadata", {}).get("tags", []) != b.get("metadata", {}).get("tags", []):
            problems.append(f"cell {i}: tags differ")
        if a["cell_type"] == "code":
            problems += [f"cell {i}: {p}" for p in compare_code(_source(a), _source(b))]
        elif a["cell_type"] == "markdown":
            text = _source(b)
            if ENGLISH_WORDS.search(_source(a)) and not CJK.search(text):
                problems.append(f"cell {i}: markdown not translated: {text[:60]!r}")
    return problems


def test_every_english_notebook_has_a_chinese_mirror() -> None:
    missing = [p.relative_to(NOTEBOOKS).as_posix() for p in EN if not (ZH / p.relative_to(NOTEBOOKS)).exists()]
    assert not missing, f"no Chinese edition for: {missing}"
    extra = sorted(p.relative_to(ZH).as_posix() for p in ZH.rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts and not (NOTEBOOKS / p.relative_to(ZH)).exists())
    assert not extra, f"Chinese notebooks without an English original: {extra}"


@pytest.mark.parametrize("en_path", EN, ids=[p.relative_to(NOTEBOOKS).as_posix() for p in EN])
def test_code_cells_match_the_english_edition(en_path: Path) -> None:
    zh_path = ZH / en_path.relative_to(NOTEBOOKS)
    if not zh_path.exists():
        pytest.fail(f"{zh_path.relative_to(ROOT)} is missing")
    problems = compare_notebooks(en_path, zh_path)
    assert not problems, f"{zh_path.relative_to(ROOT)}:\n" + "\n".join(problems[:20])


def test_the_comparison_catches_drift() -> None:
    assert compare_code('x = run("truncated", max_steps=8)  # eight', 'x = run("truncated", max_steps=8)  # 八步') == []
    assert compare_code('print("three steps")', 'print("三步")') == []
    assert compare_code('set_language("en")', 'set_language("zh")') == []
    assert compare_code('x = run("truncated", max_steps=8)', 'x = run("truncated", max_steps=7)')
    assert compare_code('x = run("truncated")', 'x = run("normal")')
    assert compare_code('f(a, b)', 'f(b, a)')
    assert compare_code('if x > 1:\n    y()', 'if x >= 1:\n    y()')
    assert compare_code('set_language("en")', 'set_language("en")')
    assert compare_code('print(f"{a} of {b} calls")', 'print(f"{b} 次调用中有 {a} 次")') == []
    assert compare_code('print(f"{a} of {b} calls")', 'print(f"{b} 次调用中有 {b} 次")')
    assert compare_code('print(f"{a:.1f} s")', 'print(f"{a:.2f} 秒")')
    assert compare_code('print(f"{a} s")', 'print(f"{a} sec")')


def test_set_language_is_called_in_every_english_setup_cell() -> None:
    for path in EN:
        first = next(_source(c) for c in _cells(path) if c["cell_type"] == "code")
        assert 'set_language("en")' in first, f"{path.relative_to(ROOT)}: the setup cell does not set the language"
