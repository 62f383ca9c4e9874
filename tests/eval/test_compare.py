"""judge-eval's profile and strategy comparison (plumbing through the loopback fake judge; the
real judge's numbers are measured by hand, see docs/eval.md)."""

import json
from pathlib import Path

import pytest

from adapter import RewardConfig
from eval.cli import main
from eval.compare import auroc, best_threshold, variant_config

SAMPLE = Path(__file__).parents[2] / "eval" / "data" / "sample.jsonl"


def test_auroc_counts_ties_half_and_needs_both_classes():
    assert auroc([0.9, 0.8, 0.1, 0.2], [1, 1, 0, 0]) == 1.0
    assert auroc([0.5, 0.5], [1, 0]) == 0.5
    assert auroc([0.1, 0.9], [1, 0]) == 0.0
    assert auroc([0.3, 0.4], [1, 1]) is None


def test_best_threshold_maximises_agreement():
    threshold, agreement = best_threshold([0.1, 0.35, 0.4, 0.9], [0, 0, 1, 1])
    assert threshold == 0.4 and agreement == 1.0
    assert best_threshold([], []) == (None, None)


def test_variant_config_revalidates_the_profile():
    base = RewardConfig(judge_url="http://localhost:9")
    assert variant_config(base, "compassverifier", "cascade").profile == "compassverifier"
    with pytest.raises(ValueError, match="score_rubric"):
        variant_config(base, "prometheus", None)


def test_compare_writes_one_row_per_variant_and_each_variants_scores(fake_judge, tmp_path, capsys):
    config = tmp_path / "reward.yaml"
    config.write_text(f"judge_url: {fake_judge.url}\ncache_dir: {tmp_path / 'cache'}\nbatch_wait: 0.01\n")
    out = tmp_path / "out"
    code = main(["--data", str(SAMPLE), "--out", str(out), "--config", str(config), "--no-progress",
                 "--limit", "40", "--profiles", "rubric,compassverifier", "--strategies", "judge,cascade"])  # fmt: skip
    assert code == 0
    table = (out / "compare.md").read_text()
    variants = ["rubric-judge", "rubric-cascade", "compassverifier-judge", "compassverifier-cascade"]
    rows = {
        line.split("|")[1].strip(): line.split("|") for line in table.splitlines() if line.startswith("| ")
    }
    assert set(variants) | {"rule only"} == set(rows) - {"variant"}
    assert int(rows["rule only"][7]) == 0  # the baseline: no judge rows, no calls
    judge_rows = {v: int(rows[v][7]) for v in variants}
    assert judge_rows["rubric-cascade"] < judge_rows["rubric-judge"]  # the cascade decides some rows by rule
    for variant in variants:
        scored = [json.loads(line) for line in (out / variant / "scores.jsonl").read_text().splitlines()]
        assert len(scored) == 40 and all("rule_reason" in r and "rule_extracted" in r for r in scored)
    cascade = [json.loads(x) for x in (out / "rubric-cascade" / "scores.jsonl").read_text().splitlines()]
    assert any(r["judge_reason"] == "cascade" for r in cascade)
    assert "compassverifier-cascade" in capsys.readouterr().out
    said = [line for line in table.splitlines() if line.startswith("**") and not line.startswith("**Warning")]
    assert [line.split("**")[1] for line in said] == variants  # each variant's verdict, in words
    assert all("Agreement with the labels: judge" in line for line in said)
