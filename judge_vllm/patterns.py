"""User-supplied regular expressions, checked when loaded and run with a time bound.

A profile's ``verdict_pattern`` (and any pattern a user's config brings) runs on text we do not
control: a judge's reply, a policy's completion. A pattern with catastrophic backtracking
("(a+)+$") would freeze the process on the wrong input, so patterns are compiled with the
``regex`` package (Python's ``re`` syntax, plus a ``timeout`` on every match), probed at load
against inputs that make such patterns explode (a config error when a probe runs out of time),
and every search is bounded by ``MATCH_TIMEOUT_S`` (``PatternTimeout`` when it runs out).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import regex

__all__ = ["MATCH_TIMEOUT_S", "PatternTimeout", "UserPattern", "compile_user_pattern"]

# Bounds: a probe at load, and one search over a judge reply or a completion.
PROBE_TIMEOUT_S = 0.25
MATCH_TIMEOUT_S = 1.0
PROBE_CHARS = 5_000


class PatternTimeout(TimeoutError):
    """A user pattern ran out of time on one text."""


class UserPattern:
    """A compiled user pattern whose searches are bounded in time."""

    def __init__(self, source: str, compiled: regex.Pattern[str]) -> None:
        self.pattern = source
        self._compiled = compiled
        self.groups = compiled.groups

    def finditer(self, text: str, timeout_s: float = MATCH_TIMEOUT_S) -> Iterator[regex.Match[str]]:
        """Every match in ``text``; ``PatternTimeout`` if the search takes more than ``timeout_s``."""
        try:
            yield from self._compiled.finditer(text, timeout=timeout_s)
        except TimeoutError as err:
            raise PatternTimeout(f"pattern {self.pattern!r} took more than {timeout_s:g} s") from err

    def search(self, text: str, timeout_s: float = MATCH_TIMEOUT_S) -> regex.Match[str] | None:
        """The first match in ``text``, bounded like ``finditer``."""
        return next(self.finditer(text, timeout_s), None)


def _probes(pattern: str) -> list[str]:
    """Texts that make backtracking patterns explode: long runs of one character (each literal
    character of the pattern, a letter, a digit, a space) that then fail to match at the end."""
    characters = {c for c in pattern if c.isprintable() and c not in "\\()[]{}?*+|^$."} | set("a0 \n")
    return [c * PROBE_CHARS + "\x00" for c in sorted(characters)[:32]]


@lru_cache(maxsize=256)
def compile_user_pattern(pattern: str, field: str) -> UserPattern:
    """``pattern`` compiled and probed (once per pattern: cached); ``ValueError`` naming ``field``
    when it is not a valid regex or when it backtracks catastrophically on a probe."""
    try:
        compiled = regex.compile(pattern, regex.VERSION0)
    except regex.error as err:
        raise ValueError(f"{field} {pattern!r} is not a valid regex: {err}") from None
    for probe in _probes(pattern):
        try:
            compiled.search(probe, timeout=PROBE_TIMEOUT_S)
        except TimeoutError:
            raise ValueError(
                f"{field} {pattern!r} takes more than {PROBE_TIMEOUT_S:g} s on a {PROBE_CHARS:,}-character "
                "text (catastrophic backtracking, e.g. nested repeats like (a+)+): rewrite it"
            ) from None
    return UserPattern(pattern, compiled)
