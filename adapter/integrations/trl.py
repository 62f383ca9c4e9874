"""TRL ``GRPOTrainer`` reward functions backed by the judge.

    from adapter.integrations.trl import judge_reward_func
    trainer = GRPOTrainer(..., reward_funcs=judge_reward_func("configs/trl.yaml"))

TRL calls a reward function as ``f(prompts=..., completions=..., completion_ids=..., **columns)``
where ``columns`` holds the dataset's other columns (one value per completion) plus
``trainer_state``, ``log_extra`` and ``log_metric``. The whole group is scored in one
``reward_batch``. With ``fallback_to_rule: false`` a judge failure is ``None``: TRL turns it
into NaN and leaves it out of the group's baseline instead of reading it as a score.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from adapter.config import ConfigLike
from adapter.factory import create_judge_reward
from judge_vllm.errors import JudgeConfigError

__all__ = [
    "DEFAULT_NAME",
    "AsyncJudgeRewardFunc",
    "JudgeRewardFunc",
    "async_judge_reward_func",
    "batch_metrics",
    "judge_reward_func",
    "message_text",
]

DEFAULT_NAME = "judge_reward"
# Keyword arguments TRL adds to the dataset columns; never mistaken for a column.
_TRL_KWARGS = frozenset({"completion_ids", "trainer_state", "log_extra", "log_metric", "environments"})

Rewards = list[float | None]


def message_text(value: str | Sequence[Mapping[str, Any]], role: str) -> str:
    """The text of a plain prompt or completion, or the joined ``role`` contents of a conversation."""
    if isinstance(value, str):
        return value
    return "\n\n".join(_content_text(m.get("content")) for m in value if m.get("role") == role)


def _content_text(content: Any) -> str:
    """A message's content: a string, or the text parts of a multimodal content list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part.get("type") == "text")


def batch_metrics(results: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Per-call judge metrics for TRL's ``log_metric``: where the rewards came from, and how fast."""
    if not results:
        return {}
    n = len(results)
    sources = Counter(r["source"] for r in results)
    return {
        "judge/cache_hit_rate": sources["cache"] / n,
        "judge/fallback_rate": (sources["rule_fallback"] + sources["error"]) / n,
        "judge/none_rate": sources["error"] / n,
        "judge/latency_ms_mean": sum(r["latency_ms"] for r in results) / n,
    }


class _TrlJudgeReward:
    """What the sync and async TRL reward functions share: building items and reporting results.

    ``config`` is what ``JudgeRewardSystem`` takes (dict, ``RewardConfig`` or YAML path); a
    config listing several ``judge_urls`` builds an ensemble. ``answer_column`` and
    ``answer_type_column`` name the dataset columns with the reference answer and its type.
    """

    def __init__(
        self,
        config: ConfigLike,
        *,
        answer_column: str = "answer",
        answer_type_column: str = "answer_type",
        name: str = DEFAULT_NAME,
    ) -> None:
        self.reward_system = create_judge_reward(config)
        self.answer_column = answer_column
        self.answer_type_column = answer_type_column
        # TRL names a reward function by ``__name__``: it keys the logged ``rewards/<name>/mean``.
        self.__name__ = name

    def close(self) -> None:
        """Close the judge reward (its loop thread, connections and cache)."""
        self.reward_system.close()

    def _items(
        self, prompts: Sequence[Any], completions: Sequence[Any], columns: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        if self.answer_column not in columns:
            found = sorted(k for k in columns if k not in _TRL_KWARGS)
            raise JudgeConfigError(
                f"TRL passed no {self.answer_column!r} column (dataset columns: {found}); "
                "set answer_column to the column that holds the reference answer"
            )
        answers = columns[self.answer_column]
        answer_types = columns.get(self.answer_type_column) or [None] * len(completions)
        return [
            {
                "prompt": message_text(prompt, "user"),
                "completion": message_text(completion, "assistant"),
                "answer": answer,
                "answer_type": answer_type,
            }
            for prompt, completion, answer, answer_type in zip(
                prompts, completions, answers, answer_types, strict=True
            )
        ]

    @staticmethod
    def _report(results: list[dict[str, Any]], columns: Mapping[str, Any]) -> Rewards:
        log_metric: Callable[[str, float], None] | None = columns.get("log_metric")
        if log_metric is not None:
            for key, value in batch_metrics(results).items():
                log_metric(key, value)
        log_extra: Callable[[str, list[Any]], None] | None = columns.get("log_extra")
        if log_extra is not None:
            log_extra("judge_source", [r["source"] for r in results])
        return [r["reward"] for r in results]


class JudgeRewardFunc(_TrlJudgeReward):
    """A synchronous TRL reward function: ``(prompts, completions, **columns) -> list[float | None]``."""

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> Rewards:
        """Score one generation batch with the judge; ``None`` where it failed and fallback is off."""
        results = self.reward_system.reward_batch(self._items(prompts, completions, columns))
        return self._report(results, columns)


class AsyncJudgeRewardFunc(_TrlJudgeReward):
    """An async TRL reward function, run on TRL's event loop alongside other async rewards."""

    async def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> Rewards:
        """Score one generation batch with the judge; ``None`` where it failed and fallback is off."""
        results = await self.reward_system.areward_batch(self._items(prompts, completions, columns))
        return self._report(results, columns)


# The entry points: ``judge_reward_func(config)`` builds the sync function.
judge_reward_func = JudgeRewardFunc
async_judge_reward_func = AsyncJudgeRewardFunc
