"""scripts/demo.sh installs and prepares only what the demo needs (JUDGE_VLLM_DRY_RUN=1 plans).

On a machine with nothing installed (a .venv that does not exist), a dry run prints every step
that would change something: the demo never installs a trainer, and a judge it can reuse (at
JUDGE_URL, or answering on its port) means no vLLM and no model to prepare. The full set-up
installs the trainers after their dependencies, so pip never checks a trainer's pins.
"""

import itertools
import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from judge_vllm.testing.fake_server import FakeJudgeServer

REPO = Path(__file__).resolve().parent.parent
TRAINERS = {"verl", "openrlhf", "trl", "deepspeed", "ray", "tensordict"}


def _run(script: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``script`` in a dry run, on a machine whose .venv does not exist yet."""
    return subprocess.run(
        ["bash", script],
        cwd=REPO,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith(("JUDGE", "VIRTUAL_ENV"))},
            "JUDGE_VLLM_DRY_RUN": "1",
            "JUDGE_VLLM_VENV": str(tmp_path / "venv"),
            "JUDGE_VLLM_BASE_PYTHON": sys.executable,
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )


def _dry_run(script: str, tmp_path: Path, **env: str) -> list[str]:
    """The commands ``script`` would run, after checking that it succeeded and changed nothing."""
    run = _run(script, tmp_path, **env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert not (tmp_path / "venv").exists()
    return [
        line.removeprefix("dry-run: ") for line in run.stderr.splitlines() if line.startswith("dry-run: ")
    ]


def _installed(steps: list[str]) -> set[str]:
    """What the steps' pip installs ask for: distributions, and judge-vllm's extras as ``[x]``."""
    asked: set[str] = set()
    for words in map(shlex.split, steps):
        if words[1:4] != ["-m", "pip", "install"]:
            continue
        for before, word in itertools.pairwise(words[3:]):
            if word.startswith("-") or before == "-c":
                continue
            if word.startswith(".["):
                asked.update(f"[{extra}]" for extra in word[2:-1].split(","))
            else:
                asked.add(re.split(r"[<>=!\[]", word)[0].lower())
    return asked


def _prepares_or_serves(steps: list[str]) -> list[str]:
    return [s for s in steps if re.search(r"adapter\.cli (model prepare|serve)\b", s)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_judge_url_installs_the_eval_extras_only_and_prepares_no_model(tmp_path):
    with FakeJudgeServer(model="qwen2.5-coder-1.5b", basic_auth="me:secret") as judge:
        url = judge.url.replace("//", "//me:secret@")
        steps = _dry_run("scripts/demo.sh", tmp_path, JUDGE_URL=url + "/v1")

    assert _installed(steps) == {"[eval]"}
    assert _prepares_or_serves(steps) == []
    assert any("eval.cli" in s for s in steps)


@pytest.mark.parametrize("judge", ["qwen2.5-coder-1.5b", "smollm2"])
def test_a_judge_answering_on_the_port_is_reused(tmp_path, judge):
    with FakeJudgeServer(model=judge) as server:
        steps = _dry_run("scripts/demo.sh", tmp_path, JUDGE_DEMO_PORT=str(server.port), JUDGE=judge)

    assert _installed(steps) == {"[eval]"}
    assert _prepares_or_serves(steps) == []


def test_with_no_judge_the_demo_installs_vllm_and_prepares_one_but_no_trainer(tmp_path):
    steps = _dry_run("scripts/demo.sh", tmp_path, JUDGE_DEMO_PORT=str(_free_port()))

    asked = _installed(steps)
    assert {"[eval]", "[models]"} <= asked and asked & {"[cpu]", "[gpu]"}  # the vLLM for this machine
    assert not asked & (TRAINERS | {"[dev]", "[trl]"})
    assert [s.split("adapter.cli ")[1].split(" --")[0] for s in _prepares_or_serves(steps)] == [
        "model prepare qwen2.5-coder-1.5b",
        "serve",
    ]


def test_the_demo_refuses_a_port_serving_another_model(tmp_path):
    with FakeJudgeServer(model="other") as server:
        run = _run("scripts/demo.sh", tmp_path, JUDGE_DEMO_PORT=str(server.port))
    assert run.returncode == 2 and "serves other, not qwen2.5-coder-1.5b" in run.stderr
    assert not (tmp_path / "venv").exists()


def test_the_full_setup_installs_each_trainer_after_its_dependencies_without_them(tmp_path):
    steps = [s for s in _dry_run("scripts/setup.sh", tmp_path) if " pip install " in s]

    assert {"[dev]", "verl", "openrlhf", "ray", "tensordict"} <= _installed(steps)
    for trainer, dependency in (("verl==", "tensordict"), ("openrlhf==", "aiohttp")):
        (at,) = [i for i, s in enumerate(steps) if trainer in s]
        assert "--no-deps" in steps[at]
        assert any(dependency in s for s in steps[:at])


def _served_model(url: str) -> str:
    return subprocess.run(
        [sys.executable, "scripts/served_model.py", url], cwd=REPO, capture_output=True, text=True, timeout=30
    ).stdout.strip()


def test_served_model_names_what_a_judge_serves_and_nothing_where_none_answers():
    with FakeJudgeServer(model="m", basic_auth="u:p@ss") as judge:
        assert _served_model(judge.url.replace("//", "//u:p%40ss@") + "/v1/") == "m"
        assert _served_model(judge.url) == ""  # 401 without the credentials
    assert _served_model(f"http://127.0.0.1:{_free_port()}") == ""
