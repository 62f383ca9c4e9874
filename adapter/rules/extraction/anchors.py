"""Final-answer spans: the answer a completion commits to, not every value it mentions.

Order of preference: the last ``\\boxed{}`` / ``\\fbox{}`` (boxes joined only by "and", "or"
or commas count as one answer: "\\boxed{3} or \\boxed{4}" is "3, 4"), "the final answer is ...",
"#### ...", "Answer: ...", "the answer is ...", the last bold span; without a marker, the claim
on the last line (``trailing_expression``). Per-type extraction builds on these
(``adapter.rules.final_answer``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "anchored_answer",
    "bold_spans",
    "boxes",
    "last_boxed",
    "trailing_expression",
]

_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
# What may stand between two boxes that together make one answer. The separators after the word
# are inside its group: two adjacent [\s$,;&]* would split a long run in quadratically many ways.
_GAP = r"(?:\\(?:q?quad|[,;!])|\\\\|[\s$,;&])*"  # spaces, LaTeX spacing and line breaks, commas
_BOX_JOINER = re.compile(_GAP + r"(?:(?:\\text\s*\{\s*(?:and|or)\s*\}|and|or)" + _GAP + ")?", re.IGNORECASE)
# Anchors in order of preference, each up to where its answer starts (the answer runs to the end
# of its sentence); within one, the last occurrence wins. "is" must end a word: "the answer isn't
# 42" is no commitment to 42.
_ANCHORS = (
    re.compile(r"final answer\*{0,2}[ \t]*(?:is\b|:|=)\s{0,20}\*{0,2}[ \t]*", re.IGNORECASE),
    re.compile(r"(?:^|\n)#+[ \t]*final answer[ \t]*:?[ \t]*\*{0,2}[ \t]*\n+[ \t]*", re.IGNORECASE),
    re.compile(r"(?:^|\n)####[ \t]*"),
    re.compile(
        r"(?:^|\n|[.!?][ \t]|\*\*)[ \t]*\*{0,2}answer\*{0,2}[ \t]*[:=]\s{0,20}\*{0,2}[ \t]*", re.IGNORECASE
    ),
    re.compile(
        r"\bthe (?:correct |right |final )?(?:answer|option|choice) (?:is|would be|will be)\b[ \t]*:?\s{0,20}",
        re.IGNORECASE,
    ),
    re.compile(r"\banswer is\b[ \t]*:?\s{0,20}", re.IGNORECASE),
)
# How far after a marker its answer is read: bounds the work on a text that repeats a marker.
MAX_MARKED_CHARS = 2_000
_BOLD = re.compile(r"\*\*([^*\n]{1,200})\*\*")
# A sentence ends at a line break, or at a period followed by the start of a new sentence.
_SENTENCE_END = re.compile(r"\n|\.(?=\s*$)|\.\s+(?=[A-Z(\\$*\[])|(?<=[^\d\s])\.\s")
MAX_TRAILING_CHARS = 120
MAX_NESTED_MARKERS = 2
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+")
_MATHY = re.compile(r"[\d=\\^]")
_CONNECTOR = re.compile(
    r"(?:^|[,:;]\s*|\s)(?:so|thus|therefore|hence|then|giving|gives|we get)[,:]?\s+", re.IGNORECASE
)
_HEDGE = re.compile(r"\b(?:or|either)\b", re.IGNORECASE)


def _brace_pairs(text: str) -> dict[int, int]:
    """Index of each ``{`` -> index of its matching ``}``, in one linear pass."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for i, ch in enumerate(text):
        if ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            pairs[stack.pop()] = i
    return pairs


