"""What every answer type gives: its canonical grammar and proof of equality (the rule reward),
and its judge hints (the judge's rubric for it).

A rule pays a completion only when its final statement holds an answer written in its type's
grammar and that answer is proven equal to the reference (``adapter.rules.proof``). Each type is
one module of this package; ``adapter.rules.answer_types`` is their registry.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from adapter.rules.settings import RuleSettings

__all__ = ["AnswerTypeGrammar", "CanonicalAnswer", "Equality", "Question", "Unchained"]


@dataclass(frozen=True)
class Question:
    """What an answer is read against: the prompt, the reference, the rule's settings."""

    prompt: str
    reference: str
    settings: RuleSettings


@dataclass(frozen=True)
class CanonicalAnswer:
    """An answer in its type's grammar: the text as written and a key that compares spellings
    ("1/2" and "0.5" have one key; "B" and "(B) Mercury" too)."""

    text: str
    key: Hashable


class Equality(Enum):
    """What a type's proof rule found: equal, proven different, or no proof either way."""

    EQUAL = "equal"
    DIFFERENT = "different"
    UNPROVEN = "unproven"


class AnswerTypeGrammar(Protocol):
    """One answer type's part in the rule reward."""

    name: str
    # An earlier line or sentence that is only a value of this type ("41" before a final "42") is
    # another stated answer; for expressions it is a step of the work.
    bare_values_state_answers: bool
    # A bare value (no marker, no box) is an answer only as the whole completion ("Paris", not
    # "Lyon is large.\nParis"): for text, which reasoning lines are too much like.
    bare_value_is_whole_completion: bool
    # "6 * 7 = 42": the final statement may be a chain whose every link is proven equal.
    chains: bool
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

    def canonical(self, text: str, question: Question) -> CanonicalAnswer | None:
        """``text`` (the whole value of a final statement) read in the grammar, or None."""
        ...

    def compare(self, answer: CanonicalAnswer, question: Question, timeout_s: float) -> Equality:
        """Is ``answer`` the reference? (may raise ``SymbolicTimeout`` or ``TooCostly``)."""
        ...

    def link_in_grammar(self, link: str, question: Question) -> bool:
        """Whether a chain's earlier ``link`` is written in the grammar (else the chain is no statement)."""
        ...

    def link_holds(self, link: str, answer: CanonicalAnswer, question: Question, timeout_s: float) -> bool:
        """Is a chain's earlier ``link`` (as written) proven equal to its final ``answer``?"""
        ...


class Unchained:
    """For types whose final statement is one value, never a chain ("A = B" is no letter)."""

    chains = False

    def link_in_grammar(self, link: str, question: Question) -> bool:
        """No link is in the grammar."""
        return False

    def link_holds(self, link: str, answer: CanonicalAnswer, question: Question, timeout_s: float) -> bool:
        """No link holds."""
        return False
