"""How well the grader ranks answers a person labelled: rank correlations over the calibration set.

``data/interview/calibration.json`` holds answers to the main question, written and labelled by hand
before the grader was tuned (strong, adequate, weak, fluent but wrong, keyword lists, negated, off-topic).
The grader is not asked to reproduce the labels' numbers, only their order: :func:`spearman` and
:func:`kendall_tau` (tau-b, which allows ties) compare its scores with :data:`LABEL_ORDER`. Plain Python,
no SciPy: the formulas are short and a learner can read them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from agentloops.i18n import N_, translate
from agentloops.interview.content import Label, LabelledAnswer, calibration, drill_language
from agentloops.interview.grader import Band, grade

LABEL_ORDER: dict[Label, int] = {"strong": 3, "adequate": 2, "weak": 1, "fluent_wrong": 0, "keywords": 0,
                                 "negated": 0, "off_topic": 0}
"""The order the labels stand in: a fluent but wrong answer is no better than a keyword list."""

LABELS: dict[Label, str] = {"strong": N_("strong"), "adequate": N_("adequate"), "weak": N_("weak"),
                            "fluent_wrong": N_("fluent but wrong"), "keywords": N_("a keyword list"),
                            "negated": N_("argues against the points"), "off_topic": N_("off topic")}
"""The labels (and the grader's bands) as the Chinese calibration table names them; English shows the data's ids."""

SPEARMAN_FLOOR = 0.75
"""The ranking test's threshold for Spearman's rho (chosen before the grader was tuned)."""

KENDALL_FLOOR = 0.6
"""The ranking test's threshold for Kendall's tau-b (chosen before the grader was tuned)."""


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing the mean of their positions."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho: the Pearson correlation of the ranks (ties averaged)."""
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    spread = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return cov / spread if spread else 0.0


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b: (concordant − discordant) pairs over the pairs not tied, corrected for ties."""
    concordant = discordant = tied_x = tied_y = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tied_x += 1
            elif dy == 0:
                tied_y += 1
            elif (dx > 0) == (dy > 0):
                concordant += 1
            else:
                discordant += 1
    denominator = math.sqrt((concordant + discordant + tied_x) * (concordant + discordant + tied_y))
    return (concordant - discordant) / denominator if denominator else 0.0


@dataclass(frozen=True, slots=True)
class Graded:
    """One labelled answer and what the grader made of it."""

    answer: LabelledAnswer
    percent: int
    band: Band
    wrong: int


@dataclass(frozen=True)
class Calibration:
    """The grader over the labelled set; renders as a text table."""

    rows: tuple[Graded, ...]

    @property
    def spearman(self) -> float:
        """Spearman's rho between the labels' order and the scores."""
        return spearman([LABEL_ORDER[r.answer.label] for r in self.rows], [r.percent for r in self.rows])

    @property
    def kendall(self) -> float:
        """Kendall's tau-b between the labels' order and the scores."""
        return kendall_tau([LABEL_ORDER[r.answer.label] for r in self.rows], [r.percent for r in self.rows])

    def scores(self, label: Label, language: str | None = None) -> list[int]:
        """The scores of one label (in one language)."""
        return [r.percent for r in self.rows if r.answer.label == label and language in (None, r.answer.language)]

    def records(self, language: str | None = None) -> list[dict[str, object]]:
        """One dict per answer (for a DataFrame): in Chinese (``language``; default: the package's language) the
        columns, labels and bands are named in Chinese; the answer's ``id`` and language code stay as they are."""
        chosen = drill_language(language, "records")

        def said(text: str) -> str:
            return translate(text, chosen)

        def named(label: Label) -> str:
            return label if chosen == "en" else said(LABELS[label])

        return [{"id": r.answer.id, said(N_("language")): r.answer.language, said(N_("label")): named(r.answer.label),
                 said(N_("article's points")): r.answer.article_points if chosen == "en"
                 else said(N_("yes") if r.answer.article_points else N_("no")),
                 said(N_("score %")): r.percent, said(N_("band")): named(r.band),
                 said(N_("wrong claims")): r.wrong} for r in self.rows]

    def __str__(self) -> str:
        lines = [f"{'id':16} {'label':13} {'score':>5}  band"]
        lines += [f"{r.answer.id:16} {r.answer.label:13} {r.percent:>4}%  {r.band}" for r in self.rows]
        lines.append(f"Spearman {self.spearman:.2f} (floor {SPEARMAN_FLOOR}), Kendall tau-b {self.kendall:.2f} "
                     f"(floor {KENDALL_FLOOR}), over {len(self.rows)} answers")
        return "\n".join(lines)


def calibrate() -> Calibration:
    """Grade every labelled answer."""
    rows = []
    for answer in calibration().answers:
        result = grade(answer.text)
        rows.append(Graded(answer, result.percent, result.band, len(result.wrong)))
    return Calibration(tuple(rows))
