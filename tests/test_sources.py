"""notebooks/SOURCES.md stays in step with the notebooks.

Every cell it lists exists in both editions. Every sentence of an English notebook that names the
article sits in a listed cell. Notebook 00's map names every numbered notebook. The checks are
plain functions over text, so each one is also tried on a made-up notebook built to break it. One
provider claim is checked against the installed SDKs themselves: what 11 says they retry.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
ZH = NOTEBOOKS / "zh"
SOURCES = NOTEBOOKS / "SOURCES.md"

REF = re.compile(r"`((?:[\w-]+/)?[\w.-]+\.ipynb)#([\w-]+)`")
"""A listed cell: ``notebook.ipynb#cell-id`` (path relative to ``notebooks/``)."""

NAMES_THE_ARTICLE = re.compile(r"\b(?:the|source|first|second)\s+(?:source\s+)?articles?\b|\barticle's\b", re.IGNORECASE)
"""A sentence that credits the article (or one of the two articles) with something."""

SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n")


def listed(text: str) -> set[tuple[str, str]]:
    """Every (notebook, cell id) that a SOURCES text lists."""
    return {(m.group(1), m.group(2)) for m in REF.finditer(text)}


def english_notebooks() -> list[Path]:
    return sorted(p for p in NOTEBOOKS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts
                  and not p.is_relative_to(ZH))


def cells(path: Path) -> list[dict]:
    return list(json.loads(path.read_text(encoding="utf-8"))["cells"])


def prose(cell: dict) -> str:
    """What a reader reads in a cell: a markdown cell whole, a code cell's comments."""
    source = "".join(cell["source"])
    if cell["cell_type"] == "markdown":
        return source
    return "\n".join(line.split("#", 1)[1] for line in source.splitlines() if "#" in line)


def crediting_cells(notebook_cells: list[dict]) -> dict[str, list[str]]:
    """Cell id -> the sentences of that cell that name the article."""
    found: dict[str, list[str]] = {}
    for cell in notebook_cells:
        for sentence in SENTENCE_END.split(prose(cell)):
            if NAMES_THE_ARTICLE.search(sentence):
                found.setdefault(cell["id"], []).append(sentence.strip())
    return found


def unlisted(notebook_cells: list[dict], name: str, refs: set[tuple[str, str]]) -> list[str]:
    """Sentences that name the article in a cell SOURCES does not list."""
    return [f"{name}#{cid}: {sentences[0][:120]}" for cid, sentences in crediting_cells(notebook_cells).items()
            if (name, cid) not in refs]


def missing_cells(refs: set[tuple[str, str]], folder: Path) -> list[str]:
    """Listed cells that do not exist under ``folder``."""
    problems = []
    for name, cid in sorted(refs):
        path = folder / name
        if not path.exists():
            problems.append(f"{name}: no such notebook in {folder.relative_to(ROOT)}")
        elif cid not in {c.get("id") for c in cells(path)}:
            problems.append(f"{name}#{cid}: no such cell in {folder.relative_to(ROOT)}")
    return problems


REFS = listed(SOURCES.read_text(encoding="utf-8"))


def test_sources_lists_cells() -> None:
    assert len(REFS) > 30


@pytest.mark.parametrize("folder", [NOTEBOOKS, ZH], ids=["en", "zh"])
def test_every_listed_cell_exists(folder: Path) -> None:
    assert missing_cells(REFS, folder) == []


@pytest.mark.parametrize("path", english_notebooks(), ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_every_sentence_that_names_the_article_is_listed(path: Path) -> None:
    name = str(path.relative_to(NOTEBOOKS))
    assert unlisted(cells(path), name, REFS) == []


def test_the_checks_catch_what_they_should() -> None:
    made_up = [{"cell_type": "markdown", "id": "m1", "source": ["Plain prose. The article's loop is short."]},
               {"cell_type": "code", "id": "c1", "source": ["x = 1  # as the source article says\n", "article = 2"]},
               {"cell_type": "markdown", "id": "m2", "source": ["An article about loops; nothing credited."]}]
    assert set(crediting_cells(made_up)) == {"m1", "c1"}  # code is read by its comments only
    assert unlisted(made_up, "nb.ipynb", {("nb.ipynb", "m1")}) == ["nb.ipynb#c1: as the source article says"]
    assert unlisted(made_up, "nb.ipynb", {("nb.ipynb", "m1"), ("nb.ipynb", "c1")}) == []
    assert listed("see `00-start-here.ipynb#05ff4801` and `exercises/x.ipynb#e-1`") == {
        ("00-start-here.ipynb", "05ff4801"), ("exercises/x.ipynb", "e-1")}
    assert missing_cells({("00-start-here.ipynb", "no-such-cell")}, NOTEBOOKS) == [
        "00-start-here.ipynb#no-such-cell: no such cell in notebooks"]
    assert missing_cells({("99-none.ipynb", "x")}, ZH) == ["99-none.ipynb: no such notebook in notebooks/zh"]


@pytest.mark.parametrize("folder", [NOTEBOOKS, ZH], ids=["en", "zh"])
def test_the_start_notebooks_map_names_every_numbered_notebook(folder: Path) -> None:
    text = "\n".join("".join(c["source"]) for c in cells(folder / "00-start-here.ipynb") if c["cell_type"] == "markdown")
    mapped = set(re.findall(r"^\| \*\*(\d\d) ", text, re.MULTILINE))
    numbered = {p.name[:2] for p in folder.glob("[0-9][0-9]-*.ipynb")} - {"00"}
    assert mapped == numbered


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_what_notebook_11_says_the_official_sdks_do_is_what_they_do(sdk: str) -> None:
    """11 says both SDKs retry connection errors and 408, 409, 429 and 5xx twice, backing off 0.5 s to 8 s."""
    module = pytest.importorskip(sdk)  # the `record` extra installs both
    httpx = pytest.importorskip("httpx")
    constants = importlib.import_module(f"{sdk}._constants")
    client = (module.OpenAI if sdk == "openai" else module.Anthropic)(api_key="not-used")
    assert client.max_retries == constants.DEFAULT_MAX_RETRIES == 2
    assert (constants.INITIAL_RETRY_DELAY, constants.MAX_RETRY_DELAY) == (0.5, 8.0)
    retried = [code for code in (400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503, 529)
               if client._should_retry(httpx.Response(code))]
    assert retried == [408, 409, 429, 500, 502, 503, 529]
    said = next("".join(c["source"]) for c in cells(NOTEBOOKS / "11-when-is-it-done.ipynb") if c["id"] == "3322547b")
    assert "HTTP 408, 409, 429 and 5xx responses twice (`max_retries=2`, back-off from 0.5 s up to 8 s)" in said
