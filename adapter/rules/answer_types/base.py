"""What every answer type gives: the grammar of its value, how it reads and compares a value, and
its judge hints (the judge's rubric for it).

A rule pays a completion only when its final statement parses whole in the shared statement
grammar joined to its type's ``value`` grammar, and the answer read from it is proven equal to the
reference (``adapter.rules.proof``). Each type is one module of this package with its grammar file
beside it (``number.py`` and ``number.lark``); ``adapter.rules.answer_types`` is their registry.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from pathlib import Path
from typing import Protocol

from adapter.rules.settings import RuleSettings
from adapter.rules.statement import Reading

__all__ = [
    "MINUS", "AnswerTypeGrammar", "CanonicalAnswer", "Equality", "Question", "grammar_file", "in_ascii_tex",
    "same_word", "words",
]  # fmt: skip

# The grammars' minus signs: the hyphen-minus and the minus sign (U+2212), one meaning.
MINUS = frozenset({"-", "\u2212"})

_ASKING = {("how", "many"), ("how", "much"), ("number", "of")}
# The ones that count: what they count is the unit ("how many apples ... in boxes" asks apples).
_COUNTING = {("how", "many"), ("number", "of")}
# Words between "how many" and what it counts ("how many more apples").
_COMPARING = frozenset({"more", "fewer", "less"})
# What makes a unit compound when it follows it ("km/h", "cm^2", "cm²", "cm³").
_COMPOUND = ("/", "^", "\u00b2", "\u00b3")
# What opens the part of an asking sentence that names what it asks for (``Question.says``).
_ASKS_FOR = frozenset({"what", "which", "find", "compute", "calculate", "determine", "evaluate"})
_COPULAS = frozenset({"is", "was", "are", "were", "will", "would"})
_NOT_IN_A_PHRASE = frozenset({"the", "a", "an", "s", "its", "their", "his", "her", "our", "your"}) | frozenset(
    {"final", "correct", "exact", "resulting"}
)  # the free qualifiers: statement.lark's QUALIFIER
_SENTENCE_ENDS = (". ", "? ", "! ", "\n")
# The words that join what a question asks for to more of it ("apples and oranges").
_JOINING = frozenset({"and", "or", "plus"})
# A subject that names no preposition is what is asked whatever qualifies it ("the area" for "the area
# of the garden", "the remainder" for "the remainder when 2^10 is divided by 7"); one that does must
# name all of it.
_PREPOSITIONS = frozenset({"of", "in", "for", "on", "at", "per", "between", "from", "to", "with", "by", "along",
                           "around", "across", "inside", "within", "over", "under"})  # fmt: skip
_QUALIFYING = _PREPOSITIONS | frozenset({"when", "if", "where", "that", "which", "who", "whose", "after", "before",
                                         "given", "as"})  # fmt: skip
# How a sentence that says only how to write the answer opens ("Express your answer as a fraction.").
_INSTRUCTING = frozenset({"express", "give", "write", "enter", "put", "present", "provide", "leave", "please"})
# The words an instruction may put between its verb and "answer" ("Please give your final answer").
_ADDRESSING = frozenset({"your", "the", "final", "an", "a", "us", "me"})
# The words straight before a letter whose value a question asks for ("what is x", "find x").
_ASKING_FOR_A_VALUE = frozenset({"is", "find", "for", "of", "compute", "determine", "evaluate"})
# What may follow the letter asked ("what is x?", "Solve for b: ...", "Find x if ..."): not a word or
# a sign that makes it part of an expression ("what is x doubled?", "what is $y + 10$?").
_AFTER_THE_ASKED = frozenset({"", "?", ",", ".", ":", ";", "if", "in", "when", "given", "where", "such", "so"})


def in_ascii_tex(text: str) -> str:
    """``text`` as math-verify reads it: the minus sign (U+2212) as "-", "\u03c0" as "\\pi", and
    the root sign over what the grammar puts under it ("\u221a13", "\u221ax", "\u221a(x+1)") as
    "\\sqrt{...}"."""
    text = text.replace("\u2212", "-").replace("\u03c0", "\\pi ")
    while (at := text.find("\u221a")) >= 0:
        end = at + 1
        if text[end : end + 1] == "(":
            depth = 0
            for end in range(at + 1, len(text)):
                depth += (text[end] == "(") - (text[end] == ")")
                if depth == 0:
                    break
            end += 1
        else:
            while end < len(text) and (text[end].isdigit() or (end == at + 1 and text[end].isalpha())):
                end += 1
        text = f"{text[:at]}\\sqrt{{{text[at + 1 : end]}}}{text[end:]}"
    return text


def words(text: str) -> list[str]:
    """The text's words and numbers, lower-cased."""
    return "".join(c.lower() if c.isascii() and c.isalnum() else " " for c in text).split()


