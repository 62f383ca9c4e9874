"""``judge-eval`` on small files: rule-only runs, malformed input, the judge through a loopback fake.

The fake judge only exercises plumbing (sources, cache, fallback); the real judge is in
``test_cli_e2e.py``.
"""

import json
import re
from pathlib import Path

import pytest

from eval.cli import main
from judge_vllm.testing.fake_server import FaultPlan

OUTPUTS = ("scores.jsonl", "report.md", "report.html", "reward_hist.png", "agreement.png", "reliability.png")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _run(data: Path, out: Path, *extra: str) -> int:
    return main(["--data", str(data), "--out", str(out), "--no-progress", *extra])


def test_rule_only_writes_every_output(tmp_path, rows, write_jsonl, read_scores, capsys):
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    assert _run(data, tmp_path / "out", "--rule-only") == 0
    out = tmp_path / "out"
    for name in OUTPUTS:
        assert (out / name).stat().st_size > 0, name
    assert (out / "reward_hist.png").read_bytes().startswith(PNG_MAGIC)
    assert (out / "agreement.png").read_bytes().startswith(PNG_MAGIC)
    assert (out / "reliability.png").read_bytes().startswith(PNG_MAGIC)
    scores = read_scores(out)
    assert [s["id"] for s in scores] == [r["id"] for r in rows]
    assert all(s["judge"] is None and s["judge_source"] is None for s in scores)
    assert [s["label"] for s in scores] == [float(r["label"]) for r in rows]
    assert all(isinstance(s["rule"], float) for s in scores)
    report = (out / "report.md").read_text()
    assert "| rule vs label | 8 |" in report and "rule vs judge" not in report
    assert "<table>" in (out / "report.html").read_text()
    printed = capsys.readouterr().out
    assert "rule vs label" in printed and str(out / "report.md") in printed.replace(
        "\n", ""
    )  # rich wraps long paths


def test_malformed_rows_are_reported_and_skipped(tmp_path, rows, write_jsonl, read_scores, capsys):
    lines = [rows[0], "{not json", rows[1], {"prompt": "p"}, rows[2], {**rows[3], "label": "maybe"}, rows[4]]
    data = write_jsonl(tmp_path / "d.jsonl", lines)
    assert _run(data, tmp_path / "out", "--rule-only") == 0
    assert [s["id"] for s in read_scores(tmp_path / "out")] == ["n1", "n2", "n3", "m2"]
    err = capsys.readouterr().err
    assert "skipping line 2: not valid JSON" in err
    assert "skipping line 4: missing field(s): completion, answer" in err
    assert "skipping line 6: label" in err
    report = (tmp_path / "out" / "report.md").read_text()
    assert "skipped as malformed: 3" in report
    assert "| 2 | not valid JSON" in report and "| 4 | missing field(s)" in report and "| 6 | label" in report


def test_strict_stops_without_writing(tmp_path, rows, write_jsonl, capsys):
    data = write_jsonl(tmp_path / "d.jsonl", [rows[0], rows[1], "{not json", rows[2]])
    assert _run(data, tmp_path / "out", "--rule-only", "--strict") == 2
    assert "line 3: not valid JSON" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "cannot read data file"), (["{bad", "[]"], "no valid rows"), ([], "no valid rows")],
)
def test_unusable_data_is_exit_2(tmp_path, write_jsonl, capsys, content, message):
    data = tmp_path / "d.jsonl"
    if content is not None:
        write_jsonl(data, content)
    assert _run(data, tmp_path / "out", "--rule-only") == 2
    assert message in capsys.readouterr().err


def test_bad_config_is_exit_2(tmp_path, rows, write_jsonl, capsys):
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    config = tmp_path / "c.yaml"
    config.write_text("judge_url: http://x\nno_such_key: 1\n")
    assert _run(data, tmp_path / "out", "--config", str(config)) == 2
    assert "unknown key 'no_such_key'" in capsys.readouterr().err


def test_limit_and_label_field(tmp_path, rows, write_jsonl, read_scores):
    data = write_jsonl(tmp_path / "d.jsonl", [{**r, "gold": 1 - r["label"]} for r in rows])
    assert _run(data, tmp_path / "out", "--rule-only", "--limit", "3", "--label-field", "gold") == 0
    scores = read_scores(tmp_path / "out")
    assert [(s["id"], s["label"]) for s in scores] == [("n1", 0.0), ("n2", 1.0), ("n3", 0.0)]
    assert "labelled (gold): 3" in (tmp_path / "out" / "report.md").read_text()


