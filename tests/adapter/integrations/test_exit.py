"""A trainer process that used an integration and never closed it exits without a warning."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SLOW_STEP = re.compile(r"Executing <.*> took \d+\.\d+ seconds")

SCRIPTS = {
    "verl": (
        "from adapter.integrations import verl\n"
        "print(verl.compute_score('gsm8k', 'The answer is 4.', '4', {'question': '2+2?'})['score'])\n"
    ),
    "trl": (
        "import os\n"
        "from adapter.integrations.trl import judge_reward_func\n"
        "reward = judge_reward_func({'judge_url': os.environ['JUDGE_MODEL_URL']})\n"
        "print(reward(['What is 2+2?'], ['The answer is 4'], answer=['4'])[0])\n"
    ),
}


@pytest.mark.parametrize("integration", sorted(SCRIPTS))
def test_a_process_that_used_the_integration_exits_without_warnings(fake_judge, tmp_path, integration):
    env = {"JUDGE_MODEL_URL": fake_judge.url, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-W", "default", "-X", "dev", "-c", SCRIPTS[integration]],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1.0"
    # -X dev also reports loop steps slower than 0.1 s: timing on a busy machine, not a warning
    warnings = [line for line in done.stderr.splitlines() if not SLOW_STEP.fullmatch(line)]
    assert warnings == [], done.stderr  # no "Task was destroyed", no ResourceWarning, nothing
