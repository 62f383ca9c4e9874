"""``MultiJudge``: several judge servers scoring the same request, aggregated.

The ensemble is a ``JudgeBackend`` (``EnsembleBackend``) behind one reward system: one loop
thread, one cache, one dispatcher and breaker; the pre-checks, the cascade and the rule fallback
run once. Each judge URL is a member (``adapter/dispatch/members.py``) with its own client and
circuit breaker: a judge that is down opens only its own breaker and is skipped while it is open.

Every member is asked for each batch, concurrently (one call each); a request's verdict is the
aggregate (``aggregate``) of the members that answered, with each member's score in
``judge_scores``. When none answered, that request gets the error saying why, and the reward
falls back like any judge reward. A part of a reward (a rubric criterion, a group comparison) is
judged by the first member that answers, in URL order: a ranking has no mean.

The ensemble's model name is its members' (with the aggregate): its verdicts are cached under
it, never found by a single judge. A verdict some member could not give is not cached.
"""

from __future__ import annotations

import asyncio
import logging
import statistics

from adapter.config import ConfigLike, RewardConfig
from adapter.dispatch.members import JudgeMember, MemberSnapshot
from adapter.dispatch.startup_check import JudgeAddress
from adapter.metrics_dict import MetricsDict
from adapter.reward import BaseJudgeReward, judge_budget_s, judge_client_config
from judge_vllm.backend import JudgeBackend, Outcome
from judge_vllm.errors import JudgeError, JudgeUnavailableError
from judge_vllm.redaction import redact_url
from judge_vllm.schemas import JudgeRequest, Verdict
from judge_vllm.settings import JudgeClientConfig

__all__ = ["EnsembleBackend", "MultiJudge", "aggregate_scores", "none_answered"]

logger = logging.getLogger("JudgeReward")
REPLICAS_HINT = (
    "judge_urls is an ensemble: every item is judged by each entry; to spread items over copies of "
    "one judge, list them in judge_replicas"
)


def aggregate_scores(scores: list[float], how: str) -> float:
    """Mean, median, or majority vote (1.0 when more than half score >= 0.5, else 0.0)."""
    if how == "median":
        return float(statistics.median(scores))
    if how == "vote":
        return 1.0 if sum(s >= 0.5 for s in scores) * 2 > len(scores) else 0.0
    return float(statistics.fmean(scores))


def none_answered(errors: list[JudgeError]) -> JudgeError:
    """The error of a request no member judged, naming every member's reason. Its class is theirs
    when they agree (so the breaker and the fallback read it as they would read theirs), else
    ``JudgeUnavailableError`` when any was the server's fault."""
    reasons = ", ".join(sorted({e.reason for e in errors}))
    message = f"none of {len(errors)} judges answered: {reasons}"
    kinds = {type(e) for e in errors}
    if len(kinds) == 1:
        return kinds.pop()(message)
    return JudgeUnavailableError(message) if any(e.server_fault for e in errors) else JudgeError(message)


