"""The reward configuration: one frozen, validated model, loadable from YAML, dicts and env.

YAML values may use ``${VAR}`` and ``${VAR:-default}``. The seed's nested form
(``reward: {type: judge_model, config: {...}}``) and a flat mapping are both accepted.
Environment variables ``JUDGE_MODEL_URL``, ``JUDGE_MODEL_API_KEY``, ``JUDGE_MAX_BATCH_SIZE``
and ``JUDGE_MAX_CONCURRENT`` override the file or dict when set.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from adapter.rules import RuleSettings
from judge_vllm.client import JudgeClientConfig
from judge_vllm.errors import JudgeConfigError

__all__ = ["ENV_OVERRIDES", "RewardConfig", "interpolate_env", "load_reward_config"]

ENV_OVERRIDES = {
    "JUDGE_MODEL_URL": "judge_url",
    "JUDGE_MODEL_API_KEY": "api_key",
    "JUDGE_MAX_BATCH_SIZE": "max_batch_size",
    "JUDGE_MAX_CONCURRENT": "max_concurrent_requests",
}
DEFAULT_CACHE_DIR = Path("~/.cache/judge-vllm/rewards")
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}")


class RewardConfig(BaseModel):
    """Every knob of the judge reward, with the seed's key names. Unknown keys are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # The judge server(s).
    judge_url: str = "http://localhost:8888"
    judge_urls: list[str] | None = Field(default=None, description="several judges: an ensemble")
    aggregate: Literal["mean", "median", "vote"] = "mean"
    api_key: SecretStr | None = None
    model: str | None = None
    mode: Literal["verdict", "fast"] = "fast"  # see docs/BENCHMARKS.md for why
    aspects: bool = False
    max_explanation_chars: int = Field(default=120, ge=16, le=4000)
    max_prompt_chars: int = Field(default=4000, ge=200, le=1_000_000)
    max_completion_chars: int = Field(default=6000, ge=200, le=1_000_000)
    # Cache.
    use_cache: bool = True
    cache_dir: Path = DEFAULT_CACHE_DIR
    cache_size: int = Field(default=5000, ge=1, le=100_000_000)
    # Performance.
    max_batch_size: int = Field(default=16, ge=1, le=4096)
    batch_timeout: float = Field(default=0.05, ge=0.0, le=10.0)
    max_concurrent_requests: int = Field(default=32, ge=1, le=4096)
    max_queue_size: int = Field(default=10_000, ge=1, le=10_000_000)
    timeout: float = Field(default=30.0, gt=0.0, le=3600.0)
    # Reliability.
    fallback_to_rule: bool = True
    max_retries: int = Field(default=3, ge=0, le=20)
    circuit_breaker_threshold: int = Field(default=5, ge=1, le=10_000)
    circuit_breaker_timeout: float = Field(default=30.0, gt=0.0, le=86_400.0)
    prechecks: bool = True
    canary_interval: float | None = Field(
        default=None, gt=0.0, description="seconds between canary probe rounds; None = off"
    )
    canary_alert_rate: float = Field(default=0.25, ge=0.0, le=1.0)
    rules: RuleSettings = Field(default_factory=RuleSettings)

    @field_validator("api_key", "model", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_validator("judge_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https:// (set judge_url or JUDGE_MODEL_URL)")
        return value.rstrip("/")

    @property
    def cache_path(self) -> Path:
        """The cache directory with ``~`` expanded."""
        return self.cache_dir.expanduser()

    def client_config(self, judge_url: str | None = None) -> JudgeClientConfig:
        """The judge client's settings for one judge URL (default: ``judge_url``)."""
        return JudgeClientConfig(
            judge_url=judge_url or self.judge_url,
            api_key=self.api_key,
            model=self.model,
            mode=self.mode,
            timeout=self.timeout,
            max_retries=self.max_retries,
            aspects=self.aspects,
            max_explanation_chars=self.max_explanation_chars,
            max_prompt_chars=self.max_prompt_chars,
            max_completion_chars=self.max_completion_chars,
        )

    @classmethod
    def from_any(cls, config: RewardConfig | Mapping[str, Any] | str | Path | None) -> RewardConfig:
        """Build from a RewardConfig (as is), a mapping, or a YAML path (env overrides applied)."""
        if isinstance(config, RewardConfig):
            return config
        if isinstance(config, str | Path):
            return load_reward_config(config)
        if config is not None and not isinstance(config, Mapping):
            raise JudgeConfigError(
                f"config must be a dict, a RewardConfig or a YAML path, not {type(config).__name__}"
            )
        return _validate(_unwrap(dict(config or {})))


def interpolate_env(value: Any, env: Mapping[str, str] | None = None) -> Any:
    """Replace ``${VAR}`` / ``${VAR:-default}`` in every string of a parsed YAML document."""
    env = os.environ if env is None else env
    if isinstance(value, str):
        return _ENV_REF.sub(lambda m: env.get(m.group(1)) or (m.group(2) or ""), value)
    if isinstance(value, list):
        return [interpolate_env(v, env) for v in value]
    if isinstance(value, dict):
        return {k: interpolate_env(v, env) for k, v in value.items()}
    return value


def _unwrap(data: dict[str, Any]) -> dict[str, Any]:
    """Accept the seed's nested ``reward: {type, config}`` form as well as a flat mapping."""
    if "reward" in data and isinstance(data["reward"], Mapping):
        data = dict(data["reward"])
    if "config" in data and isinstance(data["config"], Mapping):
        kind = data.get("type", "judge_model")
        if kind not in ("judge_model", None):
            raise JudgeConfigError(f"reward.type is {kind!r}; judge-vllm needs 'judge_model'")
        data = dict(data["config"])
    return data


def _validate(data: dict[str, Any]) -> RewardConfig:
    for var, key in ENV_OVERRIDES.items():
        if os.environ.get(var):
            data[key] = os.environ[var]
    try:
        return RewardConfig.model_validate(data)
    except ValidationError as err:
        raise JudgeConfigError(_explain(err)) from None


def _explain(err: ValidationError) -> str:
    allowed = ", ".join(RewardConfig.model_fields)
    lines = []
    for e in err.errors():
        key = ".".join(str(p) for p in e["loc"]) or "config"
        if e["type"] == "extra_forbidden":
            lines.append(f"unknown key {key!r}; allowed keys: {allowed}")
        else:
            shown = "***" if key.startswith("api_key") else repr(e.get("input"))
            lines.append(f"{key}: {e['msg']} (got {shown})")
    return "invalid reward config: " + "; ".join(lines)


def load_reward_config(path: str | Path) -> RewardConfig:
    """Load a reward YAML file (nested or flat), with ``${ENV}`` interpolation and env overrides."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except OSError as err:
        raise JudgeConfigError(f"cannot read reward config {path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise JudgeConfigError(f"reward config {path} is not valid YAML: {err}") from None
    if not isinstance(raw, dict):
        raise JudgeConfigError(f"reward config {path} must be a mapping, not {type(raw).__name__}")
    return _validate(_unwrap(interpolate_env(raw)))
