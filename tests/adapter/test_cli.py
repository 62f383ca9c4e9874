"""The composed ``judge-vllm`` command: the server-side commands plus ``api`` and ``openrlhf-rm``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import adapter.cli
from adapter.cli import add_front_end_commands
from judge_vllm.cli import build_parser

REPO = Path(__file__).resolve().parents[2]
COMMANDS = ["model", "serve", "stop", "health", "judge", "api", "openrlhf-rm"]


def test_the_console_script_is_the_composed_command():
    assert 'judge-vllm = "adapter.cli:main"' in (REPO / "pyproject.toml").read_text().splitlines()


def test_help_lists_every_subcommand():
    reply = subprocess.run(
        [sys.executable, "-m", "adapter.cli", "--help"], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert "{" + ",".join(COMMANDS) + "}" in reply.stdout


def test_the_front_ends_share_their_flags_and_keep_their_own():
    parser = build_parser(add_front_end_commands)
    api = parser.parse_args(["api", "--port", "9000", "--api-key", "k", "--max-batch", "8"])
    rm = parser.parse_args(["openrlhf-rm", "--answer-type", "NUMBER", "--judge-url", "http://j:1"])
    assert (api.port, api.api_key, api.max_batch, api.max_body_bytes) == (9000, "k", 8, None)
    assert (rm.port, rm.answer_type, rm.judge_url, rm.host) == (5000, "NUMBER", "http://j:1", "127.0.0.1")
    assert api.run is not rm.run


def test_all_names_what_the_module_defines():
    assert [name for name in adapter.cli.__all__ if not hasattr(adapter.cli, name)] == []
