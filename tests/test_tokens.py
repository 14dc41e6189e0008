"""The CJK-aware token estimate and the table helpers."""

from __future__ import annotations

from agentloops.tables import display_width, markdown_table, text_table
from agentloops.tokens import estimate_tokens


def test_cjk_characters_count_one_token_each():
    assert estimate_tokens("我先打开文件看看") == 8
    assert estimate_tokens("abcdefgh") == 2
    assert estimate_tokens("") == 0
    assert estimate_tokens("读 file") == 1 + 2


def test_cjk_estimate_is_far_above_chars_over_four():
    text = "循环的终止判据写错，Agent 会把同一个响应跑满上限"
    assert estimate_tokens(text) > 2 * (len(text) // 4)


def test_tables_align_wide_characters():
    assert display_width("截断") == 4
    lines = text_table(["a", "b"], [["截断", 1], ["x", 22]]).splitlines()
    last = ["b", "-", "1", "22"]
    starts = [display_width(line) - display_width(line.split()[-1]) for line in lines]
    assert [line.split()[-1][0] for line in lines] == [v[0] for v in last]
    assert len(set(starts)) == 1


def test_markdown_escapes_pipes():
    assert markdown_table(["h"], [["a|b"]]).splitlines()[-1] == "| a\\|b |"
