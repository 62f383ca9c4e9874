"""The reward system's Prometheus series, built from a ``get_metrics()`` snapshot at scrape time."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

import adapter.observability.prometheus_series
from adapter.observability.integrity import JudgeIntegrity
from adapter.observability.prometheus_series import (
    REWARD_SERIES,
    LabelledRewardCollector,
    RewardCollector,
    RewardSeries,
)
from adapter.observability.reward_distribution import RewardDistribution
from adapter.observability.shadow_audit import ShadowAudit
from adapter.settings import AuditSettings


def _distribution(*rewards: tuple[str, str | None, float | None]) -> dict[str, Any]:
    distribution = RewardDistribution()
    for source, answer_type, reward in rewards:
        distribution.add(source, answer_type, reward)
    return {**distribution.snapshot(), "canary_false_positive_rate": 0.125}


def _shadow_audit() -> dict[str, Any]:
    """A shadow audit's snapshot after 5 rows: the judge rejected the 3 boxed ones the rule paid."""
    audit = ShadowAudit(AuditSettings(min_rows=3), judge=None, submit=None)  # type: ignore[arg-type]
    snapshot: dict[str, Any] = dict(audit.snapshot())
    snapshot.update(sampled=6, sent=5, over_budget=1, judged=5, flagged_forms=["box"])
    snapshot["by_form"]["box"].update(rule_paid_judge_rejected=3)
    snapshot["by_form"]["marker"].update(agree_paid=2)
    snapshot["by_answer_type"]["NUMBER"].update(rule_paid_judge_rejected=3, agree_paid=2)
    return snapshot


def _integrity() -> dict[str, Any]:
    """Integrity figures: 10 rewards of which 3 fell back (it warned), nothing else yet."""
    integrity = JudgeIntegrity(AuditSettings(window=10, min_rows=10, max_fallback_rate=0.2), 0.25)
    for source in ["judge"] * 7 + ["rule_fallback"] * 3:
        integrity.record_reward(source)
    return dict(integrity.snapshot())


SNAPSHOT: dict[str, Any] = {
    "sources": {"judge": 3, "cache": 2, "rule_fallback": 1},
    "fallback_reasons": {'Circuit "breaker" open': 1},
    "precheck_reasons": {"master_key": 4},
    "errors": {"JudgeUnavailableError": 2},
    "judge_calls": 2,
    "judged_items": 5,
    "context_cuts": 3,
    "coarse_fast_verdicts": 0,
    "cache": {"entries": 4, "errors": 1, "evictions": 0, "enabled": True},
    "current_queue_size": 0,
    "inflight": 1,
    "circuit_breaker": {"state": "open", "failures": 5},
    "latency_ms": {"p50": 1.0},  # not exported: no row reads it
    "cascade": {"decided_by_rule": 7, "sent_to_judge": 3, "judge_fraction": 0.3},
    "failovers": 2,
    "reward_distribution": _distribution(
        ("judge", "NUMBER", 1.0), ("judge", "NUMBER", 0.25), ("judge", "code", 0.0), ("error", None, None)
    ),
    "canary": {"false_positive_rate": 0.125, "rounds": 1},
    "fallback_window": {
        "share": 0.25,
        "rewards": 8,
        "window": 200,
        "threshold": 0.2,
        "reason": "x",
        "alerts": 1,
    },
    "judgment_log": {
        "path": "/tmp/j.jsonl",
        "sample_rate": 1.0,
        "logged": 9,
        "dropped": 1,
        "errors": 0,
        "queued": 2,
    },
    "shadow_audit": _shadow_audit(),
    "integrity": _integrity(),
    "replicas": {
        "http://a:1": {
            "items": 4,
            "errors": 2,
            "inflight": 1,
            "latency_ms": {"p50": 12.5, "p95": 20.0},
            "circuit_breaker": {"state": "open", "failures": 2},
        },
        "http://b:1": {
            "items": 6,
            "errors": 0,
            "inflight": 0,
            "latency_ms": {"p50": 10.0, "p95": 11.0},
            "circuit_breaker": {"state": "closed", "failures": 0},
        },
    },
}


def _scrape(snapshot: dict[str, Any]) -> str:
    registry = CollectorRegistry()
    registry.register(RewardCollector(lambda: snapshot))
    return generate_latest(registry).decode()


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


DISTRIBUTION_FAMILIES = (
    "judge_reward_value",
    "judge_reward_near_zero_fraction",
    "judge_reward_near_one_fraction",
    "judge_canary_false_positive_rate",
)


