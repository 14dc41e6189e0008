"""The language the package speaks: English, or Chinese on request — gettext catalogs, one per area.

Every sentence a learner reads (widget labels, chart titles, stop-status messages, the
checker's results, the quiz, the grader, the CLI) goes through :func:`_`. The English text is
the message id; the Chinese text comes from the compiled catalog
``agentloops/locale/zh/LC_MESSAGES/<domain>.mo`` (edit the ``.po`` beside it, then run
``python scripts/catalogs.py compile``). Text the *model* reads (the ``TASK STATE`` block,
tool results) and trace lines stay English: they are data, compared byte for byte in replays.

The language is, in order: the last :func:`set_language` call, else ``AGENTLOOPS_LANG``,
else the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``, ``LANGUAGE``), else English.

    >>> with speaking("zh"):
    ...     _("wasted calls")
    '空转调用'
    >>> with speaking("en"):
    ...     _("wasted calls")
    'wasted calls'

Module-level tables mark their texts with :func:`N_` (extracted, not translated) and
translate them where they are shown: ``_(TITLES[kind])``.
"""

from __future__ import annotations

import gettext
import os
import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

from agentloops.errors import UsageError

__all__ = [
    "DOMAINS",
    "ENV_VAR",
    "LANGUAGES",
    "N_",
    "Language",
    "LanguageError",
    "_",
    "language",
    "ngettext",
    "set_language",
    "shown_frame",
    "translate",
]

Language = Literal["en", "zh"]
LANGUAGES: tuple[Language, ...] = ("en", "zh")
ENV_VAR = "AGENTLOOPS_LANG"
LOCALE_DIR = Path(__file__).parent / "locale"
DOMAINS = ("core", "controller", "exercises", "interview", "cli")
"""One catalog per area of the package (``scripts/catalogs.py`` lists each domain's modules)."""

_LOCALE_VARS = ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE")
_ZH = re.compile(r"^(zh|cn|chinese)([-_.@].*)?$", re.IGNORECASE)
_EN = re.compile(r"^(en|c|posix|english)([-_.@].*)?$", re.IGNORECASE)
_chosen: Language | None = None

_Frame = TypeVar("_Frame", bound=Any)
"""A pandas DataFrame (pandas is not imported here: the package speaks without it)."""


class LanguageError(UsageError, ValueError):
    """A language the package does not speak."""


def normalize(tag: str) -> Language | None:
    """``"zh-CN"``, ``"zh_TW.UTF-8"``, ``"zh-Hant"`` → ``"zh"``; ``"en_GB"``, ``"C"`` → ``"en"``; else ``None``."""
    tag = tag.strip()
    if _ZH.match(tag):
        return "zh"
    if _EN.match(tag):
        return "en"
    return None


def set_language(tag: str | None) -> Language:
    """Speak ``tag`` (``"en"``, ``"zh"`` or a locale such as ``"zh_CN"``) from now on; ``None`` goes back to the
    environment's choice. Returns the language now in use."""
    global _chosen
    if tag is None:
        _chosen = None
        return language()
    chosen = normalize(str(tag))
    if chosen is None:
        raise LanguageError(f"language {tag!r}: expected one of {', '.join(LANGUAGES)} (or a locale such as zh_CN)")
    _chosen = chosen
    return chosen


class speaking:
    """Speak ``tag`` inside the ``with`` block (``None``: the environment's choice); the setting before is restored
    after, an explicit one or none. (``--json`` output is written in English inside one.)

    A class rather than a ``contextmanager`` generator: a log reader enters one per run it diagnoses, and a
    tag that already is a language (what :func:`language` returns) is taken as it is.
    """

    def __init__(self, tag: str | None) -> None:
        self._tag = tag
        self._before: Language | None = None

    def __enter__(self) -> Language:
        global _chosen
        self._before = _chosen
        tag = self._tag
        if tag in LANGUAGES:  # already normalised
            _chosen = cast(Language, tag)
            return _chosen
        return set_language(tag)

    def __exit__(self, *exc: object) -> None:
        global _chosen
        _chosen = self._before


def language() -> Language:
    """The language in use (see the module docstring for the order)."""
    if _chosen is not None:
        return _chosen
    value = os.environ.get(ENV_VAR, "")
    if value and normalize(value):
        return cast(Language, normalize(value))
    for name in _LOCALE_VARS:
        value = os.environ.get(name, "")
        if value:  # the first locale variable set decides, as in gettext
            return normalize(value.split(":")[0]) or "en"
    return "en"


@cache
def _catalog(lang: Language) -> gettext.NullTranslations:
    """Every domain's catalog for ``lang``, chained; English needs none (the ids are English)."""
    chain = gettext.NullTranslations()
    if lang == "en":
        return chain
    for domain in reversed(DOMAINS):
        try:
            found = gettext.translation(domain, LOCALE_DIR, languages=[lang])
        except FileNotFoundError:
            continue
        found.add_fallback(chain)
        chain = found
    return chain


