"""The workshop kit stays true to the material: agendas against the notebooks' own times, the guide's wrong
answers against the checkers, the slides built by nbconvert."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import agentloops as al
from agentloops.exercises.exercise import Exercise
from agentloops.exercises.notebooks import answer_cells
from agentloops.exercises.registry import all_exercises, get_exercise
from agentloops.exercises.stopping import run_tool
from agentloops.i18n import speaking
from agentloops.resources import notebooks_dir

WORKSHOP = notebooks_dir() / "workshop"
LENGTHS = {"90 minutes": 90, "2 hours": 120, "Half day (3 h 30)": 210,
           "Interview track: before the session (7 h 25)": 445, "Interview track (2 hours)": 120}
BY_NAME: dict[str, Exercise] = {e.name: e for e in all_exercises()}


def stated_minutes(path: Path) -> int:
    """The time a notebook states under its title: "(about N minutes)"."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    text = "".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
    found = re.search(r"about (\d+) minutes", text)
    assert found, f"{path.name} states no time"
    return int(found.group(1))


def exercises_in(path: Path) -> set[str]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return {get_exercise(exercise_id).name for _, exercise_id in answer_cells(notebook)}


def agendas() -> dict[str, list[dict[str, str]]]:
    """Heading → its table's rows as dicts."""
    found: dict[str, list[dict[str, str]]] = {}
    heading, headers = "", []
    for line in (WORKSHOP / "agendas.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            heading, headers = line[3:].strip(), []
        elif line.startswith("|") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not headers:
                headers = cells
            else:
                found.setdefault(heading, []).append(dict(zip(headers, cells, strict=True)))
    return found


def _clock(minutes: int) -> str:
    return f"{minutes // 60}:{minutes % 60:02d}"


def test_the_agendas_are_the_ones_the_kit_promises() -> None:
    assert list(agendas()) == list(LENGTHS)


@pytest.mark.parametrize("title", list(LENGTHS))
def test_an_agendas_minutes_add_up_and_its_starts_follow(title: str) -> None:
    rows = agendas()[title]
    elapsed = 0
    for row in rows:
        assert row["start"] == _clock(elapsed), row
        elapsed += int(row["minutes"])
    assert elapsed == LENGTHS[title]


@pytest.mark.parametrize("title", list(LENGTHS))
def test_each_lesson_block_takes_the_time_its_notebook_states(title: str) -> None:
    for row in agendas()[title]:
        if row["notebook"] == "-":
            continue
        path = notebooks_dir() / row["notebook"]
        assert path.exists(), row["notebook"]
        assert int(row["minutes"]) == stated_minutes(path), f"{title}: {row['notebook']}"


@pytest.mark.parametrize("title", list(LENGTHS))
def test_each_block_names_the_exercises_its_notebook_holds(title: str) -> None:
    for row in agendas()[title]:
        named = set() if row["exercise"] == "-" else {n.strip() for n in row["exercise"].split(",")}
        held = exercises_in(notebooks_dir() / row["notebook"]) if row["notebook"] != "-" else set()
        assert named == held, f"{title}: {row['block']}"


def test_the_part1_agendas_place_the_exercises_they_promise() -> None:
    part1 = {e.name for e in all_exercises("part1")}
    placed = {title: part1 & {row["exercise"] for row in agendas()[title]} for title in list(LENGTHS)[:3]}
    assert placed["Half day (3 h 30)"] == part1
    assert placed["2 hours"] == {"q02_stop_test", "q03_wasted", "q04_decide"}
    assert placed["90 minutes"] == {"q03_wasted", "q04_decide"}


def test_the_interview_track_is_built_on_part2_the_capstone_exercises_2_and_the_drill() -> None:
    before, room = (agendas()[title] for title in list(LENGTHS)[3:])
    assert [row["notebook"] for row in before] == [p.name for p in sorted(notebooks_dir().glob("1[0-6]-*.ipynb"))] + [
        "exercises/03-build-the-controller.ipynb"]
    assert {"exercises/02-control-the-loop.ipynb", "17-interview-drill.ipynb"} <= {row["notebook"] for row in room}
    named = {n.strip() for row in before + room for n in row["exercise"].split(",")} - {"-"}
    assert named == {e.name for e in all_exercises("controlling") + all_exercises("building")}


# --------------------------------------------------------------------------- the timed walk

_spec = importlib.util.spec_from_file_location("walk_times", Path(__file__).resolve().parents[1] / "scripts" / "walk_times.py")
assert _spec is not None and _spec.loader is not None
walk_times = sys.modules.setdefault("walk_times", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(walk_times)

TIMED = sorted(p for p in [*notebooks_dir().glob("*.ipynb"), *(notebooks_dir() / "exercises").glob("*.ipynb")]
               if walk_times.stated(p) is not None)
NOT_YET: dict[str, str] = {}


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.xfail(reason=NOT_YET[p.name], strict=True))
                                  if p.name in NOT_YET else p for p in TIMED],
                         ids=[str(p.relative_to(notebooks_dir())) for p in TIMED])
