"""The strict JSON reader: every refusal is one line naming the file, the place and what was expected."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from agentloops.errors import ScenarioError, ScenarioNotFound, UsageError
from agentloops.jsonfile import (
    CUT_TAIL,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    MAX_MESSAGE,
    iter_json_lines,
    one_line,
    parse_json,
    read_json,
    read_text,
)


class PolicyError(UsageError):
    pass


def refused(text: str) -> str:
    with pytest.raises(ScenarioError) as info:
        parse_json(text, where="f.json")
    message = str(info.value)
    assert "\n" not in message and message.startswith("f.json: ")
    return message


# --- parse_json ---------------------------------------------------------------------------------------------------

def test_plain_values_come_back_as_plain_python():
    assert parse_json('{"a": [1, 2.5, true, null, "x"], "b": {}}', where="w") == {
        "a": [1, 2.5, True, None, "x"], "b": {}}
    assert type(parse_json("{}", where="w")) is dict


@pytest.mark.parametrize("depth, ok", [(MAX_DEPTH, True), (MAX_DEPTH + 1, False), (100_000, False)])
def test_nesting_limit_is_exact(depth: int, ok: bool):
    text = "[" * depth + "]" * depth
    if ok:
        assert parse_json(text, where="w") is not None
    else:
        assert refused(text) == f"f.json: nested deeper than {MAX_DEPTH} levels of arrays and objects (at column {MAX_DEPTH + 1})"


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = '["' + "[{" * 500 + '\\"[["]'
    assert parse_json(text, where="w") == ["[{" * 500 + '"[[']


def test_mixed_nesting_counts_objects_too():
    text = '{"a": ' * MAX_DEPTH + "[1]" + "}" * MAX_DEPTH
    assert "nested deeper" in refused(text)


@pytest.mark.parametrize("digits, ok", [(MAX_INT_DIGITS, True), (MAX_INT_DIGITS + 1, False), (5000, False)])
def test_integer_digit_limit_is_exact(digits: int, ok: bool):
    literal = "-" + "9" * digits
    if ok:
        assert parse_json(f"[{literal}]", where="w") == [int(literal)]
    else:
        assert refused(f"[{literal}]") == (
            f"f.json: an integer with {digits:,} digits; expected at most {MAX_INT_DIGITS} (at column 2)")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_constants_are_refused(constant: str):
    assert refused(f'{{"x": {constant}}}') == (
        f"f.json: {constant} is not JSON; expected a finite number or null (at column 7)")


def test_a_float_that_overflows_is_refused():
    assert "too large to be finite" in refused("[1e400]")
    assert parse_json("[1e300]", where="w") == [1e300]


@pytest.mark.parametrize("text, where", [
    ('"\\ud800"', "(top level)"),
    ('{"tool_calls": [{"name": "read\\udfff"}]}', "tool_calls[0].name"),
    ('{"a": {"\\ud83dx": 1}}', "a key in a"),
])
def test_lone_surrogates_are_refused_with_their_path(text: str, where: str):
    assert refused(text).startswith(f"f.json: {where}: the string holds a lone surrogate")


def test_a_surrogate_pair_is_one_character():
    assert parse_json('"\\ud83d\\ude00"', where="w") == "\N{GRINNING FACE}"


def test_duplicate_keys_are_refused_naming_the_key():
    assert refused('{"name": 1, "other": 2, "name": 3}') == (
        "f.json: duplicate key 'name' in one object; expected each key once")
    assert parse_json('{"a": {"name": 1}, "b": {"name": 2}}', where="w")  # the same key in two objects is fine


def test_a_control_character_in_a_key_stays_escaped():
    message = refused('{"a\\nb\\u001b[31m": 1, "a\\nb\\u001b[31m": 2}')
    assert "'a\\nb\\x1b[31m'" in message and "\x1b" not in message


def test_syntax_errors_name_line_and_column():
    assert refused('{"name": "x",\n "title": }') == "f.json: not valid JSON at line 2, column 11: Expecting value"
    assert refused('{"a": 1} x') == "f.json: not valid JSON at column 10: Extra data"
    assert refused('{"a": "raw\ttab"}') == "f.json: not valid JSON at column 11: Invalid control character"
    assert refused("   ") == "f.json: empty; expected a JSON value"


def test_the_callers_exception_class_is_raised():
    with pytest.raises(PolicyError, match=r"^p\.json: duplicate key 'a'"):
        parse_json('{"a": 1, "a": 1}', where="p.json", error=PolicyError)


# --- one_line -----------------------------------------------------------------------------------------------------

def test_one_line_escapes_and_caps():
    assert one_line("a\nb\r\tc\x00\x1b\u2028\ud800") == "a\\nb\\r\\tc\\x00\\x1b\\u2028\\ud800"
    assert one_line("x" * MAX_MESSAGE) == "x" * MAX_MESSAGE
    capped = one_line("x" * (MAX_MESSAGE + 1))
    assert len(capped) == MAX_MESSAGE and capped.endswith("…")
    assert one_line("中文 ok") == "中文 ok"


def test_a_long_error_is_capped():
    message = refused('{"' + "k" * 1000 + '": 1, "' + "k" * 1000 + '": 2}')
    assert len(message) <= MAX_MESSAGE


# --- read_json / read_text ----------------------------------------------------------------------------------------

def test_read_json_reads_a_file(tmp_path: Path):
    path = tmp_path / "ok.json"
    path.write_text('{"a": "中"}', encoding="utf-8")
    assert read_json(path) == {"a": "中"}


def test_a_byte_order_mark_is_ignored(tmp_path: Path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf{}")
    assert read_json(path) == {}


def test_missing_file(tmp_path: Path):
    with pytest.raises(PolicyError, match=r"missing\.json: no such file; expected a policy file$"):
        read_json(tmp_path / "missing.json", error=PolicyError, what="policy file")
    with pytest.raises(ScenarioNotFound):
        read_text(tmp_path / "missing.json", not_found=ScenarioNotFound)
    with pytest.raises(ScenarioError, match="no such file"):
        read_json(tmp_path / "missing.json" / "below")


def test_a_directory(tmp_path: Path):
    with pytest.raises(ScenarioError, match=r": is a directory; expected a JSON file$"):
        read_json(tmp_path)


def test_a_fifo_is_refused_without_hanging(tmp_path: Path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    result: list[BaseException] = []
    worker = threading.Thread(target=lambda: _capture(result, fifo), daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), "reading a FIFO hung"
    assert isinstance(result[0], ScenarioError)
    assert str(result[0]).endswith("pipe.json: is a FIFO, not a regular file; expected a JSON file")


def _capture(result: list[BaseException], path: Path) -> None:
    try:
        read_json(path)
    except BaseException as exc:  # the test inspects whatever came out
        result.append(exc)


def test_a_device_is_refused():
    with pytest.raises(ScenarioError, match=r"^/dev/null: is a device, not a regular file; expected a JSON file$"):
        read_json("/dev/null")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_an_unreadable_file(tmp_path: Path):
    path = tmp_path / "secret.json"
    path.write_text("{}", encoding="utf-8")
    path.chmod(0)
    with pytest.raises(ScenarioError, match=r"secret\.json: permission denied; expected a readable JSON file$"):
        read_json(path)


def test_size_limit_is_checked_before_reading(tmp_path: Path):
    path = tmp_path / "big.json"
    path.write_text("[" + " " * 98 + "]", encoding="utf-8")  # 100 bytes
    assert read_json(path, max_bytes=100) == []
    with pytest.raises(ScenarioError, match=r"big\.json: is 100 bytes, larger than the 99-byte limit; expected a"):
        read_json(path, max_bytes=99)


def test_not_utf8(tmp_path: Path):
    path = tmp_path / "latin.json"
    path.write_bytes(b'{"a": "caf\xe9"}')
    with pytest.raises(ScenarioError, match=r"latin\.json: is not UTF-8 text \(byte 10 is 0xe9\); save it as UTF-8$"):
        read_json(path)


def test_a_nul_in_the_path_is_one_line():
    with pytest.raises(ScenarioError, match=r"cannot be opened as a JSON file"):
        read_json("a\x00b.json")


def test_a_newline_in_the_path_stays_escaped(tmp_path: Path):
    with pytest.raises(ScenarioError) as info:
        read_json(tmp_path / "two\nlines.json")
    assert "two\\nlines.json: no such file" in str(info.value) and "\n" not in str(info.value)


# --- iter_json_lines ----------------------------------------------------------------------------------------------

def test_lines_are_numbered_from_one(tmp_path: Path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"a": 1}\n[2]\r\n3\n', encoding="utf-8")
    assert list(iter_json_lines(path)) == [(1, {"a": 1}), (2, [2]), (3, 3)]


@pytest.mark.parametrize("text, message", [
    ('{"a": 1}\n{"a": NaN}\n', r"t\.jsonl:2: NaN is not JSON; expected a finite number or null \(at column 7\)$"),
    ('{"a": 1}\n\n{"a": 2}\n', r"t\.jsonl:2: empty line; expected one JSON value per line$"),
    ('{"a": 1, "a": 2}\n', r"t\.jsonl:1: duplicate key 'a'"),
    ('{"a":\n', r"t\.jsonl:1: not valid JSON at column 6: Expecting value$"),
])
def test_a_bad_line_is_named(tmp_path: Path, text: str, message: str):
    path = tmp_path / "t.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError, match=message):
        list(iter_json_lines(path))


def test_a_cut_tail_is_flagged_only_when_asked_and_only_at_the_end(tmp_path: Path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"a": 1}\n{"a": 2', encoding="utf-8")
    assert list(iter_json_lines(path, cut_tail=True)) == [(1, {"a": 1}), (2, CUT_TAIL)]
    with pytest.raises(ScenarioError, match=r"t\.jsonl:2: not valid JSON"):
        list(iter_json_lines(path))
    path.write_text('{"a": 1}\n{"a": 2\n', encoding="utf-8")  # ended with a newline: not cut, broken
    with pytest.raises(ScenarioError, match=r"t\.jsonl:2: not valid JSON"):
        list(iter_json_lines(path, cut_tail=True))
    path.write_text('{"a": 2\n{"a": 1}', encoding="utf-8")  # a broken line before the last one
    with pytest.raises(ScenarioError, match=r"t\.jsonl:1: not valid JSON"):
        list(iter_json_lines(path, cut_tail=True))
    path.write_text('{"a": 1}\n{"a": NaN}', encoding="utf-8")  # complete but refused: not a cut
    with pytest.raises(ScenarioError, match=r"t\.jsonl:2: NaN"):
        list(iter_json_lines(path, cut_tail=True))


def test_jsonl_files_are_checked_like_json_files(tmp_path: Path):
    with pytest.raises(PolicyError, match=r": is a directory; expected a trace file$"):
        list(iter_json_lines(tmp_path, error=PolicyError, what="trace file"))


def test_permission_denied_on_open_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "secret.json"
    path.write_text("{}", encoding="utf-8")

    def denied(*args: object, **kwargs: object) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("agentloops.jsonfile.os.open", denied)
    with pytest.raises(ScenarioError, match=r"secret\.json: permission denied; expected a readable JSON file$"):
        read_json(path)


def test_a_fifo_swapped_in_after_the_check_is_refused_without_hanging(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch):
    regular = tmp_path / "regular.json"
    regular.write_text("{}", encoding="utf-8")
    fifo = tmp_path / "swapped.json"
    os.mkfifo(fifo)
    real_stat = os.stat
    monkeypatch.setattr("agentloops.jsonfile.os.stat", lambda p: real_stat(regular) if p == fifo else real_stat(p))
    result: list[BaseException] = []
    worker = threading.Thread(target=lambda: _capture(result, fifo), daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), "opening a swapped-in FIFO hung"
    assert isinstance(result[0], ScenarioError) and "is a FIFO, not a regular file" in str(result[0])


def test_a_very_long_path_keeps_its_ends_and_the_problem():
    with pytest.raises(ScenarioError) as info:
        read_json("/tmp/" + "d" * 5000 + "/end.json")
    message = str(info.value)
    assert message.startswith("/tmp/ddd") and "…" in message and "/end.json: " in message
    assert message.endswith("(File name too long)") and len(message) <= MAX_MESSAGE


def test_every_shipped_file_passes_the_strict_reader():
    from agentloops.resources import data_dir

    shipped = sorted(data_dir().rglob("*.json"))
    assert len(shipped) > 50
    for path in shipped:
        assert isinstance(read_json(path), dict), path


def test_a_file_that_grows_after_the_check_is_still_cut_at_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "grows.json"
    path.write_text("[" + " " * 200 + "]", encoding="utf-8")
    monkeypatch.setattr("agentloops.jsonfile._check_regular", lambda *args: None)  # as if it grew after both checks
    with pytest.raises(ScenarioError, match=r"grows\.json: is larger than 10 bytes; expected a smaller JSON file$"):
        read_json(path, max_bytes=10)
