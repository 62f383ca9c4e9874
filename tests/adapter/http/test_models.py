"""The wire models: what a request may hold, checked before anything is scored."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from adapter.http.models import BatchJudgeRequest, JudgeItem

FIELDS = {"prompt": "What is 2+2?", "completion": "The answer is 4.", "answer": "4"}


@pytest.mark.parametrize("field", ["prompt", "completion", "answer", "answer_type", "request_id"])
@pytest.mark.parametrize("surrogate", ["\ud800", "\udfff", "\ude00"])
def test_a_lone_surrogate_is_invalid_text_naming_the_field(field, surrogate):
    with pytest.raises(ValidationError) as caught:
        JudgeItem.model_validate({**FIELDS, field: f"The answer is 4 {surrogate}"})
    (error,) = caught.value.errors()
    assert error["loc"] == (field,) and error["type"] == "lone_surrogate"
    assert f"U+{ord(surrogate):04X}" in error["msg"] and "at character 16" in error["msg"]


def test_a_lone_surrogate_in_a_batch_item_names_its_index():
    with pytest.raises(ValidationError) as caught:
        BatchJudgeRequest.model_validate({"requests": [FIELDS, {**FIELDS, "completion": "4 \ud800"}]})
    assert [e["loc"] for e in caught.value.errors()] == [("requests", 1, "completion")]


@pytest.mark.parametrize("text", ["It is 4 \U0001f600", "€ 4", "\u0000 4", "4 \ufffd", ""])
def test_any_unicode_scalar_value_is_text(text):
    assert JudgeItem.model_validate({**FIELDS, "completion": text}).completion == text


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("answer_type", "X" * 65, "String should have at most 64 characters"),
        ("request_id", "X" * 257, "String should have at most 256 characters"),
        ("prompt", 5, "Input should be a valid string"),
    ],
)
def test_limits_and_types(field, value, message):
    with pytest.raises(ValidationError) as caught:
        JudgeItem.model_validate({**FIELDS, field: value})
    assert [(e["loc"], e["msg"]) for e in caught.value.errors()] == [((field,), message)]


@pytest.mark.parametrize(("answer", "text"), [(4, "4"), (2.5, "2.5"), (None, "")])
def test_numbers_and_null_are_answers(answer, text):
    assert JudgeItem.model_validate({**FIELDS, "answer": answer}).answer == text
