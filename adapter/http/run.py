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
from judge_vllm.errors import JudgeConfigError
from judge_vllm.redaction import redact_url

__all__ = ["api_config", "api_key_given", "run_api", "serve"]

logger = logging.getLogger(__name__)


def api_config(config: str | Path | None, judge_url: str | None) -> RewardConfig:
    """The reward config from a YAML path (or defaults), with ``judge_url`` overriding when given."""
    return with_judge_url(config, judge_url)


def api_key_given(flag: str | None, environment: str | None) -> str | None:
    """The API's key: ``--api-key``, else ``JUDGE_API_KEY``, else None (no auth). One given but
    empty is refused, naming where it came from: it would turn auth off without a word (an
    unset variable in a compose file, a flag whose value was lost)."""
    source, key = ("--api-key", flag) if flag is not None else (API_KEY_ENV, environment)
    if key is not None and not key.strip():
        raise JudgeConfigError(
            f"{source} is given but empty, which would serve without auth: give a key, "
            f"or leave out --api-key and unset {API_KEY_ENV} to serve without auth on purpose"
        )
    return key


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
    key = api_key_given(api_key, os.environ.get(API_KEY_ENV))
    resolved = api_config(config, judge_url)
    app = create_app(resolved, api_key=key, max_body_bytes=max_body_bytes, max_batch=max_batch)
    logger.warning(
        "judge API on http://%s:%d for %s (auth %s)", host, port, redact_url(resolved.judge_url), "on" if key else "off"
    )
    serve(app, host, port)
