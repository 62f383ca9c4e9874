"""JudgeRewardSystem against a loopback fake judge: faults, fallback, cache, batching, threads.

The fake judge scores 5 (reward 1.0) when the reference answer appears in the response,
else 1 (reward 0.0); it stands in for the network, not for the judge's quality.
"""

import asyncio
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from adapter import JudgeRewardSystem, RewardResult, create_judge_reward
from adapter.ensemble import MultiJudge, aggregate_scores
from judge_vllm.errors import JudgeInputError
from judge_vllm.schemas import JudgeRequest, Verdict
from judge_vllm.testing.fake_server import FakeJudgeServer, FaultPlan


def _system(url, tmp_path, **overrides):
    config = {
        "judge_url": url,
        "cache_dir": str(tmp_path / "cache"),
        "reward_timeout": 5.0,
        "max_retries": 1,
        "batch_wait": 0.01,
        **overrides,
    }
    return JudgeRewardSystem(config)


def _items(n, prefix="item"):
    return [
        {"prompt": f"{prefix} question {i}", "completion": f"The answer is {i}.", "answer": str(i % 7),
         "answer_type": "NUMBER"}
        for i in range(n)
    ]  # fmt: skip


def _expected(item):
    return 1.0 if item["answer"] in item["completion"] else 0.0


def test_reward_has_the_documented_keys(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path) as rs:
        result = rs.reward("What is 2+2?", "The answer is 4.", "4", "NUMBER")
    assert result["source"] == "judge" and result["reward"] == 1.0
    assert {"reward", "source", "explanation", "latency_ms", "request_id", "detailed_scores"} <= set(result)


def test_batch_is_in_order_batched_and_then_cached(fake_judge, tmp_path):
    items = _items(40)
    with _system(fake_judge.url, tmp_path, max_batch_size=16, batch_wait=0.05) as rs:
        first = rs.reward_batch(items)
        second = rs.reward_batch(items)
        metrics = rs.get_metrics()
    assert [r["reward"] for r in first] == [_expected(i) for i in items]
    assert {r["source"] for r in first} == {"judge"} and {r["source"] for r in second} == {"cache"}
    assert fake_judge.counts["/v1/chat/completions/batch"] <= 4
    assert metrics["batched_fraction"] > 0.9 and metrics["cache_hit_rate"] == 0.5


def test_a_new_instance_on_the_same_cache_dir_hits_the_cache(fake_judge, tmp_path):
    items = _items(5)
    with _system(fake_judge.url, tmp_path) as rs:
        rs.reward_batch(items)
    with _system(fake_judge.url, tmp_path) as rs:
        assert {r["source"] for r in rs.reward_batch(items)} == {"cache"}


def test_fallbacks_are_never_cached(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, max_retries=0) as rs:
        fake_judge.set_plan(FaultPlan(error_rate=1.0))
        assert rs.reward("q", "The answer is 3", "3")["source"] == "rule_fallback"
        fake_judge.set_plan(FaultPlan())
        assert rs.reward("q", "The answer is 3", "3")["source"] == "judge"


def test_500s_are_retried_then_fall_back_to_rules(fake_judge, tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="JudgeReward"), _system(fake_judge.url, tmp_path) as rs:
        fake_judge.set_plan(FaultPlan(error_rate=1.0))
        result = rs.reward("What is 12-5?", "12 - 5 = 7.\nSo the answer is 7.", "7", "NUMBER")
        metrics = rs.get_metrics()
    assert result["source"] == "rule_fallback" and result["reason"] == "Judge unavailable"
    assert result["reward"] == 1.0  # the rule reward graded it
    assert fake_judge.counts["error"] == 2  # one try + one retry
    assert metrics["fallback_rate"] == 1.0 and metrics["error_rate"] == 1.0
    assert "rule fallback #1" in caplog.text


def test_fallback_off_returns_none_and_the_error(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, fallback_to_rule=False, max_retries=0) as rs:
        fake_judge.set_plan(FaultPlan(error_rate=1.0))
        result = rs.reward("q", "The answer is 3", "3")
    assert result["reward"] is None and result["source"] == "error" and "500" in result["error"]


def test_hang_returns_within_timeout(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, reward_timeout=1.0, max_retries=0) as rs:
        fake_judge.set_plan(FaultPlan(hang_rate=1.0))
        started = time.monotonic()
        results = rs.reward_batch(_items(8))
        elapsed = time.monotonic() - started
    assert elapsed < 1.0 + 0.5
    assert {r["source"] for r in results} == {"rule_fallback"}
    assert {r["reason"] for r in results} == {"Timeout waiting for results"}


