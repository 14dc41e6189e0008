"""The command line in Chinese: ``--lang zh`` (anywhere on the line), ``AGENTLOOPS_LANG`` or the locale.

Help, one-line errors (argparse's own words included) and the doctor speak Chinese; errors keep their one-line
form and exit status 2; ``--json`` output stays English; ``lab`` and ``app`` open the Chinese edition. Nothing
here starts a server: the commands they would run are recorded.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path, PurePosixPath

import pytest

import agentloops.lab as lab
from agentloops import cli, doctor
from agentloops.cli import APP_PAGES, main
from agentloops.i18n import language, set_language
from agentloops.resources import notebooks_dir

CJK = re.compile(r"[\u4e00-\u9fff]")
ZH_APP = notebooks_dir() / "zh" / "app"


pytestmark = pytest.mark.usefixtures("no_language_from_the_environment")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def help_text(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    assert done.value.code == 0
    return capsys.readouterr().out


# --------------------------------------------------------------------------- help and errors


def test_help_in_chinese_with_the_global_option(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_text(capsys, "--lang", "zh", "--help")
    assert text.startswith("用法：agentloops")
    assert "工具调用循环什么时候该停？" in text and "位置参数" in text and "显示这条帮助信息并退出" in text
    assert language() == "en", "the command's language does not outlive the command"


def test_help_of_a_subcommand_in_chinese_with_the_option_after_it(capsys: pytest.CaptureFixture[str]) -> None:
    text = " ".join(help_text(capsys, "compare", "--help", "--lang=zh").split())
    assert "循环放弃之前最多调用模型的次数，1 到 " in text and "用法：agentloops compare" in text


def test_help_in_chinese_from_the_environment(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLOOPS_LANG", "zh")
    assert "逐轮运行一个场景" in help_text(capsys, "controller", "--help")
    monkeypatch.delenv("AGENTLOOPS_LANG")
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert "检查这台机器能否参加工作坊" in help_text(capsys, "--help")


def test_english_help_is_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_text(capsys, "--help")
    assert text.startswith("usage: agentloops") and "positional arguments:" in text and not CJK.search(
        text.split("cheatsheet")[0])
    assert "--lang LANG" in text


@pytest.mark.parametrize(("argv", "message"), [
    (["--lang", "zh", "run"], "缺少必需的参数：scenario"),
    (["run", "--lang", "zh"], "缺少必需的参数：scenario"),
    (["--lang", "zh", "app", "slides"], "参数 page：无效的选项：'slides'（可选：'criteria', 'controller'）"),
    (["--lang", "zh", "app", "--port", "0"], "参数 --port：应为介于 1 到 65535 之间的整数；收到的是 0"),
    (["--lang", "zh", "compare", "--max-steps", "+3"],
     "参数 --max-steps：应为介于 1 到 32 之间的整数，只用数字 0-9；收到的是 '+3'"),
    (["--lang", "zh", "compare", "--bogus"], "无法识别的参数：--bogus"),
    (["--lang", "zh", "controller", "run", "weather-normal", "--answer", "Beijing"],
     "给了 --answer，但 weather-normal 停在 succeeded，不是 waiting_for_user"),
    (["--lang", "zh", "doctor", "--port", "70000", "--no-kernel"], "doctor --port：端口应在 1 到 65535 之间；收到的是 70000"),
])
def test_errors_are_one_chinese_line_and_status_2(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                 message: str) -> None:
    from agentloops.loop import MAX_STEPS_LIMIT

    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err == f"agentloops：错误：{message.replace('32', str(MAX_STEPS_LIMIT))}\n"


def test_an_unknown_language_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--lang", "fr", "scenarios"], ["scenarios", "--lang=klingon"]):
        code, out, err = run(capsys, *argv)
        assert (code, out) == (2, "")
        assert err.startswith("agentloops: error: argument --lang: expected en or zh") and err.count("\n") == 1


def test_a_locale_tag_is_accepted_and_english_can_be_forced(capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _err = run(capsys, "--lang", "zh_CN.UTF-8", "scenarios")
    assert code == 0 and out.startswith("名称")
    monkeypatch.setenv("AGENTLOOPS_LANG", "zh")
    code, out, _err = run(capsys, "scenarios", "--lang", "en")
    assert code == 0 and out.startswith("name")


def test_argparse_gets_its_own_words_back_after_a_command() -> None:
    before = argparse._  # type: ignore[attr-defined]
    with pytest.raises(SystemExit):
        main(["--lang", "zh", "--help"])
    assert argparse._ is before  # type: ignore[attr-defined]
    parser = argparse.ArgumentParser(prog="other")
    assert parser.format_usage().startswith("usage: other")


def test_requested_language_reads_the_last_option_before_a_double_dash() -> None:
    assert cli.requested_language(["--lang", "en", "run", "--lang=zh"]) == "zh"
    assert cli.requested_language(["run", "--", "--lang", "zh"]) is None
    assert cli.requested_language(["run", "--lang"]) is None


# --------------------------------------------------------------------------- output that is data stays English


def test_controller_run_json_stays_english_and_the_text_speaks_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "--lang", "zh", "controller", "run", "weather-timeout-always", "--json")
    data = json.loads(out)
    assert code == 0 and data["user_message"].startswith("I stopped because the budget for")
    assert not CJK.search(out)
    code, out, _err = run(capsys, "--lang", "zh", "controller", "run", "weather-timeout-always")
    assert code == 0 and "--- 给用户的消息 ---" in out and "我停了下来" in out
    assert "[budget_exhausted] budget:retries：重试预算已用完" in out and '"reason": "retry budget spent' in out


def test_a_resumed_run_as_json_stays_english(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "--lang", "zh", "controller", "run", "order-missing-id", "--resume", "--json")
    if code != 0 or "resumed" not in out:
        pytest.skip("the scenario no longer waits for the user")
    assert not CJK.search(out)


def test_controller_check_speaks_chinese_in_text_and_keeps_json_keys(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "--lang", "zh", "controller", "check", "weather-normal")
    assert code == 0 and out.startswith("控制器场景：") and "1 个场景里有 1 个的表现符合其文件的预期。" in out
    code, out, _err = run(capsys, "--lang", "zh", "controller", "check", "weather-normal", "--format", "json")
    assert code == 0 and set(json.loads(out)[0]) == {"scenario", "stop", "check", "problems"}


# --------------------------------------------------------------------------- lab and app


def test_the_chinese_edition_opens_at_its_first_notebook(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(lab, "serve", lambda command, cwd: calls.append(command) or 0)
    monkeypatch.setattr(lab, "find_tool", lambda name: f"/venv/bin/{name}")
    code, _out, err = run(capsys, "lab", "--lang", "zh", "--no-browser", "--dir", str(tmp_path))
    assert code == 0
    first = sorted((notebooks_dir() / "zh").glob("*.ipynb"))[0].name
    (command,) = calls
    assert command[1:4] == ["lab", str(tmp_path.resolve()), "--no-browser"]
    assert command[-1] == f"--LabApp.default_url=/lab/tree/zh/{first}"
    assert (tmp_path / "zh" / first).is_file(), "the learner's copy holds the Chinese edition"
    assert "你的 notebook：" in err and f"zh/{first}" in err


def test_english_opens_the_folder_as_before(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(lab, "serve", lambda command, cwd: calls.append(command) or 0)
    monkeypatch.setattr(lab, "find_tool", lambda name: f"/venv/bin/{name}")
    assert run(capsys, "lab", "--no-browser", "--dir", str(tmp_path))[0] == 0
    assert not any(part.startswith("--LabApp.default_url") for part in calls[0])


def test_the_locale_chooses_the_chinese_edition_too(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(lab, "serve", lambda command, cwd: calls.append(command) or 0)
    monkeypatch.setattr(lab, "find_tool", lambda name: f"/venv/bin/{name}")
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert run(capsys, "lab", "--dir", str(tmp_path))[0] == 0
    assert calls[0][-1].startswith("--LabApp.default_url=/lab/tree/zh/")


def test_a_missing_chinese_edition_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(lab, "notebooks_dir", lambda: tmp_path / "shipped")
    code, out, err = run(capsys, "lab", "--lang", "zh", "--dir", str(tmp_path / "mine"))
    assert (code, out) == (2, "")
    assert err.startswith("agentloops：错误：当前安装里缺少 zh 版的 notebook") and err.count("\n") == 1
    assert lab.first_notebook("en") is None
    with pytest.raises(lab.LabError, match=r"^the zh edition of the notebooks \(.*\) is missing"):
        lab.first_notebook("zh")


def test_first_notebook_and_its_option() -> None:
    first = lab.first_notebook("zh")
    assert first is not None and first.parent == PurePosixPath("zh") and first.suffix == ".ipynb"
    assert lab.start_option(PurePosixPath("zh", "00 start.ipynb")) == "--LabApp.default_url=/lab/tree/zh/00%20start.ipynb"


@pytest.fixture
def voila_calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    recorded: list[list[str]] = []
    monkeypatch.setattr(cli, "_find_tool", lambda name: f"/venv/bin/{name}")
    monkeypatch.setattr("agentloops.lab.serve", lambda command, cwd: recorded.append(command) or 0)
    return recorded


@pytest.mark.parametrize("page", list(APP_PAGES))
def test_app_serves_the_chinese_page(page: str, voila_calls: list[list[str]],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["app", page, "--lang", "zh"]) == 0
    assert voila_calls[0][1] == str(ZH_APP / APP_PAGES[page])
    assert f"正在用 Voilà 在端口 8866 上提供 {page} 页面" in capsys.readouterr().err


def test_app_follows_the_environment_and_defaults_to_english(voila_calls: list[list[str]],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["app"]) == 0
    monkeypatch.setenv("AGENTLOOPS_LANG", "zh")
    assert main(["app", "controller"]) == 0
    assert [c[1] for c in voila_calls] == [str(notebooks_dir() / "app" / APP_PAGES["criteria"]),
                                           str(ZH_APP / APP_PAGES["controller"])]


def test_the_chinese_pages_are_thin_and_say_zh() -> None:
    for page in APP_PAGES.values():
        cells = [c for c in json.loads((ZH_APP / page).read_text(encoding="utf-8"))["cells"]
                 if c["cell_type"] == "code"]
        assert len(cells) == 1 and 'set_language("zh")' in "".join(cells[0]["source"])


# --------------------------------------------------------------------------- the doctor


def test_the_doctor_reports_in_chinese(tmp_path: Path) -> None:
    set_language("zh")
    findings = [doctor.check_python((3, 9, 1)), doctor.check_port(8888, lambda port: True),
                doctor.check_browser_font(lambda: [], lambda: "Linux", lambda path: False, lambda: {"ID": "fedora"}),
                doctor.check_folder(tmp_path)]
    text, status = doctor.report(findings)
    lines = text.splitlines()
    assert status == 1
    assert lines[0] == ("✗ Python：3.9.1，低于 3.10 — 解决办法：安装 Python 3.10 或更新版本，然后重新安装："
                        "pip install -e '.[dev]'")
    assert lines[1] == "✓ 空闲端口：8888"
    assert lines[2].startswith("✗ 浏览器用的中文字体：fc-list :lang=zh 找不到支持中文的字体 — 解决办法：运行 sudo dnf install")
    assert lines[-1] == "4 项检查中有 2 项未通过；解决后再运行一次 agentloops doctor。"


def test_the_doctor_command_speaks_chinese(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    monkeypatch.setattr(doctor, "default_probes", lambda **kw: {"python": lambda: doctor.check_python((3, 11, 0))})
    code, out, _err = run(capsys, "doctor", "--lang", "zh", "--no-kernel", "--dir", str(tmp_path))
    assert code == 0 and out == "✓ Python：3.11.0\n1 项检查全部通过：这台机器准备好了。\n"


def test_argparse_plural_message_is_in_the_catalog() -> None:
    set_language("zh")
    assert cli._argparse_plural(2) == "需要 %s 个参数值"
    parser = cli._Parser(prog="p")
    parser.add_argument("--pair", nargs=2)
    with cli.argparse_speaks(), pytest.raises(cli._CommandError, match=r"^参数 --pair：需要 2 个参数值$"):
        parser.parse_args(["--pair", "x"])
