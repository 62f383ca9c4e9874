"""The start-up check (``startup_check``): the judge is asked once before the first reward.

A judge that cannot answer does not stop rewards: with ``fallback_to_rule: true`` (the default)
every reward is the rule's, tagged ``rule_fallback``, and a GRPO run trains on the rule. So when a
reward system starts, its judge is checked:

    model       the backend's model: the configured one, else the first the server lists (what
                the first reward would discover, now once; the cache keys are known from then on)
    judgment    one tiny judgment through the same backend, within the judge's budget: the server
                answers, serves the model (a vLLM server answers 404 "The model `x` does not
                exist. Valid aliases: ..." for one it does not), and its reply fits the profile's
                output contract

A failure is ``JudgeStartupError``, one line: where the judge is (URLs without credentials), the
model, what went wrong, what to change and the command that checks the server
(``judge-vllm health --url URL``). The facade raises it (``startup_check: fail``, the default),
logs it and goes on (``warn``), or never asks (``off``). The check's judgment is not a reward: it
is not in the reward counters of ``get_metrics()`` nor in the cache; the backend's own counters
(an ensemble member's calls, ``escalations``, ``coarse_fast_verdicts``) see it as any call.
"""

from __future__ import annotations

import asyncio
import logging

from judge_vllm.backend import JudgeBackend
from judge_vllm.budget import Budget
from judge_vllm.errors import (
    JudgeError,
    JudgeInputError,
    JudgeParseError,
    JudgeRequestError,
    JudgeStartupError,
    JudgeTimeoutError,
    JudgeUnavailableError,
)
from judge_vllm.profiles import JudgeProfile
from judge_vllm.redaction import redact_url
from judge_vllm.schemas import JudgeRequest, Verdict
from judge_vllm.settings import JudgeClientConfig

__all__ = [
    "HEALTH_COMMAND",
    "JudgeAddress",
    "check_judge",
    "server_urls",
    "startup_failure",
    "startup_request",
]

logger = logging.getLogger("JudgeReward")

HEALTH_COMMAND = "judge-vllm health --url {url}"
STARTUP_PROMPT = "What is 2 + 2?"
STARTUP_ANSWER = "4"
STARTUP_COMPLETION = "The answer is 4."
STARTUP_RESPONSES = ("The answer is 4.", "The answer is 5.")  # a comparing profile's two responses


def server_urls(config: JudgeClientConfig, replicas: list[str] | None = None) -> list[str]:
    """The servers of one judge, as shown: its ``replicas`` when it has some, else its
    ``judge_url``, without credentials."""
    return [redact_url(url) for url in replicas or [config.judge_url]]


class JudgeAddress:
    """Where a reward system's judge is, for the check's message: the server URLs (shown without
    credentials), or the name of a backend that is not a server of the config's."""

    def __init__(self, urls: list[str], backend: str | None = None) -> None:
        self.urls = urls
        self.backend = backend

    def __str__(self) -> str:
        if self.backend is not None:
            return f"the judge backend {self.backend}"
        return f"the judge at {', '.join(self.urls)}"

    def next_step(self) -> str:
        """The command that checks the first server, or what to check for a backend."""
        if self.backend is not None or not self.urls:
            return "check that the backend answers judge_many"
        return f"check the server with: {HEALTH_COMMAND.format(url=self.urls[0])}"


def startup_request(profile: JudgeProfile, budget: Budget) -> JudgeRequest:
    """The tiny judgment: a question any judge can grade, shaped for ``profile`` (two responses
    for a profile that compares them), carrying ``budget``."""
    return JudgeRequest(
        prompt=STARTUP_PROMPT,
        completion=STARTUP_COMPLETION,
        answer=STARTUP_ANSWER,
        responses=STARTUP_RESPONSES if profile.compares else (),
        budget=budget,
    )


def _fix(err: JudgeError, profile: JudgeProfile, mode: str) -> str:
    """What to change for ``err``: the setting or the server, in a few words."""
    if isinstance(err, JudgeRequestError):
        if err.status_code in (401, 403):
            return "set api_key to the server's key"
        if err.status_code == 404:
            return "set model to a model the server serves (or leave it out to use the first it lists)"
        return "check model, api_key and profile against the server"
    if isinstance(err, JudgeParseError):
        return (
            f"the reply does not fit profile {profile.name!r} (mode {mode}): serve the judge with "
            "structured outputs (judge-vllm serve does), or pick a profile this model follows"
        )
    if isinstance(err, JudgeUnavailableError):
        return "start the judge server, or set judge_url to where it runs"
    return "check the judge settings"


def startup_failure(
    where: JudgeAddress, model: str | None, err: JudgeError, profile: JudgeProfile, mode: str
) -> str:
    """The check's one line: where, the model, what went wrong, what to change, the next step."""
    said = " ".join(str(err).split())  # a server's multi-line error body stays on one line
    named = f"model {model}" if model else "the model it lists first"
    return (
        f"{where} ({named}) failed the start-up check: {err.reason}: {said}; {_fix(err, profile, mode)}; "
        f"{where.next_step()} (startup_check: warn starts anyway, every reward from the rule until "
        "the judge answers)"
    )


async def _judged(backend: JudgeBackend, request: JudgeRequest) -> tuple[str | None, Verdict | JudgeError]:
    """The backend's model and its outcome for ``request`` (the error that stopped either), read
    as the dispatcher reads a call's outcomes."""
    model = backend.known_model
    try:
        model = await backend.model_name()
        outcomes = await backend.judge_many([request])
    except JudgeError as err:
        return model, err
    except Exception as err:  # a backend's bug: said at start, as a call would say it later
        return model, JudgeUnavailableError(f"judge call failed: {type(err).__name__}: {err}")
    if len(outcomes) != 1:  # a backend that broke its contract
        return model, JudgeParseError(f"the judge backend gave {len(outcomes)} outcomes for 1 request")
    return model, outcomes[0]


async def check_judge(
    backend: JudgeBackend, where: JudgeAddress, profile: JudgeProfile, mode: str, budget: Budget
) -> str | None:
    """Ask ``backend`` for its model and one tiny judgment within ``budget``; the model's name, or
    ``JudgeStartupError`` saying what failed (its cause: the error met)."""
    request = startup_request(profile, budget)
    try:
        model, outcome = await asyncio.wait_for(_judged(backend, request), budget.answer_left())
    except (TimeoutError, asyncio.TimeoutError):  # the same class only from Python 3.11
        model = backend.known_model
        outcome = JudgeTimeoutError(f"no answer within {budget.answer_by - budget.started:.1f} s")
    if isinstance(outcome, JudgeInputError):
        # The tiny request does not suit this profile (it needs inputs of its own): the server
        # answered the model's name, which is all that can be checked without a real row.
        logger.debug("start-up check: no tiny judgment for profile %s: %s", profile.name, outcome)
        return model
    if isinstance(outcome, JudgeError):
        raise JudgeStartupError(startup_failure(where, model, outcome, profile, mode)) from outcome
    logger.debug("start-up check: %s (model %s) answered %.2f", where, model, outcome.score)
    return model
