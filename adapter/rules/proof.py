"""When a rule's verdict is proof: the canonical-answer grammar, and nothing else.

A rule says "correct" only when (docs/canonical-answers.md):

1. it reads the whole completion (at most ``max_completion_chars``), and the completion holds no
   invisible character (Unicode format characters: zero-width, bidirectional controls);
2. its final statement, found by construction (``adapter.rules.layout``: the last block, what
   stands above it), parses whole in the statement grammar joined to its answer type's grammar
   (``adapter.rules.statement``), one way only, and the type reads an answer from it;
3. every other answer the completion states after its reasoning (boxes, "answer" markers, earlier
   statements, and for numbers and letters lines that are only a value) is that same answer;
4. the answer is proven equal to the reference, with every link of its chain.

A value in the grammar proven different is a sure mismatch where the type's difference is proof
(numbers, letters, expressions). Everything else is "unsure": the cascade asks the judge, the
fallback pays the unsure reward. There is no list of wrong shapes to keep up to date: what is not
written in the grammar is not paid.
"""

from __future__ import annotations

import time
import unicodedata
from dataclasses import dataclass
from typing import Literal

from adapter.rules.answer_types import GRAMMARS, AnswerTypeGrammar, CanonicalAnswer, Equality, Question
from adapter.rules.answer_types.base import same_word
from adapter.rules.layout import Block, answer_start, blocks, sentence_starts
from adapter.rules.settings import RuleSettings
from adapter.rules.statement import MAX_READINGS, MAX_STATEMENT_CHARS, Reading, is_header, readings
from adapter.rules.symbolic import SymbolicTimeout, TooCostly

__all__ = ["Proof", "prove"]

Outcome = Literal["match", "mismatch", "unsure", "timeout", "too_costly"]
MAX_SHOWN_CHARS = 80
# Where an earlier answer may be stated: after these (case ignored), up to the clause's end; "It
# is" is weak (prose says it too).
_MARKERS = (("answer is", False), ("answer:", False), ("####", False), ("it is", True), ("it's", True))
_CLAUSE_ENDS = ("\n", ". ", ", ", ";", "! ", "? ")
# The commands that define or redefine others in KaTeX and MathJax (and TeX's own primitives).
_TEX_DEFINITIONS = frozenset(
    {"def", "gdef", "edef", "xdef", "let", "futurelet", "global", "newcommand", "renewcommand",
     "providecommand", "DeclareMathOperator", "DeclareRobustCommand", "newenvironment",
     "renewenvironment", "catcode", "mathcode", "mathchardef", "chardef", "csname", "require"}
)  # fmt: skip
# Past this many places that may state an answer, the completion is not read (each is a parse).
MAX_PLACES = 100
MAX_CLAUSE_CHARS = 200
# An earlier line this short may be a bare value ("41" above a final "42"); a longer one states
# an answer only with a marker, a box or a tag.
MAX_BARE_LINE_CHARS = 64


@dataclass(frozen=True)
class Proof:
    """What the grammar proves: ``match`` and (for types whose difference is proof) ``mismatch``
    are ``proven``; anything else is the judge's to decide."""

    outcome: Outcome
    explanation: str
    extracted: str | None = None
    proven: bool = False


@dataclass(frozen=True)
class _Stated:
    """The final statement's answer and where the statement starts in the completion."""

    answer: CanonicalAnswer
    start: int


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


def _defines_tex(text: str) -> bool:
    """``text`` gives a TeX command a meaning of its own (``\\def\\boxed#1{...}``): what follows
    may not mean what the grammar reads (KaTeX's and MathJax's definition commands)."""
    at = text.find("\\")
    while at >= 0:
        end = at + 1
        while end < len(text) and text[end].isascii() and text[end].isalpha():
            end += 1
        if text[at + 1 : end] in _TEX_DEFINITIONS:
            return True
        at = text.find("\\", max(end, at + 1))
    return False


def _answers(
    found: list[Reading], grammar: AnswerTypeGrammar, question: Question, marked_ok: bool, bare_ok: bool
) -> list[CanonicalAnswer] | None:
    """The answers the allowed readings state (None: more readings than can be told apart)."""
    if len(found) > MAX_READINGS:
        return None
    allowed = [
        r for r in found if (marked_ok if r.marked else bare_ok) and _subject_asked(r, question)
    ]
    return [answer for r in allowed if (answer := grammar.read(r, question)) is not None]


