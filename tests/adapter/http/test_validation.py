"""The 422 format: the field named as a path, the input never echoed."""

import pytest
from fastapi.exceptions import RequestValidationError

from adapter.http.validation import check_batch_length, validation_errors


@pytest.mark.parametrize(
    ("error", "field"),
    [
        ({"loc": ("body", "completion"), "msg": "Field required", "type": "missing"}, "completion"),
        ({"loc": ("body", "requests", 2, "prompt"), "msg": "x", "type": "string_type"}, "requests[2].prompt"),
        ({"loc": ("body",), "msg": "x", "type": "model_attributes_type"}, "body"),
        ({"loc": ("body", 17), "msg": "JSON decode error", "type": "json_invalid"}, "body"),
        ({"loc": ("query", "limit"), "msg": "x", "type": "int_parsing"}, "query.limit"),
    ],
)
def test_validation_errors_name_the_field_and_never_echo_input(error, field):
    (out,) = validation_errors([{**error, "input": "SECRET-INPUT"}])
    assert out["field"] == field and out["message"] == error["msg"]
    assert "SECRET-INPUT" not in str(out)


def test_check_batch_length():
    check_batch_length(4, 4, "requests")
    with pytest.raises(RequestValidationError) as caught:
        check_batch_length(5, 4, "requests")
    assert validation_errors(caught.value.errors()) == [
        {"field": "requests", "message": "at most 4 items per batch (max_batch), got 5", "type": "too_long"}
    ]
