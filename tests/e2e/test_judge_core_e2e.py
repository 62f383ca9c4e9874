"""The judge core against a real vLLM CPU server running SmolLM2 (started once per run)."""

import asyncio
import json
import subprocess
import sys

import httpx
import pytest

from judge_prompts import clip_middle, render_prompt
from judge_vllm.client import JudgeClient
from judge_vllm.schemas import AnswerType, JudgeRequest, Verdict
from judge_vllm.settings import JudgeClientConfig

pytestmark = pytest.mark.e2e

CASES = {
    "NUMBER": ("What is 12 - 5?", "12 - 5 = 7, so the answer is \\boxed{7}.", "7"),
    "MATH_EXPRESSIONS": ("Simplify 2(x+1).", "Expanding gives \\boxed{2x+2}.", "2x + 2"),
    "MULTIPLE_CHOICE": ("Which is a prime? (A) 4 (B) 6 (C) 7 (D) 9", "The answer is (C).", "C"),
    "TEXT": ("What is the capital of France?", "The capital of France is Paris.", "Paris"),
    "SOMETHING_ELSE": ("Name a primary colour.", "Red.", "red"),
}


def _request(answer_type: str) -> JudgeRequest:
    prompt, completion, answer = CASES[answer_type]
    return JudgeRequest(prompt=prompt, completion=completion, answer=answer, answer_type=answer_type)


@pytest.mark.parametrize("mode", ["verdict", "fast"])
@pytest.mark.parametrize("answer_type", list(CASES))
async def test_every_answer_type_yields_a_valid_verdict(judge_url, answer_type, mode):
    async with JudgeClient(JudgeClientConfig(judge_url=judge_url, mode=mode, judge_timeout=120)) as client:
        verdict = await client.judge(_request(answer_type))
    assert isinstance(verdict, Verdict) and 0.0 <= verdict.score <= 1.0
    if mode == "verdict":
        reply = json.loads(verdict.raw)
        assert list(reply) == ["score", "explanation"] and reply["score"] in range(1, 6)
        assert len(reply["explanation"]) <= 120
    else:
        assert verdict.label in client.profile.labels and 0.0 < verdict.confidence <= 1.0


async def test_32_concurrent_calls_all_return_valid_verdicts(judge_url):
    types = list(CASES)
    requests = [_request(types[i % len(types)]) for i in range(32)]
    config = JudgeClientConfig(judge_url=judge_url, judge_timeout=300, max_explanation_chars=40)
    async with JudgeClient(config) as client:
        results = await asyncio.gather(*(client.judge(r) for r in requests))
    assert len(results) == 32 and all(isinstance(v, Verdict) for v in results)


@pytest.mark.parametrize("use_batch_endpoint", [True, False])
async def test_batch_endpoint_and_single_calls_both_work(judge_url, use_batch_endpoint):
    requests = [_request(t) for t in CASES]
    config = JudgeClientConfig(
        judge_url=judge_url, mode="fast", use_batch_endpoint=use_batch_endpoint, judge_timeout=120
    )
    async with JudgeClient(config) as client:
        results = await client.judge_many(requests)
    assert all(isinstance(v, Verdict) for v in results), results
    assert len(results) == len(requests)


async def test_batch_and_single_paths_agree_in_fast_mode(judge_url):
    """Greedy decoding on the same prompts: the two paths must give the same label."""
    requests = [_request(t) for t in AnswerType.__members__]
    async with JudgeClient(JudgeClientConfig(judge_url=judge_url, mode="fast", judge_timeout=120)) as client:
        batched = await client.judge_many(requests)
        single = [await client.judge(r) for r in requests]
    assert [v.raw for v in batched] == [v.raw for v in single]


@pytest.mark.parametrize("answer_type", list(AnswerType.__members__))
def test_cli_judge_prints_a_valid_verdict(judge_url, answer_type):
    prompt, completion, answer = CASES[answer_type]
    out = subprocess.run(
        [sys.executable, "-m", "adapter.cli", "judge", "--url", judge_url, "--prompt", prompt,
         "--completion", completion, "--answer", answer, "--answer-type", answer_type],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    verdict = json.loads(out.stdout)
    assert 0.0 <= verdict["score"] <= 1.0 and verdict["request_id"]


def test_cli_health(judge_url):
    out = subprocess.run(
        [sys.executable, "-m", "adapter.cli", "health", "--url", judge_url],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0 and json.loads(out.stdout)["model"] == "smollm2"


LONG_COMPLETIONS = {
    "digits": " ".join(str(i % 10) for i in range(500_000)),
    # Multi-byte characters: a cut inside one comes back as U+FFFD, re-tokenised differently.
    "cjk-and-emoji": "答案是七 🙂🧮 " * 20_000,
    "no-spaces": "7" * 200_000,
}


@pytest.mark.parametrize("shape", list(LONG_COMPLETIONS))
async def test_a_long_completion_is_cut_once_by_tokens_and_the_real_judge_accepts_it(judge_url, shape):
    """Within its character budget each completion still overflows the 4096-token context; cut
    once, the prompt is not measured again, and vLLM (which rejects an overflowing prompt) judges it."""
    completion = LONG_COMPLETIONS[shape] + "\nSo the answer is \\boxed{7}."
    request = JudgeRequest(prompt=CASES["NUMBER"][0], completion=completion, answer="7", answer_type="NUMBER")
    clipped = render_prompt(request.prompt, clip_middle(completion, 6000), request.answer, "NUMBER")
    async with httpx.AsyncClient(base_url=judge_url, timeout=60) as http:
        measured = (await http.post("/tokenize", json={"messages": clipped.messages()})).json()
    assert measured["count"] > measured["max_model_len"]  # the character budget alone fails here
    async with JudgeClient(JudgeClientConfig(judge_url=judge_url, mode="fast", judge_timeout=120)) as client:
        verdict = await client.judge(request)
        assert client.context_cuts == 1
        assert verdict.label in client.profile.labels
