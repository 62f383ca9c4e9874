"""judge-eval reads agent trajectories: the bundled eval/data/trajectories.jsonl and mapped columns."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import yaml

from adapter.config import RewardConfig
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


async def test_the_prompt_tokens_before_and_after_fitting():
    """Against the fake judge's tokenizer (a token a character) and context (4,096 tokens)."""
    from eval.trajectory_fit import fit_rows
    from judge_vllm.settings import JudgeClientConfig

    async def count(prompt):
        return sum(len(text) + 8 for text in (prompt.system or "", prompt.user))

    rows = await fit_rows(DATA, RewardConfig(), count, 4096)
    long = [r for r in rows if r["steps"] > 50]
    assert len(rows) == 36 and len(long) == 4
    assert all(
        r["tokens_before"] > 4096 >= r["tokens_after"] and 0 < r["steps_shown"] < r["steps"] for r in long
    )
    assert all(r["tokens_after"] == r["tokens_before"] for r in rows if r not in long)  # shown whole
    assert JudgeClientConfig().max_completion_chars == 6000  # the budget the rows were fitted to


def test_the_measurement_command_counts_on_the_judge_server(fake_judge, capsys):
    from eval.trajectory_fit import main as measure

    measure(["--data", str(DATA), "--judge-url", fake_judge.url])
    summary = capsys.readouterr().out.splitlines()[-1]
    assert summary.startswith("36 trajectories, context 4096 tokens") and "0 that cannot fit" in summary
    assert fake_judge.counts["/tokenize"] > 36


def test_judge_eval_compares_the_bundled_trajectory_groups_by_their_steps(tmp_path, fake_judge):
    """The bundled runs form 9 labelled groups (runs of one prompt, right and wrong); compared with
    their steps, the fake judge (which reads each response's last tool result) orders them as it
    does one run at a time; compared by their final replies alone, it cannot tell them apart."""
    accuracy: dict[str, str] = {}
    for view in ("full", "final"):
        config = tmp_path / f"{view}.yaml"
        settings = {"judge_url": fake_judge.url, "mode": "fast", "use_cache": False, "trajectory_view": view}
        config.write_text(yaml.safe_dump(settings))
        out = tmp_path / view
        modes = ["--group-modes", "pointwise,pairwise"]
        assert (
            main(["--data", str(DATA), "--config", str(config), *modes, "--out", str(out), "--no-progress"])
            == 0
        )
        table = [line.strip("|").split("|") for line in (out / "groups.md").read_text().splitlines()]
        rows = {cells[0].strip(): [c.strip() for c in cells] for cells in table if len(cells) > 4}
        assert rows["pairwise"][1:4] == ["9", "25", "16"]  # groups, members, correct-over-incorrect pairs
        accuracy[view] = rows["pairwise"][4]
        if view == "full":
            assert accuracy[view] == rows["pointwise"][4]
    assert float(accuracy["full"]) > float(accuracy["final"]) == 0.5
