"""Scoring evaluation rows with the rule reward and with the judge (through the adapter).

The judge is asked in chunks of ``reward_batch`` calls, so the adapter's micro-batching
and disk cache apply: a rerun answers finished rows from the cache, which makes an
interrupted evaluation resumable.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict
from typing_extensions import TypedDict

from adapter import BaseJudgeReward, MetricsDict, RewardDict, RuleRewardSystem
from eval.dataset import EvalRow

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "JudgeRun",
    "RuleScore",
    "ScoredRow",
    "merge_scores",
    "score_judge",
    "score_rules",
]

logger = logging.getLogger(__name__)

DEFAULT_CHUNK_SIZE = 64
Advance = Callable[[int], None]


class ScoredRow(BaseModel):
    """One line of ``scores.jsonl``: a row's rule and judge rewards, with the texts."""

    model_config = ConfigDict(frozen=True)

    id: str
    line: int
    answer_type: str | None
    label: float | None
    rule: float | None
    rule_explanation: str
    rule_reason: str | None = None
    rule_extracted: str | None = None
    judge: float | None = None
    judge_source: str | None = None
    judge_explanation: str | None = None
    judge_reason: str | None = None
    judge_error: str | None = None
    judge_score: float | None = None
    judge_scores: dict[str, float | None] | None = None
    latency_ms: float | None = None
    group: str | None = None
    prompt: str
    completion: str
    answer: str


class RuleScore(BaseModel):
    """The rule reward of one row; ``reward`` is None when the rule reward raised."""

    model_config = ConfigDict(frozen=True)

    reward: float | None
    explanation: str
    reason: str | None = None
    extracted: str | None = None


@dataclass(frozen=True)
class JudgeRun:
    """The judge's results for every row, in input order, and what the run cost."""

    results: list[RewardDict]
    seconds: float
    metrics: MetricsDict


class _JudgeFields(TypedDict, total=False):
    """A ``ScoredRow``'s fields from the judge's result."""

    judge: float | None
    judge_source: str | None
    judge_explanation: str | None
    judge_reason: str | None
    judge_error: str | None
    judge_score: float | None
    judge_scores: dict[str, float | None] | None
    latency_ms: float | None


def _no_progress(_: int) -> None:
    return None


def score_rules(
    rows: Sequence[EvalRow], rules: RuleRewardSystem, advance: Advance = _no_progress
) -> list[RuleScore]:
    """The rule reward of every row; a row whose rule reward raises gets ``reward=None``."""
    scores = []
    for row in rows:
        try:
            graded = rules.reward(row.prompt, row.completion, row.answer, row.answer_type)
            score = RuleScore(
                reward=graded["reward"],
                explanation=str(graded.get("explanation", "")),
                reason=graded.get("reason"),
                extracted=graded.get("extracted"),
            )
        except Exception as err:  # one bad row must not end the evaluation
            logger.warning("rule reward raised on row %s: %s", row.id, err)
            score = RuleScore(reward=None, explanation=f"rule reward raised {type(err).__name__}: {err}")
        scores.append(score)
        advance(1)
    return scores


def score_judge(
    rows: Sequence[EvalRow],
    judge: BaseJudgeReward,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    advance: Advance = _no_progress,
) -> JudgeRun:
    """The judge reward of every row, ``chunk_size`` rows per ``reward_batch`` call."""
    results: list[RewardDict] = []
    started = time.perf_counter()
    for start in range(0, len(rows), chunk_size):
        chunk = rows[start : start + chunk_size]
        items = [
            {
                "prompt": r.prompt,
                "completion": r.completion,
                "answer": r.answer,
                "answer_type": r.answer_type,
                "request_id": r.id,
                "trajectory": r.trajectory,
            }
            for r in chunk
        ]
        results.extend(judge.reward_batch(items))
        advance(len(chunk))
    return JudgeRun(results=results, seconds=time.perf_counter() - started, metrics=judge.get_metrics())


def merge_scores(
    rows: Sequence[EvalRow], rule_scores: Sequence[RuleScore], judge_results: Sequence[RewardDict] | None
) -> list[ScoredRow]:
    """One ``ScoredRow`` per input row; judge fields stay None without judge results."""
    scored = []
    for i, (row, rule) in enumerate(zip(rows, rule_scores, strict=True)):
        judged: _JudgeFields = {}
        if judge_results is not None:
            result = judge_results[i]
            judged = {
                "judge": result["reward"],
                "judge_source": result["source"],
                "judge_explanation": result.get("explanation"),
                "judge_reason": result.get("reason"),
                "judge_error": result.get("error"),
                "judge_score": result.get("judge_score"),
                "judge_scores": result.get("judge_scores"),
                "latency_ms": result.get("latency_ms"),
            }
        scored.append(
            ScoredRow(
                id=row.id,
                line=row.line,
                answer_type=row.answer_type,
                label=row.label,
                rule=rule.reward,
                rule_explanation=rule.explanation,
                rule_reason=rule.reason,
                rule_extracted=rule.extracted,
                group=row.group,
                prompt=row.prompt,
                completion=row.completion,
                answer=row.answer,
                **judged,
            )
        )
    return scored
