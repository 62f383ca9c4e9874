"""Reading a settings file: YAML that must hold a mapping, with errors that name the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from judge_vllm.errors import JudgeConfigError

__all__ = ["read_yaml_mapping"]


def read_yaml_mapping(path: Path, what: str) -> dict[str, Any]:
    """A YAML file that must hold a mapping (an empty file is ``{}``); a clear
    ``JudgeConfigError`` naming ``what`` and the file otherwise."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as err:
        raise JudgeConfigError(f"cannot read {what} {path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise JudgeConfigError(f"{what} {path} is not valid YAML: {err}") from None
    if not isinstance(raw, dict):
        raise JudgeConfigError(f"{what} {path} must be a mapping, not {type(raw).__name__}")
    return raw
