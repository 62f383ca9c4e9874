"""The server-side ``judge-vllm`` subset, and judge_vllm as the lower layer (never importing up)."""

from __future__ import annotations

import ast
import asyncio
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

from judge_vllm.cli import build_parser, main
from judge_vllm.client import JudgeClient
from judge_vllm.schemas import JudgeRequest
from judge_vllm.settings import JudgeClientConfig

REPO = Path(__file__).resolve().parents[2]
SERVER_COMMANDS = ["model", "serve", "stop", "health", "judge"]


def _imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):  # also function-level (lazy) imports
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", ["judge_vllm", "judge_prompts"])
def test_the_lower_layers_never_import_adapter_or_eval(package):
    offenders = {
        str(path.relative_to(REPO)): sorted(_imported_packages(path) & {"adapter", "eval"})
        for path in sorted((REPO / package).rglob("*.py"))
    }
    assert {path: found for path, found in offenders.items() if found} == {}


def test_the_module_points_at_the_one_command_line():
    reply = subprocess.run(
        [sys.executable, "-m", "judge_vllm.cli", "--help"], capture_output=True, text=True, cwd=REPO
    )
    assert reply.returncode == 2 and "python -m adapter.cli" in reply.stderr and not reply.stdout


def test_version_is_the_package_version(capsys):
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"judge-vllm {importlib.metadata.version('judge-vllm')}"


def test_every_subcommand_says_what_it_runs_and_extensions_come_after():
    added = []
    parser = build_parser(lambda sub: added.append(sub.add_parser("extra")))
    for argv in (
        ["model", "prepare"],
        ["serve"],
        ["stop"],
        ["health"],
        ["judge", "--prompt", "p", "--completion", "c", "--answer", "a"],
    ):
        assert callable(parser.parse_args(argv).run), argv
    assert added and parser.parse_args(["extra"]).command == "extra"


def test_only_serve_takes_unknown_arguments(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["stop", "--pid-file", str(tmp_path / "pid"), "--bogus"])
    assert exited.value.code == 2 and "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_judge_with_an_unknown_profile_is_a_clear_error_and_exit_2(capsys):
    code = main(["judge", "--url", "http://127.0.0.1:9", "--profile", "nope", "--prompt", "q",
                 "--completion", "c", "--answer", "a"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: profile:") and "compassverifier" in err and "Traceback" not in err


def test_a_judge_that_cannot_be_reached_is_named_with_the_command_that_checks_it(capsys):
    """The error names the URL (its credentials hidden) and ``judge-vllm health`` on it, not only
    "All connection attempts failed"."""
    from judge_vllm.testing.ports import free_port

    port = free_port()  # nobody listens there
    code = main(["judge", "--url", f"http://alice:pw-cli-8812@127.0.0.1:{port}/v1", "--prompt", "q",
                 "--completion", "c", "--answer", "a", "--judge-timeout", "2"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"error: cannot connect to the judge server at http://***@127.0.0.1:{port}: ")
    assert f"check: judge-vllm health --url http://***@127.0.0.1:{port}" in err and "pw-cli-8812" not in err


def _asked_body(fake_judge, argv: list[str]) -> dict[str, object]:
    """What the judge is asked for (system message, constraint, token budget) by ``argv``."""
    assert main(["judge", "--url", fake_judge.url, "--prompt", "2+2?", "--completion", "4", *argv]) == 0
    body = fake_judge.last_body
    assert body is not None
    return {"system": body["messages"][0], **{k: body.get(k) for k in ("structured_outputs", "max_tokens")}}


def _library_body(fake_judge) -> dict[str, object]:
    async def judge() -> None:
        config = JudgeClientConfig(judge_url=fake_judge.url, judge_timeout=60.0)
        async with JudgeClient(config) as client:
            await client.judge(JudgeRequest(prompt="2+2?", completion="4", answer="4"))

    asyncio.run(judge())
    body = fake_judge.last_body
    assert body is not None
    return {"system": body["messages"][0], **{k: body.get(k) for k in ("structured_outputs", "max_tokens")}}


def test_judge_asks_by_the_library_s_default_mode_and_profile(fake_judge, capsys):
    from_cli = _asked_body(fake_judge, ["--answer", "4"])
    assert json.loads(capsys.readouterr().out)["score"] == 1.0
    assert from_cli == _library_body(fake_judge)


@pytest.mark.parametrize("separator", [[], ["--"]])
def test_serve_passes_extra_arguments_to_vllm_with_or_without_a_double_dash(tmp_path, monkeypatch, capsys, separator):
    """`judge-vllm serve ... -- --kv-cache-memory-bytes N` once reached vLLM with the "--" (it exited)."""
    import judge_vllm.cli as cli

    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text("{}")
    started = []

    class Stopped(Exception):
        pass

    def fake_start(options, log_file=None):
        started.append(options)
        raise Stopped

    monkeypatch.setattr(cli.launcher, "start", fake_start)
    with pytest.raises(Stopped):
        main(["serve", "--model", str(model), *separator, "--kv-cache-memory-bytes", "536870912"])
    assert started[0].extra_args == ("--kv-cache-memory-bytes", "536870912")
    assert " -- " not in capsys.readouterr().err
