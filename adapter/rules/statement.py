"""Reading a final statement with the grammar files: every way the text parses, never a guess.

``statement.lark`` (the statement every answer type shares) joined to the type's own
``answer_types/<type>.lark`` (its ``value``) is one Earley grammar. A text is read by that grammar
whole: ``readings`` lists each way it parses (Lark's explicit ambiguity, unfolded), each as a
``Reading``: the statement's form, whether a box holds its value, and the value's parse tree. The
answer type reads each value (``AnswerTypeGrammar.read``); a statement whose readings give two
different answers is ambiguous, and proves nothing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal, cast

from lark import Lark, Token, Tree
from lark.exceptions import LarkError

__all__ = [
    "MAX_READINGS",
    "MAX_STATEMENT_CHARS",
    "STATEMENT_GRAMMAR",
    "Form",
    "Reading",
    "is_header",
    "parser_for",
    "readings",
    "span",
    "unwrap",
]

STATEMENT_GRAMMAR = (Path(__file__).parent / "statement.lark").read_text(encoding="utf-8")
# A final statement is short; a longer text is not read (Earley's work grows with its cube).
MAX_STATEMENT_CHARS = 400
# More readings than this and the text is too ambiguous to prove anything.
MAX_READINGS = 32
Form = Literal["marked", "sentence", "tagged", "bare"]
_WRAPPERS = frozenset({"slot", "box"})
# The subject's words the question must hold (statement.lark: ``subject``).
_QUESTIONS_WORDS = frozenset({"POSSESSIVE", "ASKED_QUALIFIER", "MEASURE", "SUBJECT_WORD"})
_ARTICLES = frozenset({"the", "a", "an"})
# The quantities that name what they are ("the sum", not "the answer", "the value of x").
_COUNTS = frozenset({"number", "sum", "count"})


@dataclass(frozen=True)
class Reading:
    """One way a statement parses: its form ("bare": no marker, box or tag), whether a box holds
    the value, the value's tree (the type's ``value`` rule, under its alias), its text, the text
    parsed (``span`` reads a node's text from it), whether its only marker is "It is" (weak:
    "It is in the south." above a final answer is prose, not another answer), whether a lead
    word ("So", "Thus") opens it, the words of its subject that must be the question's ("the
    area of the garden is \\boxed{12}": area, garden; a name's, a qualifier such as "original"),
    the subject as the asking sentence must say it, in order, where it names a measure or a
    count ("area of garden", "maria age", "number of packs"; ``Question.says``), and what a
    "number of" subject counts ("the number of packs is": packs)."""

    form: Form
    boxed: bool
    value: Tree[Token]
    text: str
    source: str
    weak: bool = False
    led: bool = False
    subject: tuple[str, ...] = ()
    phrase: tuple[str, ...] = ()
    counted: str | None = None

    @property
    def marked(self) -> bool:
        """A marker, a tag or a box says this is the answer."""
        return self.form != "bare" or self.boxed

    @property
    def opens(self) -> bool:
        """Its marker or tag opens a new statement, whatever the line above says ("The answer is",
        "####", "<answer>"; not "It is")."""
        return self.form in ("marked", "tagged") and not self.weak


@lru_cache(maxsize=32)
def parser_for(value_grammar: str) -> Lark:
    """The Earley parser of the shared statement joined to one type's ``value`` grammar."""
    return Lark(
        STATEMENT_GRAMMAR + "\n" + value_grammar,
        start=["start", "header", "slot"],
        parser="earley",
        lexer="dynamic",
        ambiguity="explicit",
        keep_all_tokens=True,  # a node's text runs from its first token to its last, brackets included
    )


def _unfold(node: Tree[Token] | Token) -> list[Tree[Token] | Token]:
    """Every tree ``node`` stands for, with each ambiguity chosen one way (at most MAX_READINGS + 1)."""
    if not isinstance(node, Tree):
        return [node]
    if node.data == "_ambig":
        return list(
            itertools.islice(itertools.chain.from_iterable(map(_unfold, node.children)), MAX_READINGS + 1)
        )
    options = [_unfold(child) for child in node.children]
    if all(len(option) == 1 for option in options):
        return [node]
    products = itertools.islice(itertools.product(*options), MAX_READINGS + 1)
    return [Tree(node.data, list(children), node.meta) for children in products]


def span(node: Tree[Token] | Token, text: str) -> str:
    """The text ``node`` was read from."""
    if isinstance(node, Token):
        return str(node)
    tokens = list(node.scan_values(lambda value: isinstance(value, Token)))
    if not tokens:
        return ""
    return text[min(t.start_pos or 0 for t in tokens) : max(t.end_pos or 0 for t in tokens)]


