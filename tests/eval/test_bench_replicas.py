"""judge-bench --replicas plumbing (its numbers are measured by hand into docs/BENCHMARKS.md)."""

import pytest

from eval.bench_replicas import END, START, grpo_items, replica_scaling, section, write_section


def test_grpo_items_are_groups_of_distinct_completions_sharing_a_question():
    items = grpo_items(3, 8)
    assert len(items) == 24 and len({i["prompt"] for i in items}) == 3
    assert len({i["completion"] for i in items}) == 24  # no single-flight sharing


def test_the_section_replaces_its_own_markers_and_keeps_the_rest(tmp_path):
    path = tmp_path / "B.md"
    path.write_text("# Benchmarks\nkept\n")
    write_section(path, section([(1, 20.0), (2, 39.0)], 0.2, 4, None))
    write_section(path, section([(1, 21.0), (2, 40.0)], 0.2, 4, {"affinity": 0.8, "round_robin": 0.4}))
    text = path.read_text()
    assert text.startswith("# Benchmarks\nkept\n") and text.count(START) == 1 and text.count(END) == 1
    assert "| 2 | 40 | 1.90 |" in text and "80.0%" in text and "| 2 | 39 |" not in text


@pytest.mark.slow  # starts fake judge processes
def test_scaling_runs_against_real_fake_processes():
    rates = replica_scaling(counts=(1, 2), latency_s=0.01, concurrency=4, per_replica=16)
    assert [n for n, _ in rates] == [1, 2] and all(rate > 0 for _, rate in rates)
