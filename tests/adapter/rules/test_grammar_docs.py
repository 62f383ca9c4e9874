"""docs/canonical-answers.md shows the grammar files as they are: the rule is the files."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOC = (ROOT / "docs" / "canonical-answers.md").read_text(encoding="utf-8")
GRAMMAR_FILES = sorted((ROOT / "adapter" / "rules").rglob("*.lark"))


def test_every_grammar_file_is_there():
    assert {p.name for p in GRAMMAR_FILES} == {
        "statement.lark", "number.lark", "multiple_choice.lark", "text.lark", "math_expressions.lark"
    }  # fmt: skip


@pytest.mark.parametrize("path", GRAMMAR_FILES, ids=lambda p: p.name)
def test_the_doc_shows_each_grammar_file_verbatim(path):
    shown = f"`{path.relative_to(ROOT).as_posix()}`\n\n```lark\n{path.read_text(encoding='utf-8')}```\n"
    assert shown in DOC, f"docs/canonical-answers.md does not show {path.name} as it is"
