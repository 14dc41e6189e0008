"""The CJK-aware token estimate and the table helpers."""

from __future__ import annotations

import sys

from hypothesis import given
from hypothesis import strategies as st

from agentloops.tables import display_width, markdown_table, text_table
from agentloops.tokens import CACHED_TEXT_LENGTH, _cached_count, _general_estimate, estimate_tokens

CJK_RANGES = [(0x2E80, 0x2FDF), (0x3000, 0x303F), (0x3040, 0x30FF), (0x3100, 0x31FF), (0x3400, 0x4DBF),
              (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0xFF00, 0xFFEF)]
mixed_text = st.text(st.characters(codec="ascii") | st.sampled_from("读文件ファイル한국　，Ａé€ß\U0001f600"), max_size=600)


def reference(text: str) -> int:
    """The rule in words, written independently: CJK one token each, the rest four characters a token."""
    cjk = sum(any(lo <= ord(ch) <= hi for lo, hi in CJK_RANGES) for ch in text)
    rest = len(text) - cjk
    return cjk + -(-rest // 4)


@given(st.text(st.characters(codec="ascii"), max_size=600))
def test_ascii_fast_path_agrees_with_the_general_path(text):
    assert estimate_tokens(text) == _general_estimate(text) == reference(text)


@given(mixed_text)
def test_mixed_text_agrees_with_the_rule_cached_or_not(text):
    assert estimate_tokens(text) == _general_estimate(text) == reference(text)
    assert estimate_tokens(text) == reference(text)  # a second call may come from the cache


def test_the_cache_keeps_short_non_ascii_texts_only():
    _cached_count.cache_clear()
    at_limit, over_limit = "读" * CACHED_TEXT_LENGTH, "读" * (CACHED_TEXT_LENGTH + 1)
    assert estimate_tokens("x" * 10) == 3 and _cached_count.cache_info().currsize == 0  # ASCII: never cached
    assert estimate_tokens(at_limit) == CACHED_TEXT_LENGTH and _cached_count.cache_info().currsize == 1
    assert estimate_tokens(over_limit) == CACHED_TEXT_LENGTH + 1 and _cached_count.cache_info().currsize == 1


def test_a_long_text_does_not_stay_referenced():
    for text in ("第1页 " + "x" * 65_536, "y" * 65_536):
        before = sys.getrefcount(text)
        estimate_tokens(text)
        assert sys.getrefcount(text) == before


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
