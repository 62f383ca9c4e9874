"""Every flag of every console script says what it does and, when it has a default, shows it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from adapter import cli as adapter_cli
from eval import bench
from eval import cli as eval_cli
from judge_vllm.cli import command_parsers

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: tomli, which mypy needs there, is the same parser
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
PARSERS: dict[str, Callable[[], argparse.ArgumentParser]] = {
    "judge-vllm": adapter_cli.build_parser,
    "judge-eval": eval_cli.build_parser,
    "judge-bench": bench.build_parser,
}
# Actions argparse writes itself, and subcommand lists (each subcommand's parser is walked).
_OWN = (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)


def _flags() -> list[tuple[str, argparse.ArgumentParser, argparse.Action]]:
    found = []
    for build in PARSERS.values():
        for parser in command_parsers(build()):
            for action in parser._actions:
                takes_default = action.option_strings or action.nargs in ("?", "*")
                if takes_default and not isinstance(action, _OWN):
                    found.append((f"{parser.prog} {action.option_strings[0] if action.option_strings else action.dest}",
                                  parser, action))  # fmt: skip
    return found


FLAGS = _flags()


def _shown(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The action's entry in ``parser --help``, on one line."""
    formatter = parser.formatter_class(prog=parser.prog, width=100_000)
    formatter.add_argument(action)
    return formatter.format_help()


def test_every_console_script_is_walked():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) == set(PARSERS)
    assert len(FLAGS) > 60


@pytest.mark.parametrize(("parser", "action"), [f[1:] for f in FLAGS], ids=[f[0] for f in FLAGS])
def test_every_flag_has_help_that_shows_its_default(parser, action):
    assert (action.help or "").strip(), "no help"
    shown = _shown(parser, action)
    if action.default is None or action.default is False:
        return  # no default to show ("default: the config's judge_url" is the help's own word)
    if isinstance(action.default, dict | list | tuple):
        assert "default" in shown, shown  # said in words: "{}" would say nothing
    else:
        assert f"default: {action.default}" in shown or f"default {action.default}" in shown, shown
