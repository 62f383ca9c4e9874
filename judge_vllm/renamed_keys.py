"""Config keys that were renamed: the old name still works, with a ``FutureWarning`` naming the new one.

Each timeout has one name per meaning: ``reward_timeout`` (a whole reward call),
``judge_timeout`` (a whole judge call, retries included), ``request_timeout`` (one HTTP
attempt), ``batch_wait`` (how long a batch waits to fill), ``circuit_breaker_cooldown`` (how
long an open breaker stays open) and ``rules.symbolic_timeout`` (the rule's symbolic checks).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

__all__ = ["rename_deprecated_keys"]


def rename_deprecated_keys(data: object, renames: Mapping[str, str], where: str) -> object:
    """``data`` with each old key of ``renames`` moved to its new name (a warning for each);
    both names given at once is a ValueError. Anything but a dict passes through unchanged."""
    if not isinstance(data, dict) or not renames.keys() & data.keys():
        return data
    renamed = dict(data)
    for old, new in renames.items():
        if old not in renamed:
            continue
        if new in renamed:
            raise ValueError(f"{where}: give {new} only ({old} is its old name)")
        renamed[new] = renamed.pop(old)
        warnings.warn(
            f"{where}: the key {old!r} is now {new!r} (the old name will stop working in a later release)",
            FutureWarning,
            stacklevel=2,
        )
    return renamed
