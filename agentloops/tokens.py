"""A token estimate that is honest about Chinese, Japanese and Korean text.

Counting characters divided by four, the usual rule of thumb, undercounts CJK
text several times over: BPE tokenizers spend about one token per CJK
character. The estimate below counts CJK characters one each and the rest at
four characters a token. Pass any ``Callable[[str], int]`` (a real tokenizer,
for example ``len(enc.encode(text))`` with tiktoken) wherever a ``tokenizer`` is
accepted to replace it.

Speed without memory: text below U+0100 — ASCII (most tool results) or
Latin-1 (``°C``, ``×2``: the controller's state block) — cannot contain a CJK
character, so its estimate is its length alone, with no regular expression and
no cache. Only short texts with other characters — the replies and names a
loop resends on every call — are cached; a long text is counted afresh each time rather than kept alive by the
cache (4,000 runs with distinct 64 KiB tool results once grew the process by
about 250 MiB; ``benchmarks/bench_long_run.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

Tokenizer = Callable[[str], int]
"""Anything that turns text into a token count."""

MESSAGE_OVERHEAD = 4
"""Tokens a chat API adds around every message (role and separators), roughly."""

CACHED_TEXT_LENGTH = 256
"""The longest text the cache keeps: at most ``CACHE_ENTRIES`` such texts stay alive (a few MiB)."""

CACHE_ENTRIES = 4096
"""How many short non-ASCII texts the cache remembers."""

_CJK = re.compile(
    "[\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)


def estimate_tokens(text: str) -> int:
    """Estimate tokens in ``text``: one per CJK character, one per four other characters.

    Only the messages are counted: the tool schemas a real request also
    carries on every call are left out, so real bills run higher.
    """
    if text.isascii() or len(text.encode("latin-1", "ignore")) == len(text):  # no CJK below U+0100:
        return (len(text) + 3) // 4  # the general count reduces to this
    if len(text) <= CACHED_TEXT_LENGTH:
        return _cached_count(text)
    return _general_estimate(text)


def _general_estimate(text: str) -> int:
    """The general estimate, for any text, uncached: what :func:`estimate_tokens` must agree with."""
    cjk = _CJK.subn("", text)[1]  # the number of CJK characters, counted in C
    return cjk + (len(text) - cjk + 3) // 4


_cached_count = lru_cache(maxsize=CACHE_ENTRIES)(_general_estimate)
