"""A real GRPOTrainer rewarded by the real vLLM CPU judge, its in-process metrics endpoint
(``metrics_port``) scraped over HTTP after each reward batch while training runs."""

from __future__ import annotations

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from adapter.integrations.trl import judge_reward_func
from tiny_grpo import run_grpo

pytestmark = pytest.mark.e2e


def _reward_samples(url: str) -> dict[str, float]:
    """The judge's reward histogram count and the rewards by source, from one scrape."""
    text = httpx.get(url, timeout=10.0).text
    samples: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "judge_reward_value_count":
                samples["values"] = samples.get("values", 0.0) + s.value
            elif s.name == "judge_rewards_total":
                samples[s.labels["source"]] = s.value
    return samples


def test_the_trainer_process_serves_the_reward_series_during_training(judge_url, tmp_path):
    # fallback off: a judge failure would show as None, not as a rule reward in the histogram.
    config = {"judge_url": judge_url, "mode": "fast", "cache_dir": str(tmp_path / "cache"), "reward_timeout": 600,
              "fallback_to_rule": False, "metrics_port": 0}  # fmt: skip
    func = judge_reward_func(config)
    system = func.reward_system
    url = system.metrics_endpoint.url
    scrapes = [_reward_samples(url)]
    reward_batch = system.reward_batch

    def scraped_reward_batch(items):  # a scrape from outside the trainer, after each batch
        results = reward_batch(items)
        scrapes.append(_reward_samples(url))
        return results

    system.reward_batch = scraped_reward_batch
    try:
        _, returned = run_grpo(func, tmp_path)
    finally:
        func.close()
    assert [len(r) for r in returned] == [4, 4]
    assert scrapes[0].get("values", 0) == 0
    # Every reward the trainer got is in the histogram by the next scrape, none from a fallback.
    assert [s["values"] for s in scrapes[1:]] == [4, 8]
    assert scrapes[-1].get("judge", 0) + scrapes[-1].get("cache", 0) == 8
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, timeout=5.0)
