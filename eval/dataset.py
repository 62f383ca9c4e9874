"""Reading evaluation rows: valid rows become ``EvalRow``, bad rows ``RowProblem``.

Records come from any supported file (``eval.data_files``). A column map (``--map
prompt=question,label=is_correct``) names where each field lives. A prompt may be a chat
conversation (a list of ``{"role", "content"}`` messages, as TRL's conversational datasets
write it: shown to the judge as its transcript) and a completion a list of assistant messages,
or an agent's trajectory: messages with ``tool_calls`` and ``role: tool`` results, with the
offered tool schemas in a ``tools`` column (docs/trajectories.md; ``eval/data/trajectories.jsonl``).
A row is malformed when it lacks ``prompt``, ``completion`` or ``answer``, has a field of the
wrong type, a label outside [0, 1], or repeats an id. Parsing one row is a pure function, so
the reader never dies on one bad row.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from adapter.pipeline.conversations import prompt_text
from adapter.pipeline.trajectory import TrajectoryError, is_messages, read_completion
from adapter.rules.answer_types import known_answer_type
from eval.data_files import DataFileError, RecordError, read_records
from judge_vllm.schemas import coerce_text
from judge_vllm.trajectory import Trajectory

__all__ = [
    "EvalRow",
    "LoadedRows",
    "MalformedInputError",
    "RowProblem",
    "load_rows",
    "parse_column_map",
    "parse_line",
    "parse_lines",
    "parse_record",
]

REQUIRED_FIELDS = ("prompt", "completion", "answer")
MAPPABLE_FIELDS = ("id", *REQUIRED_FIELDS, "answer_type", "label", "tools")
DEFAULT_GROUP_BY = "category"
_BOOLEAN_LABELS = {"true": 1.0, "false": 0.0}


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
    group: str | None = Field(default=None, description="the --group-by column's value (e.g. category)")
    trajectory: Trajectory | None = Field(
        default=None, description="an agent's steps before its final reply (the completion), if it used tools"
    )

    @field_validator("prompt", "completion", "answer", "id", mode="before")
    @classmethod
    def _text(cls, value: object, info: ValidationInfo[object]) -> str:
        return coerce_text(value, str(info.field_name))

    @field_validator("answer_type", mode="before")
    @classmethod
    def _answer_type(cls, value: object) -> str | None:
        return known_answer_type(value)

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, value: object) -> float | None:
        if value is None or isinstance(value, bool | int | float):
            return None if value is None else float(value)
        if isinstance(value, str):  # CSV cells, string columns: "1", "0.5", "true"
            text = value.strip().lower()
            if text in _BOOLEAN_LABELS:
                return _BOOLEAN_LABELS[text]
            try:
                return float(text)
            except ValueError:
                pass
        raise ValueError(f"must be a number in [0, 1] or true/false, got {value!r:.40}")


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


def parse_column_map(text: str) -> dict[str, str]:
    """``"prompt=question,label=is_correct"`` -> ``{"prompt": "question", "label": "is_correct"}``."""
    mapping: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        field, sep, column = (part.strip() for part in pair.partition("="))
        if not sep or not field or not column:
            raise ValueError(f"expected FIELD=COLUMN, got {pair!r}")
        if field not in MAPPABLE_FIELDS:
            raise ValueError(f"unknown field {field!r}: map one of {', '.join(MAPPABLE_FIELDS)}")
        mapping[field] = column
    return mapping


def _text_or_chat(value: object, field: str, tools: object = None) -> tuple[object, Trajectory | None]:
    """A chat-format prompt as its transcript; a completion as its assistant turns, or as an
    agent's final reply and trajectory (``ValueError`` saying why it cannot be read)."""
    if isinstance(value, list) and not is_messages(value):
        raise ValueError("expected text or a list of {role, content} messages")
    if field == "prompt":
        return (prompt_text(value) if isinstance(value, list) else value), None
    if field != "completion":
        return value, None
    try:
        read = read_completion(value, tools)
    except TrajectoryError as err:
        raise ValueError(str(err)) from None
    return read.completion, read.trajectory


