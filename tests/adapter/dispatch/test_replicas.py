"""judge_replicas: one judge on several servers (loopback fake judges: routing and failover
plumbing, never judge quality)."""

import logging
import time
from collections import Counter

import pytest

from adapter import JudgeRewardSystem, RewardConfig
from adapter.dispatch.replicas import ReplicaPool, affinity_order
from judge_vllm.budget import Budget
from judge_vllm.errors import JudgeConfigError, JudgeUnavailableError
from judge_vllm.schemas import JudgeRequest
from judge_vllm.settings import JudgeClientConfig
from judge_vllm.testing.fake_server import FakeJudgeServer, FaultPlan
from judge_vllm.testing.ports import free_port


@pytest.fixture
def replicas():
    servers = [FakeJudgeServer().start() for _ in range(3)]
    yield servers
    for server in servers:
        server.stop()


def _system(servers, tmp_path, **overrides):
    config = {
        "judge_replicas": [s.url for s in servers],
        "cache_dir": str(tmp_path / "cache"),
        "use_cache": False,
        "batch_wait": 0.01,
        "reward_timeout": 10,
        "circuit_breaker_cooldown": 0.5,
        **overrides,
    }
    return JudgeRewardSystem(config)


def _groups(n_groups, size, tag=""):
    return [
        {"prompt": f"{tag}question {g}?", "completion": f"The answer is {g + k}", "answer": str(g)}
        for g in range(n_groups)
        for k in range(size)
    ]


def _where(servers, prompt):
    return [i for i, s in enumerate(servers) if s.judged_prompts[prompt]]


def test_affinity_order_is_stable_and_moves_only_the_groups_of_a_removed_replica():
    urls = [f"http://r{i}:8000" for i in range(4)]
    keys = [f"group {i}" for i in range(200)]
    before = {k: affinity_order(k, urls)[0] for k in keys}
    assert before == {k: affinity_order(k, urls)[0] for k in keys}
    after = {k: affinity_order(k, urls[:3])[0] for k in keys}
    moved = [k for k in keys if before[k] != after[k]]
    assert moved and all(before[k] == 3 for k in moved)  # only replica 3's groups moved


def test_every_item_of_a_group_lands_on_one_replica_and_groups_spread(replicas, tmp_path):
    items = _groups(24, 8)
    with _system(replicas, tmp_path, max_batch_size=64, startup_check="off") as rs:  # counts every item
        results = rs.reward_batch(items)
        metrics = rs.get_metrics()
    assert [r["source"] for r in results] == ["judge"] * len(items)
    homes = {g: _where(replicas, f"question {g}?") for g in range(24)}
    assert all(len(home) == 1 for home in homes.values()), homes
    per_replica = Counter(home[0] for home in homes.values())
    assert set(per_replica) == {0, 1, 2} and max(per_replica.values()) <= 14
    assert sum(r["items"] for r in metrics["replicas"].values()) == len(items)
    assert metrics["failovers"] == 0


def test_a_replica_dying_mid_run_loses_nothing_and_duplicates_nothing(replicas, tmp_path):
    with _system(replicas, tmp_path) as rs:
        first = rs.reward_batch(_groups(12, 4, "a "))
        replicas[1].stop()
        second = rs.reward_batch(_groups(12, 4, "b "))
        metrics = rs.get_metrics()
    assert [r["source"] for r in first + second] == ["judge"] * 96
    judged = Counter()
    for server in (replicas[0], replicas[2]):
        judged.update({p: n for p, n in server.judged_prompts.items() if p.startswith("b ")})
    assert judged == {f"b question {g}?": 4 for g in range(12)}  # each item judged once, on a live replica
    assert metrics["failovers"] > 0 and metrics["replicas"][replicas[1].url]["errors"] > 0
    assert metrics["circuit_breaker"]["state"] == "closed"


def test_a_replica_that_comes_back_is_used_again_after_its_probe(replicas, tmp_path):
    port = replicas[2].port
    with _system(replicas, tmp_path, circuit_breaker_threshold=1) as rs:
        replicas[2].stop()
        rs.reward_batch(_groups(12, 2, "down "))
        # it opened; on a busy machine its 0.5 s cool-down may already be over (half_open)
        assert rs.get_metrics()["replicas"][replicas[2].url]["circuit_breaker"]["state"] in ("open", "half_open")
        replicas[2] = FakeJudgeServer(port=port).start()
        time.sleep(0.6)  # the replica's breaker timeout
        results = rs.reward_batch(_groups(24, 2, "up "))
        state = rs.get_metrics()["replicas"][replicas[2].url]["circuit_breaker"]["state"]
    assert {r["source"] for r in results} == {"judge"}
    assert state == "closed" and sum(replicas[2].judged_prompts.values()) > 0


