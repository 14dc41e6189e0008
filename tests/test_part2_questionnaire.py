"""The Part 2 questionnaire (the end of notebook 17) and its model answers (18-part2-solutions) cannot drift: the same
questions in the same order, each answer followed by the run that shows it and a hidden check, in both editions."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentloops.resources import notebooks_dir

EDITIONS = [notebooks_dir(), notebooks_dir() / "zh"]


def cells(path: Path) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text(encoding="utf-8"))["cells"])


def source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def asked(folder: Path) -> list[str]:
    """The questions of 17's questionnaire: its last cell's numbered list, in order."""
    last = cells(folder / "17-interview-drill.ipynb")[-1]
    assert last["id"] == "17-questionnaire" and last["cell_type"] == "markdown"
    numbered = re.findall(r"^(\d+)\. (.+)$", source(last), re.MULTILINE)
    assert [int(n) for n, _q in numbered] == list(range(1, len(numbered) + 1))
    return [question for _n, question in numbered]


def answered(folder: Path) -> list[tuple[str, list[dict[str, Any]]]]:
    """Each model answer's question (its heading) and the cells that follow it up to the next one."""
    found: list[tuple[str, list[dict[str, Any]]]] = []
    for cell in cells(folder / "18-part2-solutions.ipynb"):
        heading = re.match(r"## (\d+)\. (.+)", source(cell)) if cell["cell_type"] == "markdown" else None
        if heading:
            assert int(heading.group(1)) == len(found) + 1
            found.append((heading.group(2), []))
        elif found:
            found[-1][1].append(cell)
    return found


@pytest.mark.parametrize("folder", EDITIONS, ids=["en", "zh"])
def test_every_question_has_a_model_answer_in_the_same_words_and_order(folder: Path) -> None:
    questions = asked(folder)
    assert 12 <= len(questions) <= 20
    assert [question for question, _cells in answered(folder)] == questions


@pytest.mark.parametrize("folder", EDITIONS, ids=["en", "zh"])
def test_each_model_answer_is_shown_by_a_run_and_checked_by_a_hidden_cell(folder: Path) -> None:
    for question, following in answered(folder):
        kinds = [(c["cell_type"], "sanity-check" in c["metadata"].get("tags", [])) for c in following]
        assert kinds[:2] == [("code", False), ("code", True)], question
        assert source(following[1]).startswith("# Sanity check") and "assert " in source(following[1]), question


def test_the_two_editions_ask_the_same_number_of_questions_and_the_zh_ones_are_chinese() -> None:
    english, chinese = (asked(folder) for folder in EDITIONS)
    assert len(english) == len(chinese) and all(re.search(r"[\u4e00-\u9fff]", q) for q in chinese)


def test_a_question_changed_on_one_side_is_caught(tmp_path: Path) -> None:
    for name in ("17-interview-drill.ipynb", "18-part2-solutions.ipynb"):
        (tmp_path / name).write_text((notebooks_dir() / name).read_text(encoding="utf-8"), encoding="utf-8")
    notebook = json.loads((tmp_path / "17-interview-drill.ipynb").read_text(encoding="utf-8"))
    notebook["cells"][-1]["source"] = [line.replace("2. In your own words", "2. In a word")
                                       for line in notebook["cells"][-1]["source"]]
    (tmp_path / "17-interview-drill.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    assert asked(tmp_path) != [question for question, _cells in answered(tmp_path)]
