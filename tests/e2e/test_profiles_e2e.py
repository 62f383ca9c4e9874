"""Every bundled judge profile against the real vLLM CPU judge (SmolLM2: a weak judge, so these
check the contract, never the quality): valid rewards on the chat and completions endpoints,
single and batched, label probabilities where labels are one token, and regex-constrained
chain-of-thought replies that always reach their verdict within the token budget."""

import pytest

from adapter import JudgeRewardSystem
from judge_vllm.client import JudgeClient
from judge_vllm.profiles import builtin_profile_names, load_profile
from judge_vllm.schemas import JudgeRequest, Verdict
from judge_vllm.settings import JudgeClientConfig

pytestmark = pytest.mark.e2e

RUBRIC = {
    "criteria": "Is the answer correct?",
    **{f"score{i}_description": f"level {i}" for i in range(1, 6)},
}
REQUESTS = [
    JudgeRequest(prompt="What is 12 - 5?", completion="12 - 5 = 7, so the answer is \\boxed{7}.", answer="7"),
    JudgeRequest(prompt="What is the capital of France?", completion="It is Lyon.", answer="Paris"),
    JudgeRequest(prompt="Simplify 2(x+1).", completion="Expanding gives 2x+2.", answer="2x + 2"),
]
# CPU budgets: chain-of-thought profiles get a short analysis (the regex bounds it to the budget).
MAX_TOKENS = {"compassverifier-cot": 96, "general-verifier": 64, "prometheus": 96}


def _config(judge_url, profile, **extra):
    return JudgeClientConfig(
        judge_url=judge_url,
        profile=profile,
        judge_timeout=300,
        max_tokens=MAX_TOKENS.get(profile),
        score_rubric=RUBRIC if profile == "prometheus" else None,
        **extra,
    )


def _requests(spec) -> list[JudgeRequest]:
    """The requests a profile takes: one completion each, or (comparing profiles) the completions
    of a question shown together (pairwise: two, listwise: three)."""
    if not spec.compares:
        return REQUESTS
    shown = 3 if spec.output == "ranking" else 2
    wrong = ["12 - 5 = 8.", "It is 6.", "The answer is 7, I think."][: shown - 1]
    return [JudgeRequest(prompt=r.prompt, answer=r.answer, responses=(r.completion, *wrong)) for r in REQUESTS]


@pytest.mark.parametrize("profile", builtin_profile_names())
async def test_every_bundled_profile_returns_valid_verdicts_single_and_batched(judge_url, profile):
    spec = load_profile(profile)
    requests = _requests(spec)
    async with JudgeClient(_config(judge_url, profile)) as client:
        single = await client.judge(requests[0])
        batched = await client.judge_many(requests)
    for verdict in (single, *batched):
        assert isinstance(verdict, Verdict), verdict
        assert 0.0 <= verdict.score <= 1.0
        if spec.output == "ranking":
            assert sorted(verdict.ranking) == [0, 1, 2], verdict
        else:
            assert verdict.label in spec.labels
    if spec.constraint == "choice" and spec.max_tokens == 1:  # one-token labels: probability-weighted
        assert all(v.confidence is not None and 0.0 < v.confidence <= 1.0 for v in (single, *batched))


async def test_the_completions_endpoint_weighs_labels_at_the_verdict_position(judge_url):
    async with JudgeClient(_config(judge_url, "general-verifier")) as client:
        verdicts = await client.judge_many(REQUESTS)
    assert client.endpoint(3) == "/v1/completions"
    assert all(isinstance(v, Verdict) and "Final Decision:" in v.raw for v in verdicts), verdicts
    # Where the label was written as one token the reward is P(Yes) with a confidence (measured:
    # SmolLM2 writes " Yes"/" No" as one token after "Final Decision:"), else the sampled label's.
    assert any(v.confidence is not None for v in verdicts)
    for v in verdicts:
        if v.confidence is not None:
            p_yes = v.score
            assert max(p_yes, 1 - p_yes) == pytest.approx(v.confidence)


async def test_chain_of_thought_replies_reach_their_verdict_within_a_small_budget(judge_url):
    async with JudgeClient(_config(judge_url, "compassverifier-cot")) as client:
        verdicts = await client.judge_many(REQUESTS)
    for verdict in verdicts:
        assert isinstance(verdict, Verdict), verdict
        assert verdict.raw.rstrip().endswith(("\\boxed{A}", "\\boxed{B}", "\\boxed{C}"))


def test_cascade_through_the_facade_with_a_verifier_profile(judge_url, tmp_path):
    config = {"judge_url": judge_url, "profile": "compassverifier", "strategy": "cascade",
              "cache_dir": str(tmp_path / "c"), "reward_timeout": 120}  # fmt: skip
    items = [{"prompt": r.prompt, "completion": r.completion, "answer": r.answer} for r in REQUESTS]
    items.append({"prompt": "q", "completion": "<think>It is 7 or 8", "answer": "7"})
    with JudgeRewardSystem(config) as rs:
        results = rs.reward_batch(items)
        metrics = rs.get_metrics()
    assert results[0]["source"] == "rule" and results[0]["reason"] == "cascade"  # verified \\boxed{7}
    assert results[1]["source"] == "judge" and 0.0 <= results[1]["reward"] <= 1.0  # a TEXT mismatch
    assert results[3]["reason"] == "unclosed_reasoning"
    assert metrics["cascade"]["sent_to_judge"] >= 1 and metrics["cascade"]["decided_by_rule"] >= 1