def test_the_pool_wide_breaker_opens_only_when_every_replica_is_down(replicas, tmp_path):
    with _system(replicas, tmp_path, circuit_breaker_threshold=2) as rs:
        replicas[0].stop()
        replicas[1].stop()
        partial = rs.reward_batch(_groups(6, 2, "x "))
        assert rs.get_metrics()["circuit_breaker"]["state"] == "closed"
        replicas[2].stop()
        for i in range(4):
            down = rs.reward("q", f"The answer is {i}", str(i))
        metrics = rs.get_metrics()
    assert {r["source"] for r in partial} == {"judge"}
    assert down["source"] == "rule_fallback"
    assert metrics["circuit_breaker"]["state"] == "open"


def test_overloaded_preferred_replica_sheds_to_the_least_loaded(tmp_path):
    servers = [FakeJudgeServer(FaultPlan(latency_s=0.2)).start() for _ in range(2)]
    try:
        items = _groups(1, 40)  # one group: affinity says one replica, the load bound spreads it
        with _system(servers, tmp_path, max_batch_size=1, max_concurrent_requests=40) as rs:
            results = rs.reward_batch(items)
        assert {r["source"] for r in results} == {"judge"}
        assert all(sum(s.judged_prompts.values()) > 0 for s in servers)
    finally:
        for server in servers:
            server.stop()


def test_a_comma_separated_judge_model_url_is_a_pool(monkeypatch):
    monkeypatch.setenv("JUDGE_MODEL_URL", "http://a:1, http://b:2")
    config = RewardConfig.from_any({})
    assert config.judge_replicas == ["http://a:1", "http://b:2"] and config.judge_url == "http://a:1"


def test_an_ensemble_and_a_pool_do_not_combine():
    with pytest.raises(JudgeConfigError, match="cannot be combined"):
        RewardConfig.from_any({"judge_urls": ["http://a:1"], "judge_replicas": ["http://b:1"]})


def test_an_ensemble_listing_one_server_twice_points_at_judge_replicas(caplog):
    from adapter import create_judge_reward

    with caplog.at_level(logging.WARNING, logger="JudgeReward"):
        judge = create_judge_reward({"judge_urls": ["http://a:1", "http://a:1/"], "use_cache": False,
                                     "startup_check": "off"})  # no server: the warning is the config's  # fmt: skip
        judge.close()
    assert "judge_replicas" in caplog.text


def test_an_ensemble_of_one_model_on_every_server_points_at_judge_replicas(replicas, tmp_path, caplog):
    from adapter import create_judge_reward

    config = {
        "judge_urls": [s.url for s in replicas[:2]],
        "cache_dir": str(tmp_path / "c"),
        "batch_wait": 0.01,
    }
    with caplog.at_level(logging.WARNING, logger="JudgeReward"), create_judge_reward(config) as judge:
        judge.reward("q", "The answer is 4", "4")
        judge.reward("q", "The answer is 5", "5")
    assert caplog.text.count("every judge in judge_urls serves fake-judge") == 1


# -- misbehaving replicas: garbage, slow, "retry after" -------------------------------------------


def _judged_by(servers):
    return [sum(s.judged_prompts.values()) for s in servers]


def test_a_replica_answering_garbage_is_ejected_and_its_items_are_judged_elsewhere(replicas, tmp_path):
    replicas[0].set_plan(FaultPlan(garbage_rate=1.0))
    with _system(replicas, tmp_path, circuit_breaker_threshold=2, circuit_breaker_cooldown=60) as rs:
        results = [r for n in range(6) for r in rs.reward_batch(_groups(8, 2, tag=f"round {n} "))]
        snapshot = rs.get_metrics()["replicas"][replicas[0].url]
    assert {r["source"] for r in results} == {"judge"}  # every garbage reply failed over
    assert snapshot["circuit_breaker"]["state"] == "open" and snapshot["errors"] > 0