def _tokens(text: str, punctuation: bool = False) -> list[str]:
    """The text's runs between spaces, punctuation ("?,.:;()") and TeX's delimiters ("$", "\\",
    braces), as written: "what is $x^2$?" has the token "x^2", "\\(x\\)" the token "x";
    ``punctuation``: "?,.:;" are tokens too."""
    kept = "?,.:;" if punctuation else ""
    return "".join(f" {c} " if c in kept else " " if c in "?,.:;()$\\{}" else c for c in text).split()


def _letters(text: str) -> set[str]:
    """The letters that name unknowns in ``text``: a single letter standing as a word (but "a" and
    "I"), and each single letter in a formula ("2a", "x^2", "x+y", "n!")."""
    found: set[str] = set()
    for token in _tokens(text):
        if token.isalpha():
            found |= {token} if len(token) == 1 and token not in ("a", "A", "I") else set()
            continue
        runs = "".join(char if char.isascii() and char.isalpha() else " " for char in token).split()
        found |= {run for run in runs if len(run) == 1}
    return found


def _mentions(prompt: str, letter: str) -> bool:
    """``letter`` stands in ``prompt``: a letter of its own ("a", "I" too), or one in its math
    outside command names ("$ABC$", "$\\int_0^1 dt$")."""
    if letter in _letters(prompt) or letter in _tokens(prompt):
        return True
    spans = prompt.replace("\\(", "$").replace("\\)", "$").split("$")[1::2]
    for math in spans:
        at = 0
        while at < len(math):
            if math[at] == "\\":  # a command's name is no letter of the question's
                at += 1
                while at < len(math) and math[at].isascii() and math[at].isalpha():
                    at += 1
                continue
            if math[at] == letter:
                return True
            at += 1
    return False


def _instructs(sentence: str) -> bool:
    """The sentence only says how to write the answer: it opens with "Express", "Give", "Put",
    ... and names the answer, with only such words before it ("Give your answer as a common
    fraction."; not "Please don't answer in minutes.")."""
    found = words(sentence)
    if not found or found[0] not in _INSTRUCTING or "answer" not in found:
        return False
    return all(word in _INSTRUCTING or word in _ADDRESSING for word in found[: found.index("answer")])


def _runs(text: str) -> list[tuple[str, int, int]]:
    """The text's runs of ASCII letters and digits, lower-cased, with where each starts and ends."""
    runs: list[tuple[str, int, int]] = []
    start = None
    for at, char in enumerate(f"{text} "):
        inside = char.isascii() and char.isalnum()
        if inside and start is None:
            start = at
        elif not inside and start is not None:
            runs.append((text[start:at].lower(), start, at))
            start = None
    return runs


def _asks_in(sentence: str, unit: tuple[str, ...]) -> bool:
    """``sentence`` asks for an answer in ``unit`` (``Question.allows_unit``)."""
    runs = _runs(sentence)
    pairs = [tuple(run for run, _, _ in runs[i : i + 2]) for i in range(len(runs))]
    counts = any(pair in _COUNTING for pair in pairs)
    one_in = sum(run == "in" for run, _, _ in runs) == 1  # "in hours, not in minutes" names no one unit
    for i, pair in enumerate(pairs):
        at = i + 2 if pair in _ASKING else i + 1 if pair[0] == "in" and one_in and not counts else None
        while at is not None and at < len(runs) and runs[at][0] in _COMPARING:
            at += 1
        if at is None or at + len(unit) > len(runs):
            continue
        said = runs[at : at + len(unit)]
        if not all(same_word(word, frozenset({run})) for word, (run, _, _) in zip(unit, said, strict=True)):
            continue
        between = [sentence[a[2] : b[1]] for a, b in itertools.pairwise(said)]
        after = sentence[said[-1][2] :].lstrip(" ")
        following = runs[at + len(unit)][0] if at + len(unit) < len(runs) else ""
        ends = pair in _ASKING or not after.lstrip(")*_").strip() or after.lstrip(")*_")[:1] in ".?!"
        if all(not gap.strip() for gap in between) and not after.startswith(_COMPOUND) and following != "per" and ends:
            return True
    return False


def same_word(word: str, among: frozenset[str]) -> bool:
    """``word`` is one of ``among``, in the singular or the plural."""
    return word in among or f"{word}s" in among or (word.endswith("s") and word[:-1] in among)


