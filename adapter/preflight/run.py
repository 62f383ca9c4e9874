"""Running the probe: the rows through the reward training will use, as training uses it.

The reward is the config's own (``create_judge_reward``: its profile, strategy, pre-checks,
calibration, ensemble or escalation), with what would leave a trace of the probe turned off: no
verdict cache (the judge is asked afresh, and no probe verdict is served to training later), no
judgment log, no metrics endpoint, no canary rounds, no shadow audit. The rows go in batches of
``max_batch_size``, each a ``reward_batch`` call with the config's ``reward_timeout``.
"""

from __future__ import annotations

from collections.abc import Sequence

from adapter.config import RewardConfig
from adapter.factory import create_judge_reward
from adapter.preflight.report import PreflightReport, build_report
from adapter.preflight.rows import ProbeRow
from adapter.reward import BaseJudgeReward, JudgeRewardSystem
from judge_vllm.backend import JudgeBackend

__all__ = ["probe_config", "run_preflight"]


def probe_config(config: RewardConfig) -> RewardConfig:
    """``config`` as the probe runs it: the same reward, leaving no trace (the module's docstring)."""
    return config.model_copy(
        update={
            "use_cache": False,
            "judgment_log_path": None,
            "metrics_port": None,
            "canary_interval": None,
            "audit": config.audit.model_copy(update={"shadow_rate": 0.0}),
            # A judge that does not answer is measured as such (rows not measured: exit 3).
            "startup_check": "off",
        }
    )


def run_preflight(
    config: RewardConfig,
    rows: Sequence[ProbeRow],
    max_paid: float,
    max_refused: float,
    backend: JudgeBackend | None = None,
) -> PreflightReport:
    """Reward every row with ``config``'s reward (``backend``: a judge of one's own instead of the
    config's server) and report each class against the thresholds."""
    probing = probe_config(config)
    reward: BaseJudgeReward = (
        create_judge_reward(probing) if backend is None else JudgeRewardSystem(probing, backend=backend)
    )
    rewards: list[tuple[float | None, str]] = []
    with reward:
        step = probing.max_batch_size
        for start in range(0, len(rows), step):
            chunk = rows[start : start + step]
            items = [
                {"prompt": r.prompt, "completion": r.completion, "answer": r.answer,
                 "answer_type": r.answer_type, "request_id": r.id or f"probe-{start + k}"}
                for k, r in enumerate(chunk)
            ]  # fmt: skip
            rewards += [(result["reward"], result["source"]) for result in reward.reward_batch(items)]
    return build_report(rows, rewards, max_paid, max_refused)