def test_judge_run_is_resumable_from_the_cache(
    tmp_path, rows, write_jsonl, write_config, read_scores, fake_judge
):
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    config = write_config(tmp_path / "c.yaml", fake_judge.url, tmp_path / "cache")
    assert _run(data, tmp_path / "first", "--config", str(config), "--chunk-size", "3") == 0
    first = read_scores(tmp_path / "first")
    assert {s["judge_source"] for s in first} == {"judge", "rule"}  # ":" is decided by a pre-check
    assert all(0.0 <= s["judge"] <= 1.0 and s["latency_ms"] >= 0.0 for s in first)
    assert _run(data, tmp_path / "second", "--config", str(config)) == 0
    second = read_scores(tmp_path / "second")
    assert {s["judge_source"] for s in second} == {"cache", "rule"}
    assert [s["judge"] for s in second] == [s["judge"] for s in first]


def test_a_rerun_from_the_cache_marks_its_cost_cached_not_free(
    tmp_path, rows, write_jsonl, write_config, fake_judge, capsys
):
    """Issue 42: cached verdicts were reported as a judge that took 0 calls and 0.0 seconds."""
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    config = write_config(tmp_path / "c.yaml", fake_judge.url, tmp_path / "cache")
    assert _run(data, tmp_path / "first", "--config", str(config)) == 0
    first = (tmp_path / "first" / "report.md").read_text()
    assert "| rows answered from the cache | 0 |" in first and "cached" not in first.split("## Verdict")[1].split("##")[0]
    capsys.readouterr()
    assert _run(data, tmp_path / "second", "--config", str(config)) == 0
    report = (tmp_path / "second" / "report.md").read_text()
    (judge,) = [line for line in report.splitlines() if line.startswith("| judge | ")]
    assert judge.endswith(" | cached | cached |")  # judge calls and seconds per 1,000 rows
    assert "| rows answered from the cache | 7 |" in report and "| judge run (s) | cached |" in report
    assert "**Cached**: judge 7 of 8 rows came from the cache" in report
    assert "7 of 8, 7 of them answered from the cache" in report
    printed = capsys.readouterr().out
    assert "(cached: 7 of 8 rows came from the cache, not the judge)" in printed
    assert "7 of them answered from the cache" in printed


@pytest.mark.parametrize("given_by", ["JUDGE_MODEL_URL", "--judge-url"])
def test_the_judge_address_comes_from_the_flag_or_the_environment(
    given_by, tmp_path, rows, write_jsonl, read_scores, fake_judge, monkeypatch
):
    monkeypatch.setenv("HOME", str(tmp_path))  # the default cache_dir (no --config)
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    if given_by == "JUDGE_MODEL_URL":
        monkeypatch.setenv("JUDGE_MODEL_URL", fake_judge.url)
        extra: tuple[str, ...] = ()
    else:  # the flag wins over the variable (here a closed port)
        monkeypatch.setenv("JUDGE_MODEL_URL", "http://127.0.0.1:9")
        extra = ("--judge-url", fake_judge.url)
    assert _run(data, tmp_path / "out", *extra) == 0
    assert {s["judge_source"] for s in read_scores(tmp_path / "out")} == {"judge", "rule"}
    assert fake_judge.counts["ok"] > 0


def test_the_report_names_the_judge_without_its_credentials(
    tmp_path, rows, write_jsonl, read_scores, fake_judge, capsys, monkeypatch
):
    monkeypatch.setenv("HOME", str(tmp_path))  # the default cache_dir (no --config)
    password = "pw-report-userinfo-6613"
    url = fake_judge.url.replace("http://", f"http://alice:{password}@")
    assert _run(write_jsonl(tmp_path / "d.jsonl", rows), tmp_path / "out", "--judge-url", url) == 0
    assert "judge" in {s["judge_source"] for s in read_scores(tmp_path / "out")}  # the URL reached the judge
    printed = capsys.readouterr()
    for name in ("report.md", "report.html"):
        report = (tmp_path / "out" / name).read_text()
        assert f"at {fake_judge.url.replace('http://', 'http://***@')}" in report, name
        assert password not in report and "alice" not in report, name
    assert password not in printed.out + printed.err


