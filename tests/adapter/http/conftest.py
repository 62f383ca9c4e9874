"""Fixtures of the HTTP API tests: the API on a loopback port in front of the loopback fake judge.

The fake judge scores 5 (reward 1.0) when the reference answer appears in the response, else 1
(reward 0.0), which is enough to check ordering, batching, caching and fallback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from adapter.http import create_app
from judge_vllm.testing.asgi_server import ApiServer
from judge_vllm.testing.ports import free_port

RewardConfigFactory = Callable[..., dict[str, Any]]


@pytest.fixture
def api_key() -> str:
    """The bearer key of the ``secured`` API."""
    return "test-key-7f3a9c"


@pytest.fixture
def reward_config(tmp_path) -> RewardConfigFactory:
    """``reward_config(url, **overrides)``: a config for one judge, no retries, a private cache."""

    def make(url: str, **overrides: Any) -> dict[str, Any]:
        return {"judge_url": url, "cache_dir": str(tmp_path / "cache"), "max_retries": 0, **overrides}

    return make


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on."""
    return free_port()


@pytest.fixture
def api(fake_judge, reward_config) -> Iterator[ApiServer]:
    """The API without auth, in front of the fake judge."""
    with ApiServer(create_app(reward_config(fake_judge.url))) as server:
        yield server


@pytest.fixture
def secured(fake_judge, reward_config, api_key) -> Iterator[ApiServer]:
    """The API with a bearer key and small limits (4 KiB bodies, 4 items per batch)."""
    app = create_app(reward_config(fake_judge.url), api_key=api_key, max_body_bytes=4096, max_batch=4)
    with ApiServer(app) as server:
        yield server