@dataclass(frozen=True)
class Question:
    """What an answer is read against: the prompt, the reference, the rule's settings."""

    prompt: str
    reference: str
    settings: RuleSettings

    @cached_property
    def words(self) -> frozenset[str]:
        """The prompt's words and numbers, lower-cased."""
        return frozenset(words(self.prompt))

    def allows_unit(self, unit: tuple[str, ...]) -> bool:
        """The question asks its answer in this unit, whole, in the sentence that asks or one that
        says how to write the answer: its words come right after "how many", "how much", "number
        of" (and "more", "fewer" or "less") or, where the sentence counts no "how many" or "number
        of", after "in"; and neither "per", "/" nor a power follows them ("42 days" for "how many
        days"; "50 km" answers no "in km/h", "120 feet" no "how many square feet", "12 liters" no
        "in liters per minute", "42 boxes" no "How many apples does he pack in boxes?", "42
        dozens" no "Eggs are sold in dozens. How many eggs ...?"); "in" only once in the sentence,
        and its unit ends the sentence ("42 feet" answers no "in meters (not in feet)?", "42
        hours" no "in hours or minutes", "in hours only if ...")."""
        return any(_asks_in(sentence, unit) for sentence in self.answer_sentences)

    @cached_property
    def answer_sentences(self) -> tuple[str, ...]:
        """The sentence that asks, and those that only say how to write the answer."""
        return (self.asking_sentence, *(s for s in self._sentences if _instructs(s) and s != self.asking_sentence))

    @cached_property
    def counted(self) -> frozenset[str]:
        """What a "how many" question counts: the word after it ("How many pens does ..."; "more" in
        "How many more apples than oranges", which no "number of" subject counts), or the words it
        joins ("apples and oranges": no one word counts them); empty when it asks no "how many"."""
        found = [*words(self.prompt), ""]
        return frozenset(
            " ".join(found[i + 2 : i + 5]) if found[i + 3] in _JOINING else found[i + 2]
            for i in range(len(found) - 3)
            if (found[i], found[i + 1]) == ("how", "many")
        )

    def asks_for(self, name: str) -> bool:
        """A chain may start with this name ("x = 42"): the prompt names no such letter and asks the
        value of none ("What is 6 times 7?", "y = 4x" for "Simplify 2x + 2x."), or the name is the
        one letter the asking sentence names and asks the value of ("If 2x + 1 = 25, what is x?",
        "Find w.", "Solve for b"). Where it names two ("If x + y =
        50 ..., what is x?"), asks a count or a sum ("How many integers n ...?", "the sum of the
        roots x"), an expression of it ("what is $x^2$?", "what is $y + 10$?", "what is x doubled?"), or names
        letters elsewhere only, a name is no proof of what the value is."""
        tokens = ["", *_tokens(self.asking_sentence, punctuation=True), ""]
        asked = {
            tokens[i]
            for i in range(2, len(tokens) - 1)
            if tokens[i - 1].lower() in _ASKING_FOR_A_VALUE
            and (tokens[i - 1].lower() != "of" or tokens[i - 2].lower() == "value")  # not "the product of P"
            and tokens[i + 1].lower() in _AFTER_THE_ASKED
        }
        if not _mentions(self.prompt, name[:1]) and not any(len(t) == 1 and t.isalpha() for t in asked):
            return True  # a name of its own, where no letter is asked ("y = 4x" for "Simplify 2x + 2x.")
        counts = "how many" in self.asking_sentence.lower()
        return _letters(self.asking_sentence) == {name} and name in asked and not counts

    @cached_property
    def asking_words(self) -> frozenset[str]:
        """The asking sentence's words and numbers, lower-cased."""
        return frozenset(words(self.asking_sentence))

    @cached_property
    def _asked_part(self) -> list[str]:
        """What the asking sentence asks for: its words after its first "what", "which", "find",
        "compute", "calculate", "determine" or "evaluate" (and a verb straight after it), without
        articles, pronouns, the free qualifiers and a name's "s"; empty when it opens with none."""
        found = words(self.asking_sentence)
        start = next((i + 1 for i, word in enumerate(found) if word in _ASKS_FOR), None)
        if start is None:
            return []
        if start < len(found) and found[start] in _COPULAS:
            start += 1
        return [word for word in found[start:] if word not in _NOT_IN_A_PHRASE]

    def says(self, phrase: tuple[str, ...]) -> bool:
        """What the asking sentence asks for is ``phrase``, up to articles and plurals: all of it,
        to the end of the sentence ("the area of the garden" for "What is the area of the garden?";
        not for "... of the garden path?" or "... of the garden in the park?"), or, for a phrase
        without a preposition, all up to a preposition or a clause ("the area" for "What is the area
        of the circle?", "the remainder" for "What is the remainder when 2^10 is divided by 7?").
        A clause after what is asked ("who wear glasses", "after a 20% discount", "if ...") may
        change it, so it is asked whole; "the area of the square" answers no "What is the perimeter
        of a square whose area is 16?" either."""
        asked = self._asked_part
        return (
            len(phrase) <= len(asked)
            and all(same_word(word, frozenset({asked[k]})) for k, word in enumerate(phrase))
            and (len(asked) == len(phrase) or (asked[len(phrase)] in _QUALIFYING and not _PREPOSITIONS & set(phrase)))
        )

    @cached_property
    def _sentences(self) -> list[str]:
        text = self.prompt.strip()
        for end in _SENTENCE_ENDS:
            text = text.replace(end, end[0] + "\0")
        return [s.strip() for s in text.split("\0") if s.strip()]

    @cached_property
    def asking_sentence(self) -> str:
        """The sentence that asks: the last one with a question mark, else the last one that does
        not only say how to write the answer ("Find the distance ... . Express your answer in
        simplest radical form."), else the last one."""
        sentences = self._sentences
        asking = [s for s in sentences if s.endswith("?")] or [s for s in sentences if not _instructs(s)]
        return (asking or sentences or [""])[-1]


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
