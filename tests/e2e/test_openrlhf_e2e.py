"""OpenRLHF 0.11.2's own reward client rewarded by the real vLLM CPU judge (SmolLM2), both ways:
``judge-vllm openrlhf-rm`` and the shipped ``reward_func`` file. Contracts only (a weak model)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer

from adapter.cli import main as judge_vllm_main
from adapter.integrations import openrlhf_inprocess
from judge_vllm.model_prep import prepare_model
from openrlhf_client import EXTRA_LOGS, load_openrlhf_agent, openrlhf_rm_cli, rollouts, write_config

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
SAMPLES = [
    ("What is 6*7?", "The answer is 42.", "42"),
    ("What is the capital of France?", "The capital of France is Paris.", "Paris"),
]


@pytest.mark.parametrize("way", ["openrlhf-rm", "reward_func"])
def test_openrlhfs_client_gets_rewards_from_the_real_judge(judge_url, tmp_path, monkeypatch, capsys, way):
    agent = load_openrlhf_agent()
    tokenizer = AutoTokenizer.from_pretrained(prepare_model("smollm2", REPO / "models"))
    template = tokenizer.apply_chat_template(
        [{"role": "user", "content": "{question}"}], tokenize=False, add_generation_prompt=True
    )
    # a judge failure must show as a missing reward, not hide behind the rules
    config = write_config(tmp_path / "openrlhf.yaml", judge_url, reward_timeout=120, fallback_to_rule=False)
    if way == "openrlhf-rm":
        with openrlhf_rm_cli(config) as url:
            outputs = rollouts(agent.SingleTurnAgentExecutor(url), SAMPLES, template, tokenizer)
    else:
        assert judge_vllm_main(["openrlhf-rm", "--print-reward-func-path"]) == 0
        monkeypatch.setenv("JUDGE_REWARD_CONFIG", str(config))
        executor = agent.SingleTurnAgentExecutor(capsys.readouterr().out.strip())
        try:
            outputs = rollouts(executor, SAMPLES, template, tokenizer)
        finally:
            openrlhf_inprocess.close_reward_system()
    for output in outputs:
        reward, logs = output["reward"], output["extra_logs"]
        assert reward is not None, "no reward: the judge failed"
        value = reward.item() if isinstance(reward, torch.Tensor) else reward[0]
        assert 0.0 <= value <= 1.0
        numbers = {key: float(values[0]) for key, values in logs.items()}
        assert set(numbers) == EXTRA_LOGS
        assert numbers["judge_source"] == 0.0 and numbers["judge_fallback"] == 0.0  # the judge's verdict
        assert 0.0 < numbers["judge_confidence"] <= 1.0 and numbers["judge_latency_s"] > 0.0
