"""Fixtures for the judge-eval tests: a small labelled data set and file writers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from scipy.stats import spearmanr

ROWS: list[dict[str, Any]] = [
    {"id": "n1", "prompt": "What is 2 + 2?", "completion": "2 + 2 = 4", "answer": "4", "answer_type": "NUMBER", "label": 1},
    {"id": "n2", "prompt": "What is 2 + 3?", "completion": "2 + 3 = 6", "answer": "5", "answer_type": "NUMBER", "label": 0},
    {"id": "n3", "prompt": "What is 9 - 4?", "completion": "9 - 4 = 5, not 13", "answer": "5", "answer_type": "NUMBER", "label": 1},
    {"id": "m1", "prompt": "Which is red? (A) sky (B) blood", "completion": "B", "answer": "B", "answer_type": "MULTIPLE_CHOICE", "label": 1},
    {"id": "m2", "prompt": "Which is red? (A) sky (B) blood", "completion": ":", "answer": "B", "answer_type": "MULTIPLE_CHOICE", "label": 0},
    {"id": "t1", "prompt": "Capital of Italy?", "completion": "Rome", "answer": "Rome", "answer_type": "TEXT", "label": 1},
    {"id": "t2", "prompt": "Capital of Italy?", "completion": "Milan", "answer": "Rome", "answer_type": "TEXT", "label": 0},
    {"id": "x1", "prompt": "What is 10 / 4?", "completion": "10 / 4 = 2.5", "answer": "2.5", "label": 0.75},
]  # fmt: skip


def _write_jsonl(path: Path, rows: list[Any]) -> Path:
    """Write rows (dicts are JSON-encoded, strings written as they are), one per line."""
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _write_config(path: Path, judge_url: str, cache_dir: Path, **overrides: Any) -> Path:
    """A flat reward YAML pointing at ``judge_url``, fast mode, cache in ``cache_dir``."""
    config = {"judge_url": judge_url, "mode": "fast", "cache_dir": str(cache_dir), "reward_timeout": 300.0}
    config.update(overrides)
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _read_scores(out: Path) -> list[dict[str, Any]]:
    """The rows of ``out/scores.jsonl``."""
    return [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]


@pytest.fixture
def rows() -> list[dict[str, Any]]:
    """Eight labelled rows over every answer_type (and one without), one fractional label."""
    return [dict(row) for row in ROWS]


@pytest.fixture
def write_jsonl():
    """``write_jsonl(path, rows) -> path``."""
    return _write_jsonl


@pytest.fixture
def write_config():
    """``write_config(path, judge_url, cache_dir, **overrides) -> path``."""
    return _write_config


@pytest.fixture
def read_scores():
    """``read_scores(out_dir) -> list of dicts``."""
    return _read_scores


def _table_rows(markdown: str) -> dict[str, list[str]]:
    """Every markdown table row keyed by its first cell (later tables win on a clash)."""
    found = {}
    for line in markdown.splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            found[cells[0]] = cells[1:]
    return found


def _f(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None or np.isnan(value) else f"{value:.{digits}f}"


def _recomputed_pair(a: list[float | None], b: list[float | None]) -> list[str]:
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    x = np.array([p[0] for p in pairs], dtype=float)
    y = np.array([p[1] for p in pairs], dtype=float)
    xb, yb = (x >= 0.5).astype(int), (y >= 0.5).astype(int)
    n = len(pairs)
    tp, fp, fn = (
        int(((xb == 1) & (yb == 1)).sum()),
        int(((xb == 0) & (yb == 1)).sum()),
        int(((xb == 1) & (yb == 0)).sum()),
    )
    po = float((xb == yb).mean()) if n else None
    pe = float(xb.mean() * yb.mean() + (1 - xb.mean()) * (1 - yb.mean())) if n else None
    kappa = None if po is None or pe is None or abs(1 - pe) < 1e-12 else (po - pe) / (1 - pe)
    varying = n >= 2 and x.std() > 0 and y.std() > 0
    r = float(np.corrcoef(x, y)[0, 1]) if varying else None
    rho = float(spearmanr(x, y).statistic) if varying else None
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else None
    return [str(n), _f(po), _f(kappa), _f(r), _f(rho), _f(precision), _f(recall), _f(f1)]


def _nearest_rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[round(q / 100 * (len(ordered) - 1))]


def _check_report_numbers(out: Path) -> int:
    """Recompute report.md's statistics from scores.jsonl alone and compare them; return checks made."""
    scores = _read_scores(out)
    tables = _table_rows((out / "report.md").read_text())
    rule = [s["rule"] for s in scores]
    judge = [s["judge"] for s in scores]
    label = [s["label"] for s in scores]
    judged = any(s["judge_source"] is not None for s in scores)
    checks = 0
    expected_pairs = {"rule vs label": (label, rule)}
    if judged:
        expected_pairs.update({"rule vs judge": (rule, judge), "judge vs label": (label, judge)})
    for name, (a, b) in expected_pairs.items():
        assert tables[name] == _recomputed_pair(a, b), name
        checks += 1
    types = sorted({s["answer_type"] or "(none)" for s in scores})
    for answer_type in types:
        group = [s for s in scores if (s["answer_type"] or "(none)") == answer_type]
        mean = lambda vs: _f(float(np.mean(vs)) if vs else None)  # noqa: E731
        agree = lambda a, b: _recomputed_pair(a, b)[1]  # noqa: E731
        g_rule, g_judge, g_label = ([s[k] for s in group] for k in ("rule", "judge", "label"))
        expected = [str(len(group)), mean([v for v in g_rule if v is not None]),
                    mean([v for v in g_judge if v is not None]), agree(g_rule, g_judge),
                    agree(g_label, g_rule), agree(g_label, g_judge)]  # fmt: skip
        assert tables[answer_type] == expected, answer_type
        checks += 1
    if judged:
        sources = {s["judge_source"] for s in scores}
        for source in sources:
            group = [s for s in scores if s["judge_source"] == source]
            assert tables[source][:2] == [str(len(group)), _f(len(group) / len(scores))], source
            checks += 1
        latencies = [s["latency_ms"] for s in scores]
        for q in (50, 95, 99):
            assert tables[f"latency p{q} (ms)"] == [_f(_nearest_rank(latencies, q), 1)]
            checks += 1
    return checks


@pytest.fixture
def check_report_numbers():
    """``check_report_numbers(out_dir) -> number of checks``: report.md against scores.jsonl."""
    return _check_report_numbers