def parse_record(
    row_no: int,
    data: Mapping[str, object],
    label_field: str = "label",
    columns: Mapping[str, str] | None = None,
    group_by: str = DEFAULT_GROUP_BY,
) -> EvalRow | RowProblem:
    """One record as a row, or why it is not one; ``columns`` maps a field to its column name,
    ``group_by`` names the column whose value groups rows in the report."""
    names = {field: field for field in MAPPABLE_FIELDS} | {"label": label_field} | dict(columns or {})
    # An empty value (a CSV's empty cell) is a missing one, but for the completion: a policy's empty
    # reply is a completion to score (the pre-checks give it 0), not a malformed row.
    data = {k: v for k, v in data.items() if v != "" or k == names["completion"]}
    missing = [names[f] for f in REQUIRED_FIELDS if data.get(names[f]) is None]
    if missing:
        return RowProblem(line=row_no, message=f"missing field(s): {', '.join(missing)}")
    fields: dict[str, object] = {}
    for field in REQUIRED_FIELDS:
        try:
            fields[field], trajectory = _text_or_chat(data[names[field]], field, data.get(names["tools"]))
        except ValueError as err:
            return RowProblem(line=row_no, message=f"{names[field]}: {err}")
        if trajectory is not None:
            fields["trajectory"] = trajectory
    row_id = data.get(names["id"])
    fields.update(
        id=row_id if row_id is not None else f"line-{row_no}",
        line=row_no,
        answer_type=data.get(names["answer_type"]),
        label=data.get(names["label"]),
        group=None if data.get(group_by) is None else str(data.get(group_by)),
    )
    try:
        return EvalRow.model_validate(fields)
    except ValidationError as err:
        problem = "; ".join(f"{names.get(str(e['loc'][0]), e['loc'][0])}: {e['msg']}" for e in err.errors())
        return RowProblem(line=row_no, message=problem)


def parse_line(line_no: int, text: str, label_field: str = "label") -> EvalRow | RowProblem:
    """Parse one JSONL line into a row, or say why it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        return RowProblem(line=line_no, message=f"not valid JSON: {err.msg} (column {err.colno})")
    if not isinstance(data, dict):
        return RowProblem(line=line_no, message=f"expected a JSON object, got {type(data).__name__}")
    return parse_record(line_no, data, label_field)


def parse_lines(
    lines: Iterable[str], label_field: str = "label", limit: int | None = None, strict: bool = False
) -> LoadedRows:
    """Parse JSONL lines (blank lines ignored); stop after ``limit`` valid rows.

    Raises ``MalformedInputError`` on the first bad line when ``strict``.
    """
    records = (
        (line_no, json_record)
        for line_no, text in enumerate(lines, start=1)
        if text.strip()
        for json_record in [_json_record(text)]
    )
    return _collect(records, label_field, None, limit, strict, DEFAULT_GROUP_BY)


def _json_record(text: str) -> dict[str, object] | RecordError:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        return RecordError(f"not valid JSON: {err.msg} (column {err.colno})")
    if not isinstance(data, dict):
        return RecordError(f"expected a JSON object, got {type(data).__name__}")
    return data


def _collect(
    records: Iterable[tuple[int, dict[str, object] | RecordError]],
    label_field: str,
    columns: Mapping[str, str] | None,
    limit: int | None,
    strict: bool,
    group_by: str,
) -> LoadedRows:
    rows: list[EvalRow] = []
    problems: list[RowProblem] = []
    seen: set[str] = set()
    for row_no, record in records:
        if limit is not None and len(rows) >= limit:
            break
        if isinstance(record, RecordError):
            parsed: EvalRow | RowProblem = RowProblem(line=row_no, message=str(record))
        else:
            parsed = parse_record(row_no, record, label_field, columns, group_by)
        if isinstance(parsed, EvalRow) and parsed.id in seen:
            parsed = RowProblem(line=row_no, message=f"duplicate id {parsed.id!r}")
        if isinstance(parsed, RowProblem):
            if strict:
                raise MalformedInputError(f"line {parsed.line}: {parsed.message}")
            problems.append(parsed)
            continue
        seen.add(parsed.id)
        rows.append(parsed)
    return LoadedRows(rows=rows, problems=problems)


def load_rows(
    path: str | Path,
    label_field: str = "label",
    limit: int | None = None,
    strict: bool = False,
    columns: Mapping[str, str] | None = None,
    group_by: str = DEFAULT_GROUP_BY,
) -> LoadedRows:
    """Read a data file in any supported format (``eval.data_files``); see ``parse_record``."""
    try:
        return _collect(read_records(path), label_field, columns, limit, strict, group_by)
    except DataFileError as err:
        raise MalformedInputError(str(err)) from None
