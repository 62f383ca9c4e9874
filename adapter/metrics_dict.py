"""What ``get_metrics()`` returns, key by key: a plain dict for trainers, typed here.

Each part is typed where it is counted (``RewardCounters`` in ``observability.metrics``,
``CanaryCounts``, ``BreakerSnapshot``, ``CacheStats``, ``JudgmentLogCounts``, ``ReplicaSnapshot``,
``MemberSnapshot``), in observability, dispatch and the cache: this module gathers them, above
all three.
``MetricsDict`` adds the reward system's live gauges to the counters, and the keys only some
systems have.
"""

# No ``from __future__ import annotations``: NotRequired must be seen at run time (``__required_keys__``).
from typing_extensions import NotRequired

from adapter.cache.verdict_cache import CacheStats
from adapter.dispatch.breaker import BreakerSnapshot
from adapter.dispatch.members import MemberSnapshot
from adapter.dispatch.replicas import ReplicaSnapshot
from adapter.observability.canary import CanaryCounts
from adapter.observability.fallback_watch import FallbackWindow
from adapter.observability.integrity import IntegrityCounts
from adapter.observability.judgment_log import JudgmentLogCounts
from adapter.observability.metrics import RewardCounters
from adapter.observability.shadow_audit import ShadowAuditCounts

__all__ = ["MetricsDict"]


class MetricsDict(RewardCounters):
    """``get_metrics()``: the counters and rates of every reward (``RewardCounters``), the canary
    probes, the queue, breaker, cache and judgment log, the share of recent rewards the judge did not
    give (``fallback_window``), the shadow audit of the rule's decisions, the judge's integrity
    figures, and the judge's model, mode and profile.
    ``failovers`` and ``replicas`` are there with ``judge_replicas``; ``judges`` with several
    judges, each member's own calls, model and breaker (``MultiJudge``: by URL; ``escalate_to``:
    ``first`` and ``second``, with ``escalations``)."""

    canary: CanaryCounts
    current_queue_size: int
    inflight: int
    circuit_breaker: BreakerSnapshot
    cache: CacheStats | None
    cache_entries: int
    model: str | None
    context_cuts: int
    coarse_fast_verdicts: int
    mode: str
    profile: str
    judgment_log: JudgmentLogCounts | None
    fallback_window: FallbackWindow
    shadow_audit: ShadowAuditCounts
    integrity: IntegrityCounts
    failovers: NotRequired[int]
    replicas: NotRequired[dict[str, ReplicaSnapshot]]
    escalations: NotRequired[int]
    judges: NotRequired[dict[str, MemberSnapshot]]
