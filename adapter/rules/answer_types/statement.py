"""The final statement: the one place where a completion may state an answer a rule pays.

The grammar, shared by every answer type (docs/canonical-answers.md)::

    completion := any text, then the final statement: the last sentence of the last line
                  that is not blank (sentences end at ". ", "! ", "? " before more text), or its
                  last clause led by ", so" / ", thus" / ", therefore" / ", hence"
    statement  := [lead] [marker] value ["."]
    lead       := "So" | "Thus" | "Therefore" | "Hence", then an optional ","
    marker     := ["The"] ["final" | "correct"] "answer" ("is" | ":")  |  "It is" | "It's" | "####"
                  (case ignored; the marker may be bold: "**Final Answer:**"; "is" may take ":")
    value      := X, or X in wrappers, each at most once, nested in any order:
                  $X$  $$X$$  \\(X\\)  \\[X\\]  **X**  \\boxed{X}

X is the answer type's own grammar (or, for types that allow it, a chain "E = ... = X").
Nothing may follow the value; anything that does not fit is not a statement.

``stated_answers`` lists the other places where a completion states an answer before its final
statement: every box, the clause after every "answer" marker, and every earlier line or sentence
that is itself a statement. A rule pays only when all of them agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from adapter.rules.extract import boxes

__all__ = [
    "FinalStatement",
    "StatedAnswers",
    "final_statement",
    "split_chain",
    "stated_answers",
    "unwrapped",
    "value_of",
]

_LEAD = re.compile(r"(?:so|thus|therefore|hence)\s*,?\s+", re.IGNORECASE)
_MARKER = re.compile(
    r"(?:\*\*)?(?:the\s+)?(?:(?:final|correct)\s+)?answer\s*(?:is\b:?|:)(?:\*\*)?\s*|it\s+is\s+|it's\s+|####\s*",
    re.IGNORECASE,
)
# A marker anywhere in the text before the final line ("answer is" ends a word: "isn't" is no marker).
_MARKER_ANYWHERE = re.compile(r"\banswer\s*(?:is\b|:)(?:\*\*)?|^\s*####", re.IGNORECASE | re.MULTILINE)
_WRAPPERS = (
    ("$$", "$$"),
    ("$", "$"),
    ("\\(", "\\)"),
    ("\\[", "\\]"),
    ("**", "**"),
    ("\\boxed{", "}"),
)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=\S)")
# Where the final statement may also start: a clause led by a conclusion ("12 - 5 = 7, so the answer is 7").
_CONCLUSION_BREAK = re.compile(r",\s+(?=(?:so|thus|therefore|hence)\b)", re.IGNORECASE)
_BOLD_LINE = re.compile(r"\*\*(.+)\*\*")
# Where the clause after an earlier marker ends: its line, or a sentence's end.
_CLAUSE_END = re.compile(r"\n|\.(?:\s|$)|[;!?]")
MAX_CLAUSE_CHARS = 200


@dataclass(frozen=True)
class FinalStatement:
    """The final statement's value (without lead, marker and wrappers), where the statement
    starts, and whether the value was marked (a marker or a box) or stands bare."""

    value: str
    start: int
    marked: bool


def _closes_at_end(text: str, opening: str) -> bool:
    """Whether the brace that ``opening`` ends with closes at the very end of ``text``."""
    depth = 0
    for i in range(len(opening) - 1, len(text)):
        depth += (text[i] == "{") - (text[i] == "}")
        if depth == 0:
            return i == len(text) - 1
    return False


def unwrapped(value: str) -> tuple[str, bool]:
    """``value`` without its wrappers (each kind at most once), and whether one was a box."""
    used: set[str] = set()
    boxed = False
    peeled = True
    while peeled:
        peeled = False
        for opening, closing in _WRAPPERS:
            if opening in used or len(value) <= len(opening) + len(closing):
                continue
            if not (value.startswith(opening) and value.endswith(closing)):
                continue
            if closing == "}" and not _closes_at_end(value, opening):
                continue  # "\\boxed{41} \\boxed{42}" is two boxes, not one
            inner = value[len(opening) : -len(closing)].strip()
            if opening == "$" and "$" in inner:
                continue  # "$41$ or $42$" is two values
            used.add(opening)
            boxed = boxed or opening == "\\boxed{"
            value = inner
            peeled = True
    return value, boxed


def value_of(line: str) -> tuple[str, bool] | None:
    """The value a line states in the grammar (and whether it is marked), or None when the line
    holds no value ("" after its marker)."""
    text = line.strip()
    text = text[:-1].rstrip() if text.endswith(".") else text
    bold = _BOLD_LINE.fullmatch(text)  # "**The answer is 42.**"
    text = bold.group(1).strip() if bold else text
    text = text[:-1].rstrip() if text.endswith(".") else text
    lead = _LEAD.match(text)
    text = text[lead.end() :] if lead else text
    marker = _MARKER.match(text)
    text = text[marker.end() :] if marker else text
    text = text[:-1].rstrip() if text.endswith(".") else text
    value, boxed = unwrapped(text.strip())
    if not value:
        return None
    return value, bool(marker) or boxed


def _last_sentence_start(text: str, line_start: int) -> int:
    start = line_start
    for brk in _SENTENCE_BREAK.finditer(text, line_start):
        start = brk.end()
    for brk in _CONCLUSION_BREAK.finditer(text, start):
        start = brk.end()
    return start


def final_statement(completion: str) -> FinalStatement | None:
    """The completion's final statement, or None when it holds no value."""
    text = completion.rstrip()
    start = _last_sentence_start(text, text.rfind("\n") + 1)
    read = value_of(text[start:])
    if read is None:
        return None
    return FinalStatement(value=read[0], start=start, marked=read[1])


def split_chain(value: str) -> list[str]:
    """``value`` split at each "=" outside brackets, each link without its wrappers
    ("6 * 7 = 42" -> ["6 * 7", "42"]; "x = \\boxed{42}" -> ["x", "42"])."""
    links, depth, start = [], 0, 0
    for i, char in enumerate(value):
        depth += (char in "([{") - (char in ")]}")
        if char == "=" and depth == 0:
            links.append(value[start:i])
            start = i + 1
    return [unwrapped(link.strip())[0] for link in (*links, value[start:])]


@dataclass(frozen=True)
class StatedAnswers:
    """What the text before the final statement states. ``answers``: each box's content and the
    clause after each "answer" marker, answers whatever they hold. ``statements``: each line and
    sentence read as a statement (value, marked), answers when the value is in the type's grammar."""

    answers: list[str]
    statements: list[tuple[str, bool]]


def stated_answers(before: str) -> StatedAnswers:
    """The answers stated in ``before``, the text before the final statement."""
    answers = [content for _, _, content in boxes(before)]
    for marker in _MARKER_ANYWHERE.finditer(before):
        end = _CLAUSE_END.search(before, marker.end(), marker.end() + MAX_CLAUSE_CHARS)
        clause = before[marker.end() : end.start() if end else marker.end() + MAX_CLAUSE_CHARS]
        read = value_of(clause)
        answers.append(read[0] if read else clause.strip())
    sentences = [piece for line in before.splitlines() for piece in (line, *_SENTENCE_BREAK.split(line))]
    pieces = [
        clause.rstrip(", ") for piece in sentences for clause in (piece, *_CONCLUSION_BREAK.split(piece))
    ]
    statements = [read for read in map(value_of, pieces) if read is not None]
    return StatedAnswers(answers=answers, statements=statements)
