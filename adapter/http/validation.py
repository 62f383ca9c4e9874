"""422 answers: pydantic errors as ``{field, message, type}`` without the input (an unknown field
with the closest known one, as the Python API says it), the batch limit, a group of more than one
prompt or more members than ``group.max_members``, a missing reference for a profile that needs
one, and input the adapter refuses (``JudgeInputError``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import cast, get_args

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from adapter.http.models import JudgeItem
from adapter.settings import GroupSettings
from judge_vllm.errors import did_you_mean

__all__ = [
    "GROUP_KEYS",
    "check_batch_length",
    "check_group_size",
    "check_one_group",
    "check_references",
    "input_error_response",
    "known_fields",
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


def _models_in(annotation: object) -> list[type[BaseModel]]:
    """The pydantic models a field's annotation holds (``JudgeItem``, ``list[JudgeItem] | None``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in get_args(annotation) for model in _models_in(arg)]


def known_fields(body: type[BaseModel] | None, loc: Sequence[object]) -> list[str]:
    """The fields allowed where ``loc``'s last part is (``body`` walked along it), or [] when
    ``loc`` leaves the models (a free-form mapping)."""
    model = body
    for part in loc[1 if loc and loc[0] == "body" else 0 : -1]:
        if isinstance(part, int) or model is None:
            continue  # a list's item: the same model
        field = model.model_fields.get(str(part))
        models = _models_in(field.annotation) if field is not None else []
        model = models[0] if models else None
    return list(model.model_fields) if model is not None else []


def validation_errors(
    errors: Iterable[Mapping[str, object]], body: type[BaseModel] | None = None
) -> list[dict[str, str]]:
    """FastAPI/pydantic errors as ``{field, message, type}``, without echoing the input; an unknown
    field (``anwser``) names the closest field of ``body``, the request's model, and the fields."""
    out = []
    for e in errors:
        loc = e.get("loc", ())
        loc = loc if isinstance(loc, Sequence) else ()
        path = _field_path(loc)
        field = "body" if e.get("type") == "json_invalid" else path
        message = str(e.get("msg", "invalid"))
        allowed = known_fields(body, loc) if e.get("type") == "extra_forbidden" and loc else []
        if allowed:
            message += f"{did_you_mean(str(loc[-1]), allowed)}; the fields are {', '.join(allowed)}"
        out.append({"field": field, "message": message, "type": str(e.get("type"))})
    return out


def _body_model(request: Request) -> type[BaseModel] | None:
    """The model of the matched route's body (FastAPI's ``body_field``), when it has one."""
    body_field = getattr(request.scope.get("route"), "body_field", None)
    models = _models_in(getattr(getattr(body_field, "field_info", None), "annotation", None))
    return models[0] if models else None


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
    errors = validation_errors(cast(RequestValidationError, exc).errors(), _body_model(request))
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    return JSONResponse({"detail": detail, "errors": errors}, status_code=422)


async def input_error_response(request: Request, exc: Exception) -> JSONResponse:
    """The app's handler for ``JudgeInputError`` (input the adapter refuses, e.g. a listwise group
    larger than its letters): 422 like a validation error, on the whole body."""
    return await validation_error_response(
        request, RequestValidationError([{"loc": ("body",), "msg": str(exc), "type": "judge_input"}])
    )
