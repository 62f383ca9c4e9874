"""The reward configuration: one frozen, validated model, from YAML, dicts or code.

Every form gets the same treatment: ``${VAR}`` and ``${VAR:-default}`` in any string value
(an unset ``${VAR}`` without a default is an error naming the key and the variable), the
seed's nested form (``reward: {type: judge_model, config: {...}}``) or a flat mapping, and
the environment overrides below. Precedence, highest first:

| source | applies to |
|---|---|
| a value given in code (a dict key, a ``RewardConfig``) | that key |
| ``JUDGE_MODEL_URL``, ``JUDGE_MODEL_API_KEY``, ``JUDGE_MAX_BATCH_SIZE``, ``JUDGE_MAX_CONCURRENT`` | YAML files, and keys a dict does not give |
| a YAML file's value (after ``${VAR}`` interpolation) | that key |
| the defaults below | every other key |

The judge client's settings are declared once, in ``JudgeClientConfig``; this model
extends it with the adapter's own.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, get_args

from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from adapter.rules import RuleSettings
from adapter.settings import (
    AuditSettings,
    ConfidenceCalibration,
    GroupSettings,
    ProcessSettings,
    parse_rubric,
)
from judge_vllm.errors import JudgeConfigError, JudgeInputError, did_you_mean
from judge_vllm.reasoning import ReasoningDelimiters
from judge_vllm.renamed_keys import rename_deprecated_keys
from judge_vllm.settings import JudgeClientConfig, check_judge_url
from judge_vllm.yaml_file import read_yaml_mapping

__all__ = [
    "ENV_OVERRIDES",
    "ConfigLike",
    "RewardConfig",
    "bundled_config_dir",
    "bundled_configs",
    "interpolate_env",
    "load_reward_config",
    "with_judge_url",
]

ENV_OVERRIDES = {
    "JUDGE_MODEL_URL": "judge_url",
    "JUDGE_MODEL_API_KEY": "api_key",
    "JUDGE_MAX_BATCH_SIZE": "max_batch_size",
    "JUDGE_MAX_CONCURRENT": "max_concurrent_requests",
}
DEFAULT_CACHE_DIR = Path("~/.cache/judge-vllm/rewards")
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_WRAPPER_KEYS = {"type", "config"}
# An unknown key's message lists the allowed ones when they fit in about a line.
MAX_LISTED_KEYS_CHARS = 160


class RewardConfig(JudgeClientConfig):
    """Every knob of the judge reward, with the seed's key names. Unknown keys are errors.

    The judge client's keys (``judge_url``, ``api_key``, ``model``, ``mode``, ``judge_timeout``,
    ``request_timeout``, ``max_retries``, ...) come from ``JudgeClientConfig``. Three timeouts
    nest: ``reward_timeout`` bounds the whole reward call (queue wait, retries and fallback
    included), ``judge_timeout`` the judge's part of it (default: all the reward's time but the
    fallback's reserve) and ``request_timeout`` one HTTP attempt. The seed's ``timeout``,
    ``batch_timeout`` and ``circuit_breaker_timeout`` still work, with a warning.
    """

    RENAMED_KEYS: ClassVar[Mapping[str, str]] = {
        "timeout": "reward_timeout",
        "batch_timeout": "batch_wait",
        "circuit_breaker_timeout": "circuit_breaker_cooldown",
    }

    reward_timeout: float = Field(
        default=30.0,
        gt=0.0,
        le=3600.0,
        description="seconds for a whole reward call: queue wait, judge, retries and fallback",
    )

    # The judge server(s).
    judge_urls: list[str] | None = Field(default=None, description="several judges: an ensemble")
    judge_replicas: list[str] | None = Field(
        default=None, description="several identical servers of one judge: requests are spread over them"
    )
    verl_reward_router: bool = Field(
        default=False,
        description="verl: judge on the reward-model router verl passes (reward_router_address)",
    )
    aggregate: Literal["mean", "median", "vote"] = Field(
        default="mean", description="how an ensemble's scores combine"
    )
    # Cache.
    use_cache: bool = Field(default=True, description="the disk cache of judge verdicts")
    cache_dir: Path = Field(default=DEFAULT_CACHE_DIR, description="where the cache lives (created 0700)")
    cache_size: int = Field(default=5000, ge=1, le=100_000_000, description="entries kept")
    # Performance.
    max_batch_size: int = Field(default=16, ge=1, le=4096, description="requests per judge call")
    batch_wait: float = Field(default=0.05, ge=0.0, le=10.0, description="seconds a batch waits to fill")
    max_concurrent_requests: int = Field(default=32, ge=1, le=4096, description="judge calls in flight")
    max_queue_size: int = Field(
        default=10_000, ge=1, le=10_000_000, description="requests waiting; past it: Request queue full"
    )
    # Reliability.
    startup_check: Literal["fail", "warn", "off"] = Field(
        default="fail",
        description="when the reward system starts: ask the judge for its model and one tiny judgment; "
        "fail raises a one-line error naming the URL, the model and the next step, warn logs it and "
        "starts anyway (rewards from the rule while the judge cannot answer), off does not ask",
    )
    fallback_to_rule: bool = Field(
        default=True, description="the rule reward when the judge fails; false: reward None, source error"
    )
    fallback_alert_share: float = Field(
        default=0.2,
        ge=0.0,
        le=1.0,
        description="a warning (at most once a minute) naming the reason and the setting to change while "
        "more than this share of the last fallback_alert_window judge rewards fell back",
    )
    fallback_alert_window: int = Field(
        default=200,
        ge=1,
        le=1_000_000,
        description="rewards that asked the judge, over which that share is taken",
    )
    circuit_breaker_threshold: int = Field(
        default=5, ge=1, le=10_000, description="failing judge calls in a row before the breaker opens"
    )
    circuit_breaker_cooldown: float = Field(
        default=30.0, gt=0.0, le=86_400.0, description="seconds before an open breaker lets one probe through"
    )
    prechecks: bool = Field(
        default=True, description="decide empty, master-key, spoofed and sprayed completions by rule"
    )
    invalid_rows: Literal["error", "zero"] = Field(
        default="error",
        description="a row that cannot be judged (an unknown answer_type, a malformed completion or rubric): "
        "error raises JudgeInputError naming it and the fix; zero gives it reward 0 (reason invalid_input), "
        "counted in get_metrics()['invalid_rows']",
    )
    canary_interval: float | None = Field(
        default=None, gt=0.0, description="seconds between canary probe rounds; None = off"
    )
    canary_alert_rate: float = Field(
        default=0.25, ge=0.0, le=1.0, description="canary false-positive rate that logs a warning"
    )
    calibration: ConfidenceCalibration | None = Field(
        default=None, description="shrink low-confidence judge rewards; None = off"
    )
    calibration_file: Path | None = Field(
        default=None, description="judge-eval --calibrate's file: rewards become calibrated P(correct)"
    )
    trajectory_calibration_file: Literal["bundled"] | Path | None = Field(
        default="bundled",
        description="the curve for agent runs' rewards: a judge-eval --calibrate file; bundled = calibration_file "
        "when set, else the curve shipped for the judge's model, profile and mode (trajectory_view full), if "
        "any; None = calibration_file, as every other reward",
    )
    escalate_to: Path | dict[str, Any] | None = Field(
        default=None,
        description="a second judge (its reward YAML or mapping), asked only where this judge's reward is in escalation_band",
    )
    escalation_band: tuple[float, float] = Field(
        default=(0.3, 0.7), description="rewards in [low, high] (calibrated, when calibrated) are escalated"
    )
    rules: RuleSettings = Field(
        default_factory=RuleSettings,
        description="the rule reward: tolerances, unsure reward, symbolic time (below)",
    )
    # Observability (docs/observability.md).
    metrics_port: int | None = Field(
        default=None, ge=0, le=65535, description="serve Prometheus /metrics in this process; 0 = a free port"
    )
    metrics_host: str = Field(default="127.0.0.1", min_length=1, description="the metrics endpoint's address")
    metrics_name: str = Field(
        default="judge",
        pattern=r"^[A-Za-z0-9_.:-]{1,64}$",
        description='this system\'s series on the endpoint: reward="<name>" (-2, -3... when taken)',
    )
    tracing: bool = Field(default=False, description="an OpenTelemetry span per judge call, when installed")
    audit: AuditSettings = Field(
        default_factory=AuditSettings,
        description="the shadow audit of the rule's decisions and the judge's integrity figures (below)",
    )
    # The judgment log (adapter/observability/judgment_log.py): at most max_bytes x (backups + 1) on disk.
    judgment_log_path: Path | None = Field(
        default=None, description="JSONL audit log of sampled rewards ({pid}: the process id); None = off"
    )
    judgment_log_sample_rate: float = Field(default=1.0, ge=0.0, le=1.0, description="1.0 logs every reward")
    judgment_log_max_bytes: int = Field(default=50_000_000, ge=4096, le=1 << 40, description="per file")
    judgment_log_backups: int = Field(default=5, ge=1, le=1000, description="rotated files kept")
    judgment_log_max_chars: int = Field(
        default=2000, ge=64, le=1_000_000, description="per logged text: head and tail kept"
    )
    # What is judged.
    strategy: Literal["judge", "cascade"] = Field(
        default="judge", description="cascade: the rule reward decides where it is sure, the judge the rest"
    )
    rubric: list[str | dict[str, Any]] | None = Field(
        default=None,
        description="one rubric for every item without its own: criteria, strings or {criterion, weight, veto}",
    )
    group: GroupSettings | None = Field(
        default=None,
        description="reward_group: how the completions of one prompt are judged together; None = pointwise",
    )
    process: ProcessSettings | None = Field(
        default=None,
        description="agent trajectories: each turn judged too (profile step); bad turns lower a right outcome's reward; None = outcome only",
    )
    trajectory_view: Literal["full", "final", "both"] = Field(
        default="full",
        description="a completion with tool calls or results (docs/trajectories.md): full shows the judge "
        "every step, fitted to max_completion_chars (shared by the runs a group comparison shows); final the "
        "final reply only (cheaper); both judges each view and pays their geometric mean (a small judge's "
        "scores then sit nearer the labels at 0.5)",
    )
    strip_reasoning: bool = Field(default=True, description="grade what follows the policy's reasoning")
    reasoning_delimiters: ReasoningDelimiters = Field(
        default_factory=ReasoningDelimiters, description="where the policy's reasoning starts and ends"
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: Any) -> Any:
        """The old key names, renamed; ``judge_timeout`` defaults to ``reward_timeout`` (a valid
        one: an invalid ``reward_timeout`` is reported once, as itself, not for a key not given)."""
        data = rename_deprecated_keys(data, cls.RENAMED_KEYS, cls.__name__)
        given = data.get("reward_timeout") if isinstance(data, dict) and "judge_timeout" not in data else None
        if given is not None and _is_valid(cls, "reward_timeout", given):
            data = {**data, "judge_timeout": given}
        return data

    @model_validator(mode="after")
    def _judge_fits_reward(self) -> RewardConfig:
        if self.judge_timeout > self.reward_timeout:
            raise ValueError(
                f"judge_timeout ({self.judge_timeout} s, the judge's part) must not exceed "
                f"reward_timeout ({self.reward_timeout} s, the whole reward call)"
            )
        return self

    @model_validator(mode="before")
    @classmethod
    def _url_list(cls, data: Any) -> Any:
        """``judge_url: a,b,c`` (e.g. ``JUDGE_MODEL_URL``) is one judge on those replicas."""
        url = data.get("judge_url") if isinstance(data, dict) else None
        if isinstance(url, str) and "," in url:
            urls = [u.strip() for u in url.split(",") if u.strip()]
            data = {**data, "judge_url": urls[0] if urls else url, "judge_replicas": urls}
        return data

    @model_validator(mode="after")
    def _one_kind_of_many(self) -> RewardConfig:
        if self.judge_urls and self.judge_replicas:
            raise ValueError(
                "judge_urls (an ensemble: every item judged by each) and judge_replicas (one judge "
                "on several servers) cannot be combined"
            )
        if self.escalate_to is not None and self.judge_urls and len(self.judge_urls) > 1:
            raise ValueError(
                "escalate_to (a second judge where the first is unsure) and an ensemble cannot be combined"
            )
        return self

    @field_validator("rubric")
    @classmethod
    def _rubric(cls, value: list[str | dict[str, Any]] | None) -> list[str | dict[str, Any]] | None:
        if value is not None:
            try:
                parse_rubric(value)
            except JudgeInputError as err:
                raise ValueError(str(err)) from None
        return value

    @field_validator("escalate_to")
    @classmethod
    def _second_judge(cls, value: Path | dict[str, Any] | None) -> Path | dict[str, Any] | None:
        """A mapping is validated now: its errors surface at load, its secrets are scrubbed from then on."""
        if isinstance(value, dict):
            try:
                RewardConfig.from_any(value)
            except JudgeConfigError as err:
                raise ValueError(str(err)) from None
        return value

    @field_validator("escalation_band")
    @classmethod
    def _band(cls, value: tuple[float, float]) -> tuple[float, float]:
        low, high = value
        if not 0.0 <= low <= high <= 1.0:
            raise ValueError(f"needs 0 <= low <= high <= 1, got [{low}, {high}]")
        return value

    @field_validator("judge_urls", "judge_replicas")
    @classmethod
    def _urls(cls, value: list[str] | None, info: ValidationInfo) -> list[str] | None:
        if value is not None and not value:
            raise ValueError(f"list at least one judge URL, or leave {info.field_name} out")
        if value is None:
            return None
        checked = []
        for i, url in enumerate(value):
            try:
                checked.append(check_judge_url(url))
            except ValueError as err:
                raise ValueError(f"entry {i} ({url!r}) {err}") from None
        return checked

    @property
    def cache_path(self) -> Path:
        """The cache directory with ``~`` expanded."""
        return self.cache_dir.expanduser()

    def client_config(self, judge_url: str | None = None) -> JudgeClientConfig:
        """The judge client's settings for one judge URL (default: ``judge_url``)."""
        shared = {name: getattr(self, name) for name in JudgeClientConfig.model_fields}
        if judge_url is not None:
            shared["judge_url"] = check_judge_url(judge_url)
        return JudgeClientConfig.model_construct(**shared)

    @classmethod
    def from_any(cls, config: ConfigLike) -> RewardConfig:
        """Build from a RewardConfig (as is), a mapping, or a YAML path (see the module docs)."""
        if isinstance(config, RewardConfig):
            return config
        if isinstance(config, str | Path):
            return load_reward_config(_config_file(config))
        if config is not None and not isinstance(config, Mapping):
            raise JudgeConfigError(
                f"config must be a dict, a RewardConfig or a YAML path, not {type(config).__name__}"
            )
        data = _unwrap(interpolate_env(dict(config or {})))
        return _validate({**_env_overrides(), **data})


