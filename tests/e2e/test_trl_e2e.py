"""A real GRPOTrainer rewarded by the real vLLM CPU judge (SmolLM2) through judge_reward_func:
multi-turn prompts with a system prompt, and the judge's source and explanation in the
trainer's completions table; each prompt's generations compared pairwise; a judgment log
written in training, read back by ``judge-eval --from-log``."""

from __future__ import annotations

import json

import pytest

from adapter.integrations.trl import DEFAULT_NAME, judge_reward_func
from eval.cli import main
from eval.log_report import LOG_REPORT_JSON, LOG_REPORT_MD
from tiny_grpo import completions_table, run_grpo, step_logs

pytestmark = pytest.mark.e2e


def test_grpo_trainer_with_the_real_judge(judge_url, tmp_path):
    config = {
        "judge_url": judge_url,
        "mode": "fast",
        "cache_dir": str(tmp_path / "cache"),
        "reward_timeout": 600,
        "fallback_to_rule": False,  # a judge failure must show as None, not hide behind the rules
    }
    func = judge_reward_func(config)
    try:
        trainer, returned = run_grpo(func, tmp_path, conversational=True)
        metrics = func.reward_system.get_metrics()
    finally:
        func.close()
    logs = step_logs(trainer)
    assert len(logs) == 2 and [len(r) for r in returned] == [4, 4]
    for log, rewards in zip(logs, returned, strict=True):
        assert all(r is not None and 0.0 <= r <= 1.0 for r in rewards), rewards
        assert log[f"rewards/{DEFAULT_NAME}/mean"] == pytest.approx(sum(rewards) / 4, abs=1e-6)
        assert log["judge/none_rate"] == 0.0 and log["judge/fallback_rate"] == 0.0
    assert metrics["sources"].get("judge", 0) >= 1 and metrics["model"] == "smollm2"
    table = completions_table(tmp_path, 2)
    assert len(table) == 4 and set(table["judge_source"]) <= {"judge", "cache"}
    assert all(e.startswith("expected reward") for e in table["judge_explanation"]), list(
        table["judge_explanation"]
    )


def test_grpo_trainer_compares_each_prompts_generations_with_the_real_judge(judge_url, tmp_path):
    config = {
        "judge_url": judge_url,
        "cache_dir": str(tmp_path / "cache"),
        "reward_timeout": 600,
        "fallback_to_rule": False,
        "group": {"mode": "pairwise", "deadline": 600},
    }
    func = judge_reward_func(config)
    try:
        trainer, returned = run_grpo(func, tmp_path, conversational=True)
    finally:
        func.close()
    logs = step_logs(trainer)
    assert len(logs) == 2 and [len(group) for group in returned] == [2, 2, 2, 2]  # 2 steps x 2 prompts
    for log, groups in zip(logs, (returned[:2], returned[2:]), strict=True):
        rewards = [r for group in groups for r in group]
        assert all(r is not None and 0.0 <= r <= 1.0 for r in rewards), rewards
        assert log[f"rewards/{DEFAULT_NAME}/mean"] == pytest.approx(sum(rewards) / 4, abs=1e-6)
    table = completions_table(tmp_path, 2)
    assert list(table["judge_reason"]) == ["pairwise"] * 4, list(table["judge_source"])
    assert all(e.startswith("pairwise: 2 comparison(s)") for e in table["judge_explanation"])


def test_a_grpo_run_writes_a_judgment_log_that_judge_eval_reads_back(judge_url, tmp_path):
    log = tmp_path / "logs" / "judgments.jsonl"
    config = {"judge_url": judge_url, "mode": "fast", "use_cache": False, "reward_timeout": 600,
              "fallback_to_rule": False, "judgment_log_path": str(log), "judgment_log_sample_rate": 1.0}  # fmt: skip
    func = judge_reward_func(config)
    try:
        _, returned = run_grpo(func, tmp_path)
        system = func.reward_system
    finally:
        func.close()  # writes what the log still holds
    metrics = system.get_metrics()["judgment_log"]
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    rewards = [r for step in returned for r in step]
    assert metrics["logged"] == len(lines) == len(rewards) == 8
    assert metrics["dropped"] == metrics["errors"] == 0
    assert sorted(line["reward"] for line in lines) == sorted(rewards)
    assert {(line["source"], line["model"]) for line in lines} == {("judge", "smollm2")}
    assert all(line["label"] in {"Yes", "No"} and 0 <= line["confidence"] <= 1 for line in lines)

    out = tmp_path / "report"
    assert main(["--from-log", str(log), "--out", str(out)]) == 0
    summary = json.loads((out / LOG_REPORT_JSON).read_text())
    assert summary["judgments"] == 8 and summary["bad_lines"] == 0 and summary["sources"] == {"judge": 8}
    assert sum(c["n"] for c in summary["labels"]) == 8
    assert "Reward histograms" in (out / LOG_REPORT_MD).read_text()
