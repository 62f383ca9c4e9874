"""judge-bench --long-batch plumbing: the rows, the section and a small run against the fake process."""

import pytest

from eval import bench_replicas
from eval.bench import main
from eval.bench_long_batch import END, START, long_rows, section


def test_rows_are_long_distinct_number_completions_ending_in_their_answer():
    rows = long_rows(3, 15)
    assert len({r["completion"] for r in rows}) == 3 and all(r["answer_type"] == "NUMBER" for r in rows)
    assert all(14_900 <= len(r["completion"]) <= 15_100 for r in rows)
    assert all(r["completion"].endswith(f"The answer is {r['answer']}.") for r in rows)
    assert long_rows(2, 1, seed=5) == long_rows(2, 1, seed=5) != long_rows(2, 1, seed=6)


def _run(rows: int, judged: int) -> dict:
    return {"rows": rows, "wall_s": 6.04, "max_latency_s": 6.0, "client_cpu_s": 5.12, "fake_cpu_s": 1.5,
            "sources": {"judge": judged, "rule_fallback": rows - judged - 1, "rule": 1},
            "tokenize": 3 * rows, "detokenize": 2 * rows, "judge_calls": rows // 64}  # fmt: skip


def test_the_section_counts_each_run_and_names_the_largest_batch_judged_whole(tmp_path):
    stages = {
        "precheck_cpu_s": 3.0,
        "client_wall_s": 7.5,
        "client_cpu_s": 6.0,
        "fake_cpu_s": 1.0,
        "rows": 1000,
        "load_1m": 0.4,
    }
    runs = [{**_run(256, 255), "sources": {"judge": 256}}, _run(1024, 1000)]
    text = section(runs, stages, 15, 10, "judge-bench --long-batch")
    assert text.startswith(START) and text.endswith(END)
    assert "| 1,024 | 1,000 | 23 | 1 rule | 6.0 | 6.0 | 5.1 (5.0 ms) | 1.5 | 3,072 | 2,048 | 16 |" in text
    assert "Largest batch judged whole: 256 rows. Each stage alone over 1,000 other rows" in text
    assert "Load average at the start: 0.4 on" in text
    assert "pre-checks 3.0 ms CPU a row" in text and "7.5 s wall, 6.0 ms CPU a row, the fake 1.0 ms" in text
    path = tmp_path / "B.md"
    path.write_text("# Benchmarks\n")
    bench_replicas.write_section(path, bench_replicas.section([(1, 20.0)], 0.2, 4, None))
    for _ in range(2):
        bench_replicas.write_section(path, text, START, END)
    assert path.read_text().count(START) == 1 and bench_replicas.START in path.read_text()


@pytest.mark.slow  # starts a fake judge process
def test_the_benchmark_runs(tmp_path):
    out = tmp_path / "B.md"
    assert main(["--long-batch", "--rows", "4,8", "--kb", "2", "--repeats", "1", "--out", str(out)]) == 0
    text = out.read_text()
    assert "| 8 | 8 | 0 | 0 |" in text  # no other source and "Largest batch judged whole: 8 rows." in text
