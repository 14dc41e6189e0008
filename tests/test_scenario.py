"""Scenario files: the shipped ones load, malformed ones fail in one clear line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentloops import Scenario, ScenarioError, ScenarioNotFound, list_scenarios, load_scenario, scenario_names
from agentloops.resources import data_dir

NORMAL = json.loads((data_dir() / "scenarios" / "01-normal.json").read_text(encoding="utf-8"))


def edited(change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    data = json.loads(json.dumps(NORMAL))
    change(data)
    return data


def test_shipped_scenarios_in_teaching_order():
    assert scenario_names(["article"]) == ["normal", "talk-and-call", "truncated", "talk-only"]
    assert set(scenario_names(["extra"])) >= {"content-filter", "tool-call-with-stop", "cut-off-arguments", "long-chain"}


def test_every_shipped_scenario_teaches_something():
    for scenario in list_scenarios():
        assert scenario.title and len(scenario.teaches) > 40, scenario.name


def test_article_scenarios_keep_null_and_empty_content_apart():
    normal = load_scenario("normal")
    assert [r.content for r in normal.responses[:2]] == [None, ""]
    truncated = load_scenario("truncated").responses[0]
    assert (truncated.content, truncated.tool_calls, truncated.finish_reason) == (None, (), "length")


def test_cut_off_arguments_keep_their_raw_text():
    call = load_scenario("cut-off-arguments").responses[0].tool_calls[0]
    assert call.parsed_arguments is None and call.is_cut_off
    assert call.arguments == '{"path": "no'


def test_arguments_given_as_an_object_are_stored_as_json_text():
    call = load_scenario("normal").responses[0].tool_calls[0]
    assert json.loads(call.arguments) == {"path": "notes.txt"}
    assert call.parsed_arguments == {"path": "notes.txt"}


MALFORMED: list[tuple[str, Any, str]] = [
    ("finish-reason", edited(lambda d: d["responses"][2].__setitem__("finish_reason", "done")),
     r"responses\[2\]\.finish_reason: expected 'stop', 'tool_calls', .*; got 'done'"),
    ("missing-content", edited(lambda d: d["responses"][0].pop("content")),
     r"responses\[0\]\.content: missing; this field is required"),
    ("content-number", edited(lambda d: d["responses"][0].__setitem__("content", 5)),
     r"responses\[0\]\.content: expected a valid string; got 5"),
    ("no-responses", edited(lambda d: d.pop("responses")), r"responses: missing; this field is required"),
    ("empty-responses", edited(lambda d: d.__setitem__("responses", [])),
     r"responses: expected at least 1 item\(s\); got 0"),
    ("typo", edited(lambda d: d.__setitem__("respones", [])), r"respones: is not a known field"),
    ("bad-name", edited(lambda d: d.__setitem__("name", "Normal Run")),
     r"name: String should match pattern .*; got 'Normal Run'"),
    ("unknown-tool", edited(lambda d: d["responses"][0]["tool_calls"][0].__setitem__("name", "rm")),
     r": responses\[0\]\.tool_calls\[0\]\.name 'rm' is not a tool of this scenario \(tools: count_lines, read_file\)$"),
    ("call-without-id", edited(lambda d: d["responses"][0]["tool_calls"][0].pop("id")),
     r"responses\[0\]\.tool_calls\[0\]\.id: missing"),
    ("arguments-list", edited(lambda d: d["responses"][0]["tool_calls"][0].__setitem__("arguments", [1])),
     r"responses\[0\]\.tool_calls\[0\]\.arguments: expected a JSON object or its raw JSON text; got list$"),
    ("tool-result-number", edited(lambda d: d.__setitem__("tools", {"read_file": 3, "count_lines": "4"})),
     r"tools\.read_file: expected a valid string; got 3"),
    ("unknown-without-raw", edited(lambda d: d["responses"][2].__setitem__("finish_reason", "unknown")),
     r"responses\[2\]: finish_reason 'unknown' needs raw_finish_reason"),
    ("negative-usage", edited(lambda d: d["responses"][2].__setitem__("usage", {"prompt_tokens": -1})),
     r"responses\[2\]\.usage\.prompt_tokens: expected greater than or equal to 0; got -1"),
    ("tool-calls-object", edited(lambda d: d["responses"][2].__setitem__("tool_calls", {"a": 1})),
     r"responses\[2\]\.tool_calls: expected a list; got dict"),
    ("top-level-list", [1, 2], r": expected a JSON object at the top level; got list"),
]


@pytest.mark.parametrize(("stem", "data", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_file_gets_one_line_naming_file_field_and_expectation(tmp_path: Path, stem, data, message):
    path = tmp_path / f"{stem}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ScenarioError, match=message) as caught:
        load_scenario(path)
    text = str(caught.value)
    assert text.startswith(str(path) + ": ")
    assert "\n" not in text


def test_several_problems_are_counted(tmp_path: Path):
    path = tmp_path / "two.json"
    path.write_text(json.dumps(edited(lambda d: (d.pop("title"), d.pop("teaches")))), encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"title: missing; this field is required \(and 1 more problem\)$"):
        load_scenario(path)


def test_invalid_json_names_line_and_column(tmp_path: Path):
    path = tmp_path / "broken.json"
    path.write_text('{"name": "x",\n "title": }', encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"broken\.json: not valid JSON at line 2, column 11: Expecting value"):
        load_scenario(path)


def test_binary_file(tmp_path: Path):
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ScenarioError, match=r"binary\.json: is not UTF-8 text \(byte 0 is 0xff\); save it as UTF-8$"):
        load_scenario(path)


def test_missing_file_and_unknown_name(tmp_path: Path):
    with pytest.raises(ScenarioNotFound, match=r"missing\.json: no such file"):
        load_scenario(tmp_path / "missing.json")
    with pytest.raises(ScenarioNotFound, match=r"unknown scenario 'nope': not a shipped name \(such as normal, .*"
                                               r"`agentloops scenarios` lists them all\) and not a \.json file$"):
        load_scenario("nope")


def test_a_directory_is_not_a_scenario(tmp_path: Path):
    with pytest.raises(ScenarioError, match=r"is a directory; expected a scenario file$"):
        load_scenario(tmp_path)


def test_a_dict_is_validated_like_a_file():
    assert load_scenario(edited(lambda d: None)).name == "normal"
    with pytest.raises(ScenarioError, match=r"^scenario: responses: missing"):
        load_scenario(edited(lambda d: d.pop("responses")))


def test_wrong_type():
    with pytest.raises(ScenarioError, match=r"expected a Scenario, a scenario name or a path; got int"):
        load_scenario(3)  # type: ignore[arg-type]


def test_user_file_round_trips(tmp_path: Path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(edited(lambda d: d.__setitem__("name", "mine"))), encoding="utf-8")
    scenario = load_scenario(str(path))
    assert isinstance(scenario, Scenario) and scenario.name == "mine" and scenario.group == "article"


@pytest.mark.parametrize("name", ["a\x00b", "x" * 5000, ""])
def test_names_the_system_cannot_stat_are_unknown_scenarios(name: str):
    with pytest.raises(ScenarioNotFound) as info:
        load_scenario(name)
    message = str(info.value)
    assert message.startswith("unknown scenario '") and "\x00" not in message and len(message) <= 300


def test_a_json_path_the_system_refuses_is_one_line():
    with pytest.raises(ScenarioError, match=r"^a\\x00\.json: cannot be opened as a scenario file \(embedded null byte\)$"):
        load_scenario("a\x00.json")
    with pytest.raises(ScenarioError, match=r": cannot be opened as a scenario file \(File name too long\)$"):
        load_scenario("x" * 5000 + ".json")


def test_field_errors_stay_on_one_line():
    data = edited(lambda d: d.__setitem__("na\nme\x1b", 1))
    with pytest.raises(ScenarioError, match=r"^scenario: na\\nme\\x1b: is not a known field \(check the spelling\)$"):
        load_scenario(data)
    data = edited(lambda d: d["responses"][0]["tool_calls"][0].__setitem__("name", "rm\n-rf"))
    with pytest.raises(ScenarioError) as info:
        load_scenario(data)
    assert "'rm\\n-rf' is not a tool of this scenario" in str(info.value) and "\n" not in str(info.value)


def test_a_scenario_file_goes_through_the_strict_reader(tmp_path: Path):
    path = tmp_path / "dup.json"
    path.write_text('{"name": "a", "name": "b"}', encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"dup\.json: duplicate key 'name' in one object; expected each key once$"):
        load_scenario(path)


def test_a_scenario_states_the_requests_max_tokens_and_a_response_may_override_it():
    from agentloops.scenario import scenario_from_dict

    base = {"name": "limit", "title": "t", "teaches": "t", "tools": {"read_file": "x"}}
    rounds = [{"content": "a", "finish_reason": "stop", "usage": {"completion_tokens": 64}},
              {"content": "b", "finish_reason": "stop", "usage": {"completion_tokens": 64}, "max_tokens": 128}]
    loaded = scenario_from_dict({**base, "max_tokens": 64, "responses": rounds})
    assert [r.max_tokens for r in loaded.responses] == [64, 128]
    assert [r.at_token_limit for r in loaded.responses] == [True, False]
    assert scenario_from_dict({**base, "responses": rounds[:1]}).responses[0].max_tokens is None
    with pytest.raises(ScenarioError, match=r"^s\.json: max_tokens: .*greater than 0"):
        scenario_from_dict({**base, "max_tokens": 0, "responses": rounds}, "s.json")


def test_list_scenarios_is_a_list_that_shows_as_a_short_table():
    from agentloops.i18n import speaking
    from agentloops.scenario import ScenarioList

    listed = list_scenarios()
    assert isinstance(listed, list) and listed == [load_scenario(s.name) for s in listed]
    assert listed[0].name == "normal" and listed[1:3] == list(listed)[1:3]
    text = repr(listed)
    lines = text.splitlines()
    assert lines[0].split() == ["name", "group", "title", "replies"]
    assert len(lines) == len(listed) + 3 and lines[-1].startswith(f"({len(listed)} scenarios;")
    assert lines[2].split()[:2] == ["normal", "article"] and lines[2].split()[-1] == str(len(listed[0].responses))
    assert len(text) < 150 * len(listed)  # a row per scenario, not every scripted reply
    page = listed._repr_html_()
    assert page.count("<tr>") == len(listed) + 1 and "<td style='text-align:left'>truncated</td>" in page
    with speaking("zh"):
        chinese = [s for s in listed if s.title_zh]
        if chinese:
            assert chinese[0].title_zh in repr(listed)
    assert repr(ScenarioList()).splitlines()[-1] == "(0 scenarios; al.load_scenario(name) for one)"
