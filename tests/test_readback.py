"""Trace lines read back in the learner's language, while the trace itself stays English."""

from __future__ import annotations

import pytest

from agentloops.controller.persistence.trace import NO_CHANGE
from agentloops.controller.sim.scenario_files import SHIPPED_TITLES, list_controller_scenarios
from agentloops.controller.stopping.progress import ALREADY_DONE
from agentloops.controller.task.state import ALREADY_KNOWN, NEW_FACT, SAME_VALUE
from agentloops.controller.turn import STOP_DECISION
from agentloops.controller.vocabulary.frames import shown_frame
from agentloops.controller.vocabulary.readback import read_back, readable
from agentloops.i18n import N_, Phrase, _, speaking

KNOWN = ALREADY_KNOWN.format(item="weather:Shanghai", turn=1, same=SAME_VALUE, source="met-service")
DONE = ALREADY_DONE.format(tool="get_weather", args='{"city":"shanghai"}', turn=2, version=1, why=KNOWN)


def test_english_is_the_line_itself() -> None:
    with speaking("en"):
        assert read_back(DONE) == DONE
        assert read_back("continue") == "continue"


def test_a_template_line_shows_its_translation_with_its_fields() -> None:
    with speaking("zh"):
        shown = read_back(STOP_DECISION.format(status="succeeded", code="completion_condition_met"))
    assert shown == "停止：succeeded（completion_condition_met）"


def test_fields_are_read_back_in_turn() -> None:
    """``no change: {why}`` whose why is itself a template line: both parts are Chinese, the ids stay."""
    with speaking("zh"):
        shown = read_back(NO_CHANGE.format(why=DONE))
    assert shown.startswith("无变化：`get_weather{\"city\":\"shanghai\"}` 在第 2 轮")
    assert "weather:Shanghai 在第 1 轮就已知道（值相同" in shown
    assert "already" not in shown


def test_a_state_delta_list_is_read_back_line_by_line() -> None:
    first = NEW_FACT.format(item="weather:Beijing", summary="18°C, cloudy", source="met-service")
    with speaking("zh"):
        shown = read_back(f"{KNOWN}; {first}")
    parts = shown.split("；")
    assert len(parts) == 2 and parts[0].startswith("weather:Shanghai 在第 1 轮") and parts[1].startswith("+事实")


def test_one_word_is_an_id_unless_registered() -> None:
    """``retry`` (a route) and ``succeeded`` (a status) have catalog entries, but a lone word in a trace is a value."""
    with speaking("zh"):
        assert _("succeeded") != "succeeded"
        assert read_back("succeeded") == "succeeded"
        assert read_back("continue") == "继续"  # registered by the controller


def test_a_short_catalog_template_does_not_read_back_anything() -> None:
    """``{a} of {b}``-like templates (one word of their own) would match any sentence with that word."""
    with speaking("zh"):
        assert read_back("compare the weather of two cities") == "compare the weather of two cities"


def test_side_by_side_fields_hold_no_space() -> None:
    """``{tool}{args} was already done…`` must not swallow a ``no change: `` prefix into ``{tool}``."""
    readable("zz {x} yy")
    with speaking("zh"):
        shown = read_back(NO_CHANGE.format(why=DONE))
    assert not shown.startswith("no change")


def test_frames_keep_english_data_and_show_chinese() -> None:
    frame = shown_frame([{"turn": 1, "decision": "continue"}]).set_index("turn")
    sliced = frame[["decision"]]
    assert sliced["decision"].iloc[0] == "continue"
    with speaking("zh"):
        html = sliced._repr_html_()
    assert "继续" in html and "决策" in html and "continue" not in html
    with speaking("en"):
        assert "continue" in sliced._repr_html_()


@pytest.mark.parametrize("scenario", list_controller_scenarios(), ids=lambda s: s.name)
def test_every_shipped_title_is_in_the_catalog_list(scenario: object) -> None:
    assert scenario.title in SHIPPED_TITLES  # type: ignore[attr-defined]


def test_a_field_written_with_its_repr_reads_back_once_quoted() -> None:
    """``no document {document_id!r} in the archive``: a line holds the repr already (read back without quoting it
    again); a phrase formats its raw field with the conversion."""
    with speaking("zh"):
        assert read_back("no document 'B' in the archive") == "档案里没有文档 'B'"
        assert read_back(Phrase(N_("no document {document_id!r} in the archive"), document_id="B")) == "档案里没有文档 'B'"
        assert read_back("not_found: no document 'B' in the archive") == "not_found：档案里没有文档 'B'"
