"""The drill's content, read from ``data/interview/`` and validated on load.

Everything a candidate reads or the grader compares against is data, not code: the rubric (points, the
ideas each is made of, a synonym table, the common wrong claims), the scripts, the follow-ups' words,
the evidence list and the framework fuses, the annotated exemplars, the self-review checklist and the
labelled calibration set. Each file is one pydantic model (frozen, ``extra="forbid"``), so a typo in a
field name fails at import with one line naming the file, the field and what was expected — never later,
inside a learner's notebook.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, ValidationError, model_validator

from agentloops import i18n
from agentloops.errors import UsageError, describe_validation_error
from agentloops.i18n import N_
from agentloops.jsonfile import read_json
from agentloops.resources import data_dir


class DrillError(UsageError, ValueError):
    """The drill was asked for something it does not have (a follow-up number, a script name, a bad data file)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Text(_Frozen):
    """One text in both languages (Simplified Chinese; a Traditional reader gets it converted)."""

    en: str = Field(min_length=1)
    zh: str = Field(min_length=1)

    def said(self, language: str = "en") -> str:
        """The text in ``language`` (``"en"``, or anything Chinese: ``"zh"``, ``"zh-Hans"``, ``"zh-Hant"``)."""
        return self.zh if language.startswith("zh") else self.en


class ByLanguage(_Frozen):
    """Phrases in English and in Simplified Chinese."""

    en: tuple[str, ...] = ()
    zh: tuple[str, ...] = ()

    def all(self) -> tuple[str, ...]:
        """Both lists, English first."""
        return self.en + self.zh


def _compiles(patterns: ByLanguage, where: str) -> None:
    for pattern in patterns.all():
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{where}: pattern {pattern!r} is not a regular expression ({exc})") from None


class Concept(_Frozen):
    """One idea a point is made of.

    Attributes:
        name: the idea in a few words (its English is its id).
        patterns: regular expressions (English read case-insensitively, ``\\b`` as ASCII).
        synonyms: the synonym table: plain phrases that say the same thing, matched as written (spaces
            stretch), so paraphrase coverage is a list a reviewer can read, not a regex.
        negatable: ``False`` for a mention that counts even under a negation ("the cap does not explain
            *why it loops*" still points at the root cause).
    """

    name: Text
    patterns: ByLanguage = ByLanguage()
    synonyms: ByLanguage = ByLanguage()
    negatable: bool = True

    @model_validator(mode="after")
    def _valid(self) -> Concept:
        _compiles(self.patterns, self.name.en)
        if not self.patterns.all() and not self.synonyms.all():
            raise ValueError(f"{self.name.en}: expected at least one pattern or synonym")
        return self


class WrongClaim(_Frozen):
    """A common wrong claim about a point: stated, it subtracts; rejected ("not X", "而不是 X"), it counts as
    the concept it contradicts.

    Attributes:
        key: identifier.
        name: the claim in a few words, as the feedback names it.
        why: one sentence on why it is wrong.
        corrects: the English name of the concept that says the opposite.
        patterns: regular expressions that state the claim.
    """

    key: str = Field(pattern=r"^[a-z_]+$")
    name: Text
    why: Text
    corrects: str
    patterns: ByLanguage

    @model_validator(mode="after")
    def _valid(self) -> WrongClaim:
        _compiles(self.patterns, self.key)
        return self


class Point(_Frozen):
    """One point of the 2-minute answer.

    Attributes:
        key: identifier.
        title: the point.
        advice: what to add while it is not covered.
        need: how many different concepts make it complete.
        core: counts toward the score (bonus points do not).
        concepts: the ideas it is made of.
        wrong_claims: the common wrong claims about it.
    """

    key: str = Field(pattern=r"^[a-z_]+$")
    title: Text
    advice: Text
    need: PositiveInt
    core: bool = True
    concepts: tuple[Concept, ...] = Field(min_length=1)
    wrong_claims: tuple[WrongClaim, ...] = ()

    @model_validator(mode="after")
    def _valid(self) -> Point:
        names = [c.name.en for c in self.concepts]
        if self.need > len(names):
            raise ValueError(f"{self.key}: need {self.need} is more than its {len(names)} concepts")
        for claim in self.wrong_claims:
            if claim.corrects not in names:
                raise ValueError(f"{self.key}.{claim.key}: corrects {claim.corrects!r}; expected one of: "
                                 f"{', '.join(names)}")
        return self

    def concept(self, name: str) -> Concept:
        """The concept whose English name is ``name``."""
        return next(c for c in self.concepts if c.name.en == name)


