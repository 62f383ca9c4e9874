"""What a trainer pays to import the reward (issue 34): TRL's async GRPO imports the reward
functions in a subprocess and every verl reward worker imports them, so heavy libraries (openai,
sympy, math-verify) are imported where they are used, not with ``adapter``. The time it takes is
measured in docs/BENCHMARKS.md (n), never asserted here: a busy CI machine is no clock."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("openai", "sympy", "math_verify")

_PROBE = """
import json, sys
import {module}
print(json.dumps({{"loaded": sorted(m for m in {heavy!r} if m in sys.modules),
                  "file": {module}.__file__}}))
"""


def _fresh_import(module: str) -> dict[str, object]:
    """Import ``module`` in a fresh interpreter (this checkout's code first on the path)."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(module=module, heavy=HEAVY)],
        capture_output=True, text=True, cwd=REPO, timeout=120, check=True,
    )  # fmt: skip
    report: dict[str, object] = json.loads(done.stdout)
    assert str(report["file"]).startswith(str(REPO))  # this checkout, not another editable install
    return report


@pytest.mark.parametrize("module", ["adapter", "adapter.integrations.trl", "adapter.integrations.verl"])
def test_importing_the_reward_loads_no_heavy_library(module):
    assert _fresh_import(module)["loaded"] == []


def test_heavy_libraries_come_when_they_are_used():
    probe = (
        "import sys; from adapter import RuleRewardSystem; from judge_vllm.client import JudgeClient; "
        "JudgeClient(); "
        "RuleRewardSystem().reward('Simplify 2x/2', 'x', 'x', 'MATH_EXPRESSIONS'); "
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == str(sorted(HEAVY))

