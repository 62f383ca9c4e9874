"""The judge client's settings: how to reach the judge and what to ask of it.

``adapter.config.RewardConfig`` extends this model, so each client setting is declared
once, with one default.
"""

from __future__ import annotations

from typing import Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

__all__ = ["REQUEST_TIMEOUT_SHARE", "JudgeClientConfig", "check_judge_url"]

# Default share of ``timeout`` one HTTP attempt may take: a hung attempt leaves room for two more.
REQUEST_TIMEOUT_SHARE = 1 / 3


def check_judge_url(value: str) -> str:
    """A judge URL with scheme http(s) and a host, without a trailing slash (ValueError if not)."""
    url = httpx.URL(value.strip()) if isinstance(value, str) else None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        raise ValueError("must start with http:// or https:// and name a host, e.g. http://localhost:8888")
    return value.strip().rstrip("/")


class JudgeClientConfig(BaseModel):
    """How to reach the judge and what to ask of it; the reward config extends it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    judge_url: str = "http://localhost:8888"
    api_key: SecretStr | None = None
    model: str | None = Field(default=None, description="served model name; None = first listed")
    mode: Literal["verdict", "fast"] = Field(default="fast", description="see docs/BENCHMARKS.md for why")
    timeout: float = Field(default=30.0, gt=0.0, le=3600.0, description="seconds for a whole call")
    request_timeout: float | None = Field(
        default=None, gt=0.0, description="seconds for one HTTP attempt; None = a third of timeout"
    )
    max_retries: int = Field(default=3, ge=0, le=20)
    aspects: bool = False
    max_explanation_chars: int = Field(default=120, ge=16, le=4000)
    max_prompt_chars: int = Field(default=4000, ge=200, le=1_000_000)
    max_completion_chars: int = Field(default=6000, ge=200, le=1_000_000)
    use_batch_endpoint: bool = True
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    seed: int | None = 0

    @field_validator("api_key", "model", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_validator("judge_url")
    @classmethod
    def _url(cls, value: str) -> str:
        return check_judge_url(value)

    @model_validator(mode="after")
    def _attempt_fits_call(self) -> JudgeClientConfig:
        if self.request_timeout is not None and self.request_timeout > self.timeout:
            raise ValueError(
                f"request_timeout ({self.request_timeout} s, one HTTP attempt) must not exceed "
                f"timeout ({self.timeout} s, the whole call)"
            )
        return self

    @property
    def attempt_timeout_s(self) -> float:
        """Seconds one HTTP attempt may take."""
        return self.request_timeout or self.timeout * REQUEST_TIMEOUT_SHARE
