"""Reading eval rows: valid rows, malformed lines with their line numbers, --strict, --limit."""

import json

import pytest

from eval.dataset import EvalRow, MalformedInputError, RowProblem, load_rows, parse_line, parse_lines

GOOD = {"prompt": "p", "completion": "c", "answer": "a"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object, got list"),
        ('"just a string"', "expected a JSON object, got str"),
        (json.dumps({"prompt": "p", "answer": "a"}), "missing field(s): completion"),
        (json.dumps({"completion": "c"}), "missing field(s): prompt, answer"),
        (json.dumps({**GOOD, "prompt": {"x": 1}}), "prompt"),
        (json.dumps({**GOOD, "label": "yes"}), "label"),
        (json.dumps({**GOOD, "label": 2}), "label"),
        (json.dumps({**GOOD, "label": -0.5}), "label"),
        (json.dumps({**GOOD, "answer_type": ["NUMBER"]}), "answer_type"),
        (json.dumps({**GOOD, "answer_type": "NUMBERS"}), "answer_type: Value error, unknown answer_type 'NUMBERS' (did you mean 'NUMBER'?)"),
    ],
)
def test_malformed_lines_say_why(text, problem):
    parsed = parse_line(7, text)
    assert isinstance(parsed, RowProblem)
    assert parsed.line == 7
    assert problem in parsed.message


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({}, {"id": "line-3", "answer_type": None, "label": None}),
        (
            {"id": 17, "answer_type": " number ", "label": 1},
            {"id": "17", "answer_type": "NUMBER", "label": 1.0},
        ),
        ({"label": True}, {"label": 1.0}),
        ({"label": 0.25, "answer": 42}, {"label": 0.25, "answer": "42"}),
        ({"answer_type": ""}, {"answer_type": None}),
    ],
)
def test_valid_lines(extra, expected):
    parsed = parse_line(3, json.dumps({**GOOD, **extra}))
    assert isinstance(parsed, EvalRow)
    assert parsed.line == 3
    for key, value in expected.items():
        assert getattr(parsed, key) == value


def test_label_field_is_configurable():
    parsed = parse_line(1, json.dumps({**GOOD, "label": 0, "gold": 1}), label_field="gold")
    assert isinstance(parsed, EvalRow) and parsed.label == 1.0
    bad = parse_line(1, json.dumps({**GOOD, "gold": "x"}), label_field="gold")
    assert isinstance(bad, RowProblem) and "gold" in bad.message


def test_bad_rows_are_skipped_with_line_numbers():
    lines = [json.dumps({**GOOD, "id": "a"}), "", "{oops", json.dumps({**GOOD, "id": "a"}), json.dumps(GOOD)]
    loaded = parse_lines(lines)
    assert [r.id for r in loaded.rows] == ["a", "line-5"]
    assert [(p.line, p.message.split(":")[0]) for p in loaded.problems] == [
        (3, "not valid JSON"),
        (4, "duplicate id 'a'"),
    ]


def test_strict_stops_at_the_first_bad_row():
    with pytest.raises(MalformedInputError, match="line 2: not valid JSON"):
        parse_lines([json.dumps(GOOD), "{oops", "{oops again"], strict=True)


def test_limit_counts_valid_rows():
    lines = ["{oops", *(json.dumps({**GOOD, "id": str(i)}) for i in range(5))]
    loaded = parse_lines(lines, limit=2)
    assert [r.id for r in loaded.rows] == ["0", "1"]
    assert len(loaded.problems) == 1


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(MalformedInputError, match="cannot read data file"):
        load_rows(tmp_path / "absent.jsonl")


def test_bundled_sample_is_valid_and_covers_every_answer_type():
    from pathlib import Path

    import eval

    loaded = load_rows(Path(eval.__file__).parent / "data" / "sample.jsonl")
    assert loaded.problems == []
    assert len(loaded.rows) >= 120
    types = {r.answer_type for r in loaded.rows}
    assert types == {"NUMBER", "MATH_EXPRESSIONS", "MULTIPLE_CHOICE", "TEXT", None}
    assert all(r.label in (0.0, 1.0) for r in loaded.rows)
