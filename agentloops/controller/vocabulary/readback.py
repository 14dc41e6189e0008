"""Read a trace's English lines back in the learner's language.

A trace line (a decision, a state delta, an observation) is English data, compared byte for byte in replays;
once it is written, or read back from a file, it is plain text — the :class:`~agentloops.i18n.Phrase` it
may have been is gone. The controller builds those lines from templates registered here with
:func:`readable`; :func:`read_back` matches a line against them and shows the translated template with the
same fields, each read back in turn (so ``continue: {reason}`` shows its reason in Chinese too). A line
that matches no template is shown through the catalog, or as it is.

    >>> from agentloops.i18n import speaking
    >>> with speaking("zh"):
    ...     read_back("stop:succeeded (completion_condition_met)")
    '停止：succeeded（completion_condition_met）'
"""

from __future__ import annotations

import re
from functools import cache

from agentloops.i18n import Phrase, _, language

_TEMPLATES: list[str] = []
_FIELD = re.compile(r"\{(\w+)\}")


def readable(template: str) -> str:
    """Register ``template`` (marked with ``N_``) as one a trace line may be read back with; returns it."""
    if template not in _TEMPLATES:
        _TEMPLATES.append(template)
        _patterns.cache_clear()
        _read_back.cache_clear()
    return template


@cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each template with fields and its pattern, longest literal text first (a field matches as little as it
    can)."""
    def pattern(template: str) -> re.Pattern[str]:
        parts = _FIELD.split(template)
        regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)" for i, p in enumerate(parts))
        return re.compile(regex, re.S)

    literal = {t: len(_FIELD.sub("", t)) for t in _TEMPLATES if _FIELD.search(t)}
    return tuple((t, pattern(t)) for t in sorted(literal, key=lambda t: -literal[t]))


def read_back(text: object) -> str:
    """``text`` (a trace line, or any value) as the learner reads it; in English, ``str(text)``."""
    if isinstance(text, Phrase):
        return text.shown()
    if not isinstance(text, str):
        return str(text)
    if language() == "en" or not text:
        return text
    return _read_back(text, language())


@cache
def _read_back(text: str, _lang: str) -> str:
    """One word is an id or an API value (kept) unless registered; a sentence is looked up in the catalog, then
    read as a list of lines joined by ``"; "`` (a state delta's changes) when every one of them reads back, then
    matched against the templates."""
    if text in _TEMPLATES:
        return _(text)
    if not any(c.isspace() for c in text):
        return text
    translated = _(text)
    if translated != text:
        return translated
    if "; " in text:
        parts = text.split("; ")
        shown_parts = [_read_back(part, _lang) for part in parts]
        if all(shown != part for shown, part in zip(shown_parts, parts, strict=True)):
            return _("; ").join(shown_parts)
    for template, pattern in _patterns():
        match = pattern.fullmatch(text)
        if match:
            fields = {k: _read_back(v, _lang) for k, v in match.groupdict().items()}
            return _(template).format(**fields)
    return text
