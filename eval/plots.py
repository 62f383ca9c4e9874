"""The report's figures as PNG (matplotlib's object API: Agg rendering, no pyplot, no display).

``reward_hist.png``: rule and judge reward distributions. ``agreement.png``: a confusion
matrix per available pair (rule vs judge, rule vs label, judge vs label) and, with judge
scores, a scatter of rule vs judge (jittered with a fixed seed, coloured by label).
``reliability.png``: the judge's reward against the share of label-1 rows, in ten reward
bins, on the rows it decided (a calibrated judge lies on the diagonal).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from eval.coverage import JUDGE_DECIDED
from eval.metrics import EvalSummary, PairStats
from eval.scoring import ScoredRow

__all__ = [
    "AGREEMENT_PNG",
    "RELIABILITY_PNG",
    "REWARD_HIST_PNG",
    "plot_agreement",
    "plot_reliability",
    "plot_reward_hist",
]

REWARD_HIST_PNG = "reward_hist.png"
AGREEMENT_PNG = "agreement.png"
RELIABILITY_PNG = "reliability.png"
RELIABILITY_BINS = 10
HIST_BINS = 20
JITTER = 0.03
DPI = 110


def plot_reward_hist(rows: Sequence[ScoredRow], path: Path) -> None:
    """Overlaid histograms of the rule and judge rewards on [0, 1]."""
    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    bins = [i / HIST_BINS for i in range(HIST_BINS + 1)]
    for name, values in (("rule", [r.rule for r in rows]), ("judge", [r.judge for r in rows])):
        present = [v for v in values if v is not None]
        if present:
            ax.hist(present, bins=bins, alpha=0.55, label=f"{name} (n={len(present)})")
    ax.set_xlabel("reward")
    ax.set_ylabel("rows")
    ax.set_title("Reward distributions")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)


def _confusion_panel(ax: Axes, pair: PairStats) -> None:
    c = pair.confusion
    grid = np.array([[c.n00, c.n01], [c.n10, c.n11]])
    ax.imshow(grid, cmap="Blues")
    for (i, j), count in np.ndenumerate(grid):
        ax.text(j, i, str(count), ha="center", va="center", color="black", fontsize=12)
    ax.set_xticks([0, 1], [f"{pair.b} 0", f"{pair.b} 1"])
    ax.set_yticks([0, 1], [f"{pair.a} 0", f"{pair.a} 1"])
    ax.set_title(f"{pair.a} vs {pair.b} (n={pair.n})")


def _scatter_panel(ax: Axes, rows: Sequence[ScoredRow]) -> None:
    both = [r for r in rows if r.rule is not None and r.judge is not None]
    rng = np.random.default_rng(0)
    x = np.array([r.rule for r in both]) + rng.uniform(-JITTER, JITTER, len(both))
    y = np.array([r.judge for r in both], dtype=float)
    colours = ["tab:green" if r.label is not None and r.label >= 0.5 else
               "tab:red" if r.label is not None else "tab:gray" for r in both]  # fmt: skip
    ax.scatter(x, y, c=colours, s=14, alpha=0.7)
    ax.set_xlim(-0.1, 1.1)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("rule reward (jittered)")
    ax.set_ylabel("judge reward")
    ax.set_title("rule vs judge (green: label 1, red: label 0)")


def plot_agreement(summary: EvalSummary, rows: Sequence[ScoredRow], path: Path) -> None:
    """Confusion matrices of every available pair, plus the rule vs judge scatter."""
    pairs = [p for p in (summary.rule_vs_judge, summary.rule_vs_label, summary.judge_vs_label) if p]
    panels = len(pairs) + (1 if summary.judged else 0)
    fig = Figure(figsize=(4.2 * max(panels, 1), 4))
    axes = fig.subplots(1, max(panels, 1), squeeze=False)
    for ax, pair in zip(axes[0], pairs, strict=False):
        _confusion_panel(ax, pair)
    if summary.judged:
        _scatter_panel(axes[0][len(pairs)], rows)
    if panels == 0:
        axes[0][0].text(0.5, 0.5, "no judge scores and no labels", ha="center", va="center")
        axes[0][0].set_axis_off()
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)


def plot_reliability(rows: Sequence[ScoredRow], path: Path) -> None:
    """Reliability diagram: mean judge reward vs share of label-1 rows per reward bin, with counts."""
    kept = [
        r for r in rows if r.judge is not None and r.label is not None and r.judge_source in JUDGE_DECIDED
    ]
    fig = Figure(figsize=(5.5, 5))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], linestyle="--", color="gray", label="calibrated")
    if kept:
        rewards = np.array([r.judge for r in kept], dtype=float)
        labels = np.array([r.label for r in kept], dtype=float) >= 0.5
        bins = np.minimum((rewards * RELIABILITY_BINS).astype(int), RELIABILITY_BINS - 1)
        filled = [b for b in range(RELIABILITY_BINS) if (bins == b).any()]
        x = [float(rewards[bins == b].mean()) for b in filled]
        y = [float(labels[bins == b].mean()) for b in filled]
        ax.plot(x, y, marker="o", label=f"judge (n={len(kept)})")
        for xi, yi, b in zip(x, y, filled, strict=True):
            ax.annotate(str(int((bins == b).sum())), (xi, yi), textcoords="offset points", xytext=(4, 4))
    else:
        ax.text(0.5, 0.5, "no labelled rows decided by the judge", ha="center", va="center")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("judge reward (bin mean)")
    ax.set_ylabel("share labelled correct")
    ax.set_title("Reliability (numbers: rows per bin)")
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
