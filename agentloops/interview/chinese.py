"""Simplified and Traditional Chinese: which script an answer is in, and converting between them.

The grader matches Simplified patterns only: a Traditional answer is converted first (:func:`to_simplified`,
OpenCC ``t2s``), so it grades exactly as its Simplified equivalent, and the feedback goes back into the
answer's script (:func:`in_script`). Taiwan's vocabulary (呼叫 for 调用, 使用者 for 用户…) is accepted by
:func:`compile_pattern`.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, Literal

from agentloops.resources import data_dir

Language = Literal["en", "zh-Hans", "zh-Hant", "none"]
"""The language of an answer, and so of the grader's advice."""

WORD = re.compile(r"[A-Za-z0-9]+(?:['’_\-][A-Za-z0-9]+)*")
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _fold_pairs() -> str:
    """Traditional → Simplified for the common characters (GB 2312 level 1), as pairs, from zhconv's tables
    (``data/interview/fold_pairs.txt``): used only to tell which script an answer is written in."""
    lines = (data_dir() / "interview" / "fold_pairs.txt").read_text(encoding="utf-8").splitlines()
    return "".join(line.strip() for line in lines if line.strip() and not line.startswith("#"))


_PAIRS = _fold_pairs()
HANT_ONLY = frozenset(_PAIRS[::2]) - frozenset(_PAIRS[1::2])
HANS_ONLY = frozenset(_PAIRS[1::2]) - frozenset(_PAIRS[::2])

TAIWAN_WORDS = {"调用": "呼叫", "循环": "回圈", "声明": "宣告", "类型": "型别", "参数": "引数", "信息": "资讯",
                "用户": "使用者", "超时": "逾时", "检测": "侦测", "代码": "程式码", "程序": "程式", "数据": "资料",
                "默认": "预设", "运行": "执行"}
"""Words Taiwan writes differently (after :func:`to_simplified`, which converts characters, not vocabulary):
a Chinese pattern accepts both, so "詢問使用者" counts as "询问用户"."""
_TAIWAN = re.compile("|".join(TAIWAN_WORDS))


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """A rubric pattern. An English one reads ``\\b`` and ``\\w`` as ASCII, so "用max_steps兜底" still
    matches; a Chinese one also accepts Taiwan's words (:data:`TAIWAN_WORDS`)."""
    if not CJK.search(pattern):
        return re.compile(pattern, re.IGNORECASE | re.ASCII)
    return re.compile(_TAIWAN.sub(lambda m: f"(?:{m[0]}|{TAIWAN_WORDS[m[0]]})", pattern), re.IGNORECASE)


def detect(text: str) -> Language:
    """English when Latin words outnumber half the Chinese characters; else the Chinese script that dominates."""
    latin, cjk = sum(1 for w in WORD.findall(text) if not w.isdigit()), len(CJK.findall(text))
    if not latin and not cjk:
        return "none"
    if cjk < 2 * latin:
        return "en"
    hant = sum(1 for ch in text if ch in HANT_ONLY)
    hans = sum(1 for ch in text if ch in HANS_ONLY)
    return "zh-Hant" if hant > hans else "zh-Hans"


def is_zh(language: str) -> bool:
    """Chinese, in either script."""
    return language.startswith("zh")


@cache
def _opencc(config: str) -> Any:
    import opencc  # opencc-python-reimplemented, a dependency: loaded when Chinese is first read or said

    return opencc.OpenCC(config)


def to_simplified(text: str) -> str:
    """Traditional Chinese to Simplified (OpenCC ``t2s``), curly apostrophes to straight: the one conversion
    the grader applies before matching, so a Traditional answer grades as its Simplified equivalent.

    The result has the length of ``text``, so offsets found in it point at the learner's own words (should a
    phrase ever convert to another length, each character is converted on its own instead).
    """
    text = text.replace("’", "'").replace("‘", "'")
    if not CJK.search(text):
        return text
    converted = _opencc("t2s").convert(text)
    if len(converted) == len(text):
        return converted
    return "".join(c if len(c := _opencc("t2s").convert(ch)) == 1 else ch for ch in text)


def in_script(text: str, language: str) -> str:
    """Simplified text in the answer's script: OpenCC ``s2tw`` for a ``zh-Hant`` answer, else unchanged."""
    return _opencc("s2tw").convert(text) if language == "zh-Hant" else text
