"""Provider-format scenario files: loading, raw bodies kept, one-line errors, the CLI and the correct loop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import agentloops
from agentloops import RunError, Scenario, ScenarioError, list_scenarios, load_scenario, run
from agentloops.cli import main
from agentloops.providers import FORMATS, STOP_TABLE, stop_values
from agentloops.providers.examples import example_for
from agentloops.resources import data_dir
from agentloops.run_errors import ERROR_CLASSES
from agentloops.scenario import scenario_from_dict
from agentloops.stops import ABORT_CODES

PROVIDER_DIR = data_dir() / "scenarios" / "providers"
ARTICLE = ("normal", "talk-and-call", "truncated", "talk-only")
TOOLS = {"read_file": "Meeting notes (42 lines in total)", "count_lines": "42"}


def provider_files() -> list[Path]:
    return sorted(PROVIDER_DIR.glob("*.json"))


@pytest.mark.parametrize("path", provider_files(), ids=lambda p: p.stem)
def test_every_provider_file_loads_and_keeps_its_raw_bodies(path: Path):
    data = json.loads(path.read_text(encoding="utf-8"))
    scenario = load_scenario(path)
    assert scenario.format == data["format"] and scenario.group == "provider"
    assert list(scenario.raw_responses) == data["responses"]
    assert len(scenario.responses) == len(scenario.raw_responses)
    assert scenario.name == data["name"] and scenario.name.startswith(scenario.format + "-")


def test_the_article_scenarios_exist_in_every_provider_shape():
    names = {s.name for s in list_scenarios(["provider"])}
    for format in FORMATS:
        for article in ARTICLE:
            assert f"{format}-{article}" in names


def test_each_provider_ships_a_truncation_a_filter_or_refusal_and_a_quirk():
    by_format: dict[str, list[Scenario]] = {}
    for scenario in list_scenarios(["provider"]):
        by_format.setdefault(scenario.format, []).append(scenario)
    for format, scenarios in by_format.items():
        raised = {run(s).error for s in scenarios}
        assert "truncated" in raised, format
        if format != "ollama":  # Ollama documents no filter or refusal value
            assert raised & {"content_filter", "refusal"}, format
    quirks = ["openai-chat-tool-calls-with-stop", "openai-responses-normal", "anthropic-pause-turn",
              "gemini-normal", "gemini-malformed-function-call", "ollama-normal"]
    for name in quirks:
        assert load_scenario(name).format in FORMATS


def test_article_figures_in_every_shape_under_the_correct_loop():
    for format in FORMATS:
        normal = run(f"{format}-normal")
        assert normal.tools_executed == ("read_file", "count_lines") and normal.outcome == "answer"
        assert run(f"{format}-talk-and-call").tools_executed == ("read_file",)
        assert run(f"{format}-truncated").error == "truncated"
        assert run(f"{format}-talk-only").outcome == "answer"


def test_the_correct_loop_executes_tools_on_gemini_stop_with_function_call():
    scenario = load_scenario("gemini-normal")
    assert [r.finish_reason for r in scenario.responses] == ["stop", "stop", "stop"]
    assert [len(r.tool_calls) for r in scenario.responses] == [1, 1, 0]
    record = run(scenario, "correct")
    assert record.tools_executed == ("read_file", "count_lines") and record.steps == 3
    assert run(scenario, "finish_reason").outcome == "premature_answer"


ABNORMAL = [row for row in STOP_TABLE if row.kind == "abnormal"]
CODES = ABORT_CODES


@pytest.mark.parametrize("row", ABNORMAL, ids=lambda r: f"{r.format}:{r.field}={r.value}")
@pytest.mark.parametrize("with_tool_call", [False, True], ids=["no-call", "with-call"])
def test_the_correct_loop_raises_on_every_abnormal_value_before_any_tool_runs(row, with_tool_call):
    stop = next(v for v in stop_values(row.format) if (v.field, v.value) == (row.field, row.value))
    bodies = [example_for(row.format, stop, with_tool_call=with_tool_call)]
    scenario = scenario_from_dict({"name": "abnormal", "title": "abnormal", "teaches": "x" * 41, "format": row.format,
                                   "tools": TOOLS, "responses": bodies})
    expected = ERROR_CLASSES[CODES[row.finish_reason]]
    with pytest.raises(expected) as caught:
        run(scenario, "correct", raise_errors=True)
    assert caught.value.record is not None and caught.value.record.tools_executed == ()


def write(tmp_path: Path, data: dict[str, Any], name: str = "bad.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def provider_data(name: str) -> dict[str, Any]:
    for file in provider_files():
        data = json.loads(file.read_text(encoding="utf-8"))
        if data["name"] == name:
            return data
    raise KeyError(name)


MALFORMED = [
    ("gemini-normal", lambda d: d["responses"][1]["candidates"][0].pop("finishReason"),
     r"bad\.json: responses\[1\]\.candidates\[0\]\.finishReason: missing; expected a string$"),
    ("openai-chat-normal", lambda d: d["responses"][2]["choices"][0].__setitem__("finish_reason", 7),
     r"bad\.json: responses\[2\]\.choices\[0\]\.finish_reason: expected a string; got the number 7$"),
    ("anthropic-normal", lambda d: d["responses"].__setitem__(0, ["not", "a", "body"]),
     r"bad\.json: responses\[0\]: expected a JSON object; got a list$"),
    ("ollama-normal", lambda d: d["responses"][0]["message"]["tool_calls"][0]["function"].__setitem__("name", ""),
     r"bad\.json: responses\[0\]\.message\.tool_calls\[0\]\.function\.name: expected a non-empty string"),
    ("openai-responses-normal", lambda d: d["responses"][0]["output"][0].__setitem__("name", "rm"),
     r"bad\.json: responses\[0\] \(tool call 1\) 'rm' is not a tool of this scenario "
     r"\(tools: count_lines, read_file\)$"),
    ("gemini-normal", lambda d: d.__setitem__("format", "bard"),
     r"bad\.json: format: expected one of 'agentloops', 'openai-chat', 'openai-responses', 'anthropic', "
     r"'gemini', 'ollama'; got 'bard'$"),
]


@pytest.mark.parametrize(("source", "edit", "message"), MALFORMED, ids=[f"{m[0]}-{i}" for i, m in enumerate(MALFORMED)])
def test_malformed_provider_files_fail_in_one_line(tmp_path: Path, source, edit, message):
    data = provider_data(source)
    edit(data)
    with pytest.raises(ScenarioError, match=message) as caught:
        load_scenario(write(tmp_path, data))
    assert "\n" not in str(caught.value)


def test_scenarios_built_in_code_convert_raw_bodies_too():
    data = provider_data("anthropic-pause-turn")
    scenario = Scenario.model_validate(data)
    assert scenario.responses[0].finish_reason == "pause" and scenario.raw_responses[0]["stop_reason"] == "pause_turn"
    assert Scenario.model_validate(scenario.model_dump()) == scenario  # already converted: not converted twice


def test_raw_bodies_belong_to_provider_formats_only():
    data = json.loads((data_dir() / "scenarios" / "01-normal.json").read_text(encoding="utf-8"))
    data["raw_responses"] = [{}]
    with pytest.raises(ScenarioError, match=r"raw_responses: only a provider format keeps raw bodies"):
        scenario_from_dict(data, "mine.json")


def test_cli_runs_and_compares_provider_files(capsys, tmp_path: Path):
    path = write(tmp_path, provider_data("ollama-normal"), "ollama.json")
    assert main(["run", str(path), "--criterion", "finish_reason", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["steps"] == 1 and record["outcome"] == "premature_answer"
    assert main(["compare", "--scenarios", f"{path},gemini-normal,anthropic-pause-turn", "--format", "csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert len(rows) == 1 + 3 * 4 and rows[1].startswith("ollama-normal,content,")
    assert main(["run", "openai-chat-refusal"]) == 0
    assert "error: refusal" in capsys.readouterr().out


def test_cli_reports_a_malformed_provider_file_in_one_line(capsys, tmp_path: Path):
    data = provider_data("gemini-normal")
    data["responses"][0]["candidates"][0]["content"]["parts"] = "oops"
    path = write(tmp_path, data)
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("agentloops: error: ") and "responses[0].candidates[0].content.parts: expected a list" in err


def test_the_python_api_runs_provider_files_unchanged(tmp_path: Path):
    path = write(tmp_path, provider_data("openai-chat-tool-calls-with-stop"), "compat.json")
    assert agentloops.run(path).tools_executed == ("read_file", "count_lines")
    assert agentloops.run(path, "finish_reason").steps == 1
    with pytest.raises(RunError):
        agentloops.run("openai-chat-truncated", raise_errors=True)
    table = agentloops.compare([path, "anthropic-pause-turn"])
    assert table.get("anthropic-pause-turn", "tool_calls").outcome == "abnormal_answer"
