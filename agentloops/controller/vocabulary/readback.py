"""Read a trace's English lines back in the learner's language.

A trace line (a decision, a state delta, an observation, a stop reason) is English data, compared byte for
byte in replays; once it is written, or read back from a file, it is plain text — the
:class:`~agentloops.i18n.Phrase` it may have been is gone. Every such line is built from a template marked for
the catalog (with ``N_``, or registered with :func:`readable`); :func:`read_back` matches a line against the
templates with fields and shows the translated template with the same fields, each read back in turn (so
``continue: {reason}`` shows its reason in Chinese too). A line that matches nothing is shown as it is.

    >>> from agentloops.i18n import speaking
    >>> with speaking("zh"):
    ...     read_back("stop:succeeded (completion_condition_met)")
    '停止：succeeded（completion_condition_met）'
"""

from __future__ import annotations

import gettext
import re
from collections.abc import Iterable, Mapping
from functools import cache

from agentloops.i18n import N_, Language, Phrase, Said, _, _catalog, language

_TEMPLATES: list[str] = [N_("{code}: {reason}")]
"""Templates registered with :func:`readable` (and the one every route's and missing item's line is built with:
``fallback: empty here…``, ``empty: …``), read back even when they have fewer than two words of their own."""
_FIELD = re.compile(r"\{(\w+)(?:![rsa])?(?::[^{}]*)?\}")
_SPEC = re.compile(r"\{(\w+):[^{}]*\}")
_CONVERTED = re.compile(r"\{(\w+)(?:![rsa]|![rsa]:[^{}]*|:[^{}]*)\}")
"""A field's format spec (and its conversion: a field matched in a line already holds the repr)."""
_WORDS = re.compile(r"[A-Za-z]{2,}")
_CJK = re.compile(r"[\u4e00-\u9fff]")
"""A catalog's template reads a line back only with two words of its own (``{a} of {b}`` would read back anything
with "of" in it); a template registered with :func:`readable` always does."""


def readable(template: str) -> str:
    """Register ``template`` (marked with ``N_``) as one a trace line may be read back with; returns it."""
    if template not in _TEMPLATES:
        _TEMPLATES.append(template)
        _patterns.cache_clear()
        _read_back.cache_clear()
    return template


def _msgids(lang: Language) -> set[str]:
    """Every message id of ``lang``'s catalogs (all domains)."""
    ids: set[str] = set()
    chain: gettext.NullTranslations | None = _catalog(lang)
    while chain is not None:
        ids |= {key for key in getattr(chain, "_catalog", {}) if isinstance(key, str)}
        chain = getattr(chain, "_fallback", None)
    return ids


@cache
def _patterns(lang: Language) -> tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...]:
    """(template, its literal parts, its pattern) for each template with a field, longest literal text first (a
    field matches as little as it can; one right beside another, ``{tool}{args}``, holds no space)."""
    found = []
    for template in {*_TEMPLATES, *(t for t in _msgids(lang) if len(_WORDS.findall(_FIELD.sub(" ", t))) >= 2)}:
        parts = _FIELD.split(template)
        if len(parts) == 1:
            continue
        regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>\\S+?)" if _beside_field(parts, i)
                        else f"(?P<{p}>.+?)" for i, p in enumerate(parts))
        try:
            found.append((template, tuple(parts[::2]), re.compile(regex, re.S)))
        except re.error:  # a field named twice
            continue
    return tuple(sorted(found, key=lambda t: (-len("".join(t[1])), t[0])))


def _beside_field(parts: list[str], i: int) -> bool:
    """Field ``parts[i]`` has another field right before or after it (no literal text between them)."""
    return (i + 2 < len(parts) and not parts[i + 1]) or (i >= 3 and not parts[i - 1])


def read_back(text: object) -> str:
    """``text`` (a trace line, or any value) as the learner reads it; in English, ``str(text)``."""
    if not isinstance(text, str):
        return str(text)
    if language() == "en" or not text:
        return str.__str__(text)
    if isinstance(text, Said):  # its other wording was made when it was said
        return text.shown()
    if isinstance(text, Phrase):  # its fields read back too, a plain English line among them
        fields = {k: read_back(v) if isinstance(v, str) else v for k, v in text.fields.items()}
        return _formatted(text.shown_template(), fields) if fields else text.shown_template()
    return _read_back(text, language())


@cache
def _read_back(text: str, lang: Language) -> str:
    """One word is an id or an API value (kept) unless registered; a sentence is looked up in the catalog, then
    matched against the templates (those holding a ``"; "`` first; a match whose field spans a ``"; "`` and reads
    back to no Chinese is a wrong split, skipped), then read as a list of lines joined by ``"; "`` (a state delta's
    changes) when every one of them reads back in Chinese."""
    if text in _TEMPLATES:
        return _(text)
    if not any(c.isspace() for c in text):
        return text
    translated = _(text)
    if translated != text:
        return translated
    patterns = _patterns(lang)
    found = _matched(text, lang, sorted(patterns, key=lambda p: "; " not in "".join(p[1])))
    if found is not None:
        return found
    if "; " in text:
        parts = text.split("; ")
        shown_parts = [_read_back(part, lang) for part in parts]
        if all(_CJK.search(shown) for shown in shown_parts):
            return _("; ").join(shown_parts)
    return text


def _matched(text: str, lang: Language, patterns: Iterable[tuple[str, tuple[str, ...], re.Pattern[str]]]
             ) -> str | None:
    """``text`` through the first of ``patterns`` it matches (its fields read back), or ``None``."""
    for template, literal, pattern in patterns:
        if not (text.startswith(literal[0]) and text.endswith(literal[-1]) and all(p in text for p in literal)):
            continue
        match = pattern.fullmatch(text)
        if match:
            fields = {k: _read_back(v, lang) for k, v in match.groupdict().items()}
            if any("; " in v and not _CJK.search(fields[k]) for k, v in match.groupdict().items()):
                continue  # a field spanning two lines that nothing reads back: the template split the list wrongly
            return _formatted(_(template), fields, _CONVERTED)
    return None


def _formatted(template: str, fields: Mapping[str, object], spec: re.Pattern[str] = _SPEC) -> str:
    """``template`` filled in; a field read back as text drops its conversion and format spec (``{seconds:g}`` of
    ``"5"``, ``{name!r}`` of ``"'B'"``: the line already holds the repr)."""
    return spec.sub(lambda m: f"{{{m.group(1)}}}" if isinstance(fields.get(m.group(1)), str) else m.group(0),
                     template).format(**fields)
