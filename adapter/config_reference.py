"""The reward config's reference table, generated from ``RewardConfig`` (keys, defaults, bounds,
what each does), so the documentation cannot drift from the code: ``judge-vllm config reference``
prints it, docs/config-reference.md is its output (a test compares them)."""

from __future__ import annotations

from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from adapter.config import RewardConfig
from adapter.rules import RuleSettings
from adapter.settings import AuditSettings, GroupSettings, ProcessSettings
from judge_vllm.reasoning import ReasoningDelimiters

__all__ = ["reference_markdown"]

HEADER = """# Reward config reference

Every key of the reward config (YAML, a dict or `RewardConfig`), generated from the code by
`judge-vllm config reference`: do not edit by hand. `${VAR}` and `${VAR:-default}` work in any
string value; an unknown key or a value out of bounds is an error naming the key. README has the
precedence of code, environment and YAML, and the keys grouped by use.
"""
NESTED: tuple[tuple[str, type[BaseModel]], ...] = (
    ("rules", RuleSettings),
    ("reasoning_delimiters", ReasoningDelimiters),
    ("group", GroupSettings),
    ("process", ProcessSettings),
    ("audit", AuditSettings),
)
_BOUNDS = ((Ge, "ge", ">="), (Gt, "gt", ">"), (Le, "le", "<="), (Lt, "lt", "<"), (MinLen, "min_length", "length >="),
           (MaxLen, "max_length", "length <="))  # fmt: skip


def _type(info: FieldInfo) -> str:
    text = str(info.annotation).replace("typing.", "").replace("pathlib.", "")
    for module in ("adapter.", "judge_vllm.", "pydantic.types."):
        while module in text:  # qualified class names: keep the last part
            start = text.index(module)
            end = start + len(module)
            while end < len(text) and (text[end].isalnum() or text[end] in "._"):
                end += 1
            text = text[:start] + text[start:end].rsplit(".", 1)[-1] + text[end:]
    return text.replace("<class '", "").replace("'>", "").replace("NoneType", "None")


def _default(info: FieldInfo) -> str:
    if info.default_factory is not None:
        return (
            "(below)"
            if isinstance(info.default_factory, type) and issubclass(info.default_factory, BaseModel)
            else "[]"
        )
    value: object = info.default
    return "none" if value is None else f"`{value}`"


def _bounds(info: FieldInfo) -> str:
    found = []
    for meta in info.metadata:
        for kind, attribute, sign in _BOUNDS:
            if isinstance(meta, kind):
                found.append(f"{sign} {getattr(meta, attribute)}")
    return ", ".join(found)


def _rows(model: type[BaseModel], prefix: str = "") -> list[str]:
    rows = []
    for name, info in model.model_fields.items():
        meaning = (info.description or "").replace("|", "\\|")
        kind = _type(info).replace("|", "\\|")
        bounds = _bounds(info)
        rows.append(
            f"| `{prefix}{name}` | `{kind}` | {_default(info)} | {bounds} | {meaning} |".replace(
                "|  |", "| |"
            )
        )
    return rows


def reference_markdown() -> str:
    """The reference table of every key, nested settings after their key."""
    lines = [HEADER, "| key | type | default | bounds | what it does |", "|---|---|---|---|---|"]
    lines += _rows(RewardConfig)
    for key, model in NESTED:
        lines += [
            "",
            f"`{key}:` holds",
            "",
            "| key | type | default | bounds | what it does |",
            "|---|---|---|---|---|",
        ]
        lines += _rows(model, prefix=f"{key}.")
    return "\n".join([*lines, *_renamed_rows()]) + "\n"


def _renamed_rows() -> list[str]:
    renamed = {
        **RewardConfig.RENAMED_KEYS,
        **{f"rules.{old}": f"rules.{new}" for old, new in RuleSettings.RENAMED_KEYS.items()},
    }
    rows = ["", "Renamed keys: the old name still works, with a warning naming the new one.", "",
            "| old key | new key |", "|---|---|"]  # fmt: skip
    return rows + [f"| `{old}` | `{new}` |" for old, new in renamed.items()]
