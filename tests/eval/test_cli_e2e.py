"""``judge-eval`` against the real vLLM CPU judge (SmolLM2), on a few rows in fast mode."""

import pytest

from eval.cli import main

pytestmark = pytest.mark.e2e

SOURCES = {"judge", "cache", "rule", "rule_fallback", "error"}


def test_judge_eval_with_the_real_judge(judge_url, tmp_path, rows, write_jsonl, write_config, read_scores,
                                        check_report_numbers):  # fmt: skip
    data = write_jsonl(tmp_path / "d.jsonl", rows[:5])
    config = write_config(tmp_path / "c.yaml", judge_url, tmp_path / "cache", model="smollm2")
    args = ["--data", str(data), "--config", str(config), "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "out")]) == 0
    scores = read_scores(tmp_path / "out")
    assert [s["id"] for s in scores] == ["n1", "n2", "n3", "m1", "m2"]
    by_id = {s["id"]: s for s in scores}
    assert by_id["m2"]["judge_source"] == "rule"  # ":" never reaches the judge
    judged = [s for s in scores if s["id"] != "m2"]
    # The real judge answered: fresh verdicts, no fallback, rewards in [0, 1].
    assert {s["judge_source"] for s in judged} == {"judge"}, [s["judge_reason"] for s in judged]
    assert all(0.0 <= s["judge"] <= 1.0 and s["judge_explanation"] for s in judged)
    report = (tmp_path / "out" / "report.md").read_text()
    assert "judge smollm2 at" in report and "mode fast" in report
    assert check_report_numbers(tmp_path / "out") >= 3
    # A rerun is answered from the cache: same rewards, no judge call.
    assert main([*args, "--out", str(tmp_path / "again")]) == 0
    again = read_scores(tmp_path / "again")
    assert {s["judge_source"] for s in again} <= {"cache", "rule"}
    assert [s["judge"] for s in again] == [s["judge"] for s in scores]
