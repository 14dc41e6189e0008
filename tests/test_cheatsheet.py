"""The cheat sheet is built from the package's own tables: change a table and the sheet changes with it."""

from __future__ import annotations

import inspect
import re
import struct
from pathlib import Path

import pytest

from agentloops import cheatsheet
from agentloops.cheatsheet import CheatSheetError, Section, build, render_markdown
from agentloops.criteria import correct
from agentloops.run_errors import ERROR_CLASSES
from agentloops.stops import ABORT_CODES, FINISH_REASONS, KINDS


def test_the_correct_loop_section_is_the_criterions_own_rules() -> None:
    section = cheatsheet.correct_loop()
    rules = len(re.findall(r"^\s*\d+\.\s", inspect.getdoc(correct) or "", re.MULTILINE))
    assert rules >= 4
    assert len(section.lines) == rules + 1  # every numbered rule, then the cap
    assert section.lines[0].startswith("1. An abnormal end")
    assert section.lines[-1].endswith("raise MaxStepsError — a loop that ran out of steps has no answer.")
    assert not any(":data:" in line or "``" in line for line in section.lines)


def test_every_finish_reason_has_its_kind_and_error() -> None:
    section = cheatsheet.stop_classes()
    assert [row[0] for row in section.rows] == list(FINISH_REASONS)
    for reason, kind, does, raises, _ in section.rows:
        assert kind == KINDS[reason]  # type: ignore[index]
        code = ABORT_CODES.get(reason)  # type: ignore[call-overload]
        assert (raises == ERROR_CLASSES[code].__name__ and does == f"abort: {code}") if code else raises == "-"
    assert dict((r[0], r[2]) for r in section.rows)["pause"] == "tool calls: go on; none: go on"


def test_the_sheet_follows_a_changed_table(monkeypatch: pytest.MonkeyPatch) -> None:
    import agentloops.stops as stops

    monkeypatch.setitem(stops.KINDS, "pause", "finished")  # pretend the vocabulary changed
    rows = {row[0]: row for row in cheatsheet.stop_classes().rows}
    assert rows["pause"][1] == "finished"


def test_markdown_renders_every_section() -> None:
    parts = [Section("Lines", ("1. one", "2. two")), Section("A table", headers=("a", "b"), rows=(("x", "y|z"),))]
    text = render_markdown(parts)
    assert text.startswith("# agentloops — cheat sheet\n")
    assert "## Lines\n\n1. one\n2. two\n" in text
    assert "| a | b |\n|---|---|\n| x | y\\|z |" in text


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_build_writes_markdown_png_and_pdf(tmp_path: Path) -> None:
    written = build(tmp_path, pdf=True)
    assert [p.name for p in written] == ["cheatsheet.md", "cheatsheet.png", "cheatsheet.pdf"]
    markdown = written[0].read_text(encoding="utf-8")
    for title in ("The correct loop", "Stop classes", "Stop statuses", "Error routing"):
        assert f"## {title}" in markdown
    from agentloops import controller

    for status in controller.stop_statuses().column("status"):
        assert f"| {status} |" in markdown
    width, height = _png_size(written[1])
    assert width > height > 1000  # one landscape page
    assert written[2].read_bytes()[:5] == b"%PDF-"


def test_an_unwritable_folder_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(CheatSheetError, match=r"^cheatsheet --out .*a-file/sheet: cannot write there \(.*\); "
                                              "expected a folder you can write into$"):
        build(blocker / "sheet")