def test_every_series_from_a_full_snapshot():
    samples = {
        key: value
        for key, value in _samples(_scrape(SNAPSHOT)).items()
        if not key[0].startswith(
            (*DISTRIBUTION_FAMILIES, "judge_shadow_audit", "judge_integrity")
        )  # each tested on its own
    }
    assert samples == {
        ("judge_rewards_total", (("source", "cache"),)): 2,
        ("judge_rewards_total", (("source", "judge"),)): 3,
        ("judge_rewards_total", (("source", "rule_fallback"),)): 1,
        ("judge_cache_hits_total", ()): 2,
        ("judge_fallbacks_total", (("reason", 'Circuit "breaker" open'),)): 1,
        ("judge_fallback_window_share", ()): 0.25,
        ("judge_fallback_alerts_total", ()): 1,
        ("judge_prechecks_total", (("reason", "master_key"),)): 4,
        ("judge_errors_total", (("kind", "JudgeUnavailableError"),)): 2,
        ("judge_calls_total", ()): 2,
        ("judge_items_total", ()): 5,
        ("judge_context_cuts_total", ()): 3,
        ("judge_coarse_fast_verdicts_total", ()): 0,
        ("judge_cache_errors_total", ()): 1,
        ("judge_cache_evictions_total", ()): 0,
        ("judge_queue_size", ()): 0,
        ("judge_inflight", ()): 1,
        ("judge_circuit_breaker_state", (("state", "closed"),)): 0,
        ("judge_circuit_breaker_state", (("state", "half_open"),)): 0,
        ("judge_circuit_breaker_state", (("state", "open"),)): 1,
        ("judge_circuit_breaker_failures", ()): 5,
        ("judge_cascade_decisions_total", (("decided_by", "judge"),)): 3,
        ("judge_cascade_decisions_total", (("decided_by", "rule"),)): 7,
        ("judge_replica_items_total", (("replica", "http://a:1"),)): 4,
        ("judge_replica_items_total", (("replica", "http://b:1"),)): 6,
        ("judge_replica_errors_total", (("replica", "http://a:1"),)): 2,
        ("judge_replica_errors_total", (("replica", "http://b:1"),)): 0,
        ("judge_replica_inflight", (("replica", "http://a:1"),)): 1,
        ("judge_replica_inflight", (("replica", "http://b:1"),)): 0,
        ("judge_replica_latency_p50_ms", (("replica", "http://a:1"),)): 12.5,
        ("judge_replica_latency_p50_ms", (("replica", "http://b:1"),)): 10.0,
        ("judge_replica_breaker_open", (("replica", "http://a:1"),)): 1,
        ("judge_replica_breaker_open", (("replica", "http://b:1"),)): 0,
        ("judge_replica_failovers_total", ()): 2,
        ("judge_judgment_log_lines_total", (("outcome", "logged"),)): 9,
        ("judge_judgment_log_lines_total", (("outcome", "dropped"),)): 1,
        ("judge_judgment_log_lines_total", (("outcome", "errors"),)): 0,
    }


def test_reward_values_are_a_histogram_by_source_and_answer_type_with_the_fractions_beside():
    samples = _samples(_scrape(SNAPSHOT))
    number = (("answer_type", "NUMBER"), ("source", "judge"))
    buckets = {
        le: samples[("judge_reward_value_bucket", tuple(sorted((*number, ("le", le)))))]
        for le in ("0.05", "0.2", "0.3", "0.95", "1.0", "+Inf")
    }
    assert buckets == {"0.05": 0, "0.2": 0, "0.3": 1, "0.95": 1, "1.0": 2, "+Inf": 2}
    assert samples[("judge_reward_value_count", number)] == 2
    assert samples[("judge_reward_value_sum", number)] == 1.25
    # answer_type is a closed set: free text is OTHER; a reward without a value is in no bucket.
    other = (("answer_type", "OTHER"), ("source", "judge"))
    assert samples[("judge_reward_value_bucket", tuple(sorted((*other, ("le", "0.05")))))] == 1
    assert not [key for key in samples if ("source", "error") in key[1]]
    assert samples[("judge_reward_near_zero_fraction", ())] == 1 / 3
    assert samples[("judge_reward_near_one_fraction", ())] == 1 / 3
    assert samples[("judge_canary_false_positive_rate", ())] == 0.125
    assert "# TYPE judge_reward_value histogram" in _scrape(SNAPSHOT)


def test_no_rewards_yet_leaves_the_fractions_out_but_keeps_the_histogram_family():
    names = {
        f.name for f in text_string_to_metric_families(_scrape({"reward_distribution": _distribution()}))
    }
    assert names == {"judge_reward_value"}


def test_a_labelled_collector_serves_several_systems_each_family_once():
    collector = LabelledRewardCollector()
    collector.add("train", lambda: {"judge_calls": 3, "sources": {"judge": 3}})
    collector.add("val", lambda: {"judge_calls": 1})
    with pytest.raises(ValueError, match="served already"):
        collector.add("val", dict)
    registry = CollectorRegistry()
    registry.register(collector)
    text = generate_latest(registry).decode()
    assert text.count("# TYPE judge_calls_total counter") == 1
    samples = _samples(text)
    assert samples[("judge_calls_total", (("reward", "train"),))] == 3
    assert samples[("judge_calls_total", (("reward", "val"),))] == 1
    assert samples[("judge_rewards_total", (("reward", "train"), ("source", "judge")))] == 3
    collector.remove("train")
    assert "train" not in generate_latest(registry).decode()
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        registry.register(LabelledRewardCollector())


