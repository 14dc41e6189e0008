"""The Chinese workshop kit (notebooks/zh/workshop/) matches the English one: the same agendas, the same wrong answers."""

import re

import pytest

from tests.test_workshop import WORKSHOP, agendas, failing_lines, judged, said_wrong_answers, wrong_answers

ZH_WORKSHOP = WORKSHOP.parent / "zh" / "workshop"


def _tables(path):
    """Each agenda's rows, as (start, minutes, notebook, exercise) in order (columns by position)."""
    found, current = [], None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            current = []
            found.append(current)
        elif line.startswith("|") and not line.startswith("|---") and current is not None:
            cells = [c.strip() for c in line.strip("|").split("|")]
            current.append((cells[0], cells[1], cells[3], cells[4]))
    return [rows[1:] for rows in found if rows]  # without the header row


def test_the_chinese_agendas_match_the_english_ones_row_by_row():
    english = [[(r["start"], r["minutes"], r["notebook"], r["exercise"]) for r in rows] for rows in agendas().values()]
    assert _tables(ZH_WORKSHOP / "agendas.md") == english


def test_the_chinese_guide_quotes_the_same_wrong_answers():
    text = (ZH_WORKSHOP / "facilitator-guide.md").read_text(encoding="utf-8")
    assert re.findall(r"<!-- wrong: (\w+) -->\n```python\n(.*?)```", text, flags=re.DOTALL) == wrong_answers()


def test_the_chinese_guide_quotes_the_checkers_own_chinese_messages():
    import gettext

    from agentloops.i18n import LOCALE_DIR

    text = (ZH_WORKSHOP / "facilitator-guide.md").read_text(encoding="utf-8")
    marked = re.findall(r"“([^”]+)”<!-- checker message -->", text)
    with (LOCALE_DIR / "zh" / "LC_MESSAGES" / "exercises.mo").open("rb") as handle:
        chinese = [v for k, v in gettext.GNUTranslations(handle)._catalog.items() if k]  # type: ignore[attr-defined]
    assert len(marked) == 2, "the English guide quotes two checker messages"
    assert all(any(quote in message for message in chinese) for quote in marked), marked


ZH_SAID = [entry for entry in said_wrong_answers(ZH_WORKSHOP / "facilitator-guide.md") if entry[2]]


def test_the_chinese_guide_quotes_the_checker_wherever_the_english_one_does():
    english = [(name, code, said is not None) for name, code, said in said_wrong_answers(WORKSHOP / "facilitator-guide.md")]
    assert [(name, code, said is not None) for name, code, said in said_wrong_answers(ZH_WORKSHOP / "facilitator-guide.md")] == english


@pytest.mark.parametrize(("name", "code", "said"), ZH_SAID, ids=[f"{n}-{i}" for i, (n, _c, _s) in enumerate(ZH_SAID)])
def test_what_the_chinese_guide_says_the_checker_says_is_what_it_says_in_chinese(name, code, said):
    assert any(said in line for line in failing_lines(judged(name, code, "zh"))), said
