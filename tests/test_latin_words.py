"""The check that reads a Chinese notebook's outputs for English (tests/latin_words.py), on synthetic outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.latin_words import allowed_words, api_values, english_words, glossary_table, notebook_words

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def notebook(*outputs: dict, widgets: dict | None = None) -> dict:
    """An executed notebook: one code cell holding ``outputs``, and the widget state nbclient saves."""
    nb: dict = {"cells": [{"cell_type": "markdown", "source": "The prose is checked elsewhere."},
                          {"cell_type": "code", "source": "print('ignored: code')", "outputs": list(outputs)}],
                "metadata": {}}
    if widgets is not None:
        nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": widgets}}
    return nb


def stream(text: str, name: str = "stdout") -> dict:
    return {"output_type": "stream", "name": name, "text": text}


def shown(data: dict) -> dict:
    return {"output_type": "display_data", "data": data, "metadata": {}}


def words(nb: dict, name: str = "01-normal-run.ipynb") -> list[str]:
    return [w.word for w in notebook_words(nb, name)]


def test_an_english_sentence_is_counted_word_by_word() -> None:
    assert words(notebook(stream("结果：the model declared success without it\n"))) == [
        "the", "model", "declared", "success", "without", "it"]


@pytest.mark.parametrize("text", [
    "第 2 轮：`finish_reason` 为 `stop`",                     # backticks
    "停止状态 waiting_for_user，原因码 budget:retries",        # ids: underscore, colon
    "场景 talk-and-call，工具 read_file，调用 call_1",           # ids: hyphen, underscore, digit
    "finish_reason=stop，状态 succeeded，结果 cancelled",         # API values
    "用 OpenAI 和 Anthropic 的格式，每次 120 Token",              # names the glossary keeps
    "调用 my_decide(response) 试试",                             # a call is code
    "def stop(response):\n    return not response.tool_calls\n",  # printed source
    "[(1, 'call'), {'role': 'user'}]",                           # a repr: keys and one-word values are ids
    "天气：24°C，晴\\n下一行",                                      # a unit, an escaped newline
])
def test_code_ids_api_values_and_glossary_names_pass(text: str) -> None:
    assert words(notebook(stream(text))) == []


def test_the_sentences_inside_a_printed_value_are_read() -> None:
    assert words(notebook(shown({"text/plain": "[(2, 'its own last reply')]"}))) == ["its", "own", "last", "reply"]


def test_html_tables_are_read_without_their_code_and_style() -> None:
    # a column's English name counts too: the Chinese edition shows it with a Chinese header
    table = ("<style>td {color: red}</style><table><tr><th>判据</th><th>outcome</th></tr>"
             "<tr><td><code>naive loop</code></td><td>ends as hit cap</td></tr></table>")
    assert words(notebook(shown({"text/html": table, "text/plain": "ignored when HTML is there"}))) == [
        "outcome", "ends", "as", "hit", "cap"]


def test_stderr_and_markdown_outputs_are_read_but_a_charts_repr_is_not() -> None:
    nb = notebook(stream("warning: slow\n", "stderr"), shown({"text/markdown": "**Done** `ok`"}),
                  shown({"image/png": "iVBOR", "text/plain": "<Figure size 640x480 with 1 Axes>"}))
    assert words(nb) == ["warning", "slow", "Done"]


def test_widget_labels_values_options_and_captured_outputs_are_read() -> None:
    state = {
        "a1": {"model_name": "DropdownModel", "state": {"description": "场景", "_options_labels": ["yes", "否"]}},
        "b2": {"model_name": "HTMLModel", "state": {"value": "<b>Budget</b> <code>steps</code>"}},
        "c3": {"model_name": "OutputModel", "state": {"outputs": [stream("Stopped early\n")]}},
        "d4": {"model_name": "ButtonModel", "state": {"description": "运行", "tooltip": "Run it"}},
    }
    nb = notebook(shown({WIDGET_VIEW: {"model_id": "b2"}, "text/plain": "HTML(value='…')"}), widgets=state)
    assert sorted(words(nb)) == sorted(["yes", "Budget", "Stopped", "early", "Run", "it"])


def test_the_allow_list_counts_only_in_the_notebooks_it_names(tmp_path: Path) -> None:
    glossary = tmp_path / "glossary.md"
    glossary.write_text(
        "## Names kept in Latin letters · 保留原文的名字\n\n| 名字 | 是什么 |\n|---|---|\n| Vertex AI | 服务商 |\n\n"
        "## Latin words allowed in outputs · 输出里允许的拉丁字母词\n\n| 词 | 只在 | 理由 |\n|---|---|---|\n"
        "| is required | 03-truncated.ipynb | 服务商原样返回的报错 |\n| bug | * | 照写 |\n", encoding="utf-8")
    in_03, in_04 = allowed_words("03-truncated.ipynb", glossary), allowed_words("04-correct-loop.ipynb", glossary)
    assert all(word in in_03 for word in ("Vertex", "AI", "bug", "Bug", "is", "required"))
    assert all(word in in_04 for word in ("Vertex", "AI", "bug")) and not any(w in in_04 for w in ("is", "required"))
    assert english_words("content is required", in_03) == []
    assert [w for w, _ in english_words("content is required", in_04)] == ["is", "required"]


def test_a_cell_scoped_entry_counts_in_that_cell_only(tmp_path: Path) -> None:
    glossary = tmp_path / "glossary.md"
    glossary.write_text("## Latin words allowed in outputs\n\n| 词 | 只在 | 理由 |\n|---|---|---|\n"
                        "| * | 17.ipynb#keep | 故意用英文 |\n| Your question | 17.ipynb#ask | 原题 |\n", encoding="utf-8")
    nb = notebook()
    nb["cells"] = [{"cell_type": "code", "id": cell_id, "source": "", "outputs": [stream("Your question, in English")]}
                   for cell_id in ("keep", "ask", "other")]
    found = notebook_words(nb, "17.ipynb", allowed_words("17.ipynb", glossary))
    assert [(w.where.split()[2], w.word) for w in found] == [
        ("(ask)", "in"), ("(ask)", "English"), ("(other)", "Your"), ("(other)", "question"), ("(other)", "in"),
        ("(other)", "English")]
    assert len(notebook_words(nb, "18.ipynb", allowed_words("18.ipynb", glossary))) == 12


def test_the_glossary_gives_every_allowed_word_a_reason() -> None:
    rows = glossary_table("Latin words allowed in outputs")
    assert rows, "the allow-list section is missing from notebooks/glossary.md"
    assert all(len(cells) == 3 and cells[0] and cells[1] and cells[2] for cells in rows), rows
    assert glossary_table("Names kept in Latin letters")


def test_api_values_pass_only_as_spelt() -> None:
    allowed = allowed_words("00-start-here.ipynb")
    assert "stop" in allowed and "Stop" not in allowed and "Done" not in allowed
    assert "token" in allowed and "TOKEN" in allowed  # a name, in any case


def test_api_values_are_the_packages_own() -> None:
    values = api_values()
    assert {"stop", "length", "succeeded", "handed_off", "budget:retries", "timeout", "normal", "correct"} <= values
    assert {"compactor", "safe_memory", "library", "archive", "fetch"} <= values  # a compaction's memory; backends
    assert not {"the", "is", "model", "declared"} & values
