"""A user's labelled data as records, whatever file it is in.

``read_records(path)`` yields ``(row number, record)`` for JSONL (``.jsonl``, ``.ndjson``; the
row number is the line number, blank lines skipped), JSON (``.json``: an array of objects),
CSV (``.csv``, ``.tsv``: a header row, then one record per row, numbered by the line it ends
on), parquet (``.parquet``) and a folder written by HF ``datasets``' ``save_to_disk``.
Rows of JSON, parquet and datasets folders are numbered from 1. A record is a dict, or a ``RecordError`` saying why that row could not be read as one.
A CSV cell is text, but for chat messages: a cell that parses as a JSON list of objects with a
``role`` is that list (each message must have a text ``role`` and a ``content`` or
``tool_calls``), and a cell that starts like one (``[{"role":``, ``[{'role':``, Python's way of
writing a list) but is not valid JSON makes its row a ``RecordError``. Any other cell, ``[A]
is right`` or ``[1, 2]`` included, stays text.
Columns are renamed later (``eval.dataset``); this module only reads.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

__all__ = ["FORMATS", "DataFileError", "RecordError", "read_records"]

FORMATS = ".jsonl, .ndjson, .json, .csv, .tsv, .parquet, or a datasets save_to_disk folder"
_MISSING_EXTRA = "reading {what} needs {package}: pip install 'judge-vllm[eval]'"


class DataFileError(ValueError):
    """A data file that cannot be read at all: missing, unknown format, or not what its name says."""


class RecordError(str):
    """Why one row of a data file is not a record (the row is skipped and counted)."""

    __slots__ = ()


Records = Iterator[tuple[int, dict[str, object] | RecordError]]


def read_records(path: str | Path) -> Records:
    """The rows of ``path`` as ``(row number, record or RecordError)``; raises ``DataFileError``."""
    path = Path(path)
    if path.is_dir():
        return _hf_folder(path)
    if not path.exists():
        raise DataFileError(f"cannot read data file {path}: no such file")
    suffix = path.suffix.lower()
    readers = {
        ".jsonl": _jsonl,
        ".ndjson": _jsonl,
        ".json": _json_array,
        ".csv": _csv,
        ".tsv": _csv,
        ".parquet": _parquet,
    }
    reader = readers.get(suffix)
    if reader is None:
        raise DataFileError(f"cannot read {path}: unknown format {suffix or '(no suffix)'}; use {FORMATS}")
    return reader(path)


def _open_text(path: Path) -> TextIO:
    try:
        return path.open(encoding="utf-8", errors="replace", newline="")
    except OSError as err:
        raise DataFileError(f"cannot read data file {path}: {err.strerror}") from None


def _as_record(value: object) -> dict[str, object] | RecordError:
    if isinstance(value, dict):
        return value
    return RecordError(f"expected an object with named fields, got {type(value).__name__}")


def _jsonl(path: Path) -> Records:
    with _open_text(path) as handle:
        for line_no, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                yield line_no, _as_record(json.loads(text))
            except json.JSONDecodeError as err:
                yield line_no, RecordError(f"not valid JSON: {err.msg} (column {err.colno})")


def _json_array(path: Path) -> Records:
    with _open_text(path) as handle:
        try:
            data = json.load(handle)
        except json.JSONDecodeError as err:
            raise DataFileError(f"{path} is not valid JSON: {err.msg} (line {err.lineno})") from None
    if not isinstance(data, list):
        raise DataFileError(f"{path}: expected a JSON array of objects, got {type(data).__name__}")
    for row_no, value in enumerate(data, start=1):
        yield row_no, _as_record(value)


# A cell that starts like a list of chat messages: refused when it is not valid JSON.
_CHAT_START = re.compile(r"""\[\s*\{\s*["'](?:role|content)["']\s*:""")


def _chat_messages(column: str, text: str) -> object:
    """A CSV cell's chat messages (a JSON list of objects with a ``role``), else its text; a
    ``RecordError`` for a cell that starts like chat messages but is not valid ones."""
    if not text.lstrip().startswith("["):
        return text
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        if _CHAT_START.match(text.lstrip()):
            return RecordError(
                f"{column}: starts like a list of chat messages but is not valid JSON ({err.msg}, "
                f"column {err.colno}); write the cell with json.dumps, or as plain text"
            )
        return text
    if not isinstance(value, list) or not value or not all(isinstance(m, dict) and "role" in m for m in value):
        return text
    for number, message in enumerate(value, start=1):
        if not isinstance(message["role"], str) or not message["role"]:
            return RecordError(f"{column}: chat message {number}'s role is not text")
        if message.get("content") is None and not message.get("tool_calls"):
            return RecordError(f"{column}: chat message {number} has no content")
    return value


def _csv(path: Path) -> Records:
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    with _open_text(path) as handle:
        reader = csv.DictReader(handle, delimiter=delimiter)
        for row in reader:
            if None in row:
                yield (
                    reader.line_num,
                    RecordError(f"{len(row[None])} more value(s) than the header has columns"),
                )
                continue
            # An empty cell is empty text: eval.dataset decides which fields it leaves out (all but
            # the completion: an empty completion is one a policy wrote).
            record = {key: _chat_messages(key, value or "") for key, value in row.items()}
            refused = [value for value in record.values() if isinstance(value, RecordError)]
            yield reader.line_num, refused[0] if refused else record


def _parquet(path: Path) -> Records:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DataFileError(_MISSING_EXTRA.format(what="parquet", package="pyarrow")) from None
    try:
        table = pq.read_table(path)
    except Exception as err:  # pyarrow raises its own tree (ArrowInvalid, OSError...)
        raise DataFileError(f"cannot read {path} as parquet: {err}") from None
    yield from enumerate(table.to_pylist(), start=1)


def _hf_folder(path: Path) -> Records:
    if not (path / "dataset_info.json").exists() and not (path / "dataset_dict.json").exists():
        raise DataFileError(
            f"{path} is a folder but not a datasets save_to_disk folder (no dataset_info.json)"
        )
    try:
        from datasets import DatasetDict, load_from_disk
    except ImportError:
        raise DataFileError(_MISSING_EXTRA.format(what="a datasets folder", package="datasets")) from None
    dataset = load_from_disk(str(path))
    if isinstance(dataset, DatasetDict):
        raise DataFileError(
            f"{path} holds several splits ({', '.join(dataset)}): give one split's folder, e.g. {path / next(iter(dataset))}"
        )
    for row_no, row in enumerate(dataset, start=1):
        yield row_no, dict(row)
