"""422 answers: pydantic errors as ``{field, message, type}`` without the input, and the batch limit."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

__all__ = ["check_batch_length", "validation_error_response", "validation_errors"]


def _field_path(loc: Sequence[Any]) -> str:
    parts = list(loc[1:] if loc and loc[0] == "body" else loc)
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path or "body"


def validation_errors(errors: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """FastAPI/pydantic errors as ``{field, message, type}``, without echoing the input."""
    out = []
    for e in errors:
        field = "body" if e.get("type") == "json_invalid" else _field_path(e.get("loc", ()))
        out.append({"field": field, "message": str(e.get("msg", "invalid")), "type": str(e.get("type"))})
    return out


def check_batch_length(length: int, max_batch: int, field: str) -> None:
    """Raise a 422 naming ``field`` when a batch has more than ``max_batch`` items."""
    if length > max_batch:
        message = f"at most {max_batch} items per batch (max_batch), got {length}"
        raise RequestValidationError([{"loc": ("body", field), "msg": message, "type": "too_long"}])


async def validation_error_response(request: Request, exc: Exception) -> JSONResponse:
    """The app's handler for ``RequestValidationError``: 422 with ``detail`` and ``errors``."""
    errors = validation_errors(cast(RequestValidationError, exc).errors())
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    return JSONResponse({"detail": detail, "errors": errors}, status_code=422)