def _subject_asked(reading: Reading, question: Question) -> bool:
    """The subject's words are the asking sentence's ("the perimeter" answers no "What is its
    area?", "Tom's age" no "What is Maria's age?"); a measure is the one the sentence names, in its
    words ("the area of the square" answers no "What is the perimeter of a square whose area is
    16?", "John's age" no "What is the age of John's father?"); and a count counts what "how many"
    asks ("the number of packs" answers no "How many pens ...?"), or what the sentence names."""
    if not all(same_word(word, question.asking_words) for word in reading.subject):
        return False
    if reading.counted is not None and question.counted:
        return same_word(reading.counted, question.counted)
    return not reading.phrase or question.says(reading.phrase)


def _starts_afresh(above: Block | None) -> bool:
    """What comes after ``above`` (the block above it, None at the top) starts afresh: nothing is
    above, or a sentence or a formula ends there and does not lead into what follows."""
    return above is None or above.ends_a_paragraph()


def _one(answers: list[CanonicalAnswer]) -> CanonicalAnswer | None:
    return answers[0] if len({a.key for a in answers}) == 1 else None


def _final_statement(
    completion: str, body_start: int, grammar: AnswerTypeGrammar, question: Question
) -> _Stated | str:
    """The final statement's answer, or why there is none."""
    found = blocks(completion[body_start:], body_start)
    filled = [i for i, block in enumerate(found) if not block.blank]
    if not filled:
        return "no final statement after the reasoning"
    final = found[filled[-1]]
    if final.code or final.list_item:
        return "the completion ends in a code block or a list item"
    above = [found[i] for i in filled[:-1] if not found[i].thematic_break]
    previous = above[-1] if above else None
    previous_afresh = _starts_afresh(above[-2] if len(above) > 1 else None)  # the line above starts afresh
    header_above = previous is not None and is_header(grammar.value_grammar, previous.text) and previous_afresh
    starts_afresh = header_above or _starts_afresh(previous)
    answers = _answers(
        readings(grammar.value_grammar, final.text), grammar, question,
        marked_ok=starts_afresh, bare_ok=previous is None or header_above,
    )  # fmt: skip
    if answers is None or len({a.key for a in answers}) > 1:
        return f"the final statement {_shown(final.text.strip())} reads more than one way"
    if answers:
        return _Stated(answers[0], final.start)
    if previous is not None and not previous.ends_a_paragraph() and previous_afresh:
        # The line above starts the statement the final block ends ("So, the area is:" then \[...\],
        # "Thus, the answer is" then \boxed{A}); the two parse whole as one, or state nothing.
        joined = f"{previous.text.strip()} {final.text.strip()}"
        answer = _one(_answers(readings(grammar.value_grammar, joined), grammar, question, True, False) or [])
        if answer is not None:
            return _Stated(answer, previous.start)
    if not final.element:
        for start, sentence in sentence_starts(final.text):
            tail = [
                r
                for r in readings(grammar.value_grammar, final.text[start:])
                if (sentence and not r.weak) or (r.led and r.marked)
            ]
            answer = _one(_answers(tail, grammar, question, marked_ok=True, bare_ok=False) or [])
            if answer is not None:
                return _Stated(answer, final.start + start)
    return f"the final statement {_shown(final.text.strip())} is not a canonical {grammar.name} answer"


def _clauses(before: str) -> list[tuple[str, bool]]:
    """The clause after each answer marker in ``before``, and whether the marker is a weak one
    ("It is": prose too, so its clause is another answer only where it reads as one)."""
    lowered = before.lower()
    clauses = []
    for marker, weak in _MARKERS:
        at = lowered.find(marker)
        while at >= 0:
            begin = at + len(marker)
            limit = begin + MAX_CLAUSE_CHARS
            ends = [e for e in (lowered.find(end, begin, limit) for end in _CLAUSE_ENDS) if e >= 0]
            clause = before[begin : min([*ends, limit])].strip(" :*\t")
            if any(char.isalnum() for char in clause):
                clauses.append((clause, weak))
            at = lowered.find(marker, begin)
    return clauses


