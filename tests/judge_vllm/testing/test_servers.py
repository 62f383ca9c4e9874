"""The test servers: the fake judge as a process (as ``judge-bench`` runs it) and ``ApiServer``."""

from __future__ import annotations

import importlib
import subprocess
import sys

import httpx
import pytest

from judge_vllm import launcher
from judge_vllm.testing.asgi_server import ApiServer
from judge_vllm.testing.ports import free_port


def test_fake_server_runs_as_a_module():
    port = free_port()
    command = [sys.executable, "-m", "judge_vllm.testing.fake_server", "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        launcher.wait_healthy(f"http://127.0.0.1:{port}", 30)
        models = httpx.get(f"http://127.0.0.1:{port}/v1/models").json()
        assert models["data"][0]["id"] == "fake-judge"
        httpx.post(f"http://127.0.0.1:{port}/tokenize", json={"prompt": "abc"})
        stats = httpx.get(f"http://127.0.0.1:{port}/fake/stats").json()  # the process's requests and CPU
        assert stats["counts"]["/tokenize"] == 1 and stats["counts"]["/v1/models"] == 1 and stats["cpu_s"] > 0
    finally:
        process.terminate()
        process.communicate(timeout=30)


def test_api_server_runs_the_lifespan_and_serves_on_loopback():
    events: list[str] = []

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                events.append(message["type"])
                await send({"type": f"{message['type']}.complete"})
                if message["type"] == "lifespan.shutdown":
                    return
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]}
        )
        await send({"type": "http.response.body", "body": scope["path"].encode()})

    with ApiServer(app) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.port > 0
        assert httpx.get(f"{server.url}/ping").text == "/ping"
    assert events == ["lifespan.startup", "lifespan.shutdown"]


@pytest.mark.parametrize(
    "name", ["judge_vllm.testing.fake_server", "judge_vllm.testing.asgi_server", "judge_vllm.cli"]
)
def test_all_names_what_the_module_defines(name):
    module = importlib.import_module(name)
    assert [symbol for symbol in module.__all__ if not hasattr(module, symbol)] == []
