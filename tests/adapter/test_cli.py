"""The composed ``judge-vllm`` command: the server-side commands plus ``api`` and ``openrlhf-rm``."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

import adapter.cli
from adapter.cli import add_front_end_commands
from judge_vllm.cli import build_parser

REPO = Path(__file__).resolve().parents[2]
COMMANDS = ["model", "serve", "stop", "health", "judge", "api", "openrlhf-rm", "config", "audit"]


def test_the_console_script_is_the_composed_command():
    assert 'judge-vllm = "adapter.cli:main"' in (REPO / "pyproject.toml").read_text().splitlines()


def test_help_lists_every_subcommand():
    reply = subprocess.run(
        [sys.executable, "-m", "adapter.cli", "--help"], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert "{" + ",".join(COMMANDS) + "}" in reply.stdout


def test_the_script_and_python_m_are_one_command_line():
    script = Path(sys.executable).parent / "judge-vllm"
    module = [sys.executable, "-m", "adapter.cli"]
    for argv in (["--help"], ["serve", "--help"], ["config", "list"], ["--version"]):
        by_script = subprocess.run([str(script), *argv], capture_output=True, text=True, cwd=REPO)
        by_module = subprocess.run([*module, *argv], capture_output=True, text=True, cwd=REPO)
        assert by_script.returncode == by_module.returncode == 0, argv
        assert by_script.stdout == by_module.stdout, argv


def test_config_show_prints_a_bundled_config_and_names_them_all_when_unknown(capsys):
    assert adapter.cli.main(["config", "show", "verl"]) == 0
    assert capsys.readouterr().out == (REPO / "configs" / "verl.yaml").read_text()
    assert adapter.cli.main(["config", "show", "nope"]) == 2
    assert "reward, trl-agent, trl, verifier, verl-agent, verl" in capsys.readouterr().err


def test_a_missing_extra_is_one_line_naming_the_extra(monkeypatch, capsys):
    def needs_fastapi(args, extra):
        raise ModuleNotFoundError("No module named 'fastapi'", name="fastapi")

    monkeypatch.setattr(adapter.cli, "_api", needs_fastapi)
    assert adapter.cli.main(["api"]) == 2
    assert capsys.readouterr().err == "error: this command needs the 'fastapi' package: install judge-vllm[api] (pip install 'judge-vllm[api]')\n"


def test_the_front_ends_share_their_flags_and_keep_their_own():
    parser = build_parser(add_front_end_commands)
    api = parser.parse_args(["api", "--port", "9000", "--api-key", "k", "--max-batch", "8"])
    rm = parser.parse_args(["openrlhf-rm", "--answer-type", "NUMBER", "--judge-url", "http://j:1"])
    assert (api.port, api.api_key, api.max_batch, api.max_body_bytes) == (9000, "k", 8, None)
    assert (rm.port, rm.answer_type, rm.judge_url, rm.host) == (5000, "NUMBER", "http://j:1", "127.0.0.1")
    assert api.run is not rm.run


def test_all_names_what_the_module_defines():
    assert [name for name in adapter.cli.__all__ if not hasattr(adapter.cli, name)] == []


def _parsers() -> dict[str, tuple[argparse.ArgumentParser, list[str]]]:
    """Every command that talks to a judge server: its parser and the arguments it needs besides."""
    import eval.bench
    import eval.cli
    from adapter.cli import add_config_commands

    composed = build_parser(add_front_end_commands, add_config_commands)
    judge = ["judge", "--prompt", "q", "--completion", "c", "--answer", "a"]
    return {
        "health": (composed, ["health"]),
        "judge": (composed, judge),
        "api": (composed, ["api"]),
        "openrlhf-rm": (composed, ["openrlhf-rm"]),
        "judge-bench": (eval.bench.build_parser(), []),
        "judge-eval": (eval.cli.build_parser(), ["--data", "d.jsonl", "--out", "o"]),
    }


@pytest.mark.parametrize("flag", ["--judge-url", "--url"])
@pytest.mark.parametrize("command", ["health", "judge", "api", "openrlhf-rm", "judge-bench", "judge-eval"])
def test_every_command_takes_the_judges_address_as_judge_url(command, flag):
    parser, argv = _parsers()[command]
    assert parser.parse_args([*argv, flag, "http://judge:1"]).judge_url == "http://judge:1"
