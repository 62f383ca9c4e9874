"""The answer types, one module each: the canonical grammar a rule pays, its proof of equality and
the hints the judge is given for it.

Adding a type is one module here (and its tests): a module whose ``GRAMMAR`` (a
``base.AnswerTypeGrammar``) names the type and holds its ``judge_hints``. The package's modules are
found when it is imported (no list to keep): each ``GRAMMAR`` is registered (``register``), which
puts the type in ``GRAMMARS`` (so the reward facade, the HTTP API and judge-eval accept its name:
``known_answer_type``) and gives its hints to the judge's prompts (``judge_prompts.register_rubric``).
The built-in types (``judge_vllm.schemas.AnswerType``) have ``judge_hints = None``: their rubrics
ship with the judge, which grades them without the adapter too. ``statement`` holds the grammar
every type shares (the final statement), ``arithmetic`` the exact evaluation of a stated chain.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from types import MappingProxyType

from adapter.rules.answer_types.base import AnswerTypeGrammar, CanonicalAnswer, Equality, Question
from judge_prompts import RUBRICS, register_rubric
from judge_vllm.schemas import AnswerType
from judge_vllm.schemas import known_answer_type as _known_name

__all__ = [
    "GRAMMARS",
    "AnswerTypeGrammar",
    "CanonicalAnswer",
    "Equality",
    "Question",
    "discover",
    "known_answer_type",
    "register",
]

_GRAMMARS: dict[str, AnswerTypeGrammar] = {}
GRAMMARS: Mapping[str, AnswerTypeGrammar] = MappingProxyType(_GRAMMARS)
"""Every answer type's grammar by name: the built-in types first (in ``AnswerType``'s order, which
error messages and metric labels keep), then the others by module name."""


def register(grammar: AnswerTypeGrammar) -> None:
    """Make ``grammar``'s type known: to the rules (``GRAMMARS``), to the names the wire accepts and
    to the judge (its hints become its rubric). A ``ValueError`` for a name taken by another
    grammar, for a type with neither hints nor a built-in rubric, or for hints a built-in type has."""
    taken = _GRAMMARS.get(grammar.name)
    if taken is not None and taken is not grammar:
        raise ValueError(
            f"answer type {grammar.name} has two grammars: {type(taken).__name__}, {type(grammar).__name__}"
        )
    if grammar.judge_hints is not None:
        register_rubric(grammar.name, grammar.judge_hints)
    elif grammar.name not in RUBRICS:
        raise ValueError(f"answer type {grammar.name} has no judge_hints (only built-in types ship a rubric)")
    _GRAMMARS[grammar.name] = grammar


def discover(package: str) -> list[AnswerTypeGrammar]:
    """Register the ``GRAMMAR`` of every module of ``package`` (built-in types first); the grammars
    found, in that order."""
    modules = [
        importlib.import_module(f"{package}.{m.name}")
        for m in pkgutil.iter_modules(importlib.import_module(package).__path__)
    ]
    grammars: list[AnswerTypeGrammar] = [m.GRAMMAR for m in modules if hasattr(m, "GRAMMAR")]
    built_in = [t.value for t in AnswerType]
    grammars.sort(key=lambda g: built_in.index(g.name) if g.name in built_in else len(built_in))
    for grammar in grammars:
        register(grammar)
    return grammars


def known_answer_type(value: object) -> str | None:
    """``value`` as the name of a type in ``GRAMMARS`` (case and surrounding spaces ignored), or
    None when absent or blank; any other value is a ``ValueError`` naming the closest one."""
    return _known_name(value, list(GRAMMARS))


discover(__name__)
