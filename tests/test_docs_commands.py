"""Every judge-vllm / judge-eval / judge-bench command shown in README.md and docs/ parses with
the real command line, so the docs cannot drift from it (their effect is what the other tests run)."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from adapter.cli import add_config_commands, add_front_end_commands
from eval import bench
from eval import cli as eval_cli
from judge_vllm.cli import build_parser

REPO = Path(__file__).resolve().parent.parent
PROGRAMS = ("judge-vllm", "judge-eval", "judge-bench")
FENCE = re.compile(r"^```[a-z]*\n(.*?)^```", re.S | re.M)


def _commands() -> list[tuple[str, str]]:
    """(where, command) for each documented command line (continuations joined, comments cut)."""
    found = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for block in FENCE.findall(path.read_text()):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.strip().removeprefix("$ ")
                if line.split(" ", 1)[0] in PROGRAMS:
                    found.append((f"{path.name}: {line[:60]}", line.split("  #", 1)[0].strip()))
    return found


COMMANDS = _commands()


def _parser(program: str) -> argparse.ArgumentParser:
    if program == "judge-vllm":
        return build_parser(add_front_end_commands, add_config_commands)
    return eval_cli.build_parser() if program == "judge-eval" else bench.build_parser()


def test_the_docs_show_commands_of_every_program():
    assert {command.split()[0] for _, command in COMMANDS} == set(PROGRAMS) and len(COMMANDS) > 20


@pytest.mark.parametrize("command", [c for _, c in COMMANDS], ids=[w for w, _ in COMMANDS])
def test_a_documented_command_parses(command):
    argv = [a for a in shlex.split(command, comments=True) if a != "..."]  # "..." marks a shortened line
    program, args = argv[0], argv[1:]
    parser = _parser(program)
    try:
        parsed, unknown = parser.parse_known_args(args)
    except SystemExit as exited:
        pytest.fail(f"{command!r} does not parse (exit {exited.code})")
    if program == "judge-vllm" and parsed.command == "serve":
        unknown = []  # serve hands unknown flags to vLLM
    assert unknown == [], f"{command!r}: unknown arguments {unknown}"


MACHINE_DETAILS = re.compile(r"/work/|/root/|\bcommit [0-9a-f]{7,40}\b|\bbase commit\b")


@pytest.mark.parametrize("page", ["README.md", *(f"docs/{p.name}" for p in sorted((REPO / "docs").glob("*.md")))])
def test_docs_name_no_machine_path_or_commit(page):
    found = [m.group(0) for m in MACHINE_DETAILS.finditer((REPO / page).read_text())]
    assert found == [], f"{page}: {found}"
