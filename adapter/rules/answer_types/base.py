"""What every answer type gives: the grammar of its value, how it reads and compares a value, and
its judge hints (the judge's rubric for it).

A rule pays a completion only when its final statement parses whole in the shared statement
grammar joined to its type's ``value`` grammar, and the answer read from it is proven equal to the
reference (``adapter.rules.proof``). Each type is one module of this package with its grammar file
beside it (``number.py`` and ``number.lark``); ``adapter.rules.answer_types`` is their registry.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Protocol

from adapter.rules.settings import RuleSettings
from adapter.rules.statement import Reading

__all__ = ["AnswerTypeGrammar", "CanonicalAnswer", "Equality", "Question", "grammar_file"]


@dataclass(frozen=True)
class Question:
    """What an answer is read against: the prompt, the reference, the rule's settings."""

    prompt: str
    reference: str
    settings: RuleSettings


@dataclass(frozen=True)
class CanonicalAnswer:
    """An answer read in its type's grammar: the text as written, a key that compares answers
    ("1/2" and "0.5" have one key; "B" and "(B) Mercury" too), and what the type needs to prove it
    (``detail``: a number's exact value and precision, a chain's links)."""

    text: str
    key: Hashable
    detail: object = None


class Equality(Enum):
    """What a type's proof found: equal, proven different, or no proof either way."""

    EQUAL = "equal"
    DIFFERENT = "different"
    UNPROVEN = "unproven"


def grammar_file(module_file: str) -> str:
    """The grammar file beside a type's module (``number.py`` -> ``number.lark``)."""
    return Path(module_file).with_suffix(".lark").read_text(encoding="utf-8")


class AnswerTypeGrammar(Protocol):
    """One answer type's part in the rule reward."""

    name: str
    # The type's grammar of a value (Lark EBNF defining ``value``), joined to statement.lark.
    value_grammar: str
    # An earlier line or sentence that is only a value of this type ("41" before a final "42") is
    # another stated answer; for expressions it is a step of the work.
    bare_values_state_answers: bool
    # A canonical answer proven different from the reference is a sure 0 (else: the judge's).
    mismatch_is_proof: bool
    # A completion with no final answer at all (empty, an answer-free opener, a spray of candidates)
    # is a sure 0 for this type, before any proof (``adapter.rules.answer_format``).
    format_gated: bool
    # Such a completion without a single digit or number word has no answer of this type.
    needs_a_number: bool
    # What the judge is told about answers of this type (its rubric, after "Rubric for <name>
    # answers:"): what to extract, what counts as equal, what is wrong. None only for the built-in
    # types, whose rubrics ship with the judge (judge_prompts/profiles/rubric/<name>.j2).
    judge_hints: str | None

    def extract(self, text: str, anchored: str | None) -> str | None:
        """The final answer ``text`` commits to, as a judge shown only that reads it (``anchored``:
        what a marker such as ``\\boxed{}`` or "the answer is" holds), or None."""
        ...

    def read(self, reading: Reading, question: Question) -> CanonicalAnswer | None:
        """The answer a parsed value states, or None where the type's allow-lists refuse it (a
        unit the question does not ask for, a letter the reference does not use, ...)."""
        ...

    def compare(self, answer: CanonicalAnswer, question: Question, timeout_s: float) -> Equality:
        """Is ``answer`` (with every link of its chain) the reference? (may raise
        ``SymbolicTimeout`` or ``TooCostly``)."""
        ...
