"""The README's tables are the code's output, and every notebook is listed.

Run ``python tests/test_readme.py`` to rewrite the generated blocks after a change.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def generated_blocks() -> dict[str, str]:
    """The README blocks computed from the package."""
    from agentloops import compare
    from agentloops.controller import evidence_index

    evidence = evidence_index().to_markdown()
    return {
        "compare": compare().render("markdown"),
        "stops": stop_vocabulary(),
        "evidence": evidence[evidence.index("|"):],
    }


def stop_vocabulary() -> str:
    """Each normalised finish reason: its kind, what the correct loop does with and without a tool call,
    and the provider values that map onto it — all read from :mod:`agentloops.stops` and ``correct()``."""
    from agentloops.criteria import correct
    from agentloops.providers import describe
    from agentloops.response import Response, ToolCall
    from agentloops.stops import FINISH_REASONS, KINDS, STOP_VALUES
    from agentloops.tables import markdown_table

    call = ToolCall(id="c1", name="read_file", arguments='{"path": "a.txt"}')
    rows = []
    for reason in FINISH_REASONS:
        raw = reason if reason != "unknown" else "something_new"
        plain = Response(content="text", finish_reason=reason, raw_finish_reason=raw)
        calling = plain.model_copy(update={"tool_calls": (call,)})
        values = dict.fromkeys(f"{v.format} `{v.value}`" for v in STOP_VALUES if v.finish_reason == reason)
        rows.append([f"`{reason}`", KINDS[reason], describe(correct(plain), False), describe(correct(calling), True),
                     ", ".join(values) or "anything not documented"])
    return markdown_table(["finish_reason", "kind", "no tool calls", "with a tool call", "provider values"], rows)


def _block(text: str, name: str) -> re.Match[str]:
    match = re.search(rf"(<!-- {name}:start[^>]*-->\n)(.*?)(<!-- {name}:end -->)", text, re.S)
    assert match, f"README.md has no {name} block"
    return match


def test_generated_blocks_match_the_code():
    text = README.read_text(encoding="utf-8")
    for name, expected in generated_blocks().items():
        assert _block(text, name).group(2).strip() == expected.strip(), (
            f"README's {name} block is stale: run `python tests/test_readme.py`")


def test_the_stop_statuses_named_are_the_controllers():
    from agentloops.controller import STOP_STATUSES

    text = README.read_text(encoding="utf-8")
    listed = re.search(r"first-class stop statuses\n\((.*?)\)", text, re.S).group(1)
    assert re.findall(r"`(\w+)`", listed) == list(STOP_STATUSES)


def _shipped_notebooks(chinese: bool) -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "notebooks").rglob("*.ipynb")
                  if ".ipynb_checkpoints" not in p.parts and (p.parts[len(ROOT.parts) + 1] == "zh") == chinese)


def test_every_notebook_is_listed():
    block = _block(README.read_text(encoding="utf-8"), "notebooks").group(2)
    missing = [n for n in _shipped_notebooks(chinese=False) if n not in block]
    assert not missing, f"README lists no line for {missing}"


def test_every_chinese_notebook_is_listed_in_the_chinese_readme():
    text = (ROOT / "README.zh.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- notebooks-zh:start.*?-->(.*?)<!-- notebooks-zh:end -->", text, re.S).group(1)
    chinese = _shipped_notebooks(chinese=True)
    assert chinese and [n for n in chinese if n not in block] == []
    listed = re.findall(r"\(notebooks/zh/([^)]+\.ipynb)\)", block)
    assert sorted(f"notebooks/zh/{n}" for n in listed) == chinese, "a listed notebook does not exist"


def test_both_readmes_say_how_to_open_the_chinese_edition():
    english, chinese = README.read_text(encoding="utf-8"), (ROOT / "README.zh.md").read_text(encoding="utf-8")
    for text in (english, chinese):
        assert "make lab-zh" in text and "agentloops lab --lang zh" in text and "agentloops app --lang zh" in text
        assert "README.zh.md" in text or "README.md" in text
    assert re.search(r"^lab-zh:", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)


def test_python_example_prints_what_it_says():
    """Lines of the README's Python block ending in ``# <literal>`` evaluate to that literal."""
    import ast

    text = README.read_text(encoding="utf-8")
    code = re.search(r"## In Python\n\n```python\n(.*?)```", text, re.S).group(1)
    namespace: dict[str, object] = {}
    checked = 0
    for statement in ast.parse(code).body:
        line = ast.get_source_segment(code, statement)
        comment = code.splitlines()[statement.end_lineno - 1].partition("#")[2].strip()
        if isinstance(statement, ast.Expr) and comment:
            try:
                expected = ast.literal_eval(comment)
            except (ValueError, SyntaxError):
                continue  # prose, not a value
            assert eval(line, namespace) == expected, line
            checked += 1
        else:
            exec(compile(ast.Module([statement], []), "README", "exec"), namespace)
    assert checked >= 4


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    text = README.read_text(encoding="utf-8")
    for name, body in generated_blocks().items():
        match = _block(text, name)
        text = text[: match.start(2)] + body.strip() + "\n" + text[match.end(2):]
    README.write_text(text, encoding="utf-8")
    print("README.md blocks rewritten")
