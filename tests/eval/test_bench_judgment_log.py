"""judge-bench --judgment-log plumbing (its numbers are measured by hand into docs/BENCHMARKS.md)."""

import pytest

from eval import bench_replicas
from eval.bench import main
from eval.bench_judgment_log import END, MEASURES, START, section


def _run(scale: float, logged: int = 0, dropped: int = 0) -> dict[str, float]:
    run = {key: 100.0 * scale for key, *_ in MEASURES}
    return run | {"log_logged": logged, "log_dropped": dropped, "log_errors": 0}


def test_the_section_shows_medians_ratios_and_the_logs_counts():
    text = section(
        [_run(1.0), _run(3.0), _run(2.0)], [_run(1.0, 10, 1), _run(3.0, 20, 2), _run(2.2, 30)], 500
    )
    assert text.startswith(START) and text.endswith(END)
    assert "| `reward_batch` judgments/s, cache hit | 200 (100-300) | 220 (100-300) | 1.10 |" in text
    assert "| sync `.reward()` cache hit p50 | 200 µs (100-300) | 220 µs (100-300) | 1.10 |" in text
    assert "Lines written 60, dropped (writer behind) 3, lost to write errors 0" in text


def test_the_section_sits_between_its_own_markers_beside_the_replicas_one(tmp_path):
    path = tmp_path / "B.md"
    path.write_text("# Benchmarks\n")
    bench_replicas.write_section(path, bench_replicas.section([(1, 20.0)], 0.2, 4, None))
    for scale in (1.0, 2.0):
        bench_replicas.write_section(path, section([_run(1.0)], [_run(scale)], 500), START, END)
    text = path.read_text()
    assert text.count(START) == 1 and text.count(bench_replicas.START) == 1
    assert "| 2.00 |" in text and "| 1.00 |" not in text.split(START)[1]


@pytest.mark.slow  # starts a fake judge process four times
def test_the_benchmark_runs(tmp_path):
    out = tmp_path / "B.md"
    assert main(["--judgment-log", "--overhead-items", "300", "--repeats", "1", "--out", str(out)]) == 0
    text = out.read_text()
    # Every reward of the run with the log (3,800 at 300 items) is a line: none dropped or lost.
    assert "Lines written 3,800, dropped (writer behind) 0, lost to write errors 0" in text
