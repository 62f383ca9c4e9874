"""``RuleRewardSystem``: the rule reward behind the same interface as the judge reward."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from adapter.rules.grader import grade
from adapter.rules.settings import RuleSettings, RuleVerdict

__all__ = ["RuleRewardSystem"]


class RuleRewardSystem:
    """Rule-based rewards: the judge's fallback and the baseline it is compared against."""

    def __init__(self, config: RuleSettings | Mapping[str, Any] | None = None) -> None:
        self.settings = config if isinstance(config, RuleSettings) else RuleSettings(**dict(config or {}))

    def reward(
        self, prompt: Any, completion: Any, answer: Any, answer_type: Any = None, **metadata: Any
    ) -> dict[str, Any]:
        """``{"reward", "source": "rule", "explanation", "extracted", "reason"}``; never raises."""
        verdict = grade(prompt, completion, answer, answer_type, self.settings)
        return {"source": "rule", **verdict.model_dump()}

    def reward_batch(self, items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Rewards for dicts with ``prompt``, ``completion``, ``answer``, ``answer_type``, in order
        (an item that is not a mapping gets reward 0, reason ``invalid_input``)."""
        return [
            self.reward(
                item.get("prompt"), item.get("completion"), item.get("answer"), item.get("answer_type")
            )
            if isinstance(item, Mapping)
            else _invalid_item(item)
            for item in items
        ]


def _invalid_item(item: object) -> dict[str, Any]:
    explanation = f"batch item must be a mapping, got {type(item).__name__}"
    verdict = RuleVerdict(reward=0.0, reason="invalid_input", explanation=explanation)
    return {"source": "rule", **verdict.model_dump()}