def test_every_notebook_states_the_time_its_walk_gives_and_the_chinese_edition_the_same(path: Path) -> None:
    minutes = walk_times.walk(path).minutes
    assert stated_minutes(path) == minutes, f"{path.name}: run scripts/walk_times.py"
    chinese = notebooks_dir() / "zh" / path.relative_to(notebooks_dir())
    text = "".join("".join(c["source"]) for c in json.loads(chinese.read_text(encoding="utf-8"))["cells"]
                   if c["cell_type"] == "markdown")
    assert f"约 {minutes} 分钟" in text, chinese


def test_the_walk_counts_what_a_learner_does(tmp_path: Path) -> None:
    made_up = {"cells": [{"cell_type": "markdown", "source": ["word " * 240]},
                         {"cell_type": "code", "source": ["from agentloops.exercises.building import q7\n",
                                                          "q7.check(my_stage)\n", "q7.check()\n", "q1.check(...)\n",
                                                          "w = widgets.IntSlider()\n", "box.check(text)\n"]},
                         {"cell_type": "code", "source": ["# Sanity check: not read\n", "x = 1\n"]}]}
    path = tmp_path / "made-up.ipynb"
    path.write_text(json.dumps(made_up), encoding="utf-8")
    w = walk_times.walk(path)
    assert (w.exercises, w.questions, w.widgets) == (1, 1, 1)  # q7 once, however often checked; box is no exercise
    assert w.reading == 2 + 6 * 5 / 60 and w.minutes == 20  # 2.5 + 10 + 1 + 2 = 15.5, rounded up to the next 5


# --------------------------------------------------------------------------- the facilitator guide


def wrong_answers() -> list[tuple[str, str]]:
    """(exercise name, code) for every snippet the guide marks ``<!-- wrong: NAME -->``."""
    return [(name, code) for name, code, _said in said_wrong_answers(WORKSHOP / "facilitator-guide.md")]


def said_wrong_answers(path: Path) -> list[tuple[str, str, str | None]]:
    """(exercise name, code, what the guide says the checker answers — the text quoted “…”<!-- says --> after the
    snippet, or None) for every marked snippet."""
    text = path.read_text(encoding="utf-8")
    found = re.findall(r"<!-- wrong: (\w+) -->\n```python\n(.*?)```(.*?)(?=<!-- wrong: |\n### |\Z)", text, flags=re.DOTALL)
    return [(name, code, next(iter(re.findall(r"“([^”]+)”<!-- says -->", after)), None)) for name, code, after in found]