def test_garbage_output_falls_back_and_is_counted(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path) as rs:
        fake_judge.set_plan(FaultPlan(garbage_rate=1.0))
        result = rs.reward("q", "The answer is 3", "3")
        metrics = rs.get_metrics()
    assert result["source"] == "rule_fallback" and result["reason"] == "Invalid judge output"
    assert metrics["errors"] == {"JudgeParseError": 1}
    assert metrics["circuit_breaker"]["state"] == "closed"  # the server answered: it is up


def test_breaker_opens_probes_once_and_closes_when_the_server_is_back(fake_judge, tmp_path):
    fake_judge.set_plan(FaultPlan(error_rate=1.0))
    config = {
        "circuit_breaker_threshold": 3,
        "circuit_breaker_cooldown": 0.5,
        "max_retries": 0,
        "max_batch_size": 1,
        "startup_check": "off",  # counts every call the judge gets
    }
    with _system(fake_judge.url, tmp_path, **config) as rs:
        for i in range(3):
            rs.reward("q", f"The answer is {i}", "1")
        assert rs.get_metrics()["circuit_breaker"]["state"] == "open"
        calls = fake_judge.counts["error"]
        fast = rs.reward("q", "The answer is 9", "9")
        assert fast["reason"] == "Circuit breaker open" and fake_judge.counts["error"] == calls
        time.sleep(0.6)
        fake_judge.set_plan(FaultPlan())
        results = rs.reward_batch(_items(10, "after"))  # concurrent: one probe, the rest fail fast
        assert sum(r["source"] == "judge" for r in results) == 1
        assert fake_judge.counts["ok"] == 1
        assert rs.get_metrics()["circuit_breaker"]["state"] == "closed"
        assert rs.reward("q", "The answer is 5", "5")["source"] == "judge"


def test_queue_full_falls_back_with_the_reason(fake_judge, tmp_path):
    fake_judge.set_plan(FaultPlan(latency_s=0.3))
    config = {"max_queue_size": 2, "max_concurrent_requests": 1, "max_batch_size": 1}
    with _system(fake_judge.url, tmp_path, reward_timeout=60.0, **config) as rs:  # a busy machine: no timeouts
        results = rs.reward_batch(_items(12))
    reasons = {r["reason"] for r in results if r["source"] == "rule_fallback"}
    assert reasons == {"Request queue full"}
    assert len(results) == 12 and sum(r["source"] == "judge" for r in results) >= 2


def test_server_killed_mid_run_nothing_lost(tmp_path):
    server = FakeJudgeServer().start()
    port = server.port
    items = _items(300, "kill")
    results = []
    with _system(server.url, tmp_path, reward_timeout=2.0, max_retries=1, circuit_breaker_cooldown=0.2) as rs:

        def run():
            for chunk in range(0, 300, 30):
                results.extend(rs.reward_batch(items[chunk : chunk + 30]))

        worker = threading.Thread(target=run)
        worker.start()
        time.sleep(0.05)
        server.stop()
        time.sleep(0.5)
        server = FakeJudgeServer(port=port).start()
        worker.join(60)
        after = rs.reward_batch(_items(5, "after"))
    server.stop()
    assert not worker.is_alive()
    assert len(results) == 300
    assert len({r["request_id"] for r in results}) == 300
    assert all(r["reward"] is not None for r in results)
    assert {r["source"] for r in after} == {"judge"}


def test_identical_in_flight_requests_share_one_call(fake_judge, tmp_path):
    fake_judge.set_plan(FaultPlan(latency_s=0.2))
    with _system(fake_judge.url, tmp_path) as rs:
        results = rs.reward_batch([_items(1)[0]] * 10)
        metrics = rs.get_metrics()
    assert {r["source"] for r in results} == {"judge"}
    assert metrics["single_flight_joins"] == 9 and metrics["judged_items"] == 1


def test_16_threads_x_100_calls_no_deadlock(fake_judge, tmp_path):
    items = _items(100, "threads")
    with _system(fake_judge.url, tmp_path) as rs, ThreadPoolExecutor(16) as pool:
        futures = [pool.submit(lambda: [rs.reward(**item)["reward"] for item in items]) for _ in range(16)]
        outputs = [f.result(timeout=120) for f in futures]
        metrics = rs.get_metrics()
    expected = [_expected(i) for i in items]
    assert all(out == expected for out in outputs)
    assert metrics["total_requests"] == 1600


