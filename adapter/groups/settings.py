"""The ``group:`` block of the reward config: how the completions of one prompt are judged together."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["GroupSettings"]


class GroupSettings(BaseModel):
    """How ``reward_group`` judges a group (docs/groups.md).

    ``pointwise``: each member on its own, as ``reward_batch``. ``pairwise``: the judge picks
    the better of two, every pair in both orders, on a ``schedule``; scores from win rates or
    Bradley-Terry. ``listwise``: the judge ranks the whole group (at most 16), in
    ``permutations`` cyclic shifts, scored by mean rank.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Literal["pointwise", "pairwise", "listwise"] = Field(
        default="pairwise",
        description="pointwise (each alone), pairwise (two at a time) or listwise (all at once)",
    )
    schedule: Literal["all_pairs", "round_robin", "anchor"] = Field(
        default="all_pairs",
        description="pairwise: every pair n(n-1) calls; round_robin ~2kn calls; anchor 2n calls",
    )
    opponents: int = Field(default=2, ge=1, le=64, description="round_robin: opponents per member")
    anchor: Literal["reference", "first"] = Field(
        default="reference",
        description="anchor: each member against the reference answer (the first member when there is none)",
    )
    scoring: Literal["bradley_terry", "win_rate"] = Field(
        default="bradley_terry", description="pairwise: scores from Bradley-Terry strengths or mean win rate"
    )
    permutations: int | None = Field(
        default=None, ge=1, le=16, description="listwise: orders shown (cyclic shifts); None = one per member"
    )
    deadline: float = Field(
        default=60.0,
        gt=0.0,
        le=86_400.0,
        description="the group deadline, seconds: comparisons not back by then are dropped",
    )
    compare_decided: bool = Field(
        default=False,
        description="strategy cascade: also compare the members the rule decided (to order equals)",
    )
    max_members: int = Field(
        default=128, ge=2, le=4096, description="a larger group is refused (HTTP: 422): send one group per prompt"
    )
    max_comparisons: int = Field(
        default=256,
        ge=4,
        le=1_000_000,
        description="pairwise: comparisons per group; a schedule that asks more is round_robin with fewer opponents",
    )

    @model_validator(mode="after")
    def _every_member_fits_the_budget(self) -> GroupSettings:
        if self.max_comparisons < 2 * self.max_members:
            raise ValueError(
                f"group.max_comparisons ({self.max_comparisons}) must allow each of group.max_members "
                f"({self.max_members}) one opponent in both orders: set it to at least {2 * self.max_members}"
            )
        return self

    def too_large(self, members: int) -> str | None:
        """Why a group of ``members`` is refused (None: it is not): more than ``max_members``."""
        if members <= self.max_members or self.mode == "pointwise":
            return None
        return (
            f"a group of {members} completions is more than group.max_members ({self.max_members}): "
            "split it, or raise group.max_members (and group.max_comparisons to twice it)"
        )
