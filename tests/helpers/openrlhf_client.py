"""OpenRLHF's own reward client, driven as a rollout drives it, for the OpenRLHF unit tests and the
end-to-end tests: ``load_openrlhf_agent`` loads ``openrlhf/utils/agent.py`` from the installed
wheel, ``rollouts`` runs its ``execute`` with a scripted engine, ``openrlhf_rm_cli`` starts
``judge-vllm openrlhf-rm`` as a user does, ``write_config`` writes its config."""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import httpx
import pytest
import torch
import yaml

from judge_vllm.testing.ports import free_port

TEMPLATE = "<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"
EXTRA_LOGS = {
    "judge_latency_s",
    "judge_source",
    "judge_fallback",
    "judge_cached",
    "judge_prechecked",
    "judge_fallback_reason",
    "judge_confidence",
}
CLI_START_TIMEOUT_S = 60.0


def load_openrlhf_agent() -> ModuleType:
    """OpenRLHF's ``openrlhf/utils/agent.py`` from the installed wheel; its one OpenRLHF import,
    ``openrlhf.utils.logging_utils`` (logging only), comes from the wheel too."""
    spec = importlib.util.find_spec("openrlhf")
    assert spec is not None and spec.submodule_search_locations, "openrlhf missing: run scripts/setup.sh"
    utils = Path(spec.submodule_search_locations[0]) / "utils"

    def load(name: str) -> ModuleType:
        module_spec = importlib.util.spec_from_file_location(f"openrlhf.utils.{name}", utils / f"{name}.py")
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        return module

    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "openrlhf.utils.logging_utils", load("logging_utils"))
        return load("agent")


class CharTokenizer:
    """What ``execute`` needs of a Hugging Face tokenizer: one token per character."""

    def __call__(self, text: str, **kwargs: Any) -> dict[str, torch.Tensor]:
        return {"input_ids": torch.tensor([[ord(char) for char in text]])}

    def decode(self, token_ids: list[int], skip_special_tokens: bool = False) -> str:
        return "".join(map(chr, token_ids))


class ScriptedEngine:
    """What ``execute`` needs of vLLM's engine: ``generate`` answers the response given for the
    prompt's question, or what ``responses(prompt so far)`` returns (a multi-turn script)."""

    def __init__(self, responses: dict[str, str] | Callable[[str], str], tokenizer: Any) -> None:
        self.responses = responses
        self.tokenizer = tokenizer

    async def generate(self, prompt_token_ids: list[int], params: Any, **kwargs: Any) -> SimpleNamespace:
        prompt = self.tokenizer.decode(prompt_token_ids, skip_special_tokens=False)
        if callable(self.responses):
            text = self.responses(prompt)
        else:
            text = next(answer for question, answer in self.responses.items() if question in prompt)
        ids = self.tokenizer(text=text, add_special_tokens=False, return_tensors="pt")["input_ids"][
            0
        ].tolist()
        output = SimpleNamespace(token_ids=ids, text=text, finish_reason="stop", logprobs=None)
        return SimpleNamespace(outputs=[output])


def rollouts(
    executor: Any,
    samples: list[tuple[str, str, str]],
    template: str = TEMPLATE,
    tokenizer: Any = None,
    script: Callable[[str], str] | None = None,
) -> list[dict[str, Any]]:
    """OpenRLHF's ``execute`` for each (question, response, label), all at once as in a rollout.

    ``template`` holds ``{question}``; the engine answers by question (so they must differ), or
    with ``script(text so far)`` for multi-turn agents, each response ending with the end-of-turn
    token, as vLLM generates it."""
    tokenizer = tokenizer or CharTokenizer()
    answers: dict[str, str] | Callable[[str], str] = (
        {q: r + "<|im_end|>" for q, r, _ in samples}
        if script is None
        else lambda text: script(text) + "<|im_end|>"
    )
    engine = ScriptedEngine(answers, tokenizer)
    params = SimpleNamespace(max_tokens=None, logprobs=None)

    async def run() -> list[dict[str, Any]]:
        return await asyncio.gather(
            *(
                executor.execute(template.replace("{question}", q), label, params, 4096, tokenizer, engine)
                for q, _, label in samples
            )
        )

    return asyncio.run(run())


def write_config(path: Path, judge_url: str, **overrides: Any) -> Path:
    config = {"judge_url": judge_url, "cache_dir": str(path.parent / "cache"), "max_retries": 0, **overrides}
    path.write_text(yaml.safe_dump(config))
    return path


@contextmanager
def openrlhf_rm_cli(config: Path, *args: str) -> Iterator[str]:
    """``judge-vllm openrlhf-rm`` as a user starts it, on a loopback port; yields /get_reward."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "adapter.cli",
        "openrlhf-rm",
        "--port",
        str(port),
        "--config",
        str(config),
    ]
    process = subprocess.Popen([*command, *args], stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + CLI_START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                pytest.fail(
                    f"judge-vllm openrlhf-rm exited: {process.stderr.read() if process.stderr else ''}"
                )
            try:
                if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"judge-vllm openrlhf-rm did not answer /health in {CLI_START_TIMEOUT_S:g} s")
            time.sleep(0.2)
        yield f"{url}/get_reward"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()