async def test_areward_from_a_foreign_event_loop(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path) as rs:
        one = await rs.areward("q", "The answer is 2", "2")
        many = await rs.areward_batch(_items(5))
        sync_inside_loop = await asyncio.to_thread(rs.reward, "q", "The answer is 3", "3")
    assert one["reward"] == 1.0 and len(many) == 5 and sync_inside_loop["source"] == "judge"


@pytest.mark.parametrize(
    ("kwargs", "source"),
    [
        ({"completion": ""}, "rule"),
        ({"completion": None}, "rule"),
        ({"completion": {"not": "text"}}, "rule"),
        ({"completion": 4}, "judge"),
        ({"answer_type": "NOT_A_TYPE"}, "rule"),
        ({"completion": "x" * 1_000_000 + " so 4"}, "judge"),
    ],
)
def test_bad_input_gets_a_defined_reward(fake_judge, tmp_path, kwargs, source):
    call = {"prompt": "What is 2+2?", "completion": "4", "answer": "4", "answer_type": "NUMBER", **kwargs}
    with _system(fake_judge.url, tmp_path, invalid_rows="zero") as rs:
        result = rs.reward(**call)
    assert result["source"] == source and 0.0 <= result["reward"] <= 1.0


def test_invalid_batch_items_get_a_defined_reward_and_are_counted(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, invalid_rows="zero") as rs:
        results = rs.reward_batch([("q", "The answer is 1", "1"), 42, {"prompt": "q", "completion": [1]}])
        counted = rs.get_metrics()["invalid_rows"]
    assert results[0]["source"] == "judge"
    assert results[1]["reason"] == results[2]["reason"] == "invalid_input"
    assert counted == 2


def test_closed_system_refuses_clearly_and_leaks_no_thread(fake_judge, tmp_path):
    before = threading.active_count()
    rs = _system(fake_judge.url, tmp_path)
    rs.reward("q", "The answer is 1", "1")
    rs.close()
    rs.close()
    assert threading.active_count() <= before
    with pytest.raises(Exception, match="closed"):
        rs.reward("q", "The answer is 2", "2")