def test_judge_failure_falls_back_and_is_reported(
    tmp_path, rows, write_jsonl, write_config, read_scores, fake_judge
):
    fake_judge.set_plan(FaultPlan(error_rate=1.0))
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    config = write_config(  # startup_check warn: the run goes on with its judge down
        tmp_path / "c.yaml",
        fake_judge.url,
        tmp_path / "cache",
        max_retries=0,
        circuit_breaker_threshold=1,
        startup_check="warn",
    )
    assert _run(data, tmp_path / "out", "--config", str(config), "--allow-fallback") == 0
    scores = read_scores(tmp_path / "out")
    fallback = [s for s in scores if s["judge_source"] == "rule_fallback"]
    assert fallback and all(s["judge"] == s["rule"] and s["judge_reason"] for s in fallback)
    assert all(s["judge_error"] for s in fallback)  # why the judge failed, row by row
    report = (tmp_path / "out" / "report.md").read_text()
    assert f"| rule_fallback | {len(fallback)} |" in report


def test_dead_judge_fails_the_run_and_says_so_first(tmp_path, rows, write_jsonl, write_config, capsys):
    """A judge that never answered is not reported as a judge: exit 3, one line why, report opens with it.
    (startup_check warn: the run goes on with its judge down; the start-up check would stop it first.)"""
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    config = write_config(
        tmp_path / "c.yaml", "http://127.0.0.1:9/v1", tmp_path / "cache", max_retries=0, startup_check="warn"
    )
    assert _run(data, tmp_path / "out", "--config", str(config)) == 3
    error_lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1
    assert "the judge decided 0 of the 7 rows sent to it" in error_lines[0]
    assert "7 rule_fallback" in error_lines[0]
    report = (tmp_path / "out" / "report.md").read_text()
    first_paragraph = report.split("\n\n")[1]
    assert first_paragraph.startswith("Warning: the judge decided 0 of the 7 rows sent to it")
    assert _run(data, tmp_path / "allowed", "--config", str(config), "--allow-fallback") == 0
    assert "warning: judge: the judge decided 0 of the 7" in capsys.readouterr().err


@pytest.mark.parametrize("compared", [(), ("--strategies", "judge,cascade")])
def test_a_judge_down_at_start_stops_the_run_in_one_line_before_any_row(
    tmp_path, rows, write_jsonl, write_config, capsys, compared
):
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    config = write_config(tmp_path / "c.yaml", "http://127.0.0.1:9/v1", tmp_path / "cache", max_retries=0)
    assert _run(data, tmp_path / "out", "--config", str(config), *compared) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert (
        line.startswith("error: the judge at http://127.0.0.1:9/v1 ") and "failed the start-up check" in line
    )
    assert "judge-vllm health --url http://127.0.0.1:9/v1" in line
    assert not (tmp_path / "out" / "scores.jsonl").exists()


def test_dead_judge_fails_every_compared_variant(tmp_path, rows, write_jsonl, write_config, capsys):
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    config = write_config(  # startup_check warn: the run goes on with its judge down
        tmp_path / "c.yaml", "http://127.0.0.1:9/v1", tmp_path / "cache", max_retries=0, startup_check="warn"
    )
    code = _run(data, tmp_path / "out", "--config", str(config), "--strategies", "judge,cascade")
    assert code == 3
    err = capsys.readouterr().err
    assert "error: binary-judge: the judge decided 0 of" in err
    compare = (tmp_path / "out" / "compare.md").read_text()
    assert compare.index("**Warning: binary-judge**") < compare.index("| variant |")


def test_partly_failing_judge_passes_above_min_judged_with_the_fact_on_top(
    tmp_path, rows, write_jsonl, write_config, read_scores, fake_judge, capsys
):
    """The first judge call fails (no retries): its rows fall back; the rest are judged."""
    fake_judge.set_plan(FaultPlan(script=["error"]))  # the run's first call: no start-up check
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    config = write_config(
        tmp_path / "c.yaml", fake_judge.url, tmp_path / "cache", max_retries=0, startup_check="off"
    )
    args = ("--config", str(config), "--chunk-size", "2", "--min-judged", "0.5")
    assert _run(data, tmp_path / "out", *args) == 0
    scores = read_scores(tmp_path / "out")
    fallen = sum(s["judge_source"] == "rule_fallback" for s in scores)
    judged = sum(s["judge_source"] == "judge" for s in scores)
    assert fallen >= 1 and judged >= 1
    assert "error:" not in capsys.readouterr().err
    report = (tmp_path / "out" / "report.md").read_text()
    assert f"Warning: the judge decided {judged} of the {judged + fallen} rows" in report.split("\n\n")[1]


def test_report_numbers_match_scores_jsonl(tmp_path, write_config, fake_judge, check_report_numbers):
    sample = Path(__file__).resolve().parents[2] / "eval" / "data" / "sample.jsonl"
    config = write_config(tmp_path / "c.yaml", fake_judge.url, tmp_path / "cache")
    assert _run(sample, tmp_path / "out", "--config", str(config)) == 0
    assert check_report_numbers(tmp_path / "out") >= 3 + 5 + 2 + 3