class EnsembleBackend(JudgeBackend):
    """Several judges as one backend: a judgment is the aggregate of the members that answered; a
    part judgment, the first member's that answers."""

    def __init__(self, config: RewardConfig, client_config: JudgeClientConfig) -> None:
        urls = config.judge_urls or [config.judge_url]
        if len(set(urls)) < len(urls):
            logger.warning("judge_urls lists the same server more than once. %s.", REPLICAS_HINT)
        self.aggregate = config.aggregate
        self.members = {
            url: JudgeMember.of(redact_url(url), config, client_config.model_copy(update={"judge_url": url}))
            for url in urls
        }
        self._same_model_checked = False

    @property
    def known_model(self) -> str | None:
        """The aggregate and every member's model, once all are known: the ensemble's verdicts are
        cached under it."""
        known = [m for member in self.members.values() if (m := member.known_model) is not None]
        return self._name(known) if len(known) == len(self.members) else None

    async def model_name(self) -> str:
        """Every member's model, asked of its server if need be (fails when one cannot say)."""
        return self._name(
            list(await asyncio.gather(*(member.model_name() for member in self.members.values())))
        )

    def endpoint(self, items: int) -> str:
        """Where a call goes, for logs: every member."""
        return f"{len(self.members)} judges"

    @property
    def context_cuts(self) -> int:
        return sum(member.context_cuts for member in self.members.values())

    @property
    def coarse_fast_verdicts(self) -> int:
        return sum(member.coarse_fast_verdicts for member in self.members.values())

    async def aclose(self) -> None:
        """Close every member's connections."""
        await asyncio.gather(*(member.aclose() for member in self.members.values()))

    async def judge_many(self, requests: list[JudgeRequest]) -> list[Outcome]:
        """Main judgments aggregated over every member; parts (``request.profile`` set) from the
        first member that answers. One outcome per request, in order."""
        whole = [i for i, r in enumerate(requests) if r.profile is None]
        parts = [i for i, r in enumerate(requests) if r.profile is not None]
        aggregated, first_answers = await asyncio.gather(
            self._aggregated([requests[i] for i in whole]), self._first_answers([requests[i] for i in parts])
        )
        outcomes: list[Outcome | None] = [None] * len(requests)
        for i, outcome in [*zip(whole, aggregated, strict=True), *zip(parts, first_answers, strict=True)]:
            outcomes[i] = outcome
        return [o for o in outcomes if o is not None]

    def complete(self, verdict: Verdict) -> bool:
        """Whether every member's score is in ``verdict`` (a part's verdict is one member's: yes)."""
        return verdict.judge_scores is None or None not in verdict.judge_scores.values()

    def snapshot(self) -> dict[str, MemberSnapshot]:
        """Each member's metrics, by its (redacted) URL."""
        return {member.name: member.snapshot() for member in self.members.values()}

    async def _aggregated(self, requests: list[JudgeRequest]) -> list[Outcome]:
        if not requests:
            return []
        answers = await asyncio.gather(*(member.judge_many(requests) for member in self.members.values()))
        self._check_same_model()
        return [self._aggregate([answer[k] for answer in answers]) for k in range(len(requests))]

    def _aggregate(self, outcomes: list[Outcome]) -> Outcome:
        """One request's verdict from its members' outcomes (in URL order), or why there is none."""
        per_judge = {
            member.name: o.score if isinstance(o, Verdict) else None
            for member, o in zip(self.members.values(), outcomes, strict=True)
        }
        scores = [s for s in per_judge.values() if s is not None]
        if not scores:
            return none_answered([o for o in outcomes if isinstance(o, JudgeError)])
        return Verdict(
            score=aggregate_scores(scores, self.aggregate),
            explanation=f"{self.aggregate} of {len(scores)}/{len(self.members)} judges",
            judge_scores=per_judge,
        )

    async def _first_answers(self, requests: list[JudgeRequest]) -> list[Outcome]:
        """Each part by the first member that answers it, in URL order (members whose breaker is
        open are skipped); none answered: the first member's error."""
        outcomes: list[Outcome | None] = [None] * len(requests)
        first_errors: dict[int, JudgeError] = {}
        pending = list(range(len(requests)))
        for member in self.members.values():
            if not pending:
                break
            answers = await member.judge_many([requests[i] for i in pending])
            for i, outcome in zip(pending, answers, strict=True):
                if isinstance(outcome, Verdict):
                    outcomes[i] = outcome
                else:
                    first_errors.setdefault(i, outcome)
            pending = [i for i in pending if outcomes[i] is None]
        return [first_errors[i] if o is None else o for i, o in enumerate(outcomes)]

    def _name(self, models: list[str]) -> str:
        return f"{self.aggregate} of [{', '.join(models)}]"

    def _check_same_model(self) -> None:
        """Warn once when every member serves the same model: that is a pool, not an ensemble."""
        if self._same_model_checked:
            return
        models = [member.known_model for member in self.members.values()]
        if None in models:
            return
        self._same_model_checked = True
        if len(models) > 1 and len(set(models)) == 1:
            logger.warning("every judge in judge_urls serves %s. %s.", models[0], REPLICAS_HINT)


class MultiJudge(BaseJudgeReward):
    """An ensemble of judges behind the same API as ``JudgeRewardSystem``: one reward system whose
    backend is an ``EnsembleBackend`` over ``judge_urls``."""

    def __init__(self, config: ConfigLike = None) -> None:
        shared = RewardConfig.from_any(config)
        self.ensemble = EnsembleBackend(shared, judge_client_config(shared, judge_budget_s(shared)))
        super().__init__(shared, backend=self.ensemble)

    def _judge_address(self) -> JudgeAddress:
        """Every judge of the ensemble."""
        return JudgeAddress([member.name for member in self.ensemble.members.values()])

    @property
    def judges(self) -> dict[str, JudgeMember]:
        """The member judges, by URL."""
        return self.ensemble.members

    def _cacheable(self, verdict: Verdict) -> bool:
        return self.ensemble.complete(verdict)

    def get_metrics(self) -> MetricsDict:
        """The ensemble's metrics plus each judge's (``judges``, by redacted URL)."""
        snapshot = super().get_metrics()
        snapshot["judges"] = self.ensemble.snapshot()
        return snapshot
