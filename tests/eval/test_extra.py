"""What judge-eval needs installed is what the README and docs/eval.md say: the ``eval`` extra, for
every run. A plain CSV run without numpy stops in one line naming the extra (issue 42: the README
said the extra was for plots, parquet and datasets folders only)."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WITHOUT_NUMPY = """
import sys
sys.modules["numpy"] = None  # import numpy now raises ModuleNotFoundError, as on an install without it
from eval.entry_points import judge_eval
sys.argv = ["judge-eval", *sys.argv[1:]]
sys.exit(judge_eval())
"""
MESSAGE = "error: this command needs the 'numpy' package: install judge-vllm[eval] (pip install 'judge-vllm[eval]')\n"


def test_a_plain_csv_run_without_numpy_is_one_line_naming_the_eval_extra(tmp_path):
    data = tmp_path / "rows.csv"
    data.write_text("prompt,completion,answer,label\nWhat is 2+2?,It is \\boxed{4},4,1\n", encoding="utf-8")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_NUMPY, "--data", str(data), "--out", str(out), "--rule-only"],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (2, MESSAGE)
    assert not out.exists()


def test_the_readme_and_the_eval_page_say_judge_eval_needs_the_eval_extra():
    (install,) = [line for line in (REPO / "README.md").read_text().splitlines() if 'judge-vllm[eval]"' in line]
    assert "judge-eval" in install and "plain CSV or JSONL" in install
    page = " ".join((REPO / "docs" / "eval.md").read_text().split())
    assert "`judge-eval` needs the `eval` extra (`pip install 'judge-vllm[eval]'`) for every run" in page
