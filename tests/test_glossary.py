"""One Chinese term per concept: no text the package ships uses a name the glossary rules out."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "notebooks" / "glossary.md"
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


CANDIDATE_WORDS = {"rubric.json", "calibration.json"}
"""Interview data holding what a candidate may say (the grader's patterns, calibration answers), not our prose."""

RECOGNIZERS = {"_c"}
"""Calls whose later arguments are what the grader *accepts* from a candidate (synonyms included), not our prose."""


def _table_rows(section: str, width: int) -> list[list[str]]:
    """The body rows of the tables under the glossary's heading ``section`` ("" = before the first heading)."""
    rows, current = [], ""
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            current = line[3:].split("·")[0].strip()
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if current != section or not line.startswith("|") or len(cells) != width or set(cells[0]) <= {"-"}:
            continue
        if cells[0] in ("English", "同义词"):
            continue
        rows.append(cells)
    return rows


def glossary() -> list[tuple[str, str, list[str]]]:
    """(English, Chinese, the Chinese names not used) for each row of the terms table and the calques table.

    A note in brackets after a ruled-out name (``召回（单用）``) says when it is ruled out; the name is what is matched.
    """
    return [(cells[0], cells[1], [re.sub(r"（[^）]*）$", "", t.strip()) for t in re.split(r"[、,，]", cells[2])
                                  if t.strip()])
            for section in ("", "Calques") for cells in _table_rows(section, 4)]


def synonyms() -> dict[str, str]:
    """The accepted synonyms (the source article's words) -> the term of ours each stands beside."""
    return {cells[0]: cells[1] for cells in _table_rows("Accepted synonyms", 3)}


def ruled_out(text: str, rows: list[tuple[str, str, list[str]]], accepted: dict[str, str],
              convert: Callable[[str], str] = str) -> list[tuple[str, str]]:
    """(ruled-out name, our term) for each name ``text`` uses that the glossary rules out.

    A name inside its own row's chosen term is not a use (召回 in 产品召回, 最低证据集 in 最低证据集合);
    an accepted synonym is never reported. ``convert`` gives the other script's form (Traditional) of a name.
    """
    found = []
    for _en, zh, avoid in rows:
        masked = text
        for form in {zh, convert(zh)}:
            masked = masked.replace(form, "\0")
        found += [(term, zh) for term in avoid if term not in accepted
                  and any(form in masked for form in {term, convert(term)})]
    return found


def chinese_texts() -> Iterator[tuple[str, str]]:
    """(where, text) of every text the package ships that holds Chinese."""
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            text = "".join(cell["source"])
            if CJK.search(text):
                yield f"{path.relative_to(ROOT)} cell {i}", text
    for path in sorted((ROOT / "notebooks").rglob("*.md")):
        if path != GLOSSARY:
            yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "agentloops" / "locale").rglob("*.po")):
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "agentloops").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        patterns = {id(arg) for node in ast.walk(tree) if isinstance(node, ast.Call)
                    and getattr(node.func, "id", None) in RECOGNIZERS for arg in node.args[1:]}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CJK.search(node.value) \
                    and id(node) not in patterns:
                yield f"{path.relative_to(ROOT)}:{node.lineno}", node.value
    for path in sorted((ROOT / "data" / "interview").glob("*.json")):
        if path.name not in CANDIDATE_WORDS:
            yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")
    for name in ("README.md", "README.zh.md"):
        if (ROOT / name).exists():
            yield name, (ROOT / name).read_text(encoding="utf-8")


def test_the_glossary_has_one_term_per_concept() -> None:
    rows = glossary()
    assert len(rows) >= 40
    chosen = [zh for _en, zh, _avoid in rows]
    assert len(chosen) == len(set(chosen)), "two concepts share a Chinese term"
    avoided = {term for _en, _zh, avoid in rows for term in avoid}
    clash = [zh for zh in chosen if zh in avoided] + [
        zh for _en, zh, _avoid in rows for en, _other, avoid in rows if en != _en
        for term in avoid if term in zh.split("（")[0]]
    assert not clash, f"a chosen term is also ruled out: {clash}"
    assert ("stop criterion, stop test", "终止判据", ["停止判据", "终止准则", "停止准则", "终止标准"]) in rows
    assert ("product recall", "产品召回", ["召回"]) in rows


def test_the_articles_words_are_accepted_synonyms_of_our_terms() -> None:
    accepted = synonyms()
    assert accepted == {"人工接管": "转人工", "伪成功": "虚假成功"}
    chosen = {zh for _en, zh, _avoid in glossary()}
    assert set(accepted.values()) <= chosen, "a synonym must stand beside a term the table fixes"
    avoided = {term for _en, _zh, avoid in glossary() for term in avoid}
    assert not avoided & set(accepted), "a synonym cannot also be ruled out"


def test_no_shipped_text_uses_a_ruled_out_term() -> None:
    import opencc

    traditional = opencc.OpenCC("s2t").convert  # the grader's Traditional examples are held to the same terms
    rows, accepted = glossary(), synonyms()
    found = [f"{where}: {term!r} (the glossary says {zh})"
             for where, text in chinese_texts() for term, zh in ruled_out(text, rows, accepted, traditional)]
    assert not found, "\n".join(found[:20])


@pytest.mark.parametrize("text", ["三种停止判据", "這是停止判據", "它的结束值", "最低证据集（4 个里的 2 个）",
                                  "召回查询", "一个研究任务", "交接给人", "带着 stop 到来的工具调用"])
def test_a_ruled_out_term_is_caught_in_either_script(text: str) -> None:
    import opencc

    assert ruled_out(text, glossary(), synonyms(), opencc.OpenCC("s2t").convert)


@pytest.mark.parametrize("text", ["最低证据集合", "查询产品召回", "转人工（源文章叫「人工接管」）", "這是偽成功"])
def test_our_terms_and_the_listed_synonyms_pass(text: str) -> None:
    import opencc

    assert ruled_out(text, glossary(), synonyms(), opencc.OpenCC("s2t").convert) == []


def test_a_synonym_passes_only_while_it_is_listed() -> None:
    rows = [("handed off", "转人工", ["人工接管", "交接给人"])]
    assert ruled_out("交给人工接管", rows, {"人工接管": "转人工"}) == []
    assert ruled_out("交给人工接管", rows, {}) == [("人工接管", "转人工")]
    assert ruled_out("交接给人", rows, {"人工接管": "转人工"}) == [("交接给人", "转人工")]
