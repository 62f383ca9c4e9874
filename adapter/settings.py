"""The blocks the reward config nests, below ``config`` and every step that reads them:
``group:`` (``GroupSettings``: how the completions of one prompt are judged together),
``calibration:`` (``ConfidenceCalibration``: the confidence shrink), ``process:``
(``ProcessSettings``: per-step judgments of an agent's trajectory), ``audit:``
(``AuditSettings``: the shadow audit of the rule's decisions, and the thresholds of the judge's
integrity figures) and ``rubric:`` (its ``Criterion`` entries, read by ``parse_rubric``, for the
config and for each item's own rubric).

A rubric is a list whose entries are plain strings or ``{criterion, weight (default 1), veto
(default false)}``; ``adapter.rubrics`` judges and scores it.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from judge_vllm.errors import JudgeInputError

__all__ = [
    "MAX_CRITERIA",
    "AuditSettings",
    "ConfidenceCalibration",
    "Criterion",
    "GroupSettings",
    "ProcessSettings",
    "parse_rubric",
]

MAX_CRITERIA = 64
MAX_CRITERION_CHARS = 2000


class GroupSettings(BaseModel):
    """How ``reward_group`` judges a group (docs/groups.md).

    ``pointwise``: each member on its own, as ``reward_batch``. ``pairwise``: the judge picks
    the better of two, every pair in both orders, on a ``schedule``; scores from win rates or
    Bradley-Terry. ``listwise``: the judge ranks the whole group (at most 16), in all n cyclic
    shifts (every member in every position once), scored by mean rank. ``permutations`` no longer
    lowers that (fewer orders than members leak position into the scores): it is accepted, with a
    ``FutureWarning``, so that configs that set it still load.

    With strategy ``cascade`` and a reference, a group the rule decides none of (or any group, with
    ``compare_decided``) is anchored: each member is judged alone (by the rule where it is sure, with
    ``compare_decided``), the members found right are compared among themselves, and the
    comparisons can only lower a right member's reward (by at most ``comparison_weight``), never
    raise a wrong one's.
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
        default=None,
        ge=1,
        le=16,
        description="ignored (a warning): listwise always shows all n cyclic shifts; fewer leak position",
    )
    deadline: float = Field(
        default=60.0,
        gt=0.0,
        le=86_400.0,
        description="the group deadline, seconds: comparisons not back by then are dropped",
    )
    compare_decided: bool = Field(
        default=False,
        description="strategy cascade: also compare the members the rule proves right (to order equals)",
    )
    comparison_weight: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="strategy cascade, an anchored group (a reference, and the rule decides no member, or "
        "compare_decided): the most the comparisons can take off a member found right alone",
    )
    max_members: int = Field(
        default=128,
        ge=2,
        le=4096,
        description="a larger group is compared in sub-groups of at most this many (POST /judge_group: 422)",
    )
    max_comparisons: int = Field(
        default=256,
        ge=4,
        le=1_000_000,
        description="pairwise: comparisons per group; a schedule that asks more is round_robin with fewer opponents",
    )

    @model_validator(mode="after")
    def _permutations_ignored(self) -> GroupSettings:
        if self.permutations is not None:
            warnings.warn(
                f"group.permutations is ignored ({self.permutations} given): listwise shows every group in "
                "all n cyclic shifts, since fewer orders than members leak position into the rewards; "
                "remove the key (it will stop loading in a later release)",
                FutureWarning,
                stacklevel=2,
            )
        return self

    @model_validator(mode="after")
    def _every_member_fits_the_budget(self) -> GroupSettings:
        if self.max_comparisons < 2 * self.max_members:
            raise ValueError(
                f"group.max_comparisons ({self.max_comparisons}) must allow each of group.max_members "
                f"({self.max_members}) one opponent in both orders: set it to at least {2 * self.max_members}"
            )
        return self

    def too_large(self, members: int) -> str | None:
        """Why ``POST /judge_group`` refuses a group of ``members`` (None: it does not): more than
        ``max_members``. ``reward_group`` compares such a group in sub-groups instead."""
        if members <= self.max_members or self.mode == "pointwise":
            return None
        return (
            f"a group of {members} completions is more than group.max_members ({self.max_members}): "
            "split it, or raise group.max_members (and group.max_comparisons to twice it)"
        )


