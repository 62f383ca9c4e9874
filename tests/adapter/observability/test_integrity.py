"""The judge's integrity over a run: rolling figures that warn once, each from a judge that
turns bad mid-run (in-process fake backends)."""

import logging
import re
import time

import pytest

from adapter import JudgeRewardSystem
from adapter.observability.integrity import pair_agreement
from judge_vllm.errors import JudgeUnavailableError
from judge_vllm.schemas import Verdict
from judge_vllm.testing.fake_backend import ComparingBackend, FakeBackend


def _integrity_warnings(caplog, figure_words):
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING
        and r.getMessage().startswith("judge integrity")
        and figure_words in r.getMessage()
    ]


def _group(k):
    return [{"prompt": f"Pick the largest of group {k}.", "completion": f"I pick {k * 10 + v}.", "answer": "99"}
            for v in (3, 1, 4, 2)]  # fmt: skip


def test_a_judge_that_turns_position_biased_mid_run_warns_once(caplog):
    caplog.set_level(logging.WARNING)
    backend = ComparingBackend(preference=lambda text: float(re.search(r"\d+", text).group()))
    config = {"use_cache": False, "batch_wait": 0.0, "group": {"mode": "pairwise", "schedule": "all_pairs"},
              "audit": {"window": 12, "min_rows": 6}}  # fmt: skip
    with JudgeRewardSystem(config, backend=backend) as rs:
        for k in range(3):  # honest: each pair gets the same winner in both orders
            rs.reward_group(_group(k))
        honest = rs.get_metrics()["integrity"]["position_agreement"]
        assert _integrity_warnings(caplog, "both orders") == []
        backend.preference = lambda text: 0.0  # from now on it prefers whatever it is shown first
        for k in range(3, 7):
            rs.reward_group(_group(k))
        biased = rs.get_metrics()["integrity"]["position_agreement"]
    assert (honest["value"], honest["rows"], honest["warned"]) == (1.0, 12, False)
    assert (biased["value"], biased["warned"]) == (0.0, True)
    (warning,) = _integrity_warnings(caplog, "both orders")
    assert "prefers a position" in warning


def test_a_judge_that_goes_down_mid_run_warns_once_on_the_fallback_share(caplog):
    caplog.set_level(logging.WARNING)
    backend = FakeBackend()
    config = {"use_cache": False, "batch_wait": 0.0, "audit": {"window": 10, "min_rows": 10}}
    items = [
        {"prompt": f"What is {k} + 1?", "completion": f"It is {k + 1}.", "answer": str(k + 1)}
        for k in range(30)
    ]
    with JudgeRewardSystem(config, backend=backend) as rs:
        rs.reward_batch(items[:10])
        assert rs.get_metrics()["integrity"]["fallback_rate"]["value"] == 0.0
        backend.fail_with = JudgeUnavailableError("the judge is down")
        for item in items[10:]:
            assert rs.reward(**item)["source"] == "rule_fallback"
        figure = rs.get_metrics()["integrity"]["fallback_rate"]
    assert (figure["value"], figure["warned"]) == (1.0, True)
    (warning,) = _integrity_warnings(caplog, "fell back")
    assert "of the last 10 rewards" in warning


class PaysEverything(FakeBackend):
    def _judge(self, request):
        return Verdict(score=1.0, label="match")


def test_a_judge_that_pays_master_keys_warns_once_on_the_canary_rate(caplog):
    caplog.set_level(logging.WARNING)
    config = {"use_cache": False, "audit": {"window": 16, "min_rows": 8}}
    with JudgeRewardSystem(config, backend=PaysEverything()) as rs:
        for _ in range(3):
            rs.probe_canaries()
        figure = rs.get_metrics()["integrity"]["canary_false_positive_rate"]
    assert (figure["value"], figure["rows"], figure["threshold"], figure["warned"]) == (1.0, 16, 0.25, True)
    assert len(_integrity_warnings(caplog, "canary probes")) == 1


class Flips(FakeBackend):
    """Pays what holds the reference until ``flipped``, then nothing."""

    flipped = False

    def _judge(self, request):
        return Verdict(score=0.0, label="no match") if self.flipped else super()._judge(request)


def test_a_judge_whose_scores_move_on_the_audited_rows_warns_once_on_drift(caplog):
    caplog.set_level(logging.WARNING)
    backend = Flips()
    config = {"strategy": "cascade", "use_cache": False, "batch_wait": 0.0,
              "audit": {"shadow_rate": 1.0, "max_calls_per_minute": 1000, "window": 5, "min_rows": 5}}  # fmt: skip
    items = [{"prompt": f"What is {k} + 1?", "completion": f"The answer is {k + 1}.", "answer": str(k + 1),
              "answer_type": "NUMBER"} for k in range(15)]  # fmt: skip

    def judged(rs, n):
        deadline = time.monotonic() + 10
        while rs.get_metrics()["shadow_audit"]["judged"] < n:
            assert time.monotonic() < deadline
            time.sleep(0.01)

    with JudgeRewardSystem(config, backend=backend) as rs:
        rs.reward_batch(items[:5])  # the baseline: the judge pays the 5 rows the rule paid
        judged(rs, 5)
        backend.flipped = True
        rs.reward_batch(items[5:])
        judged(rs, 15)
        figure = rs.get_metrics()["integrity"]["score_drift"]
    assert (figure["value"], figure["rows"], figure["warned"]) == (1.0, 5, True)
    assert len(_integrity_warnings(caplog, "moved by 1.00")) == 1


@pytest.mark.parametrize(
    ("p_first", "expected"),
    [
        ({(0, 1): 1.0, (1, 0): 0.0}, (1, 1)),  # 0 wins both times
        ({(0, 1): 1.0, (1, 0): 1.0}, (0, 1)),  # the first shown wins both times
        ({(0, 1): 0.5, (1, 0): 0.5}, (1, 1)),  # a tie both times
        ({(0, 1): 0.5, (1, 0): 0.9}, (0, 1)),
        ({(0, 1): 0.8, (1, 0): 0.3, (0, 2): 0.7}, (1, 1)),  # (0, 2) was asked in one order only
        ({(-1, 0): 0.2, (0, -1): 0.9}, (1, 1)),  # against the reference
    ],
)
def test_pair_agreement(p_first, expected):
    assert pair_agreement(p_first) == expected