def unwrap(slot: Tree[Token]) -> tuple[Tree[Token], bool]:
    """The value inside a slot's wrappers, and whether one of them is a box."""
    boxed = False
    node = slot
    while isinstance(node, Tree) and node.data in _WRAPPERS:
        boxed = boxed or node.data == "box"
        inner = [child for child in node.children if isinstance(child, Tree)]
        node = inner[-1]
    return node, boxed


def _reading(statement: Tree[Token], text: str) -> Reading:
    form: Form = statement.data  # type: ignore[assignment]  # the statement's aliases are its forms
    slot = next(c for c in reversed(statement.children) if isinstance(c, Tree) and c.data in _WRAPPERS)
    value, boxed = unwrap(slot)
    markers = next((c for c in statement.children if isinstance(c, Tree) and c.data == "markers"), None)
    weak = markers is not None and all(
        t.type == "IT_IS" for t in markers.scan_values(lambda v: isinstance(v, Token))
    )
    led = any(isinstance(c, Tree) and c.data == "lead" for c in statement.children)
    subject_tree = next((c for c in statement.children if isinstance(c, Tree) and c.data == "subject"), None)
    said = [] if subject_tree is None else list(subject_tree.scan_values(lambda v: isinstance(v, Token)))
    subject = tuple(
        str(t).lower().removesuffix("'s") for t in said if t.type in _QUESTIONS_WORDS
    )
    phrase = _phrase(said)
    counted = next(
        (str(said[i + 2]).lower() for i in range(len(said) - 2)
         if said[i].type == "QUANTITY" and said[i + 1] == "of" and said[i + 2].type == "SUBJECT_WORD"),
        None,
    )  # fmt: skip
    return Reading(form=form, boxed=boxed, value=value, text=span(value, text),
                   source=text, weak=weak and not boxed, led=led, subject=subject, phrase=phrase,
                   counted=counted)  # fmt: skip


def _phrase(said: list[Token]) -> tuple[str, ...]:
    """A subject that names a measure, a count or a sum ("the area of the garden", "Maria's age",
    "the number of packs", "the sum of the roots"), as the asking sentence must say it: its words from the name's or the
    measure's on, without articles and the free qualifiers ("total"); empty for any other subject
    ("the answer", "the value of x")."""
    heads = [t for t in said if t.type in ("POSSESSIVE", "ASKED_QUALIFIER", "MEASURE", "QUANTITY")]
    # the possessive comes first: "Maria's age" reads "maria age", as "What is Maria's age?" does
    if not heads or not any(t.type == "MEASURE" or str(t).lower() in _COUNTS for t in heads):
        return ()
    start = said.index(heads[0])
    return tuple(
        str(t).lower().removesuffix("'s") for t in said[start:]
        if t.type != "QUALIFIER" and str(t).lower() not in _ARTICLES
    )  # fmt: skip


def readings(value_grammar: str, text: str, start: str = "start") -> list[Reading]:
    """Every reading of ``text`` as a whole statement (``start``) or a value in its wrappers
    (``slot``); empty when it does not parse or is too long, and more than MAX_READINGS when it is
    too ambiguous to tell. The same text is parsed once (a group's completions repeat their
    final lines)."""
    if len(text) > MAX_STATEMENT_CHARS or not text.strip():
        return []
    return list(_readings(value_grammar, text, start))


@lru_cache(maxsize=4096)
def _readings(value_grammar: str, text: str, start: str) -> tuple[Reading, ...]:
    try:
        tree = parser_for(value_grammar).parse(text, start=start)
    except LarkError:
        return ()
    found = []
    for alternative in _unfold(tree):
        alternative = cast("Tree[Token]", alternative)  # a parse is a tree
        if start == "slot":
            value, boxed = unwrap(alternative)
            found.append(Reading(form="bare", boxed=boxed, value=value, text=span(value, text), source=text))
        else:
            statement = next(c for c in alternative.children if isinstance(c, Tree))
            found.append(_reading(statement, text))
    return tuple(found)


def is_header(value_grammar: str, line: str) -> bool:
    """Whether ``line`` is an answer header ("**Final Answer**", "### Final Answer:")."""
    if len(line) > MAX_STATEMENT_CHARS:
        return False
    try:
        parser_for(value_grammar).parse(line, start="header")
    except LarkError:
        return False
    return True
