"""Shared fixtures. The real judge: a vLLM CPU server with SmolLM2, started once per run.

Set ``JUDGE_TEST_URL`` to reuse a server that is already running (local development).
The end-to-end tests never skip: if the server cannot start, they fail with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from judge_vllm import launcher
from judge_vllm.model_prep import prepare_model
from judge_vllm.testing.fake_server import FakeJudgeServer
from judge_vllm.testing.ports import free_port

REPO = Path(__file__).resolve().parents[1]
SERVER_START_TIMEOUT_S = 900.0


@pytest.fixture(scope="session")
def judge_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a real vLLM judge server (SmolLM2 on CPU)."""
    reuse = os.environ.get("JUDGE_TEST_URL")
    if reuse:
        launcher.wait_healthy(reuse, 30.0)
        yield reuse
        return
    for url, _ in _real_judge(tmp_path_factory, ()):
        yield url


@pytest.fixture(scope="module")
def second_judge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A second real vLLM judge server of our own (a small KV cache), for replica pools: its URL
    and pid (a test may stop it); stopped after its module."""
    yield from _real_judge(tmp_path_factory, ("--kv-cache-memory-bytes", "536870912"))


def _real_judge(
    tmp_path_factory: pytest.TempPathFactory, extra: tuple[str, ...]
) -> Iterator[tuple[str, int]]:
    model = prepare_model("smollm2", REPO / "models")
    port = free_port()
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    options = launcher.ServeOptions(model=model, served_model_name="smollm2", port=port, extra_args=extra)
    process = launcher.start(options, log_file=log)
    url = f"http://127.0.0.1:{port}"
    try:
        launcher.wait_healthy(url, SERVER_START_TIMEOUT_S, process)
    except Exception as err:
        launcher.stop(process.pid)
        tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        pytest.fail(f"vLLM judge server did not start: {err}\n{tail}")
    yield url, process.pid
    launcher.stop(process.pid)


@pytest.fixture
def fake_judge() -> Iterator[FakeJudgeServer]:
    """A loopback fake judge with no faults; change them with ``set_plan``."""
    with FakeJudgeServer() as server:
        yield server


@pytest.fixture
def user_profile(tmp_path: Path):
    """``user_profile(profile_yaml, template="...") -> folder``: a user's judge profile folder."""

    def write(profile_yaml: str, template: str = "{{ prompt }} {{ completion }} {{ answer }}") -> Path:
        folder = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
        folder.mkdir()
        (folder / "user.j2").write_text(template)
        (folder / "profile.yaml").write_text(profile_yaml)
        return folder

    return write


@pytest.fixture
def answer_type_registries() -> Iterator[None]:
    """Answer types a test registers (``adapter.rules.answer_types.register``,
    ``judge_prompts.register_rubric``) are forgotten after it."""
    import judge_prompts
    from adapter.rules import answer_types

    grammars, rubrics, registered = (dict(answer_types._GRAMMARS), dict(judge_prompts.RUBRICS),
                                     dict(judge_prompts._REGISTERED))  # fmt: skip
    yield
    for live, saved in ((answer_types._GRAMMARS, grammars), (judge_prompts.RUBRICS, rubrics),
                        (judge_prompts._REGISTERED, registered)):  # fmt: skip
        live.clear()
        live.update(saved)
    for cached in (judge_prompts._environment, judge_prompts._system_prompt, judge_prompts.template_version):
        cached.cache_clear()
