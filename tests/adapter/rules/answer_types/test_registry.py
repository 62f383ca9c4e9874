"""The answer-type registry: every type the wire accepts has one module here, which holds its
grammar and its judge hints (the four built-in types' rubrics ship with the judge), and every step
that differs by type asks the registry (no per-type branch elsewhere). Adding a type is one module."""

import ast
import textwrap
from pathlib import Path

import pytest
from pydantic import TypeAdapter

import judge_prompts
from adapter import JudgeRewardSystem
from adapter.http.models import AnswerType as WireAnswerType
from adapter.rules import extract_final_answer
from adapter.rules.answer_types import GRAMMARS, discover, known_answer_type, register
from judge_prompts import RUBRIC_DIR, RUBRICS, template_version
from judge_vllm.schemas import AnswerType

ROOT = Path(__file__).resolve().parents[4]
PACKAGE = ROOT / "adapter" / "rules" / "answer_types"
TYPE_NAMES = set(GRAMMARS)

# A whole answer type, as one module: its grammar ("yes" or "no") and its judge hints.
TOY_MODULE = '''
"""YES_NO, a toy type: "yes" or "no" (any case) as the whole value of the final statement."""

from adapter.rules.answer_types.base import CanonicalAnswer, Equality


class YesNoGrammar:
    name = "YES_NO"
    value_grammar = 'value: WORD\\nWORD: /(?i:yes|no)(?![A-Za-z])/'
    bare_values_state_answers = True
    mismatch_is_proof = True
    format_gated = False
    needs_a_number = False
    judge_hints = """- Extract the yes or no the response finally commits to (toy hint 7f3a).
- "Probably" or "it depends" is no answer."""

    def extract(self, text, anchored):
        return anchored or text.strip() or None

    def read(self, reading, question):
        return CanonicalAnswer(text=reading.text, key=reading.text.lower())

    def compare(self, answer, question, timeout_s):
        reference = question.reference.strip().lower()
        if reference not in ("yes", "no"):
            return Equality.UNPROVEN
        return Equality.EQUAL if reference == answer.key else Equality.DIFFERENT


GRAMMAR = YesNoGrammar()
'''


def test_the_built_in_types_come_first_and_every_type_has_one_grammar_and_one_judge_rubric():
    assert list(GRAMMARS)[: len(AnswerType)] == [t.value for t in AnswerType]
    assert set(GRAMMARS) == set(RUBRICS)
    assert all(grammar.name == name for name, grammar in GRAMMARS.items())
    for name, grammar in GRAMMARS.items():
        bundled = (RUBRIC_DIR / f"{RUBRICS[name]}.j2").is_file()
        assert bundled == (name in AnswerType.__members__) == (grammar.judge_hints is None), name


def test_every_module_with_a_grammar_is_registered_without_a_list():
    defined = {path.stem for path in PACKAGE.glob("*.py") if "\nGRAMMAR = " in path.read_text()}
    assert {type(g).__module__.rsplit(".", 1)[-1] for g in GRAMMARS.values()} == defined
    imports = [node for node in ast.walk(ast.parse((PACKAGE / "__init__.py").read_text()))
               if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("adapter.rules.answer_types")]  # fmt: skip
    assert [node.module for node in imports] == ["adapter.rules.answer_types.base"]  # the protocol only


@pytest.fixture
def toy_package(tmp_path, monkeypatch, answer_type_registries):
    """A package holding one module, the toy answer type YES_NO."""
    package = tmp_path / "toy_answer_types"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "yes_no.py").write_text(textwrap.dedent(TOY_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "toy_answer_types", raising=False)
    return "toy_answer_types"


def test_a_type_added_as_one_module_is_accepted_paid_by_its_rule_and_hinted_to_the_judge(
    toy_package, fake_judge, tmp_path
):
    before = template_version()
    (grammar,) = discover(toy_package)
    assert GRAMMARS["YES_NO"] is grammar and template_version() != before  # its hints key the cache
    assert known_answer_type(" yes_no ") == "YES_NO" == TypeAdapter(WireAnswerType).validate_python("Yes_No")
    # No start-up check: the test counts what the judge is shown; an unknown type is a row rewarded 0.
    config = {"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "cache"), "strategy": "cascade",
              "reward_timeout": 60.0, "max_retries": 1, "batch_wait": 0.01,  # a hang bound, not a timing
              "startup_check": "off", "invalid_rows": "zero"}  # fmt: skip
    with JudgeRewardSystem(config) as rs:
        paid, refused = (rs.reward("Is 7 prime?", c, "yes", answer_type="yes_no")
                         for c in ("7 has no divisor but 1 and 7.\nThe answer is **Yes**.", "The answer is no."))  # fmt: skip
        assert sum(fake_judge.judged_prompts.values()) == 0  # the rule decided both
        judged = rs.reward("Is 7 prime?", "Probably yes, I would say.", "yes", answer_type="YES_NO")
        unknown = rs.reward("Is 7 prime?", "The answer is yes.", "yes", answer_type="YES_NOO")
    assert [(r["source"], r["reward"]) for r in (paid, refused)] == [("rule", 1.0), ("rule", 0.0)]
    assert "'Yes' equals 'yes'" in paid["explanation"] and "'no' differs from 'yes'" in refused["explanation"]
    assert judged["source"] == "judge" and sum(fake_judge.judged_prompts.values()) == 1
    system, user = (m["content"] for m in fake_judge.last_body["messages"])
    assert f"Rubric for YES_NO answers:\n{grammar.judge_hints}\n\nOutput contract" in system
    assert "Grade it with the YES_NO rubric" in user
    assert unknown["reason"] == "invalid_input" and "(did you mean 'YES_NO'?)" in unknown["explanation"]
    assert "NUMBER, MATH_EXPRESSIONS, MULTIPLE_CHOICE, TEXT, YES_NO" in unknown["explanation"]


def test_a_type_without_hints_or_with_a_taken_name_is_refused(toy_package):
    (grammar,) = discover(toy_package)
    register(grammar)  # the same grammar again: nothing changes
    hintless = type(grammar)()
    hintless.name, hintless.judge_hints = "MAYBE", None
    with pytest.raises(ValueError, match="MAYBE has no judge_hints"):
        register(hintless)
    with pytest.raises(ValueError, match="YES_NO has two grammars"):
        register(type(grammar)())
    assert "MAYBE" not in GRAMMARS and "MAYBE" not in RUBRICS
    assert judge_prompts.rubric_for("MAYBE") == "default"


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
    """Adding a type is one module in adapter/rules/answer_types: a branch on "NUMBER" elsewhere
    would be one more place to change."""
    branching = [
        str(path.relative_to(ROOT))
        for path in (ROOT / package).rglob("*.py")
        if not path.is_relative_to(PACKAGE) and _compared_type_names(path)
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
