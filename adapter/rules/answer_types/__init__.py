"""The answer types, one module each: the canonical grammar a rule pays and its proof of equality.

``GRAMMARS`` maps each ``AnswerType`` value to its grammar (``base.AnswerTypeGrammar``); adding a
type is one module here and its tests. ``statement`` holds the grammar every type shares (the
final statement), ``arithmetic`` the exact evaluation of a stated chain.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from adapter.rules.answer_types import math_expressions, multiple_choice, number, text
from adapter.rules.answer_types.base import AnswerTypeGrammar, CanonicalAnswer, Equality, Question

__all__ = ["GRAMMARS", "AnswerTypeGrammar", "CanonicalAnswer", "Equality", "Question"]

GRAMMARS: Mapping[str, AnswerTypeGrammar] = MappingProxyType(
    {
        grammar.name: grammar
        for grammar in (number.GRAMMAR, multiple_choice.GRAMMAR, text.GRAMMAR, math_expressions.GRAMMAR)
    }
)