def namespace() -> dict[str, Any]:
    """What the exercise notebooks' setup cells give a learner's code: the package, the route values, the helpers."""
    from agentloops.controller import fingerprint
    from agentloops.controller.policy import routes
    from agentloops.controller.vocabulary.tools import TRANSIENT

    values = ("Accept", "AcceptNotFound", "AskUser", "Degrade", "Fallback", "Repair", "Retry", "StopRun")
    return {"al": al, "replace": replace, "run_tool": run_tool, "json": json, "fingerprint": fingerprint,
            "TRANSIENT": TRANSIENT, **{name: getattr(routes, name) for name in values}}


def judged(name: str, code: str, language: str = "en") -> Any:
    """The checker's result for the guide's snippet, in ``language``."""
    exercise = BY_NAME[name]
    scope = namespace()
    exec(code, scope)
    with speaking(language):
        return exercise.judge(scope[exercise.variable])


def test_the_guide_has_wrong_answers_for_every_exercise_in_the_agendas() -> None:
    named = {n.strip() for rows in agendas().values() for row in rows for n in row["exercise"].split(",")} - {"-"}
    covered = {name for name, _ in wrong_answers()}
    assert named <= covered


@pytest.mark.parametrize(("name", "code"), wrong_answers(), ids=[f"{n}-{i}" for i, (n, _) in
                                                                  enumerate(wrong_answers())])
def test_every_wrong_answer_in_the_guide_still_fails_its_checker(name: str, code: str) -> None:
    result = judged(name, code)
    assert result.status == "incorrect", str(result)
    assert all(c.status != "error" for c in result.cases), str(result)  # the learner's mistake, never ours


def failing_lines(result: Any) -> list[str]:
    return [f"{case.name}: {case.message}" for case in result.cases if not case.passed]


def test_every_part2_wrong_answer_says_what_the_checker_says() -> None:
    """The interview track's entries (exercise sets 2 and 3) each quote the checker's own verdict."""
    part2 = {e.name for e in all_exercises("controlling") + all_exercises("building")}
    entries = [(name, said) for name, _code, said in said_wrong_answers(WORKSHOP / "facilitator-guide.md") if name in part2]
    assert {name for name, _ in entries} == part2 and all(said for _, said in entries), entries


SAID = [entry for entry in said_wrong_answers(WORKSHOP / "facilitator-guide.md") if entry[2]]


@pytest.mark.parametrize(("name", "code", "said"), SAID, ids=[f"{n}-{i}" for i, (n, _c, _s) in enumerate(SAID)])
def test_what_the_guide_says_the_checker_says_is_what_it_says(name: str, code: str, said: str) -> None:
    assert any(said in line for line in failing_lines(judged(name, code))), said


def test_a_quote_the_checker_does_not_say_would_be_caught() -> None:
    name, code, said = SAID[0]
    lines = failing_lines(judged(name, code))
    assert any(said in line for line in lines) and not any(said.replace("ended", "ends") in line for line in lines)


# --------------------------------------------------------------------------- the slides


def test_the_slides_carry_slide_metadata_and_one_setup_cell() -> None:
    notebook = json.loads((WORKSHOP / "slides.ipynb").read_text(encoding="utf-8"))
    kinds = [c["metadata"].get("slideshow", {}).get("slide_type") for c in notebook["cells"]]
    assert None not in kinds and kinds[0] == "slide"
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert "".join(code[0]["source"]).startswith("# Setup")
    assert all(not c["outputs"] and c["execution_count"] is None for c in code)


def test_nbconvert_builds_the_slides_as_reveal_js(tmp_path: Path) -> None:
    source = WORKSHOP / "slides.ipynb"
    done = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "slides", str(source), "--output-dir",
                           str(tmp_path)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "slides.slides.html").read_text(encoding="utf-8")
    notebook = json.loads(source.read_text(encoding="utf-8"))
    slides = sum(c["metadata"]["slideshow"]["slide_type"] == "slide" for c in notebook["cells"])
    assert page.count("<section") == 2 * slides  # each slide is a stack: its own section and its first sub-slide
    assert "reveal" in page and "Two questions, kept apart" in page
