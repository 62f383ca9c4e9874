"""TEXT: the reference itself, as the whole value of the final statement.

The grammar of X (docs/canonical-answers.md)::

    X := the reference, or one of the aliases it lists ("Paris | Paris, France"),
         with case, accents, spacing, punctuation and articles folded

Only the reference's own punctuation may appear ("Washington, D.C." allows "," and "."; "Paris?"
is a question, not "Paris"). A bare X (no marker, no box) must be the whole completion. A text
that is not the reference is no proof either way: the judge decides.
"""

from __future__ import annotations

import re

from adapter.rules.answer_types.base import CanonicalAnswer, Equality, Question, Unchained
from adapter.rules.text import normalise

__all__ = ["GRAMMAR", "TextGrammar", "aliases", "same_text"]

_ALIAS_SEPARATOR = re.compile(r"\s+\|\s+")
_MARKS = re.compile(r"[^\w\s]")


def aliases(reference: str) -> list[str]:
    """The spellings a reference lists ("Paris | Paris, France" lists two)."""
    return [alias for alias in _ALIAS_SEPARATOR.split(reference.strip()) if alias]


def same_text(written: str, reference: str) -> bool:
    """``written`` is ``reference`` folded (case, accents, spacing, punctuation, articles), and
    uses no punctuation the reference does not."""
    folded = normalise(written)
    if not folded or folded != normalise(reference):
        return False
    return set(_MARKS.findall(written)) <= set(_MARKS.findall(reference))


class TextGrammar(Unchained):
    """TEXT: see the module docstring."""

    name = "TEXT"
    bare_value_is_whole_completion = True
    bare_values_state_answers = False
    mismatch_is_proof = False
    format_gated = False
    needs_a_number = False
    judge_hints: str | None = None  # built in: judge_prompts/profiles/rubric/text.j2

    def extract(self, text: str, anchored: str | None) -> str | None:
        """The marked answer, else the whole completion."""
        return anchored or text.strip() or None

    def canonical(self, text: str, question: Question) -> CanonicalAnswer | None:
        """``text`` when it is the reference (or an alias), else None."""
        for alias in aliases(question.reference):
            if same_text(text.strip(), alias):
                return CanonicalAnswer(text=text.strip(), key=normalise(question.reference))
        return None

    def compare(self, answer: CanonicalAnswer, question: Question, timeout_s: float) -> Equality:
        """A canonical text is the reference by construction."""
        return Equality.EQUAL


GRAMMAR = TextGrammar()
