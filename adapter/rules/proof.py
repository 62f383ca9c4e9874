"""When a rule's verdict is proof: the canonical-answer grammar, and nothing else.

A rule says "correct" only when (docs/canonical-answers.md):

1. it reads the whole completion (at most ``max_completion_chars``), and the completion holds no
   invisible character (Unicode format characters: zero-width, bidirectional controls);
2. the final line is a statement in the shared grammar (``answer_types.statement``) whose value
   is in the answer type's own grammar (``answer_types.<type>``);
3. every other answer the completion states (boxes, markers, and for numbers and letters lines
   that are only a value) is that same answer;
4. the value is proven equal to the reference, and each link of a chain ("6 * 7 = 42") to it.

A value in the grammar proven different is a sure mismatch where the type's difference is proof
(numbers, letters). Everything else is "unsure": the cascade asks the judge, the fallback pays
the unsure reward. There is no list of wrong shapes to keep up to date: what is not written in
the grammar is not paid.
"""

from __future__ import annotations

import time
import unicodedata
from dataclasses import dataclass
from typing import Literal

from adapter.rules.answer_types import GRAMMARS, AnswerTypeGrammar, CanonicalAnswer, Equality, Question
from adapter.rules.answer_types.statement import final_statement, split_chain, stated_answers
from adapter.rules.settings import RuleSettings
from adapter.rules.symbolic import SymbolicTimeout, TooCostly

__all__ = ["Proof", "prove"]

Outcome = Literal["match", "mismatch", "unsure", "timeout", "too_costly"]
MAX_SHOWN_CHARS = 80
# A canonical value is short; a longer one is never read (and the grammars' patterns stay linear).
MAX_VALUE_CHARS = 2_000


@dataclass(frozen=True)
class Proof:
    """What the grammar proves: ``match`` and (for types whose difference is proof) ``mismatch``
    are ``proven``; anything else is the judge's to decide."""

    outcome: Outcome
    explanation: str
    extracted: str | None = None
    proven: bool = False


def _shown(text: str) -> str:
    return repr(text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS] + "...")


def _unsure(why: str, extracted: str | None = None) -> Proof:
    return Proof("unsure", f"unsure, for the judge: {why}", extracted)


def _time_left(deadline: float) -> float:
    """What is left of the symbolic checks' shared budget; raises ``SymbolicTimeout`` when none is."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise SymbolicTimeout("symbolic checks out of time")
    return left


def _invisible(text: str) -> bool:
    return not text.isascii() and any(unicodedata.category(char) == "Cf" for char in text)


def _canonical(grammar: AnswerTypeGrammar, text: str, question: Question) -> CanonicalAnswer | None:
    return grammar.canonical(text, question) if len(text) <= MAX_VALUE_CHARS else None


def _other_answer(
    before: str, answer: CanonicalAnswer, grammar: AnswerTypeGrammar, question: Question
) -> str | None:
    """An answer stated above the final line that is not ``answer``, as written, or None."""
    stated = stated_answers(before)
    for text in stated.answers:
        other = _canonical(grammar, text, question)
        if other is None or other.key != answer.key:
            return text
    for text, marked in stated.statements:
        if marked or grammar.bare_values_state_answers:
            other = _canonical(grammar, text, question)
            if other is not None and other.key != answer.key:
                return text
    return None


def _prove(completion: str, grammar: AnswerTypeGrammar, question: Question) -> Proof:
    settings = question.settings
    if len(completion) > settings.max_completion_chars:
        return _unsure(f"longer than the {settings.max_completion_chars:,} characters the rule reads")
    if _invisible(completion):
        return _unsure("holds invisible characters (zero-width or bidirectional controls)")
    statement = final_statement(completion)
    if statement is None:
        return _unsure("no final statement on the last line")
    whole = "=" in question.reference or not grammar.chains
    links = [statement.value] if whole else split_chain(statement.value)
    answer = _canonical(grammar, links[-1], question)
    in_grammar = all(
        len(link) <= MAX_VALUE_CHARS and grammar.link_in_grammar(link, question) for link in links[:-1]
    )
    if answer is None or not in_grammar:
        return _unsure(
            f"the final statement {_shown(statement.value)} is not a canonical {grammar.name} answer"
        )
    bare_in_text = not statement.marked and completion.strip() != completion[statement.start :].strip()
    if grammar.bare_value_is_whole_completion and bare_in_text:
        return _unsure("a bare text answer that is not the whole completion", answer.text)
    other = _other_answer(completion[: statement.start], answer, grammar, question)
    if other is not None:
        return _unsure(f"states another answer before the final one ({_shown(other)})", answer.text)
    deadline = time.monotonic() + settings.symbolic_timeout
    equality = grammar.compare(answer, question, _time_left(deadline))
    if equality is Equality.DIFFERENT:
        explanation = f"{_shown(answer.text)} differs from {_shown(question.reference)}"
        if grammar.mismatch_is_proof:
            return Proof("mismatch", explanation, answer.text, proven=True)
        return _unsure(explanation, answer.text)
    if equality is Equality.UNPROVEN:
        return _unsure(
            f"{_shown(answer.text)} is not proven equal to {_shown(question.reference)}", answer.text
        )
    for link in links[:-1]:
        if not grammar.link_holds(link, answer, question, _time_left(deadline)):
            return _unsure(
                f"the chain's link {_shown(link)} is not proven equal to {_shown(answer.text)}", answer.text
            )
    return Proof(
        "match", f"{_shown(answer.text)} equals {_shown(question.reference)}", answer.text, proven=True
    )


def prove(prompt: str, completion: str, reference: str, kind: str, settings: RuleSettings) -> Proof:
    """What the canonical grammar of ``kind`` proves about ``completion`` against ``reference``."""
    grammar = GRAMMARS[kind]
    try:
        return _prove(completion, grammar, Question(prompt=prompt, reference=reference, settings=settings))
    except TooCostly as err:
        return Proof("too_costly", str(err))
    except SymbolicTimeout:
        return Proof("timeout", f"symbolic checks took longer than {settings.symbolic_timeout:.2g} s")
