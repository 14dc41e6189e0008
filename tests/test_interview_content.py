"""The drill's data files: validated on load, frozen, no unknown fields, one clear line for a bad file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from agentloops.interview import content
from agentloops.interview.content import DrillError, Rubric, Scripts, rubric
from agentloops.resources import data_dir


@pytest.fixture
def copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of data/interview/ that content.load reads instead."""
    shutil.copytree(data_dir() / "interview", tmp_path / "interview")
    monkeypatch.setattr(content, "data_dir", lambda: tmp_path)
    return tmp_path / "interview"


def _edit(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def test_every_shipped_file_loads() -> None:
    for loader in (content.rubric, content.scripts, content.follow_up_texts, content.evidence_file,
                   content.exemplars, content.calibration):
        assert loader() is loader()  # read once


def test_a_misspelt_field_names_the_file_and_the_field(copy: Path) -> None:
    _edit(copy / "scripts.json", lambda d: d["scripts"][0].update(taget_s=30))
    with pytest.raises(DrillError, match=r"^scripts.json: scripts\[0\]\.taget_s: is not a known field"):
        content.load("scripts.json", Scripts)


def test_a_bad_pattern_is_refused(copy: Path) -> None:
    _edit(copy / "rubric.json", lambda d: d["points"][0]["concepts"][0]["patterns"]["en"].append("(unclosed"))
    with pytest.raises(DrillError, match=r"rubric.json: .*pattern '\(unclosed' is not a regular expression"):
        content.load("rubric.json", Rubric)


def test_a_wrong_claim_must_correct_a_concept_of_its_point(copy: Path) -> None:
    _edit(copy / "rubric.json", lambda d: d["points"][0]["wrong_claims"][0].update(corrects="vibes"))
    with pytest.raises(DrillError, match=r"corrects 'vibes'; expected one of: names the step cap"):
        content.load("rubric.json", Rubric)


def test_bands_must_be_ordered(copy: Path) -> None:
    _edit(copy / "rubric.json", lambda d: d["bands"].update(adequate=0.7, strong=0.6))
    with pytest.raises(DrillError, match=r"strong 0.6 must be above adequate 0.7"):
        content.load("rubric.json", Rubric)


def test_a_missing_file_is_one_line(copy: Path) -> None:
    (copy / "scripts.json").unlink()
    with pytest.raises(DrillError, match=r"scripts.json"):
        content.load("scripts.json", Scripts)


def test_the_data_is_frozen() -> None:
    with pytest.raises(ValidationError):
        rubric().points[0].need = 3  # type: ignore[misc]
