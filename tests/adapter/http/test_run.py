"""Foreground serving: the config the command resolves, and ``judge-vllm api`` as a process."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest

from adapter.http.run import api_config
from judge_vllm.errors import JudgeConfigError


def test_config_resolution(tmp_path, monkeypatch):
    monkeypatch.delenv("JUDGE_MODEL_URL", raising=False)
    path = tmp_path / "reward.yaml"
    path.write_text("reward:\n  type: judge_model\n  config:\n    judge_url: http://a:1\n    mode: fast\n")
    assert api_config(path, None).judge_url == "http://a:1"
    overridden = api_config(path, "http://b:2/")
    assert (overridden.judge_url, overridden.mode) == ("http://b:2", "fast")
    with pytest.raises(JudgeConfigError, match="--judge-url"):
        api_config(path, "b:2")


def test_cli_serves_the_api_with_the_key_from_the_environment(fake_judge, tmp_path, closed_port, api_key):
    port = closed_port
    config = tmp_path / "reward.yaml"
    config.write_text(f"judge_url: http://127.0.0.1:1\ncache_dir: {tmp_path / 'cache'}\nmode: fast\n")
    env = {**os.environ, "JUDGE_API_KEY": api_key}
    env.pop("JUDGE_MODEL_URL", None)
    command = [sys.executable, "-m", "adapter.cli", "api", "--judge-url", fake_judge.url]
    command += ["--port", str(port), "--config", str(config)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        health = None
        deadline = time.monotonic() + 60
        while health is None and time.monotonic() < deadline and process.poll() is None:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/health")
            except httpx.TransportError:
                time.sleep(0.2)
        assert health is not None and health.status_code == 200, process.poll()
        assert health.json()["upstream"]["url"] == fake_judge.url
        item = {"prompt": "2+2?", "completion": "It is 4.", "answer": "4"}
        assert httpx.post(f"http://127.0.0.1:{port}/judge", json=item).status_code == 401
        headers = {"Authorization": f"Bearer {api_key}"}
        assert httpx.post(f"http://127.0.0.1:{port}/judge", json=item, headers=headers).json()["score"] > 0.99
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=30)
    assert api_key not in output
    assert "auth on" in output
