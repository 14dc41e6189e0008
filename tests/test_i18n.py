"""The message catalogs: the language setting, the lookup chain, and catalogs that are complete and compiled."""

from __future__ import annotations

import ast
import gettext
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from agentloops import i18n
from agentloops.errors import UsageError
from agentloops.i18n import DOMAINS, LOCALE_DIR, LanguageError, _, language, ngettext, set_language, translate

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(?:[:!][^{}]*)?\}|%\(?[A-Za-z_]*\)?[sdifr]")


def _catalogs_script():  # scripts/ is not a package: load it by path
    spec = importlib.util.spec_from_file_location("catalogs", ROOT / "scripts" / "catalogs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["catalogs"] = module
    spec.loader.exec_module(module)
    return module


catalogs = _catalogs_script()


@pytest.fixture(autouse=True)
def _english_after(monkeypatch: pytest.MonkeyPatch):
    for name in ("AGENTLOOPS_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        monkeypatch.delenv(name, raising=False)
    yield
    set_language(None)


@pytest.mark.parametrize(("tag", "expected"), [
    ("zh", "zh"), ("zh-CN", "zh"), ("zh_TW.UTF-8", "zh"), ("zh-Hant", "zh"), ("ZH", "zh"), ("cn", "zh"),
    ("en", "en"), ("en_GB.UTF-8", "en"), ("C", "en"), ("POSIX", "en"), ("C.UTF-8", "en"),
    ("fr", None), ("", None), ("zhx", None), ("english-ish", "en"),
])
def test_normalize(tag: str, expected: str | None) -> None:
    assert i18n.normalize(tag) == expected


def test_the_explicit_setting_wins_then_the_variable_then_the_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    assert language() == "en"
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert language() == "zh"
    monkeypatch.setenv("LC_ALL", "en_US.UTF-8")  # the first locale variable set decides
    assert language() == "en"
    monkeypatch.setenv("AGENTLOOPS_LANG", "zh")
    assert language() == "zh"
    monkeypatch.setenv("AGENTLOOPS_LANG", "klingon")  # an unknown value is ignored, not fatal
    assert language() == "en"
    assert set_language("zh") == "zh" and language() == "zh"
    assert set_language(None) == "en"


def test_an_unknown_language_is_one_clear_line() -> None:
    with pytest.raises(LanguageError) as caught:
        set_language("fr")
    assert isinstance(caught.value, UsageError) and "\n" not in str(caught.value)
    assert "'fr'" in str(caught.value) and "zh" in str(caught.value)
    assert language() == "en", "a refused setting changes nothing"


def _entries():
    """(domain, msgid, msgstr) of every compiled message."""
    for domain in DOMAINS:
        path = LOCALE_DIR / "zh" / "LC_MESSAGES" / f"{domain}.mo"
        with path.open("rb") as handle:
            catalog = gettext.GNUTranslations(handle)
        for key, value in catalog._catalog.items():  # type: ignore[attr-defined]
            if isinstance(key, str) and key:
                yield domain, key, value


def test_every_compiled_message_is_found_through_the_chain_in_chinese_only() -> None:
    entries = list(_entries())
    assert entries, "the catalogs are empty"
    by_id: dict[str, set[str]] = {}
    for _domain, key, value in entries:
        by_id.setdefault(key, set()).add(value)
    assert not {k: v for k, v in by_id.items() if len(v) > 1}, "one English text, two Chinese ones"
    set_language("zh")
    assert [k for _d, k, v in entries if _(k) != v] == []
    assert [k for _d, k, v in entries if translate(k, "zh") != v] == []
    set_language("en")
    assert [k for _d, k, _v in entries if _(k) != k or translate(k, "en") != k] == []


def test_ngettext_and_unknown_messages() -> None:
    set_language("zh")
    assert _("a sentence no catalog has") == "a sentence no catalog has"
    assert _("") == ""
    set_language("en")
    assert ngettext("{n} call", "{n} calls", 1) == "{n} call"
    assert ngettext("{n} call", "{n} calls", 2) == "{n} calls"


def test_catalogs_are_complete_and_compiled() -> None:
    problems = catalogs.problems()
    assert not problems, "\n".join(problems[:30]) + (f"\n… and {len(problems) - 30} more" if len(problems) > 30 else "")


def test_every_module_belongs_to_exactly_one_domain() -> None:
    modules = catalogs.domain_modules()
    listed = [path for paths in modules.values() for path in paths]
    assert len(listed) == len(set(listed))
    assert set(listed) == set((ROOT / "agentloops").rglob("*.py"))
    assert set(modules) == set(DOMAINS)


def test_translations_keep_their_placeholders() -> None:
    broken = [(d, k, v) for d, k, v in _entries() if sorted(PLACEHOLDER.findall(k)) != sorted(PLACEHOLDER.findall(v))]
    assert not broken, broken[:5]


def _bad_calls(source: str) -> list[str]:
    """``_()`` / ``N_()`` calls whose text cannot be looked up: an f-string, a concatenation, a formatted string."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "N_"):
            arg = node.args[0] if node.args else None
            if isinstance(arg, (ast.JoinedStr, ast.BinOp, ast.Call)) or (node.func.id == "N_" and not (
                    isinstance(arg, ast.Constant) and isinstance(arg.value, str))):
                bad.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
    return bad


def test_no_message_is_built_before_it_is_looked_up() -> None:
    assert _bad_calls('_(f"{n} calls")') and _bad_calls('_("a" + b)') and _bad_calls('_("{n}".format(n=1))')
    assert _bad_calls("N_(name)") and not _bad_calls('_("{n} calls").format(n=n)') and not _bad_calls("_(TITLES[k])")
    found = {path.relative_to(ROOT).as_posix(): _bad_calls(path.read_text(encoding="utf-8"))
             for path in (ROOT / "agentloops").rglob("*.py")}
    assert not {k: v for k, v in found.items() if v}


def test_speaking_restores_the_setting_before_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentloops.i18n import speaking

    monkeypatch.setenv("AGENTLOOPS_LANG", "zh")
    with speaking("en") as inside:
        assert inside == "en" and language() == "en"
    assert language() == "zh", "no explicit choice before: the environment decides again"
    set_language("en")
    with speaking("zh"):
        assert language() == "zh"
    assert language() == "en"
    with pytest.raises(LanguageError), speaking("fr"):
        pass
    assert language() == "en"


def test_the_module_examples_hold() -> None:
    import doctest

    assert doctest.testmod(i18n).failed == 0


def test_shown_frame_shows_labels_and_phrases_in_chinese_and_keeps_the_data() -> None:
    import pandas as pd

    from agentloops.i18n import Phrase, Said, shown_frame, speaking

    frame = pd.DataFrame({"limit": [Phrase("finished"), "finished"], "detail": [Said("English", "中文"), "x"]})
    with speaking("zh"):
        shown = shown_frame(frame)
    assert list(shown.columns) == ["上限", "详情"]
    assert list(shown["上限"]) == ["结束", "finished"]  # a phrase is shown; plain text is data and stays
    assert list(shown["详情"]) == ["中文", "x"]
    assert list(frame.columns) == ["limit", "detail"] and frame.iloc[0, 0] == "finished"  # the frame is untouched
    with speaking("en"):
        assert shown_frame(frame).equals(frame)
