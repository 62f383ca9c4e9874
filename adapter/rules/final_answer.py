"""``extract_final_answer``: the final answer a completion commits to, per answer type."""

from __future__ import annotations

from adapter.rules.answer_types import GRAMMARS
from adapter.rules.extraction.anchors import anchored_answer
from adapter.rules.settings import RuleSettings

__all__ = ["extract_final_answer"]

_MAX_CHARS = RuleSettings().max_completion_chars


def extract_final_answer(completion: str, answer_type: str | None = None) -> str | None:
    """The final answer a completion commits to, or None when it commits to none: as its answer
    type reads it (``answer_types``), else the marked answer or the whole text."""
    text = completion[-_MAX_CHARS:] if isinstance(completion, str) else ""
    anchored = anchored_answer(text)
    grammar = GRAMMARS.get(answer_type.upper()) if isinstance(answer_type, str) else None
    if grammar is not None:
        return grammar.extract(text, anchored)
    return anchored or text.strip() or None
