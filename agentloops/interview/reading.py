"""How the grader reads an answer: sentences, the rubric's phrases in them, and whether each is asserted.

Each sentence yields :class:`Hit` values — a concept of a point, stated or argued against — and
:class:`WrongHit` values — a common wrong claim, stated (it will subtract) or rejected (it then counts as
the concept it contradicts: "the system checks it, *rather than trusting the model's stop*"). A concept
phrase inside a wrong claim is the wrong claim's, not a concept of its own. A sentence is a *claim* when a
verb is left once its phrases are blanked (a keyword list has none), and it gives a *reason* when a
connective is left ("because", "so", "因为", "否则"…).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentloops.interview.chinese import CJK, WORD, compile_pattern
from agentloops.interview.content import Concept, Point, WrongClaim, rubric
from agentloops.interview.negation import described_as_cause, rejected
from agentloops.interview.speaking import QUESTION, QUESTION_ZH

POINTS: tuple[Point, ...] = rubric().points
"""The points of the 2-minute answer the grader looks for (the last two are bonus points)."""


def synonym_pattern(phrase: str) -> str:
    """A synonym-table phrase as a pattern: spaces stretch, English words are whole words."""
    body = r"\s+".join(re.escape(word) for word in phrase.split())
    return body if CJK.search(phrase) else rf"\b{body}\b"


def _patterns(concept: Concept) -> list[re.Pattern[str]]:
    return ([compile_pattern(p) for p in concept.patterns.all()]
            + [compile_pattern(synonym_pattern(s)) for s in concept.synonyms.all()])


_CONCEPTS: list[tuple[Point, Concept, list[re.Pattern[str]]]] = [
    (point, concept, _patterns(concept)) for point in POINTS for concept in point.concepts]
_WRONG: list[tuple[Point, WrongClaim, list[re.Pattern[str]]]] = [
    (point, claim, [compile_pattern(p) for p in claim.patterns.all()]) for point in POINTS
    for claim in point.wrong_claims]

SENTENCE_END = re.compile(r"(?<=[.!?])\s+|[。！？；;\n]+|(?<=[.!?])$")

_EN_AUX = (
    "is are was were be been being am has have had do does did can could will would shall should may might must "
    "need needs let lets i'd we'd i'll we'll it's that's i'm we're they're don't doesn't won't can't isn't")
_EN_VERBS = (
    "keep check stop retry ask log record track define detect use set count add route replay compare mark save end "
    "fail return treat give tell show make run call send store write read verify look find decide handle limit cap "
    "block pause hand escalate cancel wait try switch fall degrade spend pay reset repair fix reject accept allow "
    "raise report explain say mean know want split size measure derive base tie attach carry put take get go come "
    "change update grow trim compact summarise summarize rerun inject test review inspect notice catch flag guard "
    "wrap hide pretend classify label tag map hash fingerprint stamp persist resume abort quit finish complete "
    "succeed loop spin repeat matter help cost burn waste turn lack forget look hit stay lose tell learn bring "
    "pass sit leave let require happen work own keep believe think claim sound move")
"""Auxiliaries and verbs: a sentence keeps one of them once its key terms are blanked, or it is a list."""
_AUX_SET, _VERB_SET = frozenset(_EN_AUX.split()), frozenset(_EN_VERBS.split())
EN_REASON = re.compile(
    r"\b(because|since|so|otherwise|instead|unless|then|if|when|whenever|until|rather than|means?|meaning|therefore|"
    r"thus|hence|that way|in order to|to avoid|to keep|to stop|else|only when|as long as|before|after|once|"
    r"whereas|as a result|given|which)\b", re.IGNORECASE)
ZH_VERBS = re.compile(
    r"是|要|会|能|应|该|需|用|让|把|给|做|看|查|问|停|试|换|记|写|读|算|设|加|保|存|留|判|检|验|区分|进入|返回|结束|"
    r"继续|转|交|等|拒|允许|呼叫|定义|维护|追踪|比较|发现|报|告诉|提示|说|标|控制|限制|拆|确认|调|执行|处理|有|拿|放|送|"
    r"跑|管|防|避免|识别|分|走|回|带|列|拦|阻止|切|计|消耗|花|扣|重置|保证|解释|汇总|修|改|定|取|达到|超过|得到|变|出")
ZH_REASON = re.compile(r"因为|由于|所以|因此|否则|不然|然后|如果|若|一旦|就|才|而是|以免|以便|这样|直到|只有|除非|"
                       r"再|从而|为了|则|时|之后|后|避免|防止|而不是|但|导致|于是|既然|只要|以防|当|不如")
SUBJECT = re.compile(r"\b(i|we|you|it|they|the (system|agent|loop|controller|model|code|run))\b|我|你|它|咱|系统|模型|"
                     r"agent|智能体|控制器|程序|代码|循环|工具|错误|用户", re.IGNORECASE)
"""A subject: with one, a key term may itself be the verb ("we *retry* timeouts", "我*回放*轨迹", "错误按类型*分流*":
Chinese often fronts the topic instead of naming who acts)."""


@dataclass(frozen=True, slots=True)
class Hit:
    """Where the answer states (or argues against) one concept.

    Attributes:
        point: the point's key.
        concept: the concept's English name.
        start: offset in the graded text.
        end: end offset.
        words: the answer's own words there.
        negated: argued against ("never", "不需要", "… is never worth it"), so it does not count.
        via: the key of the wrong claim whose rejection stated it ("" for a phrase of the concept itself).
    """

    point: str
    concept: str
    start: int
    end: int
    words: str
    negated: bool
    via: str = ""


@dataclass(frozen=True, slots=True)
class WrongHit:
    """Where the answer states (or rejects) a common wrong claim.

    Attributes:
        point: the point's key.
        claim: the wrong claim's key.
        start / end: offsets in the graded text.
        words: the answer's own words there.
        rejected: argued against, so it is a right claim ("rather than trusting the model's stop").
    """

    point: str
    claim: str
    start: int
    end: int
    words: str
    rejected: bool


@dataclass(frozen=True, slots=True)
class Sentence:
    """One graded sentence: its span, what it states, and whether it is a claim with a reason."""

    start: int
    end: int
    hits: tuple[Hit, ...]
    wrong: tuple[WrongHit, ...]
    claim: bool
    reason: bool

    @property
    def points(self) -> frozenset[str]:
        """The points it states (not argued against)."""
        return frozenset(h.point for h in self.hits if not h.negated)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The non-blank sentences of ``text`` as (start, end)."""
    spans, start = [], 0
    for match in SENTENCE_END.finditer(text):
        if match.start() > start:
            spans.append((start, match.start()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def _words(original: str, start: int, end: int) -> str:
    return " ".join(original[start:end].split())[:60]


def _blank(sentence: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(sentence)
    for s, e in spans:
        chars[s:e] = " " * (e - s)
    return "".join(chars)


def _inside(m: re.Match[str], spans: Sequence[tuple[int, int]]) -> bool:
    return any(s <= m.start() and m.end() <= e for s, e in spans)


def hits(folded: str, original: str, start: int, end: int) -> tuple[list[Hit], list[WrongHit]]:
    """The concepts and the wrong claims in the sentence ``folded[start:end]``, each marked asserted or not."""
    sentence = folded[start:end]
    claims = [(p, c, m) for p, c, patterns in _WRONG for pattern in patterns for m in pattern.finditer(sentence)]
    claims = [(p, c, m) for p, c, m in claims if not described_as_cause(sentence, m.start())]
    claims = list({(p.key, c.key): (p, c, m) for p, c, m in claims}.values())
    spans = [m.span() for *_claim, m in claims]
    found = [(p, c, m) for p, c, patterns in _CONCEPTS for pattern in patterns for m in pattern.finditer(sentence)
             if not _inside(m, spans)]
    blanked = _blank(sentence, spans + [m.span() for *_found, m in found])
    wrong = [WrongHit(p.key, c.key, start + m.start(), start + m.end(), _words(original, start + m.start(),
                                                                                start + m.end()),
                      rejected(blanked, m.start(), m.end(), sentence)) for p, c, m in claims]
    concepts = [Hit(p.key, c.name.en, start + m.start(), start + m.end(),
                    _words(original, start + m.start(), start + m.end()),
                    c.negatable and rejected(blanked, m.start(), m.end(), sentence)) for p, c, m in found]
    corrections = [Hit(w.point, claim.corrects, w.start, w.end, w.words, False, w.claim)
                   for w, (_p, claim, _m) in zip(wrong, claims) if w.rejected]
    return concepts + corrections, wrong


def _has_verb(text: str) -> bool:
    if ZH_VERBS.search(text):
        return True
    for word in WORD.findall(text.lower()):
        stems = {word, word[:-1], word[:-2], word[:-3], word[:-3] + "y", word[:-2] + "e", word[:-3] + "e"}
        if word in _AUX_SET or stems & _VERB_SET:
            return True
    return False


def is_claim(sentence: str, rest: str) -> bool:
    """A statement, not a list: a verb outside the key terms, or a subject and a verb anywhere."""
    return _has_verb(rest) or (bool(SUBJECT.search(rest)) and _has_verb(sentence))


def _has_reason(text: str) -> bool:
    return bool(EN_REASON.search(text) or ZH_REASON.search(text))


def _gives_reason(sentence: str, spans: Sequence[tuple[int, int]]) -> bool:
    """A connective is left once the key phrases are blanked — except a phrase whose pattern swallowed the
    connective itself ("budget, *so* it cannot hide a retry"), which is not a key term there."""
    return _has_reason(_blank(sentence, [(s, e) for s, e in spans if not _has_reason(sentence[s:e])]))


def read(folded: str, original: str) -> tuple[list[Sentence], int, int]:
    """Sentences with their phrases, and how many were dropped as repeats and as copies of the question."""
    seen: set[str] = set()
    sentences, repeats, copies = [], 0, 0
    for start, end in sentence_spans(folded):
        key = " ".join(WORD.findall(folded[start:end].lower())) + "".join(CJK.findall(folded[start:end]))
        if not key or key in seen or _copies_question(key):
            repeats += key in seen
            copies += bool(key) and key not in seen
            continue
        seen.add(key)
        found, wrong = hits(folded, original, start, end)
        rest = _blank(folded[start:end], [(h.start - start, h.end - start) for h in found]
                      + [(w.start - start, w.end - start) for w in wrong])
        sentences.append(Sentence(start, end, tuple(found), tuple(wrong), is_claim(folded[start:end], rest),
                                  _gives_reason(folded[start:end], [(h.start - start, h.end - start) for h in found])))
    return sentences, repeats, copies


_QUESTION_WORDS = frozenset(WORD.findall(QUESTION.lower())) | frozenset(CJK.findall(QUESTION_ZH))


def _copies_question(key: str) -> bool:
    words = WORD.findall(key) + CJK.findall(key)
    return len(words) >= 3 and sum(w in _QUESTION_WORDS for w in words) >= 0.8 * len(words)