ConfigLike = RewardConfig | Mapping[str, object] | str | Path | None


@functools.cache
def _one_field(model: type[BaseModel], name: str) -> type[BaseModel]:
    """A model of ``model``'s field ``name`` alone: its type, bounds and validators' checks."""
    info = model.model_fields[name]
    fields: dict[str, Any] = {name: (info.annotation, info)}
    return create_model(f"{model.__name__}_{name}", **fields)


def _is_valid(model: type[BaseModel], name: str, value: Any) -> bool:
    """Whether ``value`` passes the field ``name``'s type and bounds."""
    try:
        _one_field(model, name).model_validate({name: value})
    except ValidationError:
        return False
    return True


def interpolate_env(value: Any, env: Mapping[str, str] | None = None, key: str = "config") -> Any:
    """Replace ``${VAR}`` / ``${VAR:-default}`` in every string of a parsed config.

    ``${VAR:-default}`` takes the default when VAR is unset or empty; an unset ``${VAR}``
    without a default raises ``JudgeConfigError`` naming ``key`` and the variable.
    """
    env = os.environ if env is None else env
    if isinstance(value, str):

        def substitute(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if default is not None:
                return env.get(name) or default
            if name not in env:
                raise JudgeConfigError(
                    f"{key}: environment variable {name} is not set; export it, or write "
                    f"${{{name}:-default}} to give a default"
                )
            return env[name]

        return _ENV_REF.sub(substitute, value)
    if isinstance(value, list):
        return [interpolate_env(v, env, f"{key}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        return {k: interpolate_env(v, env, k if key == "config" else f"{key}.{k}") for k, v in value.items()}
    return value


def _env_overrides() -> dict[str, str]:
    return {key: os.environ[var] for var, key in ENV_OVERRIDES.items() if os.environ.get(var)}


def _unwrap(data: dict[str, Any]) -> dict[str, Any]:
    """Accept the seed's nested ``reward: {type, config}`` form as well as a flat mapping."""
    if "reward" in data and isinstance(data["reward"], Mapping):
        if len(data) > 1:
            others = ", ".join(repr(k) for k in data if k != "reward")
            raise JudgeConfigError(f"unknown key(s) {others} beside 'reward'; put them under reward.config")
        data = dict(data["reward"])
    if "config" in data and isinstance(data["config"], Mapping):
        extra = sorted(set(data) - _WRAPPER_KEYS)
        if extra:
            raise JudgeConfigError(
                f"unknown key(s) {', '.join(map(repr, extra))} beside reward.type and reward.config; "
                "put them under reward.config"
            )
        kind = data.get("type", "judge_model")
        if kind not in ("judge_model", None):
            raise JudgeConfigError(f"reward.type is {kind!r}; judge-vllm needs 'judge_model'")
        data = dict(data["config"])
    return data


def _validate(data: dict[str, Any]) -> RewardConfig:
    try:
        return RewardConfig.model_validate(data)
    except ValidationError as err:
        raise JudgeConfigError(_explain(err)) from None


def _sibling_keys(loc: tuple[int | str, ...]) -> list[str]:
    """The keys allowed beside the last one of ``loc`` (a nested block's own keys)."""
    model: type[BaseModel] = RewardConfig
    for part in loc[:-1]:
        field = model.model_fields.get(str(part))
        nested = (
            [t for t in (field.annotation, *get_args(field.annotation)) if isinstance(t, type)]
            if field
            else []
        )
        models = [t for t in nested if issubclass(t, BaseModel)]
        if not models:
            return []
        model = models[0]
    return list(model.model_fields)


def _unknown_key_message(key: str, allowed: list[str]) -> str:
    """One line for an unknown key: the closest allowed one, and the allowed keys when few."""
    name = key.rsplit(".", 1)[-1]
    message = f"unknown key {key!r}{did_you_mean(name, allowed)}"
    listed = ", ".join(allowed)
    if len(listed) <= MAX_LISTED_KEYS_CHARS:
        return f"{message}; allowed keys: {listed}"
    return f"{message}; every key: docs/config-reference.md"


def _explain(err: ValidationError) -> str:
    lines = []
    for e in err.errors():
        key = ".".join(str(p) for p in e["loc"]) or "config"
        if e["type"] == "extra_forbidden":
            lines.append(_unknown_key_message(key, _sibling_keys(e["loc"])))
        else:
            shown = "***" if key.startswith("api_key") else repr(e.get("input"))
            lines.append(f"{key}: {e['msg']} (got {shown})")
    return "invalid reward config: " + "; ".join(lines)


def _config_file(spec: str | Path) -> Path:
    """A reward YAML's path: ``spec`` itself, or a bundled config's name (``judge-vllm config list``)."""
    path = Path(spec).expanduser()
    if path.exists() or not isinstance(spec, str) or "/" in spec or path.suffix:
        return path
    bundled = bundled_configs()
    if spec in bundled:
        return bundled[spec]
    raise JudgeConfigError(
        f"reward config {spec!r} is neither a file nor a bundled config ({', '.join(bundled)}: judge-vllm config list)"
    )


def load_reward_config(path: str | Path) -> RewardConfig:
    """Load a reward YAML file (nested or flat), with ``${ENV}`` interpolation and env overrides."""
    raw = read_yaml_mapping(Path(path), "reward config")
    return _validate({**_unwrap(interpolate_env(raw)), **_env_overrides()})


def with_judge_url(config: ConfigLike, judge_url: str | None) -> RewardConfig:
    """The reward config (``RewardConfig.from_any``: environment overrides included), with a command
    line's ``--judge-url`` over all of them when given."""
    resolved = RewardConfig.from_any(config)
    if judge_url is None:
        return resolved
    try:
        # dict(): the values themselves (a dump shows URLs without their credentials).
        return RewardConfig.model_validate({**dict(resolved), "judge_url": judge_url, "judge_urls": None})
    except ValidationError as err:
        raise JudgeConfigError(f"--judge-url {judge_url!r}: {err.errors()[0]['msg']}") from None


def bundled_config_dir() -> Path:
    """The bundled example configs: ``configs/`` in a checkout (or an editable install), else
    where the wheel installs them (``<prefix>/share/judge-vllm/configs``)."""
    checkout = Path(__file__).resolve().parent.parent / "configs"
    candidates = [checkout] + [
        Path(root) / "share" / "judge-vllm" / "configs"
        for root in dict.fromkeys(
            [sysconfig.get_path("data"), sys.prefix, sysconfig.get_path("data", "posix_user")]
        )
    ]
    for folder in candidates:
        if (folder / "reward.yaml").is_file():
            return folder
    raise JudgeConfigError(f"the bundled configs are missing from this install (looked in {candidates})")


def bundled_configs() -> dict[str, Path]:
    """Name (file stem) -> path of each bundled config."""
    return {path.stem: path for path in sorted(bundled_config_dir().glob("*.yaml"))}