def test_a_slow_replica_is_ejected_and_the_rest_carry_the_load(replicas, tmp_path):
    replicas[2].set_plan(FaultPlan(latency_s=0.4))
    with _system(replicas, tmp_path, circuit_breaker_cooldown=60) as rs:
        for n in range(8):
            rs.reward_batch(_groups(6, 1, tag=f"warm {n} "))
        ejected = rs.get_metrics()["replicas"][replicas[2].url]
        before = _judged_by(replicas)
        results = rs.reward_batch(_groups(30, 2, tag="after "))
        after = _judged_by(replicas)
    assert ejected["ejections"] >= 1 and ejected["ejected_for"].startswith("slow")
    assert after[2] == before[2] and sum(after) - sum(before) == 60  # the slow one took none
    assert {r["source"] for r in results} == {"judge"}


def test_when_the_only_usable_replica_dies_its_items_go_to_the_ejected_one(tmp_path):
    fast, slow = FakeJudgeServer().start(), FakeJudgeServer(FaultPlan(latency_s=0.4)).start()
    try:
        with _system([fast, slow], tmp_path, circuit_breaker_cooldown=60) as rs:
            for n in range(8):
                rs.reward_batch(_groups(6, 1, tag=f"warm {n} "))
            assert rs.get_metrics()["replicas"][slow.url]["ejected_for"].startswith("slow")
            fast.stop()
            results = rs.reward_batch(_groups(6, 2, tag="after "))
            failovers = rs.get_metrics()["failovers"]
    finally:
        slow.stop()
    assert {r["source"] for r in results} == {"judge"}  # judged by the slow replica, not the rule
    assert failovers >= 12


def test_a_replica_that_asks_to_retry_later_is_left_alone_until_then(replicas, tmp_path):
    replicas[0].set_plan(FaultPlan(script=["busy"] * 50, retry_after_s=30))
    with _system(replicas, tmp_path) as rs:
        results = [r for n in range(3) for r in rs.reward_batch(_groups(10, 2, tag=f"round {n} "))]
        snapshot = rs.get_metrics()["replicas"][replicas[0].url]
    assert {r["source"] for r in results} == {"judge"}
    assert snapshot["ejected_for"] == "asked to retry after 30 s"
    assert replicas[0].counts["busy"] < 5  # not asked again while it said to wait


def test_the_last_usable_replica_is_never_ejected(tmp_path):
    slow, also_slow = FakeJudgeServer(FaultPlan(latency_s=0.3)), FakeJudgeServer(FaultPlan(latency_s=0.3))
    with slow, also_slow, _system([slow, also_slow], tmp_path, circuit_breaker_cooldown=60) as rs:
        results = [r for n in range(8) for r in rs.reward_batch(_groups(4, 1, tag=f"round {n} "))]
        metrics = rs.get_metrics()["replicas"]
    assert {r["source"] for r in results} == {"judge"}
    assert all(m["ejections"] == 0 for m in metrics.values())  # equally slow: nobody is an outlier


def test_an_ejected_replica_comes_back_after_the_cool_down(replicas, tmp_path):
    replicas[1].set_plan(FaultPlan(script=["busy"], retry_after_s=0.3))
    with _system(replicas, tmp_path) as rs:
        rs.reward_batch(_groups(10, 1, tag="first "))
        assert rs.get_metrics()["replicas"][replicas[1].url]["ejections"] == 1
        time.sleep(0.4)
        before = _judged_by(replicas)[1]
        rs.reward_batch(_groups(30, 1, tag="later "))
    assert _judged_by(replicas)[1] > before


@pytest.mark.parametrize(("judge_s", "failovers"), [(30.0, 2), (0.0, 0)])
async def test_an_item_fails_over_only_while_its_budget_has_time_left(judge_s, failovers):
    """Two replicas nobody listens on: an item with time left moves on after each failure; one whose call is
    already due gets its error at once (the reward's fallback is waiting for it)."""
    dead = [f"http://127.0.0.1:{free_port()}" for _ in range(2)]
    pool = ReplicaPool(JudgeClientConfig(judge_url=dead[0], model="m", max_retries=0), dead, 5, 1.0)
    request = JudgeRequest(prompt="q", completion="4", answer="4", budget=Budget.start(judge_s, judge_s))
    (outcome,) = await pool.judge_many([request])
    await pool.aclose()
    assert isinstance(outcome, JudgeUnavailableError) and pool.failovers == failovers
