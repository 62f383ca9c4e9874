"""Compare judge profiles and strategies on the same labelled rows, in one report.

``judge-eval --data FILE --out DIR --profiles rubric,binary,compassverifier --strategies judge,cascade``
scores every row once per (profile, strategy) variant through the adapter and writes
``DIR/compare.md`` (and each variant's ``scores.jsonl`` under ``DIR/<variant>/``). Per variant:
agreement and Cohen's kappa with the labels, AUROC of the reward against the labels over all
rows and over the rows the judge itself decided (pre-check and cascade rows are decided by
rule and would inflate a judge's AUROC), the rows answered from the cache, judge items and HTTP
calls per 1,000 rows and seconds (marked where cached rows are not in them, ``eval.cached``), and
the reward threshold that best separates the labels (fitted on these rows: optimistic).
``compare_blocks`` is the report: markdown for compare.md, plain text or rich tables in the terminal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from adapter import MetricsDict, RewardConfig
from eval.cached import cached_note, cost_cell
from eval.coverage import JUDGE_DECIDED, JudgeCoverage
from eval.intervals import auroc as ranking_auroc
from eval.metrics import binarize, cohen_kappa, confusion
from eval.report import Block, Heading, Paragraph, Table, fmt
from eval.scoring import ScoredRow

__all__ = [
    "VariantStats",
    "auroc",
    "best_threshold",
    "compare_blocks",
    "rule_only_stats",
    "variant_config",
    "variant_stats",
]

Strategy = Literal["judge", "cascade"]


class VariantStats(BaseModel):
    """How one (profile, strategy) variant did against the labels."""

    model_config = ConfigDict(frozen=True)

    name: str
    rows: int
    labelled: int
    agreement: float | None
    kappa: float | None
    auroc: float | None
    judge_rows: int
    auroc_judge_rows: float | None
    cached_rows: int
    judge_items_per_1000: float
    judge_calls_per_1000: float
    fallbacks: int
    threshold: float | None
    agreement_at_threshold: float | None
    seconds: float | None


def variant_config(base: RewardConfig, profile: str | None, strategy: Strategy | None) -> RewardConfig:
    """``base`` with another profile and/or strategy (validated again, so a profile's needs are checked)."""
    update = {k: v for k, v in (("profile", profile), ("strategy", strategy)) if v is not None}
    return RewardConfig.model_validate({**dict(base), **update})


def auroc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """P(score of a positive > score of a negative), ties counted half; None without both classes."""
    value = ranking_auroc(np.array(scores, dtype=float), np.array(labels, dtype=float))
    return None if math.isnan(value) else value


def best_threshold(scores: Sequence[float], labels: Sequence[int]) -> tuple[float | None, float | None]:
    """The reward threshold (reward >= t counts as correct) with the best agreement, and that agreement."""
    if not scores:
        return None, None
    best: tuple[float, float] | None = None
    for t in sorted(set(scores)):
        agree = sum((s >= t) == bool(y) for s, y in zip(scores, labels, strict=True)) / len(scores)
        if best is None or agree > best[1]:
            best = (t, agree)
    return best  # type: ignore[return-value]


def variant_stats(
    name: str, scored: Sequence[ScoredRow], metrics: MetricsDict | None, seconds: float | None
) -> VariantStats:
    """The statistics of one variant's scored rows (``metrics`` from its ``get_metrics()`` and
    ``seconds`` its judge run's; None when no judge ran)."""
    pairs = [
        (r.judge, r.label, r.judge_source) for r in scored if r.judge is not None and r.label is not None
    ]
    rewards = [p[0] for p in pairs]
    labels = [binarize(p[1]) for p in pairs]
    c = confusion([float(y) for y in labels], rewards) if pairs else None
    judged = [(s, y) for (s, _, source), y in zip(pairs, labels, strict=True) if source in JUDGE_DECIDED]
    threshold, at_threshold = best_threshold(rewards, labels)
    per_1000 = 1000 / len(scored) if scored else 0.0
    return VariantStats(
        name=name,
        rows=len(scored),
        labelled=len(pairs),
        agreement=sum(binarize(s) == y for s, y in zip(rewards, labels, strict=True)) / len(pairs)
        if pairs
        else None,
        kappa=cohen_kappa(c) if c else None,
        auroc=auroc(rewards, labels),
        judge_rows=len(judged),
        auroc_judge_rows=auroc([s for s, _ in judged], [y for _, y in judged]),
        cached_rows=sum(r.judge_source == "cache" for r in scored),
        judge_items_per_1000=metrics["judged_items"] * per_1000 if metrics else 0.0,
        judge_calls_per_1000=metrics["judge_calls"] * per_1000 if metrics else 0.0,
        fallbacks=sum(r.judge_source in ("rule_fallback", "error") for r in scored),
        threshold=threshold,
        agreement_at_threshold=at_threshold,
        seconds=seconds,
    )


def rule_only_stats(scored: Sequence[ScoredRow]) -> VariantStats:
    """The rule reward alone on the same rows, as the baseline row of the comparison."""
    as_rule = [r.model_copy(update={"judge": r.rule, "judge_source": "rule"}) for r in scored]
    return variant_stats("rule only", as_rule, None, None)


def _row(s: VariantStats) -> list[str]:
    fitted = "-" if s.threshold is None else f"{s.threshold:.3f} ({fmt(s.agreement_at_threshold)})"
    calls = s.judge_calls_per_1000
    return [
        s.name, str(s.rows), fmt(s.agreement), fmt(s.kappa), fmt(s.auroc), fmt(s.auroc_judge_rows),
        str(s.judge_rows), str(s.cached_rows), cost_cell(f"{s.judge_items_per_1000:.0f}", s.cached_rows, calls),
        cost_cell(f"{calls:.0f}", s.cached_rows, calls), str(s.fallbacks), fitted,
        "-" if s.seconds is None else cost_cell(f"{s.seconds:.1f}", s.cached_rows, calls),
    ]  # fmt: skip


HEADER = ["variant", "rows", "agreement", "kappa", "AUROC", "AUROC (judge rows)", "judge rows", "cached rows",
          "judge items / 1k rows", "HTTP calls / 1k rows", "fallbacks", "fitted threshold (agreement)",
          "seconds"]  # fmt: skip


def compare_blocks(
    stats: Sequence[VariantStats],
    data: str,
    model: str | None,
    coverages: dict[str, JudgeCoverage] | None = None,
    verdicts: dict[str, list[str]] | None = None,
) -> list[Block]:
    """The comparison table and how to read it, opening with every variant whose judge did not
    judge, then the rows answered from the cache, then each variant's verdict (``eval.verdict``)
    in words."""
    shortfalls = [(name, c.shortfall()) for name, c in (coverages or {}).items()]
    cached = cached_note({s.name: (s.cached_rows, s.rows) for s in stats})
    return [
        Heading(f"Judge profiles and strategies on {data}", level=1),
        *(Paragraph(f"{text}.", lead=f"Warning: {name}") for name, text in shortfalls if text),
        *([Paragraph(cached, lead="Cached")] if cached else []),
        *(Paragraph(" ".join(said), lead=name) for name, said in (verdicts or {}).items()),
        Paragraph(
            f"Judge model: {model or '?'}. Rewards binarised at 0.5 for agreement and kappa; AUROC uses the raw "
            "reward. 'judge rows' are the rows the judge decided (source judge or cache; 'cached rows' those "
            "answered from the cache): pre-check and cascade rows are decided by rule. The fitted threshold is "
            "fitted on these same rows (optimistic)."
        ),
        Table(HEADER, [_row(s) for s in stats]),
    ]
