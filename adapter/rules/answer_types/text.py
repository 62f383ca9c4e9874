"""TEXT: the reference itself, as the whole value of the final statement (grammar: ``text.lark``).

A text is the answer only when it is written as the reference or an alias the reference lists
("Paris | Paris, France"), up to runs of spaces, a sentence's final period and Unicode's canonical
composition (NFC). A leading "the" counts too: "The Who" is not "Who", "The Scream" not "Scream"
("The Nile" for "Nile" is the judge's). Every other mark counts: "C++" is not "C", "B+" is not "B",
an accent is a letter of its own ("avô" is not "avó"), and so is case ("CO" is not "Co", "True" is
not "true"; "Water" for "water" is the judge's). A look-alike is another text. A bare text (no marker, box or tag) is an answer only as the whole completion or
under an answer header. Any other text is no proof either way: the judge decides.
"""

from __future__ import annotations

import unicodedata

from adapter.rules.answer_types.base import CanonicalAnswer, Equality, Question, grammar_file
from adapter.rules.statement import Reading

__all__ = ["GRAMMAR", "TextGrammar", "aliases", "fold", "same_text"]

_ALIAS_SEPARATOR = " | "


def fold(text: str) -> str:
    """``text`` in NFC without runs of spaces or a final period."""
    composed = unicodedata.normalize("NFC", text)
    return " ".join(composed.split()).removesuffix(".").rstrip()


def aliases(reference: str) -> list[str]:
    """The spellings a reference lists ("Paris | Paris, France" lists two)."""
    return [alias.strip() for alias in reference.strip().split(_ALIAS_SEPARATOR) if alias.strip()]


def same_text(written: str, reference: str) -> bool:
    """``written`` is ``reference``, folded (see the module docstring). A mark that combines with
    no letter into one ("P\u0336a\u0336r\u0336i\u0336s\u0336", struck through) makes another text."""
    if any(unicodedata.combining(char) for char in unicodedata.normalize("NFC", written)):
        return False
    folded = fold(written)
    return bool(folded) and folded == fold(reference)


class TextGrammar:
    """TEXT: see the module docstring."""

    name = "TEXT"
    value_grammar = grammar_file(__file__)
    bare_values_state_answers = False
    mismatch_is_proof = False
    format_gated = False
    needs_a_number = False
    judge_hints: str | None = None  # built in: judge_prompts/profiles/rubric/text.j2

    def extract(self, text: str, anchored: str | None) -> str | None:
        """The marked answer, else the whole completion."""
        return anchored or text.strip() or None

    def read(self, reading: Reading, question: Question) -> CanonicalAnswer | None:
        """The text when it is the reference (or an alias), else None."""
        if any(same_text(reading.text, alias) for alias in aliases(question.reference)):
            return CanonicalAnswer(text=reading.text.strip(), key=fold(question.reference))
        return None

    def compare(self, answer: CanonicalAnswer, question: Question, timeout_s: float) -> Equality:
        """A text read in the grammar is the reference by construction."""
        return Equality.EQUAL


GRAMMAR = TextGrammar()