def test_the_shadow_audit_counts_by_stage_form_answer_type_and_outcome():
    samples = _samples(_scrape(SNAPSHOT))
    assert samples[("judge_shadow_audit_rows_total", (("stage", "over_budget"),))] == 1
    assert samples[("judge_shadow_audit_rows_total", (("stage", "judged"),))] == 5
    box = (("form", "box"), ("outcome", "rule_paid_judge_rejected"))
    assert samples[("judge_shadow_audit_judged_total", box)] == 3
    assert samples[("judge_shadow_audit_judged_total", (("form", "marker"), ("outcome", "agree_paid")))] == 2
    assert samples[("judge_shadow_audit_judged_total", (("form", "tag"), ("outcome", "agree_paid")))] == 0
    number = (("answer_type", "NUMBER"), ("outcome", "rule_paid_judge_rejected"))
    assert samples[("judge_shadow_audit_judged_by_answer_type_total", number)] == 3
    assert samples[("judge_shadow_audit_flagged", (("form", "box"),))] == 1
    assert samples[("judge_shadow_audit_flagged", (("form", "bare"),))] == 0


def test_the_integrity_figures_their_thresholds_and_whether_they_warned():
    samples = _samples(_scrape(SNAPSHOT))
    fallbacks = (("figure", "fallback_rate"),)
    assert samples[("judge_integrity", fallbacks)] == pytest.approx(0.3)
    assert samples[("judge_integrity_threshold", fallbacks)] == 0.2
    assert samples[("judge_integrity_warned", fallbacks)] == 1
    drift = (("figure", "score_drift"),)
    assert samples[("judge_integrity", drift)] != samples[("judge_integrity", drift)]  # NaN: not known yet
    assert samples[("judge_integrity_warned", (("figure", "position_agreement"),))] == 0


def test_types_and_label_escaping_in_the_text():
    text = _scrape(SNAPSHOT)
    assert "# TYPE judge_rewards_total counter" in text and "# TYPE judge_inflight gauge" in text
    assert 'judge_fallbacks_total{reason="Circuit \\"breaker\\" open"} 1.0' in text.splitlines()


def test_a_fresh_system_has_no_cache_hits_yet_but_the_counter_is_there():
    assert _samples(_scrape({**SNAPSHOT, "sources": {}}))[("judge_cache_hits_total", ())] == 0


@pytest.mark.parametrize(
    ("snapshot", "missing"),
    [
        ({}, {s.name for s in REWARD_SERIES}),
        (
            {k: v for k, v in SNAPSHOT.items() if k != "circuit_breaker"},
            {"judge_circuit_breaker_state", "judge_circuit_breaker_failures"},
        ),
        ({**SNAPSHOT, "circuit_breaker": {"state": "open"}}, {"judge_circuit_breaker_failures"}),
        ({**SNAPSHOT, "sources": None}, {"judge_rewards", "judge_cache_hits"}),
        ({**SNAPSHOT, "judge_calls": "many"}, {"judge_calls"}),
    ],
)
def test_a_missing_or_misshapen_key_drops_its_family_not_the_scrape(snapshot, missing):
    names = {family.name for family in text_string_to_metric_families(_scrape(snapshot))}
    assert names == {s.name for s in REWARD_SERIES} - missing


def test_a_new_key_is_one_more_row():
    extra = RewardSeries(
        "judge_canary_failures", "counter", "Canary failures.", "canary", read=lambda c: c["failed"]
    )
    registry = CollectorRegistry()
    registry.register(RewardCollector(lambda: {"canary": {"failed": 7}}, series=(*REWARD_SERIES, extra)))
    assert "judge_canary_failures_total 7.0" in generate_latest(registry).decode().splitlines()


def test_the_table_names_each_family_once_without_the_counter_suffix():
    names = [s.name for s in REWARD_SERIES]
    assert len(names) == len(set(names))
    assert not [n for n in names if n.endswith("_total")]


def test_registries_are_per_server_and_refuse_a_second_collector_of_the_same_names():
    first, second = CollectorRegistry(), CollectorRegistry()
    first.register(RewardCollector(lambda: SNAPSHOT))
    second.register(RewardCollector(lambda: SNAPSHOT))  # another server in the same process
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        first.register(RewardCollector(lambda: SNAPSHOT))
    assert "judge_rewards_total" not in generate_latest(REGISTRY).decode()


def test_all_names_what_the_module_defines():
    assert [name for name in adapter.observability.prometheus_series.__all__ if not hasattr(adapter.observability.prometheus_series, name)] == []
