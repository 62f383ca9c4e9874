"""A real GRPOTrainer rewarded by the real vLLM CPU judge writes a judgment log; judge-eval
--from-log reads it back. (SmolLM2 is a weak judge: this checks the plumbing, not quality.)"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from adapter.integrations.trl import judge_reward_func
from eval.cli import main
from eval.log_report import LOG_REPORT_JSON, LOG_REPORT_MD

pytestmark = pytest.mark.e2e


def _trl_helpers() -> ModuleType:
    """The TRL unit tests' module, for its tiny-trainer helpers (tests/ is not a package)."""
    path = Path(__file__).resolve().parents[1] / "adapter" / "integrations" / "test_trl.py"
    spec = importlib.util.spec_from_file_location("trl_unit_tests", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_grpo_run_writes_a_judgment_log_that_judge_eval_reads_back(judge_url, tmp_path):
    log = tmp_path / "logs" / "judgments.jsonl"
    config = {"judge_url": judge_url, "mode": "fast", "use_cache": False, "timeout": 600,
              "fallback_to_rule": False, "judgment_log_path": str(log), "judgment_log_sample_rate": 1.0}  # fmt: skip
    func = judge_reward_func(config)
    try:
        _, returned = _trl_helpers().run_grpo(func, tmp_path)
    finally:
        func.close()
    metrics = func.reward_system.get_metrics()["judgment_log"]
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    rewards = [r for step in returned for r in step]
    assert (
        metrics["logged"] == len(lines) == len(rewards) == 8 and metrics["dropped"] == metrics["errors"] == 0
    )
    assert sorted(line["reward"] for line in lines) == sorted(rewards)
    assert {line["source"] for line in lines} == {"judge"} and {line["model"] for line in lines} == {
        "smollm2"
    }
    assert all(line["label"] in {"1", "2", "3", "4", "5"} and 0 <= line["confidence"] <= 1 for line in lines)

    out = tmp_path / "report"
    assert main(["--from-log", str(log), "--out", str(out)]) == 0
    summary = json.loads((out / LOG_REPORT_JSON).read_text())
    assert summary["judgments"] == 8 and summary["bad_lines"] == 0 and summary["sources"] == {"judge": 8}
    assert sum(c["n"] for c in summary["labels"]) == 8
    assert "Reward histograms" in (out / LOG_REPORT_MD).read_text()
