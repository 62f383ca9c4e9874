"""Final-answer extraction: the answer a completion commits to, not every value it mentions.

Order of preference: the last ``\\boxed{}`` / ``\\fbox{}``, "the final answer is ...",
"Answer: ...", "the answer is ...", the last bold span; then, per type, a last resort.
"""

from __future__ import annotations

import re

__all__ = ["anchored_answer", "extract_final_answer", "last_boxed"]

_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_ANCHORS = (
    re.compile(r"final answer\s*(?:is|:|=)\s*(.+)", re.IGNORECASE),
    re.compile(r"(?:^|\n)\s*\**answer\**\s*[:=]\s*(.+)", re.IGNORECASE),
    re.compile(r"\bthe (?:correct )?answer is\s*:?\s*(.+)", re.IGNORECASE),
    re.compile(r"\banswer is\s*:?\s*(.+)", re.IGNORECASE),
)
_BOLD = re.compile(r"\*\*([^*\n]{1,200})\*\*")
_SENTENCE_END = re.compile(r"(?<=[^\d\s])\.(?:\s|$)|\n")


def last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` / ``\\fbox{...}``, with nested braces."""
    starts = [m.end() for m in _BOX.finditer(text)]
    for start in reversed(starts):
        depth, i = 1, start
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            return text[start : i - 1].strip()
    return None


def _first_clause(span: str) -> str:
    """An anchored answer runs to the end of its sentence or line."""
    match = _SENTENCE_END.search(span)
    return (span[: match.start()] if match else span).strip().strip("*$ ").rstrip(".,;")


def anchored_answer(text: str) -> str | None:
    """The answer after an explicit marker (boxed, "final answer is", "Answer:", bold), or None."""
    boxed = last_boxed(text)
    if boxed is not None:
        return boxed
    for anchor in _ANCHORS:
        matches = list(anchor.finditer(text))
        if matches:
            clause = _first_clause(matches[-1].group(1))
            inner = anchored_answer(clause) if clause and clause != text else None
            if clause:
                return inner or last_boxed(clause) or clause
    bold = _BOLD.findall(text)
    return bold[-1].strip() if bold else None


def extract_final_answer(completion: str, answer_type: str | None = None) -> str | None:
    """The final answer a completion commits to, or None when it commits to none."""
    from adapter.rules import choice, number

    text = completion if isinstance(completion, str) else ""
    anchored = anchored_answer(text)
    kind = (answer_type or "").upper()
    if kind == "NUMBER":
        return number.final_number_text(text, anchored)
    if kind == "MULTIPLE_CHOICE":
        letters = choice.chosen_letters(text, "")
        return "".join(sorted(letters)) if letters else None
    if anchored:
        return anchored
    if kind == "MATH_EXPRESSIONS":
        return number.final_number_text(text, None)
    stripped = text.strip()
    return stripped or None
