"""A token estimate that is honest about Chinese, Japanese and Korean text.

Counting characters divided by four, the usual rule of thumb, undercounts CJK
text several times over: BPE tokenizers spend about one token per CJK
character. The estimate below counts CJK characters one each and the rest at
four characters a token. Pass any ``Callable[[str], int]`` (a real tokenizer,
for example ``len(enc.encode(text))`` with tiktoken) wherever a ``tokenizer`` is
accepted to replace it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

Tokenizer = Callable[[str], int]
"""Anything that turns text into a token count."""

MESSAGE_OVERHEAD = 4
"""Tokens a chat API adds around every message (role and separators), roughly."""

_CJK = re.compile(
    "[\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)


@lru_cache(maxsize=4096)  # loops resend the same texts on every call
def estimate_tokens(text: str) -> int:
    """Estimate tokens in ``text``: one per CJK character, one per four other characters.

    Only the messages are counted: the tool schemas a real request also
    carries on every call are left out, so real bills run higher.
    """
    if not text:
        return 0
    cjk = sum(1 for _ in _CJK.finditer(text))
    return cjk + (len(text) - cjk + 3) // 4
