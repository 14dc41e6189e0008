"""Negation and contrast scope, in English and Chinese: is a phrase asserted, or argued against?

A claim can be rejected from before it — "never use *a retry budget*", "不需要*重试预算*", "*trust the
model* rather than…" is the other way round: "the system checks, rather than *trusting the model*" — or
from after it: "*replay* is never worth it", "*故障注入*从来不值得做". Contrast ends a negation's reach:
"not the cap, but *a completion condition*", "不是上限，而是*完成条件*", "与其调小上限，不如*定义完成条件*".
Two kinds of negation reject nothing: one that describes a cause ("loops run on because there is no
*completion check*") and one inside a condition ("*if* the user never gave us *the order number*, ask").
"""

from __future__ import annotations

import re

EN_WINDOW, ZH_WINDOW = 7, 10
"""How far a negation reaches forward: words in English, characters in Chinese."""

EN_NEGATION = re.compile(
    r"\b(not(?! (only|just))|never|no(?! (matter|more than))|don't|do not|doesn't|does not|didn't|won't|wouldn't|"
    r"shouldn't|can't|cannot|isn't|aren't|without|needn't|avoid|skip|neither|nor|forget about|pointless|"
    r"unnecessary|overkill|instead of|rather than|stop trusting)\b", re.IGNORECASE)
EN_SCOPE_END = re.compile(r"[,:()]|\b(but|however|instead(?! of)|rather(?! than)|so|because|which|then|and|while|"
                          r"although|though|yet|unless|if|when)\b", re.IGNORECASE)
EN_EXEMPT = re.compile(r"\b(because|since|due to|caused by|comes? from|stems? from|results? from|lacks?|"
                       r"(usually|often|typically) (have|has)|if|when|whenever|unless|in case|once|which|what|"
                       r"whether)\b|\b(that|which|who)\s+$",
                       re.IGNORECASE)
"""Before a negation in its clause: the negation describes a cause, a condition or its subject ("a run *that
cannot* finish ends as partially completed"), and rejects nothing."""

ZH_NEGATION = re.compile(r"不需要?|不要|不用|无需|无须|不必|没有?必要|用不[着著]|(?<![分区特类级告识辨个差性])别|"
                         r"从不|绝不|永远不|不会|不能|不应|不该|不可|不设|不加|不做|不去|不考虑|不搞|不管|不使用|而不是|与其|不再相信|"
                         r"(?<!有)没有?|不(?=[^同断仅少久论停止结过但光然如])")
ZH_SCOPE_END = re.compile(r"[，,；：:（）()]|但|不过|而是|不如|只|就|所以|因为|然后|再|否则|代替|替代|取代")
ZH_EXEMPT = re.compile(r"因为|由于|来自|源于|常因|往往|通常|导致|缺少|缺乏|根因|原因是|问题是|出在|多半|大多|常常|"
                       r"一般是|主要是|在于|如果|要是|假如|万一|一旦|若是?|哪|是否|有没有")
"""The Chinese causes and conditions (如果用户没给订单号，就问他)."""

CLAUSE_MARK = re.compile(r"[,，;；:：]")

EN_AFTER = re.compile(
    r"^[^,;:.()]{0,40}?\b(is|are|was|were|would be|seems?|feels?)\b[^,;:.()]{0,12}?\b(never worth|not worth|"
    r"worthless|pointless|unnecessary|not necessary|not needed|overkill|a waste|useless|wrong|a mistake|"
    r"a bad idea|a trap|an anti-pattern|not something|premature)\b"
    r"|^[^,;:.()]{0,40}?\b(isn't|aren't|is not|are not|is never|are never)\b[^,;:.()]{0,6}?\b(needed|necessary|"
    r"required|worth|useful|helpful)\b",
    re.IGNORECASE)
"""A rejection that comes after the phrase, in its clause: "*replay* is never worth it"."""

ZH_AFTER = re.compile(r"^[^，,；;：:。()（）]{0,12}?(没有?必要|不需要|不必要|意义不大|没(有)?(什么)?(意义|用)|纯属多余|"
                      r"多余|不值得|不是[^，。]{0,10}该做的|是错的|不对|行不通|是个坑|不可取)")
"""The Chinese rejections that come after the phrase: "*故障注入*从来不值得做", "*状态*没必要单独维护"."""

EN_CAUSE = re.compile(r"\b(because|since|due to|caused by|comes? from|stems? from|results? from|run on when|"
                      r"loops? (when|because))\b", re.IGNORECASE)
ZH_CAUSE = re.compile(r"因为|由于|根因|原因|源于|来自|导致|多半是|往往是|通常是|常常是")
"""Before a wrong claim in its sentence: the sentence describes what causes a loop, and claims nothing."""


def rejected_before(sentence: str, start: int, raw: str | None = None) -> bool:
    """Is the phrase at ``sentence[start:]`` in the forward reach of a negation in its own clause?

    ``sentence`` has its key phrases blanked, so the "without" of "*without tool calls*" negates nothing;
    ``raw`` (default: ``sentence``) is the same sentence unblanked, where a contrast or a clause ends even
    inside a phrase ("never *reset the count when* we switch to *a backup tool*").
    """
    raw = sentence if raw is None else raw
    words = [m.start() for m in re.finditer(r"\S+", sentence[:start])]
    en_from = words[-EN_WINDOW] if len(words) >= EN_WINDOW else 0
    return (_in_reach(sentence, raw, start, max(0, start - ZH_WINDOW), ZH_NEGATION, ZH_SCOPE_END, ZH_EXEMPT)
            or _in_reach(sentence, raw, start, en_from, EN_NEGATION, EN_SCOPE_END, EN_EXEMPT))


def _in_reach(sentence: str, raw: str, start: int, window_from: int, cues: re.Pattern[str],
              scope_end: re.Pattern[str], exempt: re.Pattern[str]) -> bool:
    last = None
    for cue in cues.finditer(sentence, window_from):
        if cue.end() > start:
            break
        last = cue
    if last is None or scope_end.search(raw, last.end(), start):
        return False
    clause_start = max((m.end() for m in CLAUSE_MARK.finditer(sentence, 0, last.start())), default=0)
    return not exempt.search(sentence, clause_start, last.start())


def rejected_after(sentence: str, end: int) -> bool:
    """Is the phrase ending at ``sentence[:end]`` rejected by what follows it in its clause?"""
    rest = sentence[end:]
    return bool(EN_AFTER.search(rest) or ZH_AFTER.search(rest))


def rejected(sentence: str, start: int, end: int, raw: str | None = None) -> bool:
    """The phrase ``sentence[start:end]`` is argued against, from before it or from after it."""
    return rejected_before(sentence, start, raw) or rejected_after(sentence, end)


def described_as_cause(sentence: str, start: int) -> bool:
    """A cue before ``start`` says the sentence describes a cause ("loops run on because … every error is
    retried"), so a wrong claim there is not the candidate's own."""
    return bool(EN_CAUSE.search(sentence, 0, start) or ZH_CAUSE.search(sentence, 0, start))
