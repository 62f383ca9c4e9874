"""500 requests against a real vLLM CPU judge that is killed and restarted mid-run.

This test runs its own server (the session's stays up for the other tests): SIGKILL after
the first 100 answers, restart on the same port. Requests sent while it is down are
answered by the rule fallback; once it is back, the judge answers again. Its servers run
with --enforce-eager (no torch.compile warm-up: about 1 min per start instead of
3-4 min on a busy 2-core machine), and the test has a timeout of its own.
"""

import os
import signal
import threading

import pytest

from adapter import JudgeRewardSystem
from eval.bench import mixed_items
from judge_vllm import launcher
from judge_vllm.model_prep import prepare_model
from judge_vllm.testing.ports import free_port

pytestmark = pytest.mark.e2e

TOTAL = 500
CHUNK = 25
KILL_AFTER = 100
DOWN_CHUNKS = 4  # chunks sent while the server is down, before the driver waits for the restart


def _start(model: str, port: int, log):
    options = launcher.ServeOptions(model=model, served_model_name="smollm2", port=port, enforce_eager=True)
    process = launcher.start(options, log_file=log)
    launcher.wait_healthy(f"http://127.0.0.1:{port}", 900, process)
    return process


@pytest.mark.timeout(1800)
def test_killed_and_restarted_server_loses_nothing(tmp_path):
    model = prepare_model("smollm2")
    port = free_port()
    process = _start(model, port, tmp_path / "vllm-1.log")
    items = [{**item, "request_id": f"r{i}"} for i, item in enumerate(mixed_items(TOTAL))]
    config = {
        "judge_url": f"http://127.0.0.1:{port}", "mode": "fast", "cache_dir": str(tmp_path / "cache"),
        "reward_timeout": 90, "max_retries": 1, "circuit_breaker_threshold": 3, "circuit_breaker_cooldown": 2,
    }  # fmt: skip
    results: list[dict] = []
    killed, restarted = threading.Event(), threading.Event()
    try:
        with JudgeRewardSystem(config) as rs:

            def drive():
                down_chunks = 0
                for start in range(0, TOTAL, CHUNK):
                    if killed.is_set() and not restarted.is_set():
                        down_chunks += 1
                        if down_chunks > DOWN_CHUNKS:
                            restarted.wait(900)
                    results.extend(rs.reward_batch(items[start : start + CHUNK]))
                    if len(results) >= KILL_AFTER and not killed.is_set():
                        os.killpg(process.pid, signal.SIGKILL)
                        killed.set()

            driver = threading.Thread(target=drive)
            driver.start()
            killed.wait(900)
            process.wait(30)
            process = _start(model, port, tmp_path / "vllm-2.log")
            restarted.set()
            driver.join(900)
            metrics = rs.get_metrics()
    finally:
        launcher.stop(process.pid)
    assert not driver.is_alive()
    assert [r["request_id"] for r in results] == [item["request_id"] for item in items]
    assert all(r["reward"] is not None for r in results)
    sources = [r["source"] for r in results]
    assert set(sources[:KILL_AFTER]) <= {"judge", "cache"}
    assert "rule_fallback" in sources[KILL_AFTER:]
    assert sources[-CHUNK:] == ["judge"] * CHUNK, "the judge source resumes after the restart"
    assert metrics["circuit_breaker"]["state"] == "closed"