class Bands(_Frozen):
    """Where a score (a share of the core points, 0–1) turns adequate and strong."""

    adequate: float = Field(gt=0, lt=1)
    strong: float = Field(gt=0, le=1)

    @model_validator(mode="after")
    def _ordered(self) -> Bands:
        if self.strong <= self.adequate:
            raise ValueError(f"strong {self.strong} must be above adequate {self.adequate}")
        return self


class Rubric(_Frozen):
    """``rubric.json``: the points, and the bands a score falls into."""

    about: str
    wrong_claim_penalty: float = Field(gt=0, le=1)
    bands: Bands
    points: tuple[Point, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> Rubric:
        keys = [p.key for p in self.points]
        claims = [c.key for p in self.points for c in p.wrong_claims]
        for kind, values in (("point", keys), ("wrong claim", claims)):
            if len(set(values)) != len(values):
                raise ValueError(f"a {kind} key appears twice: {sorted(k for k in values if values.count(k) > 1)}")
        return self


class Script(_Frozen):
    """One script a candidate practises aloud, with its target length."""

    name: str
    target_s: PositiveFloat
    en: str = Field(min_length=1)
    zh: str = Field(min_length=1)


class StepLimitExample(_Frozen):
    """The measurement the 2-minute answer quotes its step limit from (``controller`` ``derive_limits``)."""

    task: str
    measure: PositiveInt
    seed: int = 0


class Scripts(_Frozen):
    """``scripts.json``: the question, the scripts, and the run the 2-minute answer takes its number from."""

    question: Text
    scripts: tuple[Script, ...] = Field(min_length=1)
    step_limit_example: StepLimitExample


class FollowUpText(_Frozen):
    """One follow-up's words: the question, a short spoken answer, the runs that back it, the points it probes."""

    key: str
    question: Text
    answer: Text
    scenarios: tuple[str, ...] = Field(min_length=1)
    evidence: str
    points: tuple[str, ...] = Field(min_length=1)


class FollowUps(_Frozen):
    """``followups.json``."""

    follow_ups: tuple[FollowUpText, ...] = Field(min_length=1)


class EvidenceItem(_Frozen):
    """One piece of evidence and the notebook cell whose output shows it."""

    name: Text
    call: str
    notebook: str
    anchor: str
    heading: Text

    @property
    def function(self) -> str:
        """The function name the cell calls."""
        return self.call.split("(", 1)[0]

    def link(self, language: str = "en") -> str:
        """A Markdown link to the cell (the Chinese notebooks keep the same file names and anchors)."""
        return f"[{self.heading.said(language)}]({self.notebook}#{self.anchor})"


class FrameworkFuse(_Frozen):
    """How one framework names the step cap, read from the source of one released version."""

    framework: str
    package: str
    version: str = Field(pattern=r"^\d+\.\d+\.\d+$")
    setting: Text
    default: Text
    counts: Text
    raises: Text
    source: tuple[str, ...] = Field(min_length=1)

    def row(self, language: i18n.Language = "en") -> dict[str, str]:
        """One table row (the notebook shows these as a DataFrame), its columns and words in ``language``."""
        values = (self.framework, f"{self.package} {self.version}", self.setting.said(language),
                  self.default.said(language), self.counts.said(language), self.raises.said(language),
                  "; ".join(self.source))
        return {i18n.translate(header, language): value for header, value in zip(FUSE_COLUMNS, values, strict=True)}


FUSE_COLUMNS = (N_("framework"), N_("checked against"), N_("setting"), N_("default"),
                N_("one unit is"), N_("when hit"), N_("read in"))
"""The framework table's columns (English ids; :meth:`FrameworkFuse.row` names them in the table's language)."""


class EvidenceFile(_Frozen):
    """``evidence.json``: the six pieces of evidence and the framework fuses."""

    evidence: tuple[EvidenceItem, ...] = Field(min_length=1)
    framework_fuses: tuple[FrameworkFuse, ...] = Field(min_length=1)


Level = Literal["weak", "adequate", "strong"]


class Exemplar(_Frozen):
    """One example answer and what makes it weaker or stronger."""

    level: Level
    text: str = Field(min_length=1)
    notes: str = Field(min_length=1)


class ExemplarSet(_Frozen):
    """A weak, an adequate and a strong answer to one question (``main`` or a follow-up key), in one language."""

    question: str
    language: Literal["en", "zh"]
    exemplars: tuple[Exemplar, Exemplar, Exemplar]

    @model_validator(mode="after")
    def _levels(self) -> ExemplarSet:
        if [e.level for e in self.exemplars] != ["weak", "adequate", "strong"]:
            raise ValueError(f"{self.question}/{self.language}: expected weak, adequate, strong in that order")
        return self


class ChecklistItem(_Frozen):
    """One line of the self-review checklist, tied to a rubric point."""

    point: str
    item: Text


class Exemplars(_Frozen):
    """``exemplars.json``: annotated answers for the main question and each follow-up, and the checklist."""

    sets: tuple[ExemplarSet, ...] = Field(min_length=1)
    checklist: tuple[ChecklistItem, ...] = Field(min_length=1)


Label = Literal["strong", "adequate", "weak", "fluent_wrong", "keywords", "negated", "off_topic"]


class LabelledAnswer(_Frozen):
    """One hand-labelled answer to the main question."""

    id: str
    language: Literal["en", "zh"]
    label: Label
    article_points: bool = False
    note: str
    text: str = Field(min_length=1)


class Calibration(_Frozen):
    """``calibration.json``: the labelled set (written before the grader was tuned; never edited to pass)."""

    about: str
    answers: tuple[LabelledAnswer, ...] = Field(min_length=40)


M = TypeVar("M", bound=BaseModel)


def load(name: str, model: type[M]) -> M:
    """Read ``data/interview/<name>`` and validate it as ``model``.

    Raises:
        DrillError: one line — the file, the field and what was expected.
    """
    path = data_dir() / "interview" / name
    raw = read_json(path, error=DrillError, what=N_("interview data file"))
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise DrillError(f"{path.name}: {describe_validation_error(exc)}") from None


@cache
def rubric() -> Rubric:
    """The rubric (read once)."""
    return load("rubric.json", Rubric)


@cache
def scripts() -> Scripts:
    """The question and the scripts (read once)."""
    return load("scripts.json", Scripts)


@cache
def follow_up_texts() -> FollowUps:
    """The follow-ups' words (read once)."""
    return load("followups.json", FollowUps)


@cache
def evidence_file() -> EvidenceFile:
    """The evidence list and the framework fuses (read once)."""
    return load("evidence.json", EvidenceFile)


@cache
def exemplars() -> Exemplars:
    """The annotated exemplars and the self-review checklist (read once)."""
    return load("exemplars.json", Exemplars)


@cache
def calibration() -> Calibration:
    """The labelled calibration set (read once)."""
    return load("calibration.json", Calibration)


def drill_language(language: str | None, where: str) -> i18n.Language:
    """``language`` (``"en"``, ``"zh"`` or a locale such as ``zh_TW``), or the package's language when ``None``."""
    if language is None:
        return i18n.language()
    chosen = i18n.normalize(str(language))
    if chosen is None:
        raise DrillError(f"{where}: language {language!r} is unknown; expected one of: {', '.join(i18n.LANGUAGES)}")
    return chosen
