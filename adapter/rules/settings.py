"""The rule reward's settings and verdict."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from judge_vllm.renamed_keys import rename_deprecated_keys

__all__ = ["RuleSettings", "RuleVerdict"]


class RuleSettings(BaseModel):
    """Tolerances and bounds of the rule reward."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    RENAMED_KEYS: ClassVar[Mapping[str, str]] = {"math_timeout_s": "symbolic_timeout"}

    rel_tol: float = Field(
        default=1.0,
        ge=0.0,
        le=1.0,
        description=(
            "NUMBER: a reference decimal whose last digit's place is at most this share of its value "
            "may be a rounding (1: every decimal): an answer written more finely that rounds to it is "
            "the judge's, never a proven mismatch (nor paid by rule: 123.454 is no price of 123.45); "
            "lower it where your references are exact decimals, to refuse such answers by rule"
        ),
    )
    symbolic_timeout: float = Field(
        default=2.0, gt=0.0, le=60.0, description="bound on the symbolic checks of one completion"
    )
    unsure_reward: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="the rule's reward where it has no proof either way (the cascade asks the judge instead)",
    )
    max_completion_chars: int = Field(
        default=20_000,
        ge=100,
        le=1_000_000,
        description="the most the rule reads: a longer completion is never proven either way (the judge decides)",
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: object) -> object:
        if isinstance(data, dict) and "abs_tol" in data:
            data = {k: v for k, v in data.items() if k != "abs_tol"}
            warnings.warn(
                "rules: abs_tol no longer has an effect (a number is compared exactly; a rounding is "
                "the judge's): remove it",
                FutureWarning,
                stacklevel=2,
            )
        return rename_deprecated_keys(data, cls.RENAMED_KEYS, "rules")


class RuleVerdict(BaseModel):
    """The rule reward for one completion, with what was extracted and why."""

    model_config = ConfigDict(frozen=True)

    reward: float = Field(ge=0.0, le=1.0)
    explanation: str
    extracted: str | None = None
    reason: str
    proven: bool = Field(
        default=False,
        description="a proof: a canonical answer proven equal, or (numbers, letters) proven different",
    )