def test_report_numbers_match_scores_jsonl_rule_only(tmp_path, rows, write_jsonl, check_report_numbers):
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    assert _run(data, tmp_path / "out", "--rule-only") == 0
    assert check_report_numbers(tmp_path / "out") == 1 + 4


def test_scores_jsonl_rows_are_json_objects_with_the_documented_fields(tmp_path, rows, write_jsonl):
    data = write_jsonl(tmp_path / "d.jsonl", rows[:2])
    assert _run(data, tmp_path / "out", "--rule-only") == 0
    first = json.loads((tmp_path / "out" / "scores.jsonl").read_text().splitlines()[0])
    for field in ("id", "answer_type", "rule", "judge", "judge_source", "label", "latency_ms"):
        assert field in first


@pytest.mark.parametrize("option", ["--limit", "--chunk-size", "--top"])
def test_counts_must_be_positive(tmp_path, option, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--data", "d.jsonl", "--out", str(tmp_path), option, "0"])
    assert exited.value.code == 2
    assert "must be at least 1" in capsys.readouterr().err


def _verdict(report: str) -> list[str]:
    """The verdict section without what a rerun answered from the cache changes: the cost columns,
    the cached rows' count and note."""
    section = report[report.index("## Verdict") : report.index("## Agreement")]
    section = re.sub(r", \d+ of them answered from the cache|\*\*Cached\*\*: .*\n\n", "", section)
    return [line.rsplit(" | ", 2)[0] if line.startswith("| ") else line for line in section.splitlines()]


def test_report_opens_with_the_verdict_reproducible_by_seed(
    tmp_path, rows, write_jsonl, write_config, fake_judge, capsys
):
    data = write_jsonl(tmp_path / "d.jsonl", [{**r, "category": r.get("answer_type", "none")} for r in rows])
    config = write_config(tmp_path / "c.yaml", fake_judge.url, tmp_path / "cache")
    verdicts = []
    for out, seed in (("a", "1"), ("b", "1"), ("c", "2")):
        assert _run(data, tmp_path / out, "--config", str(config), "--seed", seed) == 0
        verdicts.append(_verdict((tmp_path / out / "report.md").read_text()))
    assert verdicts[0] == verdicts[1] and verdicts[0] != verdicts[2]
    report = (tmp_path / "a" / "report.md").read_text()
    headings = [line for line in report.splitlines() if line.startswith("## ")]
    assert headings[:2] == ["## Verdict", "## Against the labels, with 95% intervals"]
    for scorer in ("rule", "judge", "always correct (majority)", "random rewards"):
        assert f"\n| {scorer} | 8 |" in report
    assert "## Per category" in report and "| NUMBER | 3 |" in report.split("## Per category")[1]
    assert "Agreement with the labels: judge" in capsys.readouterr().out


def test_group_by_names_another_column(tmp_path, rows, write_jsonl):
    data = write_jsonl(
        tmp_path / "d.jsonl", [{**r, "source_set": "gsm" if i % 2 else "math"} for i, r in enumerate(rows)]
    )
    assert _run(data, tmp_path / "out", "--rule-only", "--group-by", "source_set") == 0
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## Per source_set" in report and "| gsm | 4 |" in report and "| math | 4 |" in report


def _inverted_rows(n: int = 20) -> list[dict[str, object]]:
    """Labels that say the opposite of the fake judge (it pays a completion holding the reference)."""
    return [
        {"id": f"i{k}", "prompt": f"What is {100 + k}?", "answer": str(100 + k),
         "completion": f"The answer is {100 + k if k % 2 else 300 + k}.", "label": 0 if k % 2 else 1}
        for k in range(n)
    ]  # fmt: skip


@pytest.mark.parametrize("variants", [(), ("--strategies", "judge")], ids=["run", "compare"])
def test_an_inverted_judge_fails_the_run_with_exit_4_and_says_why(
    tmp_path, write_jsonl, write_config, fake_judge, capsys, variants
):
    """Issue 41: a judge whose scores are inverted (AUROC well below 0.5) exited 0."""
    data = write_jsonl(tmp_path / "d.jsonl", _inverted_rows())
    config = write_config(tmp_path / "c.yaml", fake_judge.url, tmp_path / "cache")
    assert _run(data, tmp_path / "out", "--config", str(config), *variants) == 4
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "ranks worse than chance" in errors[0] and "AUROC 0.00" in errors[0]
    assert (tmp_path / "out" / ("compare.md" if variants else "report.md")).exists()  # still written
