"""judge-eval reads the user's data as it is: every format, renamed columns, chat rows, bad rows."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasets import Dataset, DatasetDict

from eval.cli import main
from eval.data_files import DataFileError, read_records
from eval.dataset import MalformedInputError, load_rows, parse_column_map

# The user's own column names, as a data set on the hub might spell them.
USER_ROWS: list[dict[str, Any]] = [
    {"question": "What is 2 + 2?", "response": "2 + 2 = 4", "gold": "4", "is_correct": 1, "kind": "NUMBER"},
    {"question": "What is 2 + 3?", "response": "It is 6.", "gold": "5", "is_correct": 0, "kind": "NUMBER"},
    {"question": "Capital of Italy?", "response": "Rome", "gold": "Rome", "is_correct": 1, "kind": "TEXT"},
]
MAP = "prompt=question,completion=response,answer=gold,label=is_correct,answer_type=kind"


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _write_json(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def _write_csv(path: Path, rows: list[dict[str, Any]], delimiter: str = ",") -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), delimiter=delimiter)
        writer.writeheader()
        writer.writerows(rows)
    return path


def _write_tsv(path: Path, rows: list[dict[str, Any]]) -> Path:
    return _write_csv(path, rows, "\t")


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _write_hf_folder(path: Path, rows: list[dict[str, Any]]) -> Path:
    Dataset.from_list(rows).save_to_disk(str(path))
    return path


WRITERS = {
    "data.jsonl": _write_jsonl,
    "data.json": _write_json,
    "data.csv": _write_csv,
    "data.tsv": _write_tsv,
    "data.parquet": _write_parquet,
    "hf_folder": _write_hf_folder,
}


@pytest.mark.parametrize("name", list(WRITERS))
def test_every_format_reads_the_same_rows_through_the_column_map(tmp_path, name):
    path = WRITERS[name](tmp_path / name, USER_ROWS)
    loaded = load_rows(path, columns=parse_column_map(MAP))
    assert loaded.problems == []
    assert [(r.prompt, r.completion, r.answer, r.answer_type, r.label) for r in loaded.rows] == [
        ("What is 2 + 2?", "2 + 2 = 4", "4", "NUMBER", 1.0),
        ("What is 2 + 3?", "It is 6.", "5", "NUMBER", 0.0),
        ("Capital of Italy?", "Rome", "Rome", "TEXT", 1.0),
    ]


@pytest.mark.parametrize("name", ["data.csv", "data.parquet"])
def test_cli_scores_user_files_through_map(tmp_path, name, capsys):
    path = WRITERS[name](tmp_path / name, USER_ROWS)
    out = tmp_path / "out"
    assert main(["--data", str(path), "--out", str(out), "--rule-only", "--no-progress", "--map", MAP]) == 0
    scores = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert [(s["rule"], s["label"]) for s in scores] == [(1.0, 1.0), (0.0, 0.0), (1.0, 1.0)]


@pytest.mark.parametrize(
    ("cell", "label"), [("1", 1.0), ("0", 0.0), ("0.5", 0.5), ("True", 1.0), ("false", 0.0), ("", None)]
)
def test_csv_labels_are_read_from_text(tmp_path, cell, label):
    path = _write_csv(tmp_path / "d.csv", [{"prompt": "p", "completion": "c", "answer": "a", "label": cell}])
    assert [r.label for r in load_rows(path).rows] == [label]


# TRL's conversational format: the prompt a list of messages, the completion the assistant's.
CHAT_ROW = {
    "prompt": [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "What is 6 x 7?"},
    ],
    "completion": [{"role": "assistant", "content": "6 x 7 = 42"}],
    "answer": "42",
    "label": 1,
}


@pytest.mark.parametrize("name", ["data.jsonl", "data.parquet", "hf_folder"])
def test_chat_format_rows_become_a_transcript_and_the_assistant_text(tmp_path, name):
    path = WRITERS[name](tmp_path / name, [CHAT_ROW])
    (row,) = load_rows(path).rows
    assert row.prompt == "system: Answer briefly.\n\nuser: What is 6 x 7?"
    assert row.completion == "6 x 7 = 42"


def test_a_lone_user_turn_is_plain_text(tmp_path):
    path = _write_jsonl(tmp_path / "d.jsonl", [{**CHAT_ROW, "prompt": [{"role": "user", "content": "Hi?"}]}])
    assert load_rows(path).rows[0].prompt == "Hi?"


def _chat_csv(path: Path, prompts: list[str]) -> Path:
    """A CSV whose prompt cells are ``prompts`` as written (the csv module quotes them)."""
    return _write_csv(path, [{"prompt": p, "completion": "It is 42.", "answer": "42"} for p in prompts])


def test_a_csv_cell_holding_json_chat_messages_is_read_as_the_messages(tmp_path):
    """Issue 42: a chat prompt in a CSV cell was read as its JSON text, with no warning."""
    cells = [json.dumps(CHAT_ROW["prompt"]), json.dumps([{"role": "user", "content": "Hi?"}])]
    path = _write_csv(tmp_path / "d.csv", [
        {"prompt": cells[0], "completion": json.dumps(CHAT_ROW["completion"]), "answer": "42"},
        {"prompt": cells[1], "completion": "It is 42.", "answer": "42"},
    ])  # fmt: skip
    loaded = load_rows(path)
    assert loaded.problems == []
    assert [(r.prompt, r.completion) for r in loaded.rows] == [
        ("system: Answer briefly.\n\nuser: What is 6 x 7?", "6 x 7 = 42"),
        ("Hi?", "It is 42."),
    ]


@pytest.mark.parametrize(
    "text",
    ["[A] is the answer", "[1, 2] are the roots", '["a", "b"]', "[]", '[{"name": "x"}]'],
)
def test_other_csv_cells_starting_with_a_bracket_stay_text(tmp_path, text):
    (row,) = load_rows(_chat_csv(tmp_path / "d.csv", [text])).rows
    assert row.prompt == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[{'role': 'user', 'content': 'Hi?'}]", "prompt: starts like a list of chat messages but is not valid JSON"),
        ('[{"role": "user", "content": "Hi?"},]', "prompt: starts like a list of chat messages but is not valid JSON"),
        ('[{"role": "user"}]', "prompt: chat message 1 has no content"),
        ('[{"role": "user", "content": "a"}, {"role": 3, "content": "b"}]', "prompt: chat message 2's role is not text"),
    ],
)
def test_a_csv_cell_that_is_not_valid_chat_messages_is_a_problem_on_its_line(tmp_path, text, message):
    """Chat messages written as Python (pandas' to_csv of a list column) or missing their text are
    refused in one line, not judged as their text."""
    loaded = load_rows(_chat_csv(tmp_path / "d.csv", ["What is 6 x 7?", text]))
    assert [r.line for r in loaded.rows] == [2]
    assert [(p.line, p.message.split(" (")[0]) for p in loaded.problems] == [(3, message)]


def test_judge_eval_scores_a_csv_chat_prompt_as_its_transcript(tmp_path):
    data = _write_csv(tmp_path / "d.csv", [{
        "prompt": json.dumps(CHAT_ROW["prompt"]), "completion": "6 x 7 = \\boxed{42}", "answer": "42", "label": "1",
    }])  # fmt: skip
    assert main(["--data", str(data), "--out", str(tmp_path / "out"), "--rule-only", "--no-progress"]) == 0
    (scored,) = [json.loads(line) for line in (tmp_path / "out" / "scores.jsonl").read_text().splitlines()]
    assert scored["prompt"] == "system: Answer briefly.\n\nuser: What is 6 x 7?"
    assert scored["rule"] == 1.0


BAD_ROWS: list[tuple[dict[str, Any], str]] = [
    ({"question": "q", "response": "r", "is_correct": 1}, "missing field(s): gold"),
    ({"question": "q", "response": "r", "gold": "g", "is_correct": "maybe"}, "is_correct:"),
    (
        {"question": [1, 2], "response": "r", "gold": "g"},
        "question: expected text or a list of {role, content}",
    ),
    ({"question": "q", "response": "r", "gold": "g", "is_correct": 3}, "is_correct:"),
]


def test_bad_rows_are_counted_with_their_reason_and_strict_stops(tmp_path):
    path = _write_jsonl(tmp_path / "d.jsonl", [USER_ROWS[0], *(row for row, _ in BAD_ROWS)])
    columns = parse_column_map(MAP)
    loaded = load_rows(path, columns=columns)
    assert len(loaded.rows) == 1
    assert [p.line for p in loaded.problems] == [2, 3, 4, 5]
    for problem, (_, reason) in zip(loaded.problems, BAD_ROWS, strict=True):
        assert reason in problem.message
    with pytest.raises(MalformedInputError, match="line 2: missing field"):
        load_rows(path, columns=columns, strict=True)


def test_csv_row_with_too_many_cells_is_a_problem_on_its_line(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("prompt,completion,answer\np,c,a\np,c,a,extra\n", encoding="utf-8")
    loaded = load_rows(path)
    assert len(loaded.rows) == 1 and loaded.problems[0].line == 3


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "data.xlsx", "unknown format .xlsx"),
        (lambda p: p / "missing.jsonl", "no such file"),
        (lambda p: (p / "plain").mkdir() or p / "plain", "not a datasets save_to_disk folder"),
    ],
)
def test_unreadable_data_files_say_why(tmp_path, make, message):
    path = make(tmp_path)
    if path.suffix == ".xlsx":
        path.write_bytes(b"PK")
    with pytest.raises(DataFileError, match=message):
        list(read_records(path))


def test_json_file_must_hold_an_array(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"rows": USER_ROWS}), encoding="utf-8")
    with pytest.raises(DataFileError, match="expected a JSON array of objects"):
        list(read_records(path))


def test_datasets_folder_with_splits_names_one(tmp_path):
    DatasetDict({"test": Dataset.from_list(USER_ROWS)}).save_to_disk(str(tmp_path / "dd"))
    with pytest.raises(DataFileError, match="give one split's folder"):
        list(read_records(tmp_path / "dd"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("prompt", "expected FIELD=COLUMN"),
        ("question=q", "unknown field 'question'"),
        ("prompt=", "expected"),
    ],
)
def test_bad_column_maps_are_refused(text, message):
    with pytest.raises(ValueError, match=message):
        parse_column_map(text)


def test_bad_column_map_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--data", "x.jsonl", "--out", str(tmp_path), "--map", "question=q"])
    assert exit_info.value.code == 2
    assert "unknown field 'question'" in capsys.readouterr().err


def test_an_empty_csv_completion_cell_is_an_empty_completion_and_an_empty_answer_cell_is_missing(tmp_path):
    rows = [{"prompt": "p", "completion": "", "answer": "a", "label": "0"},
            {"prompt": "p", "completion": "c", "answer": "", "label": "1"}]  # fmt: skip
    loaded = load_rows(_write_csv(tmp_path / "d.csv", rows))
    assert [(r.line, r.completion) for r in loaded.rows] == [(2, "")]
    assert [(p.line, p.message) for p in loaded.problems] == [(3, "missing field(s): answer")]
