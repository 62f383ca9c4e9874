"""The answer-type registry: every type the wire accepts has one grammar module here and one judge
rubric, and every step that differs by type asks the registry (no per-type branch elsewhere)."""

import ast
from pathlib import Path

import pytest

from adapter.rules import extract_final_answer
from adapter.rules.answer_types import GRAMMARS
from judge_prompts import RUBRIC_DIR, RUBRICS
from judge_vllm.schemas import AnswerType

ROOT = Path(__file__).resolve().parents[4]
TYPE_NAMES = {t.value for t in AnswerType}


def test_every_answer_type_has_one_grammar_and_one_judge_rubric():
    assert set(GRAMMARS) == TYPE_NAMES == set(RUBRICS)
    assert all(grammar.name == name for name, grammar in GRAMMARS.items())
    assert all((RUBRIC_DIR / f"{RUBRICS[name]}.j2").is_file() for name in TYPE_NAMES)


def _compared_type_names(path: Path) -> set[str]:
    """Answer-type names a comparison in ``path`` tests against (``kind == "NUMBER"``, ``in {...}``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            for part in ast.walk(node):
                if isinstance(part, ast.Constant) and part.value in TYPE_NAMES:
                    found.add(part.value)
    return found


@pytest.mark.parametrize("package", ["adapter", "eval"])
def test_no_module_outside_the_registry_branches_on_an_answer_type_by_name(package):
    """Adding a type is one module in adapter/rules/answer_types (plus its rubric): a branch on
    "NUMBER" elsewhere would be one more place to change."""
    registry = ROOT / "adapter" / "rules" / "answer_types"
    branching = [
        str(path.relative_to(ROOT))
        for path in (ROOT / package).rglob("*.py")
        if not path.is_relative_to(registry) and _compared_type_names(path)
    ]
    assert branching == []


@pytest.mark.parametrize(
    ("completion", "answer_type", "expected"),
    [
        ("First 3, then 4.\nThe answer is 12.", "NUMBER", "12"),
        ("B looks close, but the answer is (C).", "MULTIPLE_CHOICE", "C"),
        ("Expanding gives x^2 + 2x + 1", "MATH_EXPRESSIONS", "x^2 + 2x + 1"),
        ("The capital is \\boxed{Paris}.", "TEXT", "Paris"),
        ("  Paris  ", "SOMETHING_ELSE", "Paris"),
    ],
)
def test_the_final_answer_is_read_as_its_type_says(completion, answer_type, expected):
    assert extract_final_answer(completion, answer_type) == expected
