"""MULTIPLE_CHOICE: option letters, or one option's text exactly as the prompt gives it.

The grammar of X (docs/canonical-answers.md)::

    X       := letters | letter option | option "(" L ")" | option
    letters := letter | L ("," L)* [("," | "and") L] | LL...   (several only for several-letter references)
    letter  := L | "(" L ")" | L ")" | "option" L | "option (" L ")"
    L       := an uppercase letter among the prompt's options (A-J when it lists none)
    option  := the text of one of the prompt's options (case, accents, punctuation and articles
               folded); beside a letter it must be that letter's text

Equality: the same set of letters as the reference; a different set is a proven mismatch.
"""

from __future__ import annotations

import re

from adapter.rules.answer_types.base import CanonicalAnswer, Equality, Question, Unchained
from adapter.rules.answer_types.text import same_text
from adapter.rules.choice import chosen_letters, gold_letters, parse_options

__all__ = ["GRAMMAR", "MultipleChoiceGrammar"]

_LETTER = r"(?:[Oo]ption\s+)?(?:\(\s*([A-J])\s*\)|([A-J])\)?)"
_ONE = re.compile(_LETTER)
_SEVERAL = re.compile(r"([A-J])(?:\s*,\s*([A-J]))*(?:\s*,?\s*(?:and|,)\s*([A-J]))|([A-J]{2,10})")
_LETTER_THEN_TEXT = re.compile(r"(?:\(\s*([A-J])\s*\)|([A-J])[).:])\s*(.+)")
_TEXT_THEN_LETTER = re.compile(r"(.+?)\s*\(\s*([A-J])\s*\)")


def _letter(match: re.Match[str]) -> str:
    return next(group for group in match.groups() if group)


class MultipleChoiceGrammar(Unchained):
    """MULTIPLE_CHOICE: see the module docstring."""

    name = "MULTIPLE_CHOICE"
    bare_value_is_whole_completion = False
    bare_values_state_answers = True
    mismatch_is_proof = True
    format_gated = True
    needs_a_number = False
    judge_hints: str | None = None  # built in: judge_prompts/profiles/rubric/multiple_choice.j2

    def extract(self, text: str, anchored: str | None) -> str | None:
        """The letters chosen, sorted ("AC"), or None."""
        letters = chosen_letters(text, "")
        return "".join(sorted(letters)) if letters else None

    def canonical(self, text: str, question: Question) -> CanonicalAnswer | None:
        """The letters ``text`` commits to in the grammar, keyed as a set, or None."""
        text = text.strip()
        options = parse_options(question.prompt)
        letters = self._letters(text, options)
        if letters is None or (options and not letters <= options.keys()):
            return None
        if len(letters) > 1 and len(gold_letters(question.reference)) < 2:
            return None  # several letters answer a several-letter question only
        return CanonicalAnswer(text="".join(sorted(letters)), key=frozenset(letters))

    def _letters(self, text: str, options: dict[str, str]) -> set[str] | None:
        one = _ONE.fullmatch(text)
        if one:
            return {_letter(one)}
        several = _SEVERAL.fullmatch(text)
        if several and text.isascii():
            return set(re.findall(r"[A-J]", text))
        beside = _LETTER_THEN_TEXT.fullmatch(text) or _TEXT_THEN_LETTER.fullmatch(text)
        if beside:
            groups = [g for g in beside.groups() if g]
            letter, option = (
                (groups[0], groups[1]) if beside.re is _LETTER_THEN_TEXT else (groups[1], groups[0])
            )
            return {letter} if letter in options and same_text(option, options[letter]) else None
        named = {letter for letter, option in options.items() if same_text(text, option)}
        return named if len(named) == 1 else None

    def compare(self, answer: CanonicalAnswer, question: Question, timeout_s: float) -> Equality:
        """The same letters as the reference, else a proven mismatch."""
        gold = gold_letters(question.reference)
        if not gold:
            return Equality.UNPROVEN
        return Equality.EQUAL if answer.key == frozenset(gold) else Equality.DIFFERENT


GRAMMAR = MultipleChoiceGrammar()
