"""The practice grader: claims, not words.

:func:`grade` reads an answer (:mod:`~agentloops.interview.reading`) and scores each point of the rubric by
the share of its concepts a sentence asserts, halved when no such sentence gives a reason; every common
wrong claim the answer makes subtracts :attr:`~.content.Rubric.wrong_claim_penalty` from the total and is
named in the feedback. The result falls into a band — weak, adequate, strong — whose limits were set on
the labelled calibration set (``data/interview/calibration.json``; see :mod:`~agentloops.interview.calibration`).
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentloops.interview.chinese import CJK, WORD, Language, detect, in_script, is_zh, to_simplified
from agentloops.interview.content import DrillError, Point, rubric
from agentloops.interview.messages import say
from agentloops.interview.reading import POINTS, Sentence, read

MAX_CHARS = 20_000
"""Only the first 20,000 characters of an answer are read (an interview answer is far shorter)."""

LENGTH_FLOOR = 30
"""Fewer spoken words than this (about 12 s) is too short to make a point with its reason: points cap at partly."""

DENSITY_CEILING: dict[str, float] = {"en": 0.6, "zh": 0.7}
"""Above this share of key terms (words in English, characters in Chinese) an answer reads as a keyword list:
points cap at named."""

ENUMERATION = 4
"""A sentence that names this many points at once is a list: its names count, its connective explains none."""

WRONG_PENALTY = rubric().wrong_claim_penalty
"""What each distinct wrong claim subtracts from the total, in points."""

BANDS = rubric().bands
"""Where a score turns adequate and strong, as a share of the core points."""

PointStatus = Literal["covered", "partly", "named", "missed"]
Band = Literal["weak", "adequate", "strong"]
Flag = Literal["question", "keywords", "short", "negated", "wrong", "repeated", "enumeration"]


@dataclass(frozen=True, slots=True)
class PointResult:
    """How one point fared.

    Attributes:
        point: the point.
        score: 0–1 — the share of its concepts stated in a sentence, halved when no sentence says why.
        status: covered (1), partly (at least ½), named (less) or missed (0).
        found: (concept name, the answer's words) for each concept stated.
        missing: names of the concepts not stated.
        negated: the answer's words where it argued against this point.
        explained: a sentence stating it also gives a reason or a consequence.
        wrong: (wrong claim key, the answer's words) for each wrong claim it made about this point.
    """

    point: Point
    score: float
    status: PointStatus
    found: tuple[tuple[str, str], ...]
    missing: tuple[str, ...]
    negated: tuple[str, ...]
    explained: bool
    wrong: tuple[tuple[str, str], ...] = ()


def status_of(score: float) -> PointStatus:
    """A point's status from its score."""
    return "covered" if score >= 1 else "partly" if score >= 0.5 else "named" if score > 0 else "missed"


def point_result(point: Point, sentences: Sequence[Sentence], cap: float, graded: frozenset[str]) -> PointResult:
    """Score one point over the graded sentences; ``cap`` bounds it (a keyword list, a short answer).

    A sentence that names :data:`ENUMERATION` of the ``graded`` points is a list: it explains none of them.
    """
    found: dict[str, str] = {}
    wrong: dict[str, str] = {}
    explained = False
    negated = []
    for sentence in sentences:
        for claim in (w for w in sentence.wrong if w.point == point.key and not w.rejected):
            wrong.setdefault(claim.claim, claim.words)
        for hit in (h for h in sentence.hits if h.point == point.key):
            if hit.negated:
                negated.append(hit.words)
            elif sentence.claim:
                found.setdefault(hit.concept, hit.words)
                explained |= sentence.reason and len(sentence.points & graded) < ENUMERATION
    coverage = min(len(found), point.need) / point.need
    score = min(cap, coverage * (1.0 if explained else 0.5))
    missing = tuple(c.name.en for c in point.concepts if c.name.en not in found)
    return PointResult(point, score, status_of(score), tuple(found.items()), missing, tuple(dict.fromkeys(negated)),
                       explained, tuple(wrong.items()))


_MARKS: dict[PointStatus, tuple[str, str]] = {
    "covered": ("✓", "#1a7f37"), "partly": ("~", "#9a6700"), "named": ("·", "#b35900"), "missed": ("✗", "#b35900"),
}


@dataclass(frozen=True)
class Grade:
    """The checklist for one answer — a heuristic; renders as HTML in JupyterLab and as text elsewhere.

    Attributes:
        text: the answer as read (normalised, possibly shortened).
        results: one :class:`PointResult` per point, core points first.
        language: ``en``, ``zh-Hans``, ``zh-Hant`` or ``none``: the advice comes in this language.
        attempted: False for an empty answer.
        flags: why points were capped or not counted (a keyword list, too short, negations, wrong claims…).
        density: the share of the answer that is key terms.
        words: spoken length of what was graded (repeats and copies of the question left out).
    """

    text: str
    results: tuple[PointResult, ...]
    language: Language
    attempted: bool
    flags: tuple[Flag, ...] = ()
    density: float = 0.0
    words: int = 0

    @property
    def core(self) -> tuple[PointResult, ...]:
        """Results of the core points."""
        return tuple(r for r in self.results if r.point.core)

    def _keys(self, status: PointStatus) -> list[str]:
        return [r.point.key for r in self.core if r.status == status]

    @property
    def covered(self) -> list[str]:
        """Keys of the core points covered."""
        return self._keys("covered")

    @property
    def partly(self) -> list[str]:
        """Keys of the core points partly covered."""
        return self._keys("partly")

    @property
    def named(self) -> list[str]:
        """Keys of the core points only named (a term without its claim and reason)."""
        return self._keys("named")

    @property
    def missed(self) -> list[str]:
        """Keys of the core points missed."""
        return self._keys("missed")

    @property
    def bonus(self) -> list[str]:
        """Keys of the bonus points the answer touches."""
        return [r.point.key for r in self.results if not r.point.core and r.score > 0]

    @property
    def wrong(self) -> list[tuple[str, str]]:
        """(wrong claim key, the answer's words) for every wrong claim the answer makes."""
        return [w for r in self.results for w in r.wrong]

    @property
    def score(self) -> float:
        """The core points' scores, less :data:`WRONG_PENALTY` per wrong claim (0 to the number of core points)."""
        return round(max(0.0, sum(r.score for r in self.core) - WRONG_PENALTY * len(self.wrong)), 3)

    @property
    def percent(self) -> int:
        """The score as a percentage of the core points."""
        return round(100 * self.score / len(self.core))

    @property
    def band(self) -> Band:
        """Weak, adequate or strong, by :data:`BANDS`."""
        share = self.score / len(self.core)
        return "strong" if share >= BANDS.strong else "adequate" if share >= BANDS.adequate else "weak"

    @property
    def cap_only(self) -> bool:
        """The answer names the step cap and states nothing else of the 2-minute answer."""
        fuse = next((r for r in self.core if r.point.key == "fuse"), None)
        return (self.attempted and fuse is not None and any(name == "names the step cap" for name, _ in fuse.found)
                and not any(r.found for r in self.core if r is not fuse))

    def get(self, key: str) -> PointResult:
        """The result of one point by key."""
        for result in self.results:
            if result.point.key == key:
                return result
        raise DrillError(f"grade.get: no point {key!r}; expected one of: {', '.join(p.key for p in POINTS)}")

    def say(self, key: str, **values: Any) -> str:
        """One message of the grader, in the answer's language."""
        return say(self.language, key, **values)

    def verdict(self) -> str:
        """One sentence on the whole answer (and one on its wrong claims), in the answer's language."""
        if not self.attempted:
            return self.say("question_only" if "question" in self.flags else "not_attempted")
        if self.cap_only and not self.wrong:
            return self.say("cap_only")
        said = self.say("verdict", covered=len(self.covered), total=len(self.core), partly=len(self.partly),
                        named=len(self.named), missed=len(self.missed), percent=self.percent)
        if self.wrong:
            penalty = f"{WRONG_PENALTY * len(self.wrong):g}"
            said += " " + self.say("verdict_wrong", count=len(self.wrong), penalty=penalty)
        return f"{said} {self.say(f'band_{self.band}')}"

    def notes(self) -> list[str]:
        """One line per flag: why points were capped, not counted, or taken away."""
        negated = [w for r in self.results for w in r.negated]
        wrong = [f"{self.claim_name(r.point, key)} (“{words}”)" for r in self.results for key, words in r.wrong]
        values = {"density": round(100 * self.density), "words": self.words, "floor": LENGTH_FLOOR,
                  "negated": "; ".join(f"“{w}”" for w in negated[:4]), "wrong": "; ".join(wrong)}
        return [self.say(f"flag_{flag}", **values) for flag in self.flags]

    def _in(self, text: str) -> str:
        return in_script(text, self.language) if is_zh(self.language) else text

    def title(self, point: Point) -> str:
        """A point's title in the answer's language."""
        return self._in(point.title.said(self.language))

    def concept(self, point: Point, name: str) -> str:
        """A concept's name in the answer's language."""
        return self._in(point.concept(name).name.said(self.language))

    def advice(self, point: Point) -> str:
        """What to add to a point, in the answer's language."""
        return self._in(point.advice.said(self.language))

    def claim_name(self, point: Point, key: str) -> str:
        """A wrong claim's name in the answer's language."""
        return self._in(next(c for c in point.wrong_claims if c.key == key).name.said(self.language))

    def claim_why(self, point: Point, key: str) -> str:
        """Why a wrong claim is wrong, in the answer's language."""
        return self._in(next(c for c in point.wrong_claims if c.key == key).why.said(self.language))

    def _lines(self, r: PointResult) -> list[tuple[str, str, str]]:
        """(label, text, the answer's words) under one point of the checklist."""
        lines = [(self.say("found"), self.concept(r.point, n), w) for n, w in r.found]
        lines += [(self.say("negated"), "", w) for w in r.negated]
        lines += [(self.say("wrong"), f"{self.claim_name(r.point, k)}: {self.claim_why(r.point, k)}", w)
                  for k, w in r.wrong]
        return lines

    def __str__(self) -> str:
        lines = [f"{self.say('heading')} — {self.verdict()}"]
        lines += [f" ! {note}" for note in self.notes()]
        for r in self.results if self.attempted else self.core:
            tag = "" if r.point.core else f" ({self.say('bonus')})"
            lines.append(f" {_MARKS[r.status][0]} {self.title(r.point)}{tag}")
            lines += [f"     {label}: {text + ' — ' if text else ''}“{words}”" for label, text, words in self._lines(r)]
            if self.attempted and r.point.core and r.status != "covered":
                lines.append(f"     {self.say('add')}: {self.advice(r.point)}")
        lines.append(f"{self.say('note')}: {self.say('heuristic')}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        rows = []
        for r in self.results if self.attempted else self.core:
            mark, color = _MARKS[r.status]
            spans = "".join(f"<div><small>{html.escape(label)}: {html.escape(text + ' — ' if text else '')}"
                            f"“<mark>{html.escape(words)}</mark>”</small></div>"
                            for label, text, words in self._lines(r))
            if self.attempted and r.point.core and r.status != "covered":
                spans += f"<div><small><i>{self.say('add')}:</i> {html.escape(self.advice(r.point))}</small></div>"
            tag = "" if r.point.core else f" <small>({self.say('bonus')})</small>"
            rows.append(f"<tr><td style='color:{color};font-weight:bold;font-size:18px;vertical-align:top'>{mark}"
                        f"</td><td style='text-align:left'><b>{html.escape(self.title(r.point))}</b>{tag}{spans}"
                        "</td></tr>")
        notes = "".join(f"<div style='color:#b35900'>! {html.escape(n)}</div>" for n in self.notes())
        color = "#57606a" if not self.attempted else ("#b35900" if self.cap_only or self.wrong else "#0072B2")
        return (f"<div style='border-left:4px solid {color};padding:4px 8px;font-size:15px'>"
                f"<b style='color:{color}'>{html.escape(self.verdict())}</b>{notes}<table>{''.join(rows)}</table>"
                f"<div style='color:#555'><small><b>{self.say('heuristic_label')}</b> "
                f"{html.escape(self.say('heuristic'))}</small></div></div>")


def as_text(answer: Any) -> str:
    """Any input as text: ``None`` → empty, bytes decoded leniently, anything else through ``str``."""
    if answer is None or answer is ...:
        return ""
    if isinstance(answer, (bytes, bytearray, memoryview)):
        return bytes(answer).decode("utf-8", errors="replace")
    if isinstance(answer, str):
        return answer
    if isinstance(answer, Sequence):
        try:
            return "\n".join(as_text(part) for part in answer)
        except RecursionError:
            return ""
    try:
        return str(answer)
    except Exception:  # an object whose __str__ fails: grade nothing rather than crash the notebook
        return ""


def units(text: str) -> int:
    """Spoken length in words: Latin words, plus one word per two Chinese characters."""
    return len(WORD.findall(text)) + (len(CJK.findall(text)) + 1) // 2


def grade(answer: Any, points: Sequence[str] | None = None) -> Grade:
    """Grade a practice answer point by point — claims, not words (see the module docstring).

    A concept counts only where a sentence asserts it: the sentence keeps a verb once its key phrases are
    blanked (a keyword list keeps none), and the phrase is not argued against — before it ("never use *a
    retry budget*"), after it ("*replay* is never worth it") or by contrast ("…, rather than *trusting the
    model*"). A common wrong claim ("a step cap is the fix") subtracts and is named; rejected, it counts as
    the concept it contradicts. A point is covered when enough concepts are stated and one of those sentences
    gives a reason. Repeats and copies of the question are read once or not at all; an answer under
    :data:`LENGTH_FLOOR` words caps points at partly, one denser in key terms than :data:`DENSITY_CEILING`
    caps them at named. Traditional Chinese grades exactly as its Simplified conversion; the feedback comes
    in the answer's language and script.

    Args:
        answer: the answer; never raises — ``None``, bytes, numbers and lists are read as text, and only the
            first :data:`MAX_CHARS` characters are read.
        points: grade only these point keys (a follow-up's points); default: every point.

    Example:
        >>> grade("Set max_steps to 10.").cap_only
        True
    """
    text = unicodedata.normalize("NFKC", as_text(answer))[:MAX_CHARS]
    folded = to_simplified(text)
    sentences, repeats, copies = read(folded, text)
    words = units("".join(folded[s.start:s.end] for s in sentences))
    language = detect("".join(text[s.start:s.end] for s in sentences)) if sentences else detect(text)
    density = _density(folded, sentences)
    flags: list[Flag] = []
    if copies and not sentences:
        flags.append("question")
    if sentences and words < LENGTH_FLOOR and points is None:  # a follow-up's answer is short by design
        flags.append("short")
    if density > DENSITY_CEILING["zh" if is_zh(language) else "en"]:
        flags.append("keywords")
    flags += ["negated"] if any(h.negated for s in sentences for h in s.hits) else []
    flags += ["repeated"] if repeats else []
    cap = 0.1 if "keywords" in flags else 0.5 if "short" in flags else 1.0
    chosen = [p for p in POINTS if points is None or p.key in points]
    if points is not None and len(chosen) != len(set(points)):
        raise DrillError(f"grade: points {list(points)!r}; expected keys among: {', '.join(p.key for p in POINTS)}")
    graded = frozenset(p.key for p in chosen)
    results = tuple(point_result(point, sentences, cap, graded) for point in chosen)
    flags += ["wrong"] if any(r.wrong for r in results) else []
    flags += ["enumeration"] if any(len(s.points & graded) >= ENUMERATION and s.claim for s in sentences) else []
    return Grade(text, results, language, bool(sentences), tuple(flags), density, words)


def _density(folded: str, sentences: Sequence[Sentence]) -> float:
    """The share of spoken units (words; characters in Chinese) that lie inside key terms."""
    total = inside = 0
    for s in sentences:
        covered = [False] * (s.end - s.start)
        for hit in s.hits:
            covered[hit.start - s.start:hit.end - s.start] = [True] * (hit.end - hit.start)
        for unit in re.finditer(f"{WORD.pattern}|{CJK.pattern}", folded[s.start:s.end]):
            total += 1
            inside += covered[unit.start()]
    return inside / total if total else 0.0
