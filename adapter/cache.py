"""The verdict cache: diskcache on disk, JSON text values (never pickle), collision-safe keys.

Keys are SHA-256 digests of a canonical JSON encoding of everything that decides the
verdict: judge model, template version, output contract, sampling and every request
field. Only judge verdicts are stored, never fallbacks. The directory is created 0700;
several processes may share it (diskcache uses SQLite with its own locking). Keys and
values are stored as plain SQLite text (no compression, no second JSON pass: a hit costs
one SELECT and one pydantic parse); an entry in any other form is refused, never unpickled.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

import diskcache

from judge_prompts import template_version
from judge_vllm.client import JudgeClientConfig
from judge_vllm.schemas import JudgeRequest, Verdict

__all__ = ["VerdictCache", "cache_key"]

logger = logging.getLogger(__name__)

KEY_SCHEMA_VERSION = 2
# diskcache bounds by bytes; a stored verdict takes well under this.
BYTES_PER_ENTRY = 1024


def cache_key(request: JudgeRequest, model: str, config: JudgeClientConfig) -> str:
    """A collision-safe key for the verdict the judge would give this request."""
    material = {
        "schema": KEY_SCHEMA_VERSION,
        "model": model,
        "templates": template_version(),
        "mode": config.mode,
        "aspects": config.aspects,
        "max_explanation_chars": config.max_explanation_chars,
        "max_prompt_chars": config.max_prompt_chars,
        "max_completion_chars": config.max_completion_chars,
        "temperature": config.temperature,
        "seed": config.seed,
        "prompt": request.prompt,
        "completion": request.completion,
        "answer": request.answer,
        "answer_type": request.answer_type,
    }
    canonical = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class _TextDisk(diskcache.Disk):
    """diskcache's storage for str keys and JSON text values; refuses to unpickle anything."""

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
        if mode == diskcache.core.MODE_PICKLE:
            raise ValueError("refusing a pickled cache entry")
        return super().fetch(mode, filename, value, read)


class VerdictCache:
    """A bounded on-disk map from ``cache_key`` to ``Verdict``; thread- and process-safe."""

    def __init__(self, directory: Path, max_entries: int) -> None:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(directory, 0o700)
        self._cache = diskcache.Cache(
            str(directory),
            disk=_TextDisk,
            size_limit=max_entries * BYTES_PER_ENTRY,
            eviction_policy="least-recently-stored",
        )

    def get(self, key: str) -> Verdict | None:
        """The cached verdict, or None (a corrupt entry counts as a miss)."""
        try:
            value = self._cache.get(key)
            return None if value is None else Verdict.model_validate_json(value)
        except (ValueError, TypeError):
            logger.debug("dropping invalid cache entry %s", key[:12])
            self._cache.delete(key)
            return None

    def set(self, key: str, verdict: Verdict) -> None:
        """Store a judge verdict."""
        self._cache.set(key, verdict.model_dump_json())

    def __len__(self) -> int:
        return len(self._cache)

    def close(self) -> None:
        """Close the SQLite connections."""
        self._cache.close()
