"""The pre-flight probe (``judge-vllm audit``): known hacks and controls through the configured reward.

Before a run, a reward is asked what a policy will soon try: master keys, text aimed at the grader,
hedges, answer sprays, format tricks, empty and truncated answers, and right answers in every
style. Per class it reports the share of wrong answers paid and of controls refused, with Wilson
intervals, and fails when a class is over its threshold (docs/observability.md, "Is my reward
being hacked?"): ``rows`` the probe set, ``run`` the reward as training runs it, ``report`` the
figures and their text.
"""

from adapter.preflight.report import ClassResult, PreflightReport, Share, render_report, wilson_interval
from adapter.preflight.rows import BUNDLED_PROBE_ROWS, ProbeRow, bundled_probe_rows, load_probe_rows
from adapter.preflight.run import probe_config, run_preflight

__all__ = [
    "BUNDLED_PROBE_ROWS",
    "ClassResult",
    "PreflightReport",
    "ProbeRow",
    "Share",
    "bundled_probe_rows",
    "load_probe_rows",
    "probe_config",
    "render_report",
    "run_preflight",
    "wilson_interval",
]
