"""``extract_final_answer``: the final answer a completion commits to, per answer type."""

from __future__ import annotations

from adapter.rules.choice import chosen_letters
from adapter.rules.extract import anchored_answer, trailing_expression
from adapter.rules.number import final_number_text
from adapter.rules.settings import RuleSettings

__all__ = ["extract_final_answer"]

_MAX_CHARS = RuleSettings().max_completion_chars


def extract_final_answer(completion: str, answer_type: str | None = None) -> str | None:
    """The final answer a completion commits to, or None when it commits to none."""
    text = completion[-_MAX_CHARS:] if isinstance(completion, str) else ""
    anchored = anchored_answer(text)
    kind = answer_type.upper() if isinstance(answer_type, str) else ""
    if kind == "NUMBER":
        return final_number_text(text, anchored)
    if kind == "MULTIPLE_CHOICE":
        letters = chosen_letters(text, "")
        return "".join(sorted(letters)) if letters else None
    if anchored:
        return anchored
    if kind == "MATH_EXPRESSIONS":
        return trailing_expression(text)
    stripped = text.strip()
    return stripped or None