def test_custom_request_judge_override(fake_judge, tmp_path):
    class Halving(JudgeRewardSystem):
        async def _request_judge(self, request: JudgeRequest) -> Verdict:
            verdict = await super()._request_judge(request)
            return Verdict(score=verdict.score / 2, explanation="halved")

    class SyncNumber(JudgeRewardSystem):
        def _request_judge(self, request):
            return 0.25

    config = {"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "c"), "use_cache": False}
    with Halving(config) as rs:
        assert rs.reward("q", "The answer is 1", "1")["reward"] == 0.5
    with SyncNumber(config) as rs:
        assert rs.reward("q", "The answer is 1", "1")["reward"] == 0.25


def test_create_judge_reward_compute_reward(fake_judge, tmp_path):
    judge = create_judge_reward({"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "c")})
    try:
        result = judge.compute_reward("q", "The answer is 1", "1")
    finally:
        judge.close()
    assert isinstance(result, RewardResult) and result.score == 1.0 and result.source == "judge"


def test_multi_judge_tolerates_a_failed_judge(tmp_path):
    with FakeJudgeServer() as good, FakeJudgeServer(FaultPlan(error_rate=1.0)) as bad:
        config = {"judge_urls": [good.url, bad.url], "cache_dir": str(tmp_path / "c"), "max_retries": 0}
        judge = create_judge_reward(config)
        try:
            assert isinstance(judge, MultiJudge)
            result = judge.reward("q", "The answer is 1", "1")
        finally:
            judge.close()
    assert result["source"] == "judge" and result["reward"] == 1.0
    assert result["judge_scores"] == {good.url: 1.0, bad.url: None}


@pytest.mark.parametrize(
    ("how", "scores", "expected"),
    [("mean", [1.0, 0.0, 0.5], 0.5), ("median", [1.0, 0.0, 0.25], 0.25), ("vote", [1.0, 0.75, 0.0], 1.0),
     ("vote", [1.0, 0.0, 0.0], 0.0)],
)  # fmt: skip
def test_aggregate_scores(how, scores, expected):
    assert aggregate_scores(scores, how) == expected


def test_one_failed_batch_is_one_breaker_failure(fake_judge, tmp_path):
    # One batch: the batcher waits up to 2 s for 64 items, far longer than 32 take to arrive.
    config = {"circuit_breaker_threshold": 2, "max_retries": 0, "max_batch_size": 64, "batch_wait": 2.0}
    with _system(fake_judge.url, tmp_path, reward_timeout=60.0, **config) as rs:
        fake_judge.set_plan(FaultPlan(script=["error"]))
        results = rs.reward_batch(_items(32))
        state = rs.get_metrics()["circuit_breaker"]
    assert {r["reason"] for r in results} == {"Judge unavailable"}
    assert state == {"state": "closed", "failures": 1}


def test_canary_probes_measure_the_judges_false_positive_rate(fake_judge, tmp_path):
    # The fake judge rewards a response containing the reference "42"; no canary contains it.
    with _system(fake_judge.url, tmp_path, reward_timeout=60.0) as rs:  # a busy machine: no probe times out
        assert rs.probe_canaries() == 0.0
        canary = rs.get_metrics()["canary"]
    assert canary["rounds"] == 1 and canary["probes"] == 8 and canary["false_positive_rate"] == 0.0


def test_canary_alerts_when_the_judge_is_fooled(fake_judge, tmp_path, caplog):
    class Gullible(JudgeRewardSystem):
        def _request_judge(self, request):
            return 1.0

    config = {"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "c"), "canary_interval": 0.05}
    with caplog.at_level(logging.WARNING, logger="JudgeReward"), Gullible(config) as rs:
        rs.reward("q", "The answer is 1", "1")  # starts the loop and the periodic canary
        deadline = time.monotonic() + 10
        while rs.get_metrics()["canary"]["rounds"] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        canary = rs.get_metrics()["canary"]
    assert canary["false_positive_rate"] == 1.0
    assert "canary: the judge rewarded 100%" in caplog.text


def test_ensemble_members_never_answer_from_each_others_verdicts(tmp_path):
    """Members serving the same model name once shared one cache folder: a failing member answered
    with another member's cached verdict (a CI flake of the test above)."""
    with FakeJudgeServer() as good, FakeJudgeServer(FaultPlan(error_rate=1.0)) as bad:
        with JudgeRewardSystem({"judge_url": good.url, "cache_dir": str(tmp_path / "c")}) as single:
            assert single.reward("q", "The answer is 1", "1")["source"] == "judge"  # cached in c/
        config = {"judge_urls": [bad.url, good.url], "cache_dir": str(tmp_path / "c"), "max_retries": 0}
        with create_judge_reward(config) as judge:
            result = judge.reward("q", "The answer is 1", "1")
    assert result["judge_scores"] == {good.url: 1.0, bad.url: None}


@pytest.mark.parametrize("answer", ["", "   ", None], ids=["empty", "blank", "none"])
def test_a_missing_reference_is_a_defined_reward_and_never_reaches_the_judge(fake_judge, tmp_path, answer):
    # No start-up check: its tiny judgment would be a call to the judge.
    config = {
        "judge_url": fake_judge.url,
        "cache_dir": str(tmp_path / "c"),
        "max_retries": 0,
        "startup_check": "off",
    }
    with JudgeRewardSystem(config) as rs:
        single = rs.reward("What is 2 + 2?", "The answer is 4", answer)
        batch = rs.reward_batch([{"prompt": "What is 2 + 2?", "completion": "4", "answer": answer}] * 3)
        cascaded = JudgeRewardSystem({**config, "strategy": "cascade", "cache_dir": str(tmp_path / "d")})
        with cascaded:
            via_cascade = cascaded.reward("What is 2 + 2?", "The answer is 4", answer)
    for result in (single, *batch, via_cascade):
        assert (result["source"], result["reward"], result["reason"]) == ("rule", 0.0, "no_reference")
        assert "needs one" in result["explanation"]
    assert fake_judge.counts["/v1/chat/completions"] == 0 and fake_judge.counts["/v1/chat/completions/batch"] == 0


@pytest.mark.parametrize("items", [None, 42, "prompt", {"prompt": "q", "completion": "4", "answer": "4"}],
                         ids=["none", "number", "string", "one-dict"])  # fmt: skip
def test_reward_batch_of_something_that_is_not_a_list_says_so(tmp_path, items):
    from judge_vllm.errors import JudgeInputError

    with JudgeRewardSystem({"cache_dir": str(tmp_path / "c"), "model": "m", "startup_check": "off"}) as rs:
        with pytest.raises(JudgeInputError, match="reward_batch takes a list of items"):
            rs.reward_batch(items)
        with pytest.raises(JudgeInputError, match="reward_batch takes a list of items"):
            asyncio.run(rs.areward_batch(items))


# -- mistakes that would pass silently: one clear line each (issue 34) -------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda rs: rs.reward_batch([{"prompt": "What is 2+2?", "completion": "4", "anwser": "4"}]),
        lambda rs: rs.reward("What is 2+2?", "4", anwser="4"),
        lambda rs: asyncio.run(rs.areward_batch([{"prompt": "q", "completion": "4", "anwser": "4"}])),
        lambda rs: rs.reward_group([{"prompt": "q", "completion": "4", "answer": "4", "answer_typ": "NUMBER"}]),
    ],
)
def test_an_unknown_key_is_one_line_naming_the_key_and_the_closest_known_one(fake_judge, tmp_path, call):
    with (
        _system(fake_judge.url, tmp_path, startup_check="off") as rs,  # nothing judged, not even a check
        pytest.raises(JudgeInputError) as raised,
    ):
        call(rs)
    message = str(raised.value)
    assert "unknown key 'anw" in message or "unknown key 'answer_typ'" in message
    assert "did you mean 'answer" in message and "prompt, completion, answer, answer_type" in message
    assert "\n" not in message
    assert sum(fake_judge.counts.values()) == 0  # refused before anything was judged


@pytest.mark.parametrize(
    "call",
    [
        lambda rs, t: rs.reward("What is 2+2?", "The answer is 4", "4", t),
        lambda rs, t: rs.reward_batch(
            [("What is 2+2?", "The answer is 4", "4"), ("What is 2+2?", "4", "4", t)]
        ),
        lambda rs, t: asyncio.run(rs.areward("What is 2+2?", "The answer is 4", "4", answer_type=t)),
        lambda rs, t: rs.reward_group(
            [{"prompt": "2+2?", "completion": c, "answer": "4", "answer_type": t} for c in ("4", "5")]
        ),
    ],
)
def test_an_unknown_answer_type_is_an_error_naming_the_closest_type_before_anything_is_judged(
    fake_judge, tmp_path, call
):
    with _system(fake_judge.url, tmp_path) as rs:
        before = dict(fake_judge.counts)
        with pytest.raises(JudgeInputError) as raised:
            call(rs, "NUMBERS")
        assert dict(fake_judge.counts) == before and rs.get_metrics()["total_requests"] == 0
    message = str(raised.value)
    assert "unknown answer_type 'NUMBERS' (did you mean 'NUMBER'?)" in message
    assert "invalid_rows: zero" in message and "\n" not in message


def test_an_unknown_answer_type_is_a_defined_reward_that_says_the_closest_name(fake_judge, tmp_path, caplog):
    items = [
        {"prompt": "What is 2+2?", "completion": "The answer is 4", "answer": "4", "answer_type": t}
        for t in ("NUMBERS", " number ", None, "free text")
    ]
    with (
        caplog.at_level(logging.WARNING, logger="JudgeReward"),
        _system(fake_judge.url, tmp_path, invalid_rows="zero") as rs,
    ):
        results = rs.reward_batch(items)
    assert [r["reason"] for r in results] == ["invalid_input", None, None, "invalid_input"]
    assert [r["reward"] for r in results] == [0.0, 1.0, 1.0, 0.0]
    assert "'NUMBERS' (did you mean 'NUMBER'?)" in results[0]["explanation"]
    assert "NUMBER, MATH_EXPRESSIONS, MULTIPLE_CHOICE, TEXT" in results[3]["explanation"]
    assert len([r for r in caplog.records if "invalid_input" in r.getMessage()]) == 1


def test_rows_without_a_reference_keep_their_reward_and_log_one_warning(fake_judge, tmp_path, caplog):
    items = [{"prompt": f"What is {i}+{i}?", "completion": str(2 * i)} for i in range(5)]
    with caplog.at_level(logging.WARNING, logger="JudgeReward"):
        with _system(fake_judge.url, tmp_path) as rs:
            first = rs.reward_batch(items)
            rs.reward("What is 1+1?", "2", "")
        with _system(fake_judge.url, tmp_path) as other:
            other.reward("What is 1+1?", "2")
    assert {(r["reward"], r["reason"]) for r in first} == {(0.0, "no_reference")}
    warned = [r.getMessage() for r in caplog.records if "no_reference" in r.getMessage()]
    assert len(warned) == 2  # one per reward system, not one per row
    assert "'binary' needs one" in warned[0] and "pass the reference as answer" in warned[0]
