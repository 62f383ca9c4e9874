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


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_real_judge_scores_a_users_file_through_map(
    judge_url, tmp_path, rows, write_config, read_scores, suffix
):
    """The user's own file and column names, judged by the real judge (not a fallback)."""
    import csv

    import pyarrow as pa
    import pyarrow.parquet as pq

    renamed = [
        {
            "q": r["prompt"],
            "resp": r["completion"],
            "gold": r["answer"],
            "ok": r["label"],
            "t": r["answer_type"],
        }
        for r in rows[:3]
    ]
    data = tmp_path / f"user{suffix}"
    if suffix == ".csv":
        with data.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(renamed[0]))
            writer.writeheader()
            writer.writerows(renamed)
    else:
        pq.write_table(pa.Table.from_pylist(renamed), data)
    config = write_config(tmp_path / "c.yaml", judge_url, tmp_path / "cache", model="smollm2")
    mapping = "prompt=q,completion=resp,answer=gold,label=ok,answer_type=t"
    args = ["--data", str(data), "--config", str(config), "--no-progress", "--map", mapping]
    assert main([*args, "--out", str(tmp_path / "out")]) == 0
    scores = read_scores(tmp_path / "out")
    first = 2 if suffix == ".csv" else 1  # a CSV row is numbered by its line, after the header
    assert [s["id"] for s in scores] == [f"line-{first + i}" for i in range(3)]
    assert {s["judge_source"] for s in scores} == {"judge"}
    assert [s["label"] for s in scores] == [1.0, 0.0, 1.0]
