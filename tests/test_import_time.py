"""What a trainer pays to import the reward (issue 34): TRL's async GRPO imports the reward
functions in a subprocess and every verl reward worker imports them, so heavy libraries (openai,
sympy, math-verify) are imported where they are used, not with ``adapter``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("openai", "sympy", "math_verify")
# Measured 0.33 s on the 2-core dev machine (docs/BENCHMARKS.md, "Import time"): the bound is
# loose so that a busy machine holds it, and still well under the 1.05 s it took before.
MAX_IMPORT_S = 1.0
RUNS = 3

_PROBE = """
import json, sys, time
started = time.perf_counter()
import {module}
elapsed = time.perf_counter() - started
print(json.dumps({{"elapsed": elapsed, "loaded": sorted(m for m in {heavy!r} if m in sys.modules),
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


def test_import_adapter_takes_under_a_second():
    best = min(float(str(_fresh_import("adapter")["elapsed"])) for _ in range(RUNS))
    assert best < MAX_IMPORT_S, f"import adapter: best of {RUNS} fresh interpreters {best:.2f} s"
