"""Running the HTTP front ends in the foreground: config resolution, uvicorn, ``judge-vllm api``."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from adapter.config import RewardConfig, with_judge_url
from adapter.http.app import create_app
from adapter.http.auth import API_KEY_ENV
from judge_vllm.redaction import redact_url

__all__ = ["api_config", "run_api", "serve"]

logger = logging.getLogger(__name__)


def api_config(config: str | Path | None, judge_url: str | None) -> RewardConfig:
    """The reward config from a YAML path (or defaults), with ``judge_url`` overriding when given."""
    return with_judge_url(config, judge_url)


def serve(app: FastAPI, host: str, port: int) -> None:
    """Run an app in the foreground under uvicorn until interrupted."""
    uvicorn.run(app, host=host, port=port, log_level="info")


def run_api(
    *,
    config: str | Path | None,
    judge_url: str | None,
    host: str,
    port: int,
    api_key: str | None,
    max_body_bytes: int | None,
    max_batch: int | None,
) -> None:
    """``judge-vllm api``: the key comes from the flag, else ``JUDGE_API_KEY``; None = default limit."""
    key = api_key or os.environ.get(API_KEY_ENV) or None
    resolved = api_config(config, judge_url)
    app = create_app(resolved, api_key=key, max_body_bytes=max_body_bytes, max_batch=max_batch)
    logger.warning(
        "judge API on http://%s:%d for %s (auth %s)", host, port, redact_url(resolved.judge_url), "on" if key else "off"
    )
    serve(app, host, port)
