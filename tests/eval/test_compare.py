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
    said = [line for line in table.splitlines() if line.startswith("**") and not line.startswith(("**Warning", "**Cached"))]
    assert [line.split("**")[1] for line in said] == variants  # each variant's verdict, in words
    assert all("Agreement with the labels: judge" in line for line in said)


def _cells(markdown: str) -> dict[str, list[str]]:
    """compare.md's table rows by variant, and its header under "variant"."""
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in markdown.splitlines() if line.startswith("| ")]
    return {row[0]: row for row in rows}


def test_verdicts_from_the_cache_are_marked_cached_not_free(fake_judge, tmp_path, capsys):
    """Issue 42: a rerun answered from the cache showed judge items 0, HTTP calls 0 and 0.0 seconds,
    a judge that costs nothing, in compare.md and in the terminal."""
    config = tmp_path / "reward.yaml"
    config.write_text(f"judge_url: {fake_judge.url}\ncache_dir: {tmp_path / 'cache'}\nbatch_wait: 0.01\n")
    args = ["--data", str(SAMPLE), "--config", str(config), "--no-progress", "--limit", "30", "--profiles", "binary"]
    assert main([*args, "--out", str(tmp_path / "first")]) == 0
    first = _cells((tmp_path / "first" / "compare.md").read_text())
    header = first["variant"]
    judged = dict(zip(header, first["binary-judge"], strict=True))
    assert judged["cached rows"] == "0" and float(judged["judge items / 1k rows"]) > 0
    assert float(judged["HTTP calls / 1k rows"]) > 0 and judged["seconds"] != "cached"
    capsys.readouterr()

    assert main([*args, "--out", str(tmp_path / "second")]) == 0
    markdown = (tmp_path / "second" / "compare.md").read_text()
    cached = dict(zip(header, _cells(markdown)["binary-judge"], strict=True))
    assert cached["cached rows"] == cached["judge rows"] == judged["judge rows"]
    for cost in ("judge items / 1k rows", "HTTP calls / 1k rows", "seconds"):
        assert cached[cost] == "cached", cost
    assert f"**Cached**: binary-judge {cached['judge rows']} of 30 rows came from the cache" in markdown
    assert dict(zip(header, _cells(markdown)["rule only"], strict=True))["seconds"] == "-"  # not timed

    printed = capsys.readouterr().out  # piped: plain text, every row on one line
    assert "|" not in printed and "**" not in printed and "---|" not in printed
    assert f"Cached: binary-judge {cached['judge rows']} of 30 rows came from the cache" in printed
    (head,) = [line for line in printed.splitlines() if line.startswith("variant ")]
    assert all(column in head for column in header) and len(head) > 80  # not wrapped at 80 columns
    (row,) = [line.split() for line in printed.splitlines() if line.startswith("binary-judge ")]
    assert row[-6:-3] == ["cached", "cached", "0"] and row[-1] == "cached" and row[7] == cached["cached rows"]


def test_a_partly_cached_variant_marks_its_cost_as_partly_cached(fake_judge, tmp_path):
    config = tmp_path / "reward.yaml"
    config.write_text(f"judge_url: {fake_judge.url}\ncache_dir: {tmp_path / 'cache'}\nbatch_wait: 0.01\n")
    args = ["--data", str(SAMPLE), "--config", str(config), "--no-progress", "--profiles", "binary"]
    assert main([*args, "--limit", "10", "--out", str(tmp_path / "ten")]) == 0
    assert main([*args, "--limit", "30", "--out", str(tmp_path / "thirty")]) == 0
    cells = _cells((tmp_path / "thirty" / "compare.md").read_text())
    row = dict(zip(cells["variant"], cells["binary-judge"], strict=True))
    assert 0 < int(row["cached rows"]) < int(row["judge rows"])
    assert all(row[c].endswith(" + cached") for c in ("judge items / 1k rows", "HTTP calls / 1k rows", "seconds"))
