"""MULTIPLE_CHOICE: option letters, or one option's text exactly as the prompt gives it (grammar:
``multiple_choice.lark``).

Allow-lists: a letter among the prompt's options (A-J when it lists none); several letters only
for a several-letter reference, each once ("AA" is a battery size, "II" a numeral); a letter
alone only where no option's text is a letter ("(B) G") and, for "I", where the prompt numbers
nothing with Roman numerals ("I and III"); a letter beside a text only with that letter's own
option text; an option's text alone only when exactly one option has it (texts compared as TEXT
folds them), and never a number that could be an option's position ("3" among four options).
Equality: the same set of letters as the reference; a different set is a proven mismatch.
"""

from __future__ import annotations

from lark import Token

from adapter.rules.answer_types.base import CanonicalAnswer, Equality, Question, grammar_file
from adapter.rules.answer_types.text import fold, same_text
from adapter.rules.choice import chosen_letters, gold_letters, parse_options
from adapter.rules.statement import Reading

__all__ = ["GRAMMAR", "MultipleChoiceGrammar"]


def _tokens(reading: Reading, kind: str) -> list[str]:
    return [str(t) for t in reading.value.scan_values(lambda v: isinstance(v, Token) and v.type == kind)]


_OPTION_LETTERS = frozenset("ABCDEFGHIJ")


def _letters_mean_options(letters: set[str], question: Question, options: dict[str, str]) -> bool:
    """Letters written alone name options: none of them is a word of an option's text ("(B) G"
    among notes, "(A) Vitamin B"), and "I" is no Roman numeral of the prompt's."""
    texts = [text.split() for text in options.values()]
    if any(text in ([letter] for letter in _OPTION_LETTERS) for text in texts) or any(
        letter in text for text in texts for letter in letters
    ):
        return False  # "(A) A (B) G" among notes: "B" may be a note; "(A) Vitamin B": the vitamin
    words = "".join(char if char.isalnum() else " " for char in question.prompt).split()
    return "I" not in letters or "II" not in words


def _may_be_a_position(text: str, options: dict[str, str]) -> bool:
    """A whole number from 1 to the number of options: it may count the options ("the third")."""
    folded = fold(text)
    return folded.isdigit() and 1 <= int(folded) <= max(len(options), 4)


class MultipleChoiceGrammar:
    """MULTIPLE_CHOICE: see the module docstring."""

    name = "MULTIPLE_CHOICE"
    value_grammar = grammar_file(__file__)
    bare_values_state_answers = True
    mismatch_is_proof = True
    format_gated = True
    needs_a_number = False
    judge_hints: str | None = None  # built in: judge_prompts/profiles/rubric/multiple_choice.j2

    def extract(self, text: str, anchored: str | None) -> str | None:
        """The letters chosen, sorted ("AC"), or None."""
        letters = chosen_letters(text, "")
        return "".join(sorted(letters)) if letters else None

    def _letters(self, reading: Reading, question: Question, options: dict[str, str]) -> set[str] | None:
        form = reading.value.data
        written = "".join(_tokens(reading, "LETTER") + _tokens(reading, "LETTERS"))
        letters = set(written)
        if form == "letters":
            return letters if len(letters) == len(written) and _letters_mean_options(letters, question, options) else None
        texts = _tokens(reading, "OPTION_TEXT")
        if form == "option_text":
            if _may_be_a_position(texts[0], options) or set(fold(texts[0]).split()) & _OPTION_LETTERS:
                return None  # "4" may count the options; "B only" may name option B
            named = {letter for letter, option in options.items() if same_text(texts[0], option)}
            return named if len(named) == 1 else None
        (letter,) = letters  # letter_then_text, text_then_letter
        return {letter} if letter in options and same_text(texts[0], options[letter]) else None

    def read(self, reading: Reading, question: Question) -> CanonicalAnswer | None:
        """The letters a reading commits to, keyed as a set, or None."""
        options = parse_options(question.prompt)
        letters = self._letters(reading, question, options)
        if not letters or (options and not letters <= options.keys()):
            return None
        if len(letters) > 1 and len(gold_letters(question.reference)) < 2:
            return None  # several letters answer a several-letter question only
        return CanonicalAnswer(text="".join(sorted(letters)), key=frozenset(letters))

    def compare(self, answer: CanonicalAnswer, question: Question, timeout_s: float) -> Equality:
        """The same letters as the reference, else a proven mismatch."""
        gold = gold_letters(question.reference)
        if not gold:
            return Equality.UNPROVEN
        return Equality.EQUAL if answer.key == frozenset(gold) else Equality.DIFFERENT


GRAMMAR = MultipleChoiceGrammar()
