"""``RuleRewardSystem``: the rule reward behind the same interface as the judge reward."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from typing_extensions import TypedDict

from adapter.rules.grader import grade
from adapter.rules.settings import RuleSettings, RuleVerdict

__all__ = ["RuleRewardDict", "RuleRewardSystem"]


class RuleRewardDict(TypedDict):
    """The dict ``RuleRewardSystem.reward()`` returns: ``RuleVerdict``'s fields, source ``rule``."""

    source: Literal["rule"]
    reward: float
    explanation: str
    extracted: str | None
    reason: str
    proven: bool


class RuleRewardSystem:
    """Rule-based rewards: the judge's fallback and the baseline it is compared against."""

    def __init__(self, config: RuleSettings | Mapping[str, object] | None = None) -> None:
        self.settings = (
            config if isinstance(config, RuleSettings) else RuleSettings.model_validate(dict(config or {}))
        )

    def reward(
        self,
        prompt: object,
        completion: object,
        answer: object,
        answer_type: object = None,
        **metadata: object,
    ) -> RuleRewardDict:
        """``{"reward", "source": "rule", "explanation", "extracted", "reason"}``; never raises."""
        return _as_dict(grade(prompt, completion, answer, answer_type, self.settings))

    def reward_batch(self, items: Iterable[object]) -> list[RuleRewardDict]:
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


def _invalid_item(item: object) -> RuleRewardDict:
    explanation = f"batch item must be a mapping, got {type(item).__name__}"
    return _as_dict(RuleVerdict(reward=0.0, reason="invalid_input", explanation=explanation))


def _as_dict(verdict: RuleVerdict) -> RuleRewardDict:
    return {
        "source": "rule",
        "reward": verdict.reward,
        "explanation": verdict.explanation,
        "extracted": verdict.extracted,
        "reason": verdict.reason,
        "proven": verdict.proven,
    }