def _(message: str) -> str:
    """``message`` in the language in use (unchanged when no catalog has it)."""
    if not message or language() == "en":
        return message
    return _catalog(language()).gettext(message)


def translate(message: str, lang: Language) -> str:
    """``message`` in ``lang`` whatever the language in use (the grader answers in the answer's language)."""
    return message if lang == "en" or not message else _catalog(lang).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form for ``n``, in the language in use."""
    if language() == "en":
        return singular if n == 1 else plural
    return _catalog(language()).ngettext(singular, plural, n)


class Phrase(str):
    """English text that remembers its template and fields, so it can also be shown in the learner's language.

    It *is* the English string — compared, hashed, pickled, written to JSON and diffed as plain text — and
    :meth:`shown` formats the translated template with the same fields (a field that is itself a phrase is
    shown in turn). Text that must stay data and still be read by a learner (a criterion's reason, what a
    call sent, a log reader's error) is built as one. ``str()``, ``+`` or an f-string of a phrase give plain
    English text: keep the phrase itself, or nest it as a field of another one.

        >>> reason = Phrase(N_("{n} tool call(s) to run"), n=2)
        >>> reason == "2 tool call(s) to run"
        True
    """

    template: str
    fields: Mapping[str, object]

    def __new__(cls, template: str, /, **fields: object) -> Phrase:
        self = super().__new__(cls, template.format(**fields) if fields else template)
        self.template, self.fields = template, fields
        return self

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython shows a phrase (alone or inside a list, a tuple, a dict) in the language in use; ``repr()`` and
        ``str()`` stay English."""
        printer.text(repr(self.shown()))

    def shown(self) -> str:
        """The text in the language in use (in English: the text itself)."""
        if not self.fields:
            return self.shown_template()
        return self.shown_template().format(
            **{k: shown(v) if isinstance(v, Phrase) else v for k, v in self.fields.items()})

    def shown_template(self) -> str:
        """The template in the language in use (the fields still to fill in)."""
        return _(self.template)

    def __repr__(self) -> str:
        """How a notebook prints a phrase inside a list or tuple: the shown text (in English, the text itself)."""
        return repr(self.shown())


def shown(text: str) -> str:
    """``text`` as a learner reads it: a :class:`Phrase` in the language in use; any other text through the
    catalog (a message marked with :func:`N_` elsewhere — a scenario's words, a reason read back from a saved
    run — comes back translated; text no catalog has comes back unchanged)."""
    return text.shown() if isinstance(text, Phrase) else _(text)


def shown_frame(frame: _Frame) -> _Frame:
    """A copy of the pandas ``frame`` to display in the language in use: its column, row and axis labels through the
    catalog, and every phrase among its cells shown. The frame itself keeps its English names and data, so a later
    cell can still select and compare on them; a cell that is plain text is data and stays as it is."""

    def label(value: object) -> object:
        return shown(value) if isinstance(value, str) else value

    def cell(value: object) -> object:
        return value.shown() if isinstance(value, Phrase) else value

    shown_cells = frame.apply(lambda column: column.map(cell)).rename(index=label, columns=label)
    return shown_cells.rename_axis(index=label(frame.index.name), columns=label(frame.columns.name))


class Said(Phrase):
    """English text and its wording in the learner's language, both made when it was said (a sentence built in
    two languages at once, as a diagnose finding is): the English is the data, :meth:`shown` the other wording."""

    wording: str

    def __new__(cls, english: str, wording: str) -> Said:
        self = str.__new__(cls, english)
        self.template, self.fields, self.wording = english, {}, wording
        return self

    def shown(self) -> str:
        """The wording made when the text was said (in English: the English)."""
        return str.__str__(self) if language() == "en" else self.wording


class Joined(Phrase):
    """Parts joined by a separator, which is shown in the language in use too (``"; "`` is ``"；"`` in Chinese)."""

    separator: str = ", "

    def shown_template(self) -> str:
        """The template with the separator in the language in use (its catalog entry, such as ``"; "``)."""
        return _(self.separator).join(f"{{p{i}}}" for i in range(len(self.fields)))


def joined(parts: Sequence[str], separator: str = ", ") -> Phrase:
    """``parts`` joined by ``separator``, as one phrase: each part that is a phrase is shown in turn, and the
    separator is shown through the catalog (``"; "`` → ``"；"``, ``", "`` → ``"，"``)."""
    phrase = Joined(separator.join(f"{{p{i}}}" for i in range(len(parts))), **{f"p{i}": p for i, p in enumerate(parts)})
    phrase.separator = separator
    return phrase


def N_(message: str) -> str:
    """Mark ``message`` for the catalog without translating it (for tables built at import time)."""
    return message


SEPARATORS = (N_(", "), N_("; "))
"""The separators :func:`joined` is called with, in the catalog."""
