"""Keep the message catalogs in step with the code: extract, update, compile, check (Babel).

    python scripts/catalogs.py update    # add new messages to every .po (translations kept)
    python scripts/catalogs.py compile   # .po → .mo (the .mo files ship in the wheel)
    python scripts/catalogs.py check     # exit 1 if a message lacks a translation or a .mo is stale

Each domain (see :data:`agentloops.i18n.DOMAINS`) is the set of modules listed in
:data:`SOURCES`; a module belongs to exactly one domain (``tests/test_i18n.py`` checks).
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Iterator
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "agentloops"
LOCALES = ("zh",)
HEADER = ("# agentloops: the {domain} messages in {locale}. Write each msgstr; keep {{placeholders}} as they are.\n"
          "# Then: python scripts/catalogs.py compile (tests/test_i18n.py checks both files).")
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}

SOURCES: dict[str, tuple[str, ...]] = {
    "core": ("*.py", "diagnose/*.py", "frameworks/*.py", "plots/*.py", "providers/*.py", "widgets/*.py"),
    "controller": ("controller/*.py", "controller/*/*.py", "controller/*/*/*.py"),
    "exercises": ("exercises/*.py",),
    "interview": ("interview/*.py",),
    "cli": ("cli.py", "terminal.py", "arguments.py", "doctor.py", "lab.py", "controller/teaching/cli.py"),
}
"""Module globs per domain, under ``agentloops/``; a specific domain takes a module from ``core``/``controller``."""


def domain_modules() -> dict[str, list[Path]]:
    """Each domain's modules: the most specific glob wins, so each module is in exactly one domain."""
    owner: dict[Path, str] = {}
    for domain, globs in SOURCES.items():
        for pattern in globs:
            for path in sorted(PACKAGE.glob(pattern)):
                if domain in ("core", "controller") and path in owner:
                    continue
                owner[path] = domain
    modules: dict[str, list[Path]] = {domain: [] for domain in SOURCES}
    for path, domain in sorted(owner.items()):
        modules[domain].append(path)
    return modules


def extract(domain: str) -> Catalog:
    """The messages the code of ``domain`` asks for, with where each one is used."""
    catalog = Catalog(domain=domain, project="agentloops", charset="utf-8")
    for path in domain_modules()[domain]:
        for line, message, comments, context in _messages(path):
            catalog.add(message, locations=[(str(path.relative_to(ROOT)), line)], auto_comments=comments,
                        context=context)
    return catalog


def _messages(path: Path) -> Iterator[tuple[int, str | tuple[str, ...], list[str], str | None]]:
    yield from extract_from_file("python", str(path), keywords=KEYWORDS, comment_tags=("TRANSLATORS:",))


def po_path(locale: str, domain: str) -> Path:
    return PACKAGE / "locale" / locale / "LC_MESSAGES" / f"{domain}.po"


def load(locale: str, domain: str) -> Catalog:
    path = po_path(locale, domain)
    if not path.exists():
        return Catalog(locale=locale, domain=domain, project="agentloops", charset="utf-8")
    with path.open("rb") as handle:
        return read_po(handle, locale=locale, domain=domain)


def update(locale: str, domain: str) -> Path:
    """Merge the extracted messages into the ``.po`` (kept translations, new ones empty, gone ones dropped)."""
    catalog = load(locale, domain)
    template = extract(domain)
    template.creation_date = catalog.creation_date  # an update that adds nothing changes nothing
    catalog.update(template, no_fuzzy_matching=True)
    catalog.header_comment = HEADER.format(domain=domain, locale=locale)
    catalog.fuzzy = False
    catalog.obsolete.clear()
    path = po_path(locale, domain)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        write_po(handle, catalog, width=100, omit_header=False, sort_output=False, ignore_obsolete=True)
    return path


def compiled(catalog: Catalog) -> bytes:
    """The ``.mo`` bytes, without untranslated messages (an empty plural would otherwise print as "")."""
    done = Catalog(locale=catalog.locale, domain=catalog.domain, project="agentloops", charset="utf-8")
    done.mime_headers = catalog.mime_headers
    for message in list(catalog)[1:]:
        strings = message.string if isinstance(message.string, (tuple, list)) else (message.string,)
        if all(strings) and not message.fuzzy:
            done[message.id] = message
    buffer = io.BytesIO()
    write_mo(buffer, done, use_fuzzy=False)
    return buffer.getvalue()


def compile_all() -> list[Path]:
    written = []
    for locale in LOCALES:
        for domain in SOURCES:
            path = po_path(locale, domain).with_suffix(".mo")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(compiled(load(locale, domain)))
            written.append(path)
    return written


def problems() -> list[str]:
    """Untranslated, fuzzy or missing messages, and stale ``.mo`` files — one line each."""
    found: list[str] = []
    for locale in LOCALES:
        for domain in SOURCES:
            catalog = load(locale, domain)
            wanted = extract(domain)
            for message in wanted:
                if not message.id:
                    continue
                have = catalog.get(message.id, message.context)
                strings = have.string if have is not None else None
                texts = strings if isinstance(strings, (tuple, list)) else (strings,)
                if have is None or have.fuzzy or not all(texts):
                    where = message.locations[0] if message.locations else ("?", 0)
                    ident = message.id if isinstance(message.id, str) else message.id[0]
                    found.append(f"{locale}/{domain}: no translation for {ident!r} ({where[0]}:{where[1]})")
            mo = po_path(locale, domain).with_suffix(".mo")
            if not mo.exists() or mo.read_bytes() != compiled(catalog):
                found.append(f"{locale}/{domain}: {mo.relative_to(ROOT)} is missing or older than its .po "
                             "(run: python scripts/catalogs.py compile)")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("update", "compile", "check"))
    args = parser.parse_args(argv)
    if args.action == "update":
        for locale in LOCALES:
            for domain in SOURCES:
                print(update(locale, domain).relative_to(ROOT))
        return 0
    if args.action == "compile":
        for path in compile_all():
            print(path.relative_to(ROOT))
        return 0
    found = problems()
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