def boxes(text: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of every complete outermost box."""
    if "\\boxed" not in text and "\\fbox" not in text:
        return []
    pairs = _brace_pairs(text)
    found: list[tuple[int, int, str]] = []
    for match in _BOX.finditer(text):
        open_at = match.end() - 1
        if found and match.start() < found[-1][1]:
            continue  # a box inside the previous box
        close_at = pairs.get(open_at)
        if close_at is not None:
            found.append((match.start(), close_at + 1, text[open_at + 1 : close_at].strip()))
    return found


def _final_group(boxes: list[tuple[int, int, str]], text: str) -> int:
    """How many of the last boxes are joined into one answer (by "and", "or", commas, spacing)."""
    joined = 1
    for (_, end, _), (start, _, _) in zip(reversed(boxes[:-1]), reversed(boxes[1:]), strict=True):
        if not _BOX_JOINER.fullmatch(text[end:start]):
            break
        joined += 1
    return joined


def _join(contents: Iterable[str]) -> str:
    group: list[str] = []
    for content in contents:
        if content not in group:
            group.append(content)
    return ", ".join(group)


def last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` / ``\\fbox{...}`` (nested braces), with the boxes
    joined to it by "and", "or", commas or spacing ("\\boxed{3} or \\boxed{4}" -> "3, 4")."""
    found = boxes(text)
    if not found:
        return None
    return _join(c for _, _, c in found[-_final_group(found, text) :])


def _first_clause(span: str) -> str:
    """An anchored answer runs to the end of its sentence or line."""
    match = _SENTENCE_END.search(span)
    return (span[: match.start()] if match else span).strip().strip("*$ ").rstrip(".,;")


def _marked_spans(text: str, anchor: re.Pattern[str]) -> list[str]:
    """The text after each occurrence of ``anchor``, to the end of its line (at most
    ``MAX_MARKED_CHARS``); occurrences with nothing after them on their line are skipped."""
    spans = []
    for match in anchor.finditer(text):
        line_end = text.find("\n", match.end(), match.end() + MAX_MARKED_CHARS)
        span = text[match.end() : line_end if line_end >= 0 else match.end() + MAX_MARKED_CHARS]
        if span.strip():
            spans.append(span)
    return spans


def _resolved(clause: str, depth: int) -> str:
    """A marked clause, or the answer a marker inside it points to ("Final Answer: the answer is 5")."""
    inner = anchored_answer(clause, depth + 1) if depth < MAX_NESTED_MARKERS else None
    return inner or clause


def anchored_answer(text: str, _depth: int = 0) -> str | None:
    """The answer after an explicit marker (boxed, "final answer is", "Answer:", bold), or None.
    A marker inside the marked span ("Final Answer: the answer is \\boxed{5}") is followed once."""
    boxed = last_boxed(text)
    if boxed is not None:
        return boxed
    for anchor in _ANCHORS:
        spans = _marked_spans(text, anchor)
        clause = _first_clause(spans[-1]) if spans else ""  # the last occurrence is the commitment
        if clause:
            return _resolved(clause, _depth)
    bold = bold_spans(text)
    return bold[-1] if bold else None


def bold_spans(text: str) -> list[str]:
    """The contents of the bold spans (``**...**``), in order, without ``$`` and a final period."""
    return [span for span in (b.strip().strip("$ ").rstrip(".") for b in _BOLD.findall(text)) if span]


def trailing_expression(text: str) -> str | None:
    """Without a marker: the claim in the last sentence with math in it on the last line. A hedged
    claim ("so x = 2 or x = 3") is kept whole, to be compared as a set; otherwise what follows its
    last "=" or " is "."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    sentences = [s for s in _SENTENCE_SPLIT.split(lines[-1]) if _MATHY.search(s)] or [lines[-1]]
    last = sentences[-1].strip().rstrip(".").strip()
    claim = _CONNECTOR.split(last)[-1].strip() or last
    if len(claim) > MAX_TRAILING_CHARS:
        return None
    if _HEDGE.search(claim):
        return claim
    separator = "=" if "=" in claim else " is "
    return claim.rsplit(separator, 1)[-1].strip().strip("$").strip() or None
