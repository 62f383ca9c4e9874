"""422 answers: pydantic errors as ``{field, message, type}`` without the input, the batch limit,
a group of more than one prompt or more members than ``group.max_members``, a missing reference
for a profile that needs one, and input the adapter refuses (``JudgeInputError``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import cast

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from adapter.http.models import JudgeItem
from adapter.settings import GroupSettings

__all__ = [
    "GROUP_KEYS",
    "check_batch_length",
    "check_group_size",
    "check_one_group",
    "check_references",
    "input_error_response",
    "validation_error_response",
    "validation_errors",
]

GROUP_KEYS = ("prompt", "answer")
"""What the members of one group share (``adapter.pipeline.inputs.group_requests`` checks the same)."""


def _field_path(loc: Sequence[object]) -> str:
    parts = list(loc[1:] if loc and loc[0] == "body" else loc)
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path or "body"


def validation_errors(errors: Iterable[Mapping[str, object]]) -> list[dict[str, str]]:
    """FastAPI/pydantic errors as ``{field, message, type}``, without echoing the input."""
    out = []
    for e in errors:
        loc = e.get("loc", ())
        path = _field_path(loc if isinstance(loc, Sequence) else ())
        field = "body" if e.get("type") == "json_invalid" else path
        out.append({"field": field, "message": str(e.get("msg", "invalid")), "type": str(e.get("type"))})
    return out


def check_batch_length(length: int, max_batch: int, field: str) -> None:
    """Raise a 422 naming ``field`` when a batch has more than ``max_batch`` items."""
    if length > max_batch:
        message = f"at most {max_batch} items per batch (max_batch), got {length}"
        raise RequestValidationError([{"loc": ("body", field), "msg": message, "type": "too_long"}])


def check_group_size(length: int, settings: GroupSettings | None, field: str) -> None:
    """Raise a 422 naming ``field`` when a group has more members than ``group.max_members``."""
    refused = settings.too_large(length) if settings else None
    if refused:
        raise RequestValidationError([{"loc": ("body", field), "msg": refused, "type": "too_long"}])


def check_one_group(items: Sequence[JudgeItem], field: str) -> None:
    """Raise a 422 naming the first item of ``field`` whose prompt or answer differs from the first
    item's: a group is the completions of one prompt."""
    for k, item in enumerate(items[1:], start=1):
        for key in GROUP_KEYS:
            if getattr(item, key) != getattr(items[0], key):
                message = (
                    f"another {key} than {field}[0]: a group is the completions of one prompt "
                    "(send one group per prompt)"
                )
                raise RequestValidationError(
                    [{"loc": ("body", field, k, key), "msg": message, "type": "group"}]
                )


def check_references(items: Sequence[JudgeItem], profile: str, field: str | None) -> None:
    """Raise a 422 naming the ``answer`` of the first item without one (absent or blank), for a
    judge ``profile`` that needs a reference; an item with a ``rubric`` needs none. ``field`` is
    the list the items came in (None: the body is the item). Python callers get reward 0, reason
    ``no_reference``, and one warning: an HTTP client gets the answer at once."""
    for k, item in enumerate(items):
        if item.rubric is None and not item.answer.strip():
            loc = ("body", "answer") if field is None else ("body", field, k, "answer")
            message = (
                f"required: profile {profile!r} judges against a reference answer (send answer, "
                "or a rubric)"
            )
            raise RequestValidationError([{"loc": loc, "msg": message, "type": "missing"}])


async def validation_error_response(request: Request, exc: Exception) -> JSONResponse:
    """The app's handler for ``RequestValidationError``: 422 with ``detail`` and ``errors``."""
    errors = validation_errors(cast(RequestValidationError, exc).errors())
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    return JSONResponse({"detail": detail, "errors": errors}, status_code=422)


async def input_error_response(request: Request, exc: Exception) -> JSONResponse:
    """The app's handler for ``JudgeInputError`` (input the adapter refuses, e.g. a listwise group
    larger than its letters): 422 like a validation error, on the whole body."""
    return await validation_error_response(
        request, RequestValidationError([{"loc": ("body",), "msg": str(exc), "type": "judge_input"}])
    )
