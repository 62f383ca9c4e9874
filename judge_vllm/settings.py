"""The judge client's settings: how to reach the judge and what to ask of it.

``adapter.config.RewardConfig`` extends this model, so each client setting is declared
once, with one default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import httpx
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from judge_vllm.errors import JudgeConfigError
from judge_vllm.profiles import JudgeProfile, ScoreRubric, load_profile
from judge_vllm.redaction import redact_url, register_secret, register_url_secrets
from judge_vllm.renamed_keys import rename_deprecated_keys

__all__ = ["DEFAULT_PROFILE", "REQUEST_TIMEOUT_SHARE", "VERDICT_PROFILE", "JudgeClientConfig", "check_judge_url", "clean_api_key"]

# Default share of ``judge_timeout`` one HTTP attempt may take: a hung attempt leaves room for two more.
REQUEST_TIMEOUT_SHARE = 1 / 3
# The default profile, chosen by measurement (docs/eval.md "Which profile by default"), and the
# one profile with a JSON verdict mode (mode: verdict).
DEFAULT_PROFILE = "binary"
VERDICT_PROFILE = "rubric"
JSON_OVERHEAD_TOKENS = 24
ASPECT_TOKENS = 24


def check_judge_url(value: str) -> str:
    """A judge URL with scheme http(s) and a host, without a trailing slash (ValueError if not)."""
    url = httpx.URL(value.strip()) if isinstance(value, str) else None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        raise ValueError("must start with http:// or https:// and name a host, e.g. http://localhost:8888")
    register_url_secrets(value)  # credentials in the URL never reach an output
    return value.strip().rstrip("/")


def clean_api_key(value: Any, field: str = "api_key", ascii_only: bool = True) -> Any:
    """An API key as read (a config, YAML, an env var, a flag): the form given registered as a
    secret, surrounding whitespace stripped (a key file's trailing newline, an env file's CR, a
    pasted tab: each made requests fail with the key in the error), None when nothing is left.
    ValueError naming ``field``, never the key, when a control character remains inside it, or
    (``ascii_only``: a key this client sends) a character that is not ASCII: the client's HTTP
    header cannot carry it, and every reward fell back with reason "Invalid input". A key that is
    only compared (the HTTP API's own) may be any printable text. Values that are not text are
    left to the field's own validation."""
    raw = value.get_secret_value() if isinstance(value, SecretStr) else value
    if not isinstance(raw, str):
        return value
    register_secret(raw)  # the form given never leaves either, even in a validation error's log
    key = raw.strip()
    if not key:
        return None
    if not key.isprintable():
        raise ValueError(
            f"{field} holds a control or non-printable character inside it, which no HTTP header "
            "can carry: copy the key again (its value is not shown)"
        )
    if ascii_only and not key.isascii():
        raise ValueError(
            f"{field} holds a character that is not ASCII, which no HTTP header can carry: API keys "
            "are printable ASCII; copy the key again (its value is not shown)"
        )
    return key


def _redacted(value: Any) -> Any:
    """``value`` with URL credentials removed and ``api_key`` entries masked, in lists and dicts too."""
    if isinstance(value, str):
        return redact_url(value)
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    if isinstance(value, dict):
        return {k: "**********" if k == "api_key" and v else _redacted(v) for k, v in value.items()}
    return value


def _hashable(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


class JudgeClientConfig(BaseModel):
    """How to reach the judge and what to ask of it; the reward config extends it."""

    # hide_input_in_errors: a ValidationError's text would otherwise show the value given (a key,
    # a URL with credentials); the config's own errors (``adapter.config``) name the key instead.
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)
    # Old key -> its name now (accepted with a FutureWarning).
    RENAMED_KEYS: ClassVar[Mapping[str, str]] = {"timeout": "judge_timeout"}

    judge_url: str = Field(
        default="http://localhost:8888", description="the judge server (with or without /v1)"
    )
    api_key: SecretStr | None = Field(
        default=None, description="the judge server's API key, printable ASCII (never printed)"
    )
    model: str | None = Field(default=None, description="served model name; None = first listed")
    mode: Literal["verdict", "fast"] = Field(
        default="fast",
        description="fast: one constrained token, reward = expected score; verdict: JSON score and explanation",
    )
    judge_timeout: float = Field(
        default=30.0,
        gt=0.0,
        le=3600.0,
        description="seconds for a whole judge call, retries included; in a reward config at most (and by default) reward_timeout",
    )
    request_timeout: float | None = Field(
        default=None, gt=0.0, description="seconds for one HTTP attempt; None = a third of judge_timeout"
    )
    max_retries: int = Field(
        default=3,
        ge=0,
        le=20,
        description="retries of connection errors, timeouts, 408/409/429/5xx, within judge_timeout",
    )
    aspects: bool = Field(default=False, description="verdict mode: per-aspect scores too")
    max_explanation_chars: int = Field(
        default=120, ge=16, le=4000, description="verdict mode: explanation length"
    )
    max_prompt_chars: int = Field(
        default=4000, ge=200, le=1_000_000, description="the question shown to the judge (start and end kept)"
    )
    max_completion_chars: int = Field(
        default=6000,
        ge=200,
        le=1_000_000,
        description="the completion shown to the judge (start and end kept)",
    )
    use_batch_endpoint: bool = Field(
        default=True, description="one /v1/chat/completions/batch call per batch"
    )
    temperature: float = Field(default=0.0, ge=0.0, le=2.0, description="the judge's sampling temperature")
    seed: int | None = Field(default=0, description="the judge's sampling seed")
    profile: str = Field(
        default=DEFAULT_PROFILE,
        description="a bundled judge profile, or a profile folder / profile.yaml; "
        f"default {DEFAULT_PROFILE} ({VERDICT_PROFILE} with mode: verdict)",
    )
    max_tokens: int | None = Field(
        default=None, ge=1, le=262_144, description="the judge's token budget; None = the profile's"
    )
    chat_template_kwargs: dict[str, Any] | None = Field(
        default=None, description="passed to the judge's chat template, e.g. {enable_thinking: false}"
    )
    score_rubric: ScoreRubric | None = Field(default=None, description="a grading rubric (prometheus)")
    tokenizer: str | None = Field(
        default=None,
        description="the judge model's tokenizer (folder or hub id) for label token ids when the server has no /tokenize",
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: Any) -> Any:
        return rename_deprecated_keys(data, cls.RENAMED_KEYS, cls.__name__)

    @model_validator(mode="before")
    @classmethod
    def _verdict_mode_profile(cls, data: Any) -> Any:
        """No profile (or ``None``) is the default one; with ``mode: verdict``, the one that has it."""
        if not isinstance(data, Mapping) or data.get("profile") is not None:
            return data
        default = VERDICT_PROFILE if data.get("mode") == "verdict" else DEFAULT_PROFILE
        return {**data, "profile": default}

    @field_validator("model", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_validator("api_key", mode="before")
    @classmethod
    def _clean_key(cls, value: Any) -> Any:
        return clean_api_key(value)

    @field_validator("judge_url")
    @classmethod
    def _url(cls, value: str) -> str:
        return check_judge_url(value)

    @field_validator("api_key")
    @classmethod
    def _secret_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            register_secret(value.get_secret_value())  # scrubbed from every output from now on
        return value

    @model_validator(mode="after")
    def _attempt_fits_call(self) -> JudgeClientConfig:
        if self.request_timeout is not None and self.request_timeout > self.judge_timeout:
            raise ValueError(
                f"request_timeout ({self.request_timeout} s, one HTTP attempt) must not exceed "
                f"judge_timeout ({self.judge_timeout} s, the whole judge call)"
            )
        return self

    @field_validator("profile")
    @classmethod
    def _profile(cls, value: str) -> str:
        try:
            load_profile(value)
        except JudgeConfigError as err:
            raise ValueError(str(err)) from None
        return value

    @model_validator(mode="after")
    def _profile_inputs(self) -> JudgeClientConfig:
        profile = load_profile(self.profile)
        if profile.needs_score_rubric and self.score_rubric is None:
            raise ValueError(
                f"profile {self.profile!r} grades against a rubric: give score_rubric "
                "{criteria, score1_description, ..., score5_description}"
            )
        if self.mode == "verdict" and not profile.verdict_mode:
            raise ValueError(
                f"mode: verdict asks for a JSON score and explanation, and profile {self.profile!r} "
                f"answers with a label only: drop mode, or use profile: {VERDICT_PROFILE}"
            )
        return self

    def judge_profile(self) -> JudgeProfile:
        """The judge profile these settings ask for (``mode: verdict`` where it supports one)."""
        profile = load_profile(self.profile)
        if self.mode == "verdict":
            profile = profile.as_verdict_mode(self._json_max_tokens())
        return profile

    def _json_max_tokens(self) -> int:
        # JSON punctuation and the score, plus the explanation at a worst case of one token per
        # character (digits). The schema's maxLength ends generation long before this cap.
        return JSON_OVERHEAD_TOKENS + (ASPECT_TOKENS if self.aspects else 0) + self.max_explanation_chars

    @property
    def generation_max_tokens(self) -> int:
        """The judge's token budget for one reply."""
        return self.max_tokens or self.judge_profile().max_tokens

    @model_serializer(mode="wrap")
    def _dumped_without_secrets(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``model_dump`` and ``model_dump_json`` show what the repr shows: URLs without their
        credentials (``judge_url``, ``judge_urls``, ``judge_replicas``, a mapping's), no key
        (``api_key`` is a ``SecretStr``; a nested mapping's is masked). Trainers log these dicts to
        experiment trackers. A dump is for reading, not for building a config again: copy one with
        ``model_copy(update=...)``, or ``dict(config)``, which hold the values themselves."""
        dumped: dict[str, Any] = handler(self)
        return {name: _redacted(value) for name, value in dumped.items()}

    def __repr_args__(self) -> Any:
        """The repr shows URLs without their credentials and no key, nested mappings included (the
        key is a ``SecretStr`` already; a nested config's ``api_key`` is a plain string)."""
        for name, value in super().__repr_args__():
            yield name, _redacted(value)

    def __hash__(self) -> int:  # pydantic's frozen hash fails on dict fields (chat_template_kwargs)
        return hash(tuple(_hashable(v) for v in self.__dict__.values()))

    @property
    def attempt_timeout_s(self) -> float:
        """Seconds one HTTP attempt may take."""
        return self.request_timeout or self.judge_timeout * REQUEST_TIMEOUT_SHARE
