"""Cache keys: a SHA-256 digest of everything that decides the judge's verdict.

The judge model, template version, output contract and sampling are hashed once per setting
(``_settings_digest``); the request's fields follow as one JSON list. Two requests share a
key only if the judge would be asked the same question the same way.
"""

from __future__ import annotations

import functools
import hashlib
import json

from judge_prompts import template_version
from judge_vllm.schemas import JudgeRequest
from judge_vllm.settings import JudgeClientConfig

__all__ = ["KEY_SCHEMA_VERSION", "cache_key"]

KEY_SCHEMA_VERSION = 2


def cache_key(request: JudgeRequest, model: str, config: JudgeClientConfig) -> str:
    """A collision-safe key for the verdict the judge would give this request."""
    digest = _settings_digest(model, config).copy()
    fields: list[object] = [
        request.prompt,
        request.completion,
        request.answer,
        request.answer_type,
    ]
    if request.final_answer is not None:  # what a final-answer profile shows the judge
        fields.append(request.final_answer)
    if request.responses:  # a comparison: the responses in the order shown
        fields.append(list(request.responses))
    if request.profile is not None:  # asked by another profile than the judge's own
        fields.append(_profile_fingerprint(request.profile, config))
    if request.trajectory is not None:  # an agent's steps the judge is shown
        fields.append(request.trajectory.model_dump(mode="json"))
    if request.traces:  # a comparison's: each response's steps, in the order shown
        fields.append([None if t is None else t.model_dump(mode="json") for t in request.traces])
    # Lone surrogates (text cut mid-pair by a tokenizer) have no UTF-8 form; surrogatepass gives
    # them bytes no valid text encodes to, so keys stay distinct and valid text keeps its old key.
    digest.update(json.dumps(fields, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    key: str = digest.hexdigest()
    return key


@functools.lru_cache(maxsize=64)
def _profile_fingerprint(profile: str, config: JudgeClientConfig) -> str:
    return config.model_copy(update={"profile": profile}).judge_profile().fingerprint


@functools.lru_cache(maxsize=64)
def _settings_digest(model: str, config: JudgeClientConfig) -> hashlib._Hash:
    """SHA-256 state after the settings that decide a verdict (shared by every request)."""
    material = {
        "schema": KEY_SCHEMA_VERSION,
        "model": model,
        "templates": template_version(),
        "profile": config.judge_profile().fingerprint,
        "max_tokens": config.max_tokens,
        "chat_template_kwargs": config.chat_template_kwargs,
        "score_rubric": config.score_rubric.model_dump() if config.score_rubric else None,
        "mode": config.mode,
        "aspects": config.aspects,
        "max_explanation_chars": config.max_explanation_chars,
        "max_prompt_chars": config.max_prompt_chars,
        "max_completion_chars": config.max_completion_chars,
        "temperature": config.temperature,
        "seed": config.seed,
    }
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode() + b"\n")