def _boxes(before: str) -> list[str]:
    """Each ``\\boxed{...}`` in ``before``, whole."""
    found = []
    at = before.find("\\boxed{")
    while at >= 0:
        depth, end = 0, at + len("\\boxed")
        for end in range(at + len("\\boxed"), len(before)):
            depth += (before[end] == "{") - (before[end] == "}")
            if depth == 0:
                break
        found.append(before[at : end + 1])
        at = before.find("\\boxed{", end + 1)
    return found


def _may_state(block: Block, grammar: AnswerTypeGrammar) -> bool:
    """Whether an earlier block may be a statement (the rest are prose the grammar cannot read)."""
    text = block.text.strip()
    if block.code or not text or len(text) > MAX_STATEMENT_CHARS:
        return False
    lowered = text.lower()
    return (
        any(mark in lowered for mark, _ in _MARKERS)
        or "\\boxed" in lowered
        or "<answer>" in lowered
        or (
            grammar.bare_values_state_answers
            and len(text) <= MAX_BARE_LINE_CHARS
            and (not grammar.needs_a_number or any(char.isdigit() for char in text))  # no number, no value
        )
    )


@dataclass(frozen=True)
class _Said:
    """A place before the final statement that may state an answer: a box or a marker's clause
    (read as a value: ``slot``), or a whole block (read as a statement: ``start``)."""

    text: str
    start: Literal["slot", "start"]
    weak: bool = False


def _places(before: str, grammar: AnswerTypeGrammar) -> list[_Said]:
    said = [_Said(box, "slot") for box in _boxes(before)]
    said += [_Said(clause.removesuffix("."), "slot", weak) for clause, weak in _clauses(before)]
    said += [_Said(block.text, "start") for block in blocks(before) if _may_state(block, grammar)]
    return list(dict.fromkeys(said))


def _counted(reading: Reading, place: _Said, grammar: AnswerTypeGrammar) -> bool:
    """Whether a reading states an answer: prose ("It is in the south.") and steps of the work
    ("6 * 7 = 42", "The sum of the scores is 348.": a subject's value without a box) do not."""
    if place.start == "slot":
        return True
    if reading.form == "sentence" and not reading.boxed:
        return False
    return reading.marked or (grammar.bare_values_state_answers and reading.value.data != "chain")


def _other_answer(
    before: str, answer: CanonicalAnswer, grammar: AnswerTypeGrammar, question: Question
) -> str | None:
    """An answer stated before the final statement that is not ``answer``, as written, or None.
    A strong place (a box, "answer is", a marked line) that states no answer we read counts as
    another answer; a weak one ("It is ...") or a bare line only where it reads as a different one."""
    places = _places(before, grammar)
    if len(places) > MAX_PLACES:
        return f"{len(places)} places that may state an answer (more than {MAX_PLACES} are not read)"
    for place in places:
        found = [
            r
            for r in readings(grammar.value_grammar, place.text, start=place.start)
            if _counted(r, place, grammar)
        ]
        stated = [other for r in found if (other := grammar.read(r, question)) is not None]
        if any(other.key != answer.key for other in stated):
            return place.text.strip()
        strong = not place.weak if place.start == "slot" else any(r.marked and not r.weak for r in found)
        if strong and not stated:  # "The answer is about 41.": an answer, though not one we read
            return place.text.strip()
    return None


def _prove(completion: str, grammar: AnswerTypeGrammar, question: Question) -> Proof:
    settings = question.settings
    if len(completion) > settings.max_completion_chars:
        return _unsure(f"longer than the {settings.max_completion_chars:,} characters the rule reads")
    if _invisible(completion):
        return _unsure("holds invisible characters (zero-width or bidirectional controls)")
    if _defines_tex(completion):
        return _unsure("defines TeX commands of its own: its TeX may not mean what it renders")
    body_start = answer_start(completion)
    stated = _final_statement(completion, body_start, grammar, question)
    if isinstance(stated, str):
        return _unsure(stated)
    answer = stated.answer
    other = _other_answer(completion[body_start : stated.start], answer, grammar, question)
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
