"""Success answers agree with the facts: the model's text is checked, and replaced when it contradicts them.

"The completion condition holds" proves the facts exist, not that the model's answer
reports them. A model can collect 24 °C for Shanghai and still write 31 °C. So before
a run ends as ``succeeded``, every number in the model's answer must be one the
verified facts (or the user's own request) contain. If one is not, the user gets an
answer written from the facts instead, and the stop's reason says why — a
contradicting text never reaches the user as a verified success.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from agentloops.controller.task.state import Fact

_NUMBER = re.compile(r"-(?<![\w.]-)\d+(?:[.,]\d+)?(?!\w)|\d(?<![\w.]\d)\d*(?:[.,]\d+)?(?!\w)")
r"""A number standing on its own: ``24``, ``-3``, ``18.5`` (``s1`` or ``c12`` are names, not numbers).

It is ``(?<![\w.])-?\d+(?:[.,]\d+)?(?!\w)`` with the look-behind moved after the first character
(a sign, or a digit), which lets the regex engine skip ahead to the next ``-`` or digit: the same
matches, in about half the time (``tests/test_controller_fixes.py`` checks them against each other)."""


_ENCODE = json.JSONEncoder(ensure_ascii=False, default=str).encode


def numbers_in(text: str) -> set[float]:
    """Every stand-alone number in ``text``, as floats (``24°C`` → 24.0; ``s1`` → nothing)."""
    return {float(match.replace(",", ".")) for match in _NUMBER.findall(text)}


def contradiction(answer: str | None, facts: Iterable[Fact], request: str = "") -> str | None:
    """Why ``answer`` disagrees with ``facts`` (a number none of them, nor the ``request``, contains), or ``None``.

    The sources are scanned cheapest first — the facts' summaries, the request, then the facts' values
    encoded as JSON — and only while a stated number is still unaccounted for: the numbers left over are
    the same as against all of them at once (a space keeps two texts' numbers apart, as a text's edge does).
    """
    unknown = numbers_in(answer or "")
    if not unknown:
        return None
    kept = tuple(facts)
    unknown -= numbers_in(" ".join([f"{fact.item} {fact.summary}" for fact in kept]))
    if unknown:
        unknown -= numbers_in(request)
    if unknown:
        unknown -= numbers_in(" ".join([_ENCODE(fact.value) for fact in kept]))
    if not unknown:
        return None
    shown = ", ".join(f"{n:g}" for n in sorted(unknown)[:3])
    return f"the answer states {shown}, which no verified fact contains"