class ConfidenceCalibration(BaseModel):
    """Rewards whose ``confidence`` is below ``threshold`` are multiplied by ``factor``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    factor: float = Field(default=0.8, ge=0.0, le=1.0)


class ProcessSettings(BaseModel):
    """Process rewards for agent trajectories (docs/trajectories.md): each of the agent's turns
    judged on its own (profile ``step``: correct and useful?), in one batch beside the outcome
    judgment. The process only lowers the reward of a right outcome: ``outcome * (1 - weight *
    (1 - aggregate(turns)))``; a wrong outcome (score below 0.5) gets ``outcome * (1 - weight)``,
    whatever its turns."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    aggregate: Literal["mean", "min", "last"] = Field(
        default="mean",
        description="how the turns' P(Yes) combine: mean, min (one bad turn sinks it) or last (the last turn's)",
    )
    weight: float = Field(
        default=0.5, ge=0.0, le=1.0, description="the most the turns can take off a right outcome's reward"
    )
    max_steps: int = Field(
        default=32,
        ge=1,
        le=256,
        description="at most this many turns judged, the last ones (one judgment each); earlier ones count as bad",
    )


class AuditSettings(BaseModel):
    """Watching the rewards while they are paid (docs/observability.md, "Is my reward being hacked?").

    The shadow audit: under ``strategy: cascade``, a sampled share (``shadow_rate``) of the rows
    the rule decided is also sent to the judge in the background, at most
    ``max_calls_per_minute``; the judge's verdict is recorded beside the rule's and never changes
    a reward. A grammar form whose "rule paid, judge rejected" share passes
    ``disagreement_rate`` (over at least ``min_rows`` rows the rule paid) warns once;
    ``on_disagreement: judge`` then sends that form's rows to the judge. The other thresholds are
    those of the judge's integrity figures (``adapter/observability/integrity.py``), each over
    the last ``window`` events and warning once; the canary figure's is ``canary_alert_rate``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    shadow_rate: float = Field(
        default=0.02,
        ge=0.0,
        le=1.0,
        description="strategy cascade: the share of rule-decided rows also judged in the background (0 = off)",
    )
    max_calls_per_minute: int = Field(
        default=60,
        ge=0,
        le=1_000_000,
        description="the shadow audit's judge calls in any 60 s; sampled rows past it are dropped (counted)",
    )
    disagreement_rate: float = Field(
        default=0.2,
        ge=0.0,
        le=1.0,
        description='a grammar form whose "rule paid, judge rejected" share of its rule-paid audited rows passes this warns once',
    )
    min_rows: int = Field(
        default=20,
        ge=1,
        le=1_000_000,
        description="a figure may warn from this many rows on: rows the rule paid in a form, rewards, pairs, probes",
    )
    on_disagreement: Literal["count", "judge"] = Field(
        default="count",
        description="count: only count and warn; judge: a form that warned goes to the judge from then on",
    )
    window: int = Field(
        default=200,
        ge=1,
        le=1_000_000,
        description="the integrity figures are over the last this many rewards, pairs, probes or audited rows",
    )
    min_position_agreement: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="pairwise groups: a share of pairs whose two orders pick the same winner below this warns once",
    )
    max_fallback_rate: float = Field(
        default=0.2,
        ge=0.0,
        le=1.0,
        description="a share of rewards that fell back (rule_fallback, error) above this warns once",
    )
    max_score_drift: float = Field(
        default=0.2,
        ge=0.0,
        le=1.0,
        description="a change of the judge's mean score on shadow-audited rows (recent window against the first) above this warns once",
    )


class Criterion(BaseModel):
    """One yes/no requirement of a good response."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    criterion: str = Field(min_length=1, max_length=MAX_CRITERION_CHARS)
    weight: float = Field(default=1.0, gt=0.0, le=1000.0)
    veto: bool = False


def parse_rubric(rubric: object, field: str = "rubric") -> list[Criterion]:
    """Criteria from a list of strings or mappings; ``JudgeInputError`` naming the entry otherwise."""
    if isinstance(rubric, str | bytes) or not isinstance(rubric, Sequence) or not rubric:
        raise JudgeInputError(f"{field} must be a non-empty list of criteria, got {type(rubric).__name__}")
    if len(rubric) > MAX_CRITERIA:
        raise JudgeInputError(f"{field} has {len(rubric)} criteria; at most {MAX_CRITERIA}")
    criteria = []
    for k, entry in enumerate(rubric):
        try:
            if isinstance(entry, str):
                criteria.append(Criterion(criterion=entry.strip()))
            elif isinstance(entry, dict):
                criteria.append(Criterion.model_validate(entry))
            else:
                raise JudgeInputError(
                    f"{field}[{k}] must be a string or a mapping, got {type(entry).__name__}"
                )
        except ValidationError as err:
            problem = err.errors()[0]
            where = ".".join(str(p) for p in problem["loc"]) or "criterion"
            raise JudgeInputError(f"{field}[{k}].{where}: {problem['msg']}") from None
    return criteria
