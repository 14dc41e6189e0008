"""The six pieces of evidence a project should be able to show, and the same fuse in three frameworks.

Both lists are data (``data/interview/evidence.json``); this module renders them.
"""

from __future__ import annotations

from agentloops.interview.content import EvidenceItem, FrameworkFuse, drill_language, evidence_file

Evidence = EvidenceItem
"""One piece of evidence and the notebook cell whose output shows it."""

EVIDENCE: tuple[Evidence, ...] = evidence_file().evidence
"""The six pieces of evidence, in the source article's order."""

FRAMEWORK_FUSES: tuple[FrameworkFuse, ...] = evidence_file().framework_fuses
"""The step cap under three names — each a fuse, and none of them a completion condition."""


def checklist_markdown(language: str | None = None) -> str:
    """The six pieces of evidence as a Markdown checklist, each linked to the notebook cell that produces it.

    In Chinese (``language="zh"``; default: the package's language) each item names the evidence and links
    the Chinese notebook's heading.
    """
    if drill_language(language, "checklist_markdown") == "zh":
        return "\n".join(f"- [ ] **{i}. {e.name.zh}** — `{e.call}` → {e.link('zh')}"
                         for i, e in enumerate(EVIDENCE, start=1))
    return "\n".join(f"- [ ] **{i}. {e.name.en}** ({e.name.zh}) — `{e.call}` → {e.link()}"
                     for i, e in enumerate(EVIDENCE, start=1))


def framework_rows(language: str | None = None) -> list[dict[str, str]]:
    """:data:`FRAMEWORK_FUSES` as table rows, in ``language`` (default: the package's language)."""
    chosen = drill_language(language, "framework_rows")
    return [fuse.row(chosen) for fuse in FRAMEWORK_FUSES]
