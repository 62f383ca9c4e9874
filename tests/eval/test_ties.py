"""``python -m eval.ties``: ties within the groups of a judge-eval run's scores.jsonl."""

import json

from eval.ties import main, tie_stats


def _row(prompt, judge, label, source="judge", answer="ref"):
    return {"prompt": prompt, "answer": answer, "judge": judge, "judge_source": source, "label": label}


ROWS = [
    # q1: the two right members sit on one step of the grid (float32 noise apart), the wrong one below
    _row("q1", 0.5312091, 1),
    _row("q1", 0.5312093, 1),
    _row("q1", 0.4687908, 0),
    # q2: a pre-check's 0 and a judged 0.0: tied, but not both judged
    _row("q2", 0.0, 0, source="rule"),
    _row("q2", 0.0, 1),
    # alone in its group: no pair; another reference: another group
    _row("q3", 0.9, 1),
    _row("q1", 0.5312091, 0, answer="another"),
]


def test_pairs_within_groups_and_the_tolerance():
    stats = tie_stats(ROWS)
    assert (stats.groups, stats.pairs, stats.tied) == (2, 4, 2)
    assert (stats.judged_pairs, stats.judged_tied) == (3, 1)
    assert (stats.mixed_pairs, stats.mixed_tied) == (3, 1)
    # 0.0, 0.4687908, 0.531209x (three within the tolerance: one value), 0.9
    assert (stats.judged_rows, stats.distinct_judged) == (6, 4)
    exact = tie_stats(ROWS, tolerance=0.0)
    assert (exact.tied, exact.judged_tied, exact.distinct_judged) == (1, 0, 5)


def test_main_prints_one_row_per_run(tmp_path, capsys):
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    assert main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "| 2 | 2/4 (50.0%) | 1/3 (33.3%) | 1/3 (33.3%) | 4 of 6 |" in out
