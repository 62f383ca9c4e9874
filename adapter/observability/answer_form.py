"""The form a completion's final statement is written in, for counting (the shadow audit).

The rule's grammar (docs/canonical-answers.md) pays a final statement in a few forms; when the
judge disagrees with the rule, the form says which shape to look at. ``answer_form`` reads the
final paragraph (the text after the last blank line, at most its last ``TAIL_CHARS``) and names
the first of these that it holds:

| form | the final paragraph holds |
|---|---|
| ``tag`` | an ``<answer>`` element |
| ``box`` | a ``\\boxed{...}`` |
| ``marker`` | an answer marker: "answer is", "answer:", "####", "It is", "It's" (case ignored) |
| ``bare`` | none of them: a value alone, or a sentence |

It is a reading for statistics, never a proof: it does not parse, and a sentence that the
grammar would refuse is still given a form. The set of forms is closed (``ANSWER_FORMS``), so
the metrics' labels cannot grow.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["ANSWER_FORMS", "AnswerForm", "answer_form"]

AnswerForm = Literal["tag", "box", "marker", "bare"]
ANSWER_FORMS: tuple[AnswerForm, ...] = ("tag", "box", "marker", "bare")
# A final paragraph longer than this is read from its end only (a statement is short).
TAIL_CHARS = 500
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")
_MARKER = re.compile(r"answer\s*(?:\*\*\s*)?(?:is\b|:)|####|\bit(?: is|'s)\b", re.IGNORECASE)


def answer_form(completion: str) -> AnswerForm:
    """The form of ``completion``'s final statement (the table in the module's docstring)."""
    text = completion.rstrip()
    paragraphs = _BLANK_LINE.split(text[-4 * TAIL_CHARS :])
    final = paragraphs[-1][-TAIL_CHARS:] if paragraphs else ""
    if "<answer>" in final or "</answer>" in final:
        return "tag"
    if "\\boxed" in final:
        return "box"
    if _MARKER.search(final):
        return "marker"
    return "bare"
