"""Reading evaluation rows from JSONL: valid rows become ``EvalRow``, bad lines ``RowProblem``.

A line is malformed when it is not a JSON object, lacks ``prompt``, ``completion`` or
``answer``, has a field of the wrong type, a label outside [0, 1], or repeats an id.
Parsing one line is a pure function, so the reader never dies on one bad row.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from judge_vllm.schemas import coerce_text, normalise_answer_type

__all__ = [
    "EvalRow",
    "LoadedRows",
    "MalformedInputError",
    "RowProblem",
    "load_rows",
    "parse_line",
    "parse_lines",
]

REQUIRED_FIELDS = ("prompt", "completion", "answer")


class MalformedInputError(ValueError):
    """A malformed row under ``--strict``, or a data file with no usable row."""


class EvalRow(BaseModel):
    """One labelled (or unlabelled) example to score with the rule reward and the judge."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    line: int = Field(ge=1, description="1-based line number in the data file")
    prompt: str
    completion: str
    answer: str
    answer_type: str | None = None
    label: float | None = Field(default=None, ge=0.0, le=1.0)

    @field_validator("prompt", "completion", "answer", "id", mode="before")
    @classmethod
    def _text(cls, value: Any, info: Any) -> str:
        return coerce_text(value, info.field_name)

    @field_validator("answer_type", mode="before")
    @classmethod
    def _answer_type(cls, value: Any) -> str | None:
        return normalise_answer_type(value)

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, value: Any) -> float | None:
        if value is None or isinstance(value, bool | int | float):
            return None if value is None else float(value)
        raise ValueError(f"must be a number in [0, 1] or true/false, got {type(value).__name__}")


class RowProblem(BaseModel):
    """Why one line of the data file was skipped."""

    model_config = ConfigDict(frozen=True)

    line: int
    message: str


class LoadedRows(BaseModel):
    """The usable rows of a data file and the lines that were skipped."""

    model_config = ConfigDict(frozen=True)

    rows: list[EvalRow]
    problems: list[RowProblem]


def _field_name(loc: tuple[int | str, ...], label_field: str) -> str:
    """The field as the data file names it (the label may live under another name)."""
    name = ".".join(map(str, loc))
    return label_field if name == "label" else name


def parse_line(line_no: int, text: str, label_field: str = "label") -> EvalRow | RowProblem:
    """Parse one JSONL line into a row, or say why it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        return RowProblem(line=line_no, message=f"not valid JSON: {err.msg} (column {err.colno})")
    if not isinstance(data, dict):
        return RowProblem(line=line_no, message=f"expected a JSON object, got {type(data).__name__}")
    missing = [name for name in REQUIRED_FIELDS if data.get(name) is None]
    if missing:
        return RowProblem(line=line_no, message=f"missing field(s): {', '.join(missing)}")
    fields = {name: data[name] for name in REQUIRED_FIELDS}
    fields.update(
        id=data.get("id") if data.get("id") is not None else f"line-{line_no}",
        line=line_no,
        answer_type=data.get("answer_type"),
        label=data.get(label_field),
    )
    try:
        return EvalRow.model_validate(fields)
    except ValidationError as err:
        problem = "; ".join(f"{_field_name(e['loc'], label_field)}: {e['msg']}" for e in err.errors())
        return RowProblem(line=line_no, message=problem)


def parse_lines(
    lines: Iterable[str], label_field: str = "label", limit: int | None = None, strict: bool = False
) -> LoadedRows:
    """Parse JSONL lines (blank lines ignored); stop after ``limit`` valid rows.

    Raises ``MalformedInputError`` on the first bad line when ``strict``.
    """
    rows: list[EvalRow] = []
    problems: list[RowProblem] = []
    seen: set[str] = set()
    for line_no, text in enumerate(lines, start=1):
        if limit is not None and len(rows) >= limit:
            break
        if not text.strip():
            continue
        parsed = parse_line(line_no, text, label_field)
        if isinstance(parsed, EvalRow) and parsed.id in seen:
            parsed = RowProblem(line=line_no, message=f"duplicate id {parsed.id!r}")
        if isinstance(parsed, RowProblem):
            if strict:
                raise MalformedInputError(f"line {parsed.line}: {parsed.message}")
            problems.append(parsed)
            continue
        seen.add(parsed.id)
        rows.append(parsed)
    return LoadedRows(rows=rows, problems=problems)


def load_rows(
    path: str | Path, label_field: str = "label", limit: int | None = None, strict: bool = False
) -> LoadedRows:
    """Read a JSONL data file; see ``parse_lines``."""
    try:
        with Path(path).open(encoding="utf-8", errors="replace") as handle:
            return parse_lines(handle, label_field, limit, strict)
    except OSError as err:
        raise MalformedInputError(f"cannot read data file {path}: {err.strerror}") from None
