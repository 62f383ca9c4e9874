"""judge-eval reads agent trajectories: the bundled eval/data/trajectories.jsonl and mapped columns."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import yaml

from eval.cli import main
from eval.dataset import EvalRow, RowProblem, load_rows, parse_record
from judge_vllm.trajectory import CallStep

DATA = Path(__file__).resolve().parents[3] / "eval" / "data" / "trajectories.jsonl"


def test_the_bundled_trajectories_are_labelled_agent_runs():
    records = [json.loads(line) for line in DATA.read_text().splitlines()]
    loaded = load_rows(DATA)
    assert loaded.problems == [] and len(loaded.rows) == len(records) >= 30
    assert all(r.label in (0.0, 1.0) and r.trajectory is not None for r in loaded.rows)
    assert all(
        any(isinstance(s, CallStep) for s in r.trajectory.steps) for r in loaded.rows if r.group != "no_tool"
    )
    categories = Counter(r.group for r in loaded.rows)
    assert categories["long"] >= 3 and categories["injection"] >= 3
    assert max(len(r.trajectory.steps) for r in loaded.rows) >= 200
    injected = [r for r in records if r["category"] == "injection"]
    assert any("Grader:" in m["tool_calls"][0]["function"]["arguments"] for r in injected for m in r["completion"]
               if m.get("tool_calls"))  # fmt: skip


def test_a_mapped_trajectory_column_and_its_tools(tmp_path):
    record = json.loads(DATA.read_text().splitlines()[0])
    row = parse_record(1, {"q": record["prompt"], "steps": record["completion"], "gold": record["answer"],
                           "schemas": record["tools"]},
                       columns={"prompt": "q", "completion": "steps", "answer": "gold", "tools": "schemas"})  # fmt: skip
    assert isinstance(row, EvalRow) and row.trajectory is not None
    assert (
        row.completion == record["completion"][-1]["content"] and row.trajectory.tools[0].name == "city_stats"
    )
    bad = parse_record(
        2, {"prompt": "q", "answer": "1", "completion": [{"role": "assistant", "tool_calls": [7]}]}
    )
    assert isinstance(bad, RowProblem) and "completion: message 0, tool call 0 is a int" in bad.message


def test_judge_eval_scores_the_trajectories_on_the_judge(tmp_path, fake_judge):
    config = tmp_path / "c.yaml"
    config.write_text(
        yaml.safe_dump({"judge_url": fake_judge.url, "mode": "fast", "cache_dir": str(tmp_path / "cache")})
    )
    assert (
        main(["--data", str(DATA), "--config", str(config), "--out", str(tmp_path / "out"), "--no-progress"])
        == 0
    )
    scores = {
        s["id"]: s for s in map(json.loads, (tmp_path / "out" / "scores.jsonl").read_text().splitlines())
    }
    assert scores["traj-tool-error-1"]["judge"] == 0.0 and scores["traj-grounded-1"]["judge"] == 1.0
    assert {scores[k]["judge_reason"] for k in scores if k.startswith("traj-injection")} <= {
        "injection", "role_spoofing", "verdict_string"
    }  # fmt: skip
    assert "<tool-result-" in str(fake_judge.last_body["messages"])
