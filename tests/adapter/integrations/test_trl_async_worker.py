"""Our reward functions in TRL's ``AsyncGRPOTrainer`` rollout worker: pickled into a spawned process.

TRL 1.16's ``AsyncGRPOTrainer`` (``trl.experimental.async_grpo``) cannot train on this CPU
machine: its loss runs the FlashAttention-3 "tree" kernel (``packing.py``). The part that
takes our reward functions is its ``AsyncRolloutWorker``, which pickles them (``start()``
refuses what does not pickle) into a CUDA-free spawned child; there they score each group
of completions the policy's vLLM server generated. That worker runs here as the trainer
builds it, with a loopback stand-in for the policy's vLLM ``/v1/completions`` and the fake
judge (tests/conftest.py) as the judge.
"""

from __future__ import annotations

import itertools
import json
import queue
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from adapter.integrations.trl import async_judge_reward_func, judge_reward_func
from judge_vllm.model_prep import prepare_model

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]
SYSTEM = "You are a terse tutor. Answer with one word or number."
DIALOGUE = [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": "What is 1+1?"},
    {"role": "assistant", "content": "2"},
    {"role": "user", "content": "What is 2+2?"},
]
TRANSCRIPT = f"system: {SYSTEM}\n\nuser: What is 1+1?\n\nassistant: 2\n\nuser: What is 2+2?"
RIGHT, WRONG = "The answer is 4.", "I think it is 5."


class PolicyServer(ThreadingHTTPServer):
    """The policy's vLLM server as the worker uses it: ``/v1/completions`` answering token ids
    and their logprobs, the given completions in turn."""

    def __init__(self, completions: list[list[int]]) -> None:
        super().__init__(("127.0.0.1", 0), _PolicyHandler)
        self._next = itertools.cycle(completions)
        self._lock = threading.Lock()

    def next_completion(self) -> list[int]:
        with self._lock:
            return next(self._next)


class _PolicyHandler(BaseHTTPRequestHandler):
    server: PolicyServer

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        ids = self.server.next_completion()
        body = json.dumps(
            {"choices": [{"token_ids": ids, "logprobs": {"token_logprobs": [-0.5] * len(ids)}}]}
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def tokenizer() -> Any:
    """SmolLM2's tokenizer with a chat template TRL knows how to parse replies of (ChatML, like SmolLM2's)."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import qwen2_5_chat_template

    tokenizer = AutoTokenizer.from_pretrained(prepare_model("smollm2", REPO / "models"))
    tokenizer.chat_template = qwen2_5_chat_template
    return tokenizer


@pytest.fixture
def policy(tokenizer: Any) -> Iterator[str]:
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    completions = [[*tokenizer.encode(text, add_special_tokens=False), end] for text in (RIGHT, WRONG)]
    server = PolicyServer(completions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_rollout_worker_pickles_our_rewards_into_its_child_and_scores_there(
    fake_judge, tmp_path, tokenizer, policy
):
    from accelerate import PartialState
    from datasets import Dataset
    from trl.experimental.async_grpo.async_rollout_worker import AsyncRolloutWorker

    PartialState()  # as the trainer's Accelerator does: the worker logs through accelerate

    config = {"judge_url": fake_judge.url, "mode": "fast", "use_cache": False, "fallback_to_rule": False}
    sync = judge_reward_func(config, name="judge_sync")
    asynchronous = async_judge_reward_func(config, name="judge_async")
    # In use in this process first: a live loop thread and connections must not stop the pickling.
    assert sync(["What is 3+3?"], ["6"], answer=["6"]) == [pytest.approx(1.0)]
    worker = AsyncRolloutWorker(
        model_name="policy",
        dataset=Dataset.from_dict({"prompt": [DIALOGUE], "answer": ["4"], "answer_type": ["NUMBER"]}),
        reward_funcs=[sync, asynchronous],
        processing_class=tokenizer,
        eos_token_ids=[tokenizer.convert_tokens_to_ids("<|im_end|>")],
        num_generations=2,
        max_inflight_tasks=2,
        queue_maxsize=4,
        vllm_server_url=policy,
        max_tokens=16,
    )
    try:
        worker.start()
        samples = []
        for _ in range(4):  # two groups of two generations
            try:
                samples.append(worker.rollout_buffer.get(timeout=300))
            except queue.Empty:
                worker.check_health(stale_after_s=600)  # raises with the child's traceback
                raise
    finally:
        worker.stop()
        sync.close()
        asynchronous.close()
    for sample in samples:
        [message] = sample.completion
        expected = 1.0 if message["content"] == RIGHT else 0.0
        assert message["content"] in (RIGHT, WRONG)
        assert sample.metrics["rewards/judge_sync"] == pytest.approx(expected, abs=1e-6)
        assert sample.metrics["rewards/judge_async"] == pytest.approx(expected, abs=1e-6)
    # Scored in the child through its own judge rewards, which saw the whole conversation.
    assert fake_judge.judged_prompts[TRANSCRIPT] >= 2 * len(samples)
