"""Did the judge judge? How many rows the judge decided, of those that were sent to it.

A judged run's rewards come from several sources: ``judge`` and ``cache`` are the judge's
verdicts; ``rule`` rows were decided without it (pre-checks, the cascade, invalid input) and
never sent; ``rule_fallback`` and ``error`` rows were sent but the judge did not answer. A run
whose judge decided few of the rows sent to it reports on the rule reward under the judge's
name, so ``judge-eval`` says so first and, below ``--min-judged``, fails.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from adapter.result import JUDGE_DECIDED

__all__ = [
    "DEFAULT_MIN_JUDGED",
    "JUDGE_DECIDED",
    "JudgeCoverage",
    "judge_coverage",
]

DECIDED_WITHOUT_JUDGE = frozenset({"rule"})
DEFAULT_MIN_JUDGED = 0.9
SHOWN_REASONS = 3
# Room for a connection error whole: its URL and the command that checks it.
SHOWN_REASON_CHARS = 320


class JudgeCoverage(BaseModel):
    """Counts of a judged run's rows by who decided them."""

    model_config = ConfigDict(frozen=True)

    rows: int
    sent: int
    decided: int
    by_source: dict[str, int]
    reasons: dict[str, int] = Field(
        default_factory=dict,
        description="why the rows sent to the judge got no verdict (their reason), most frequent first",
    )

    @property
    def fraction(self) -> float:
        """The share of the rows sent to the judge that it decided (0 when none was sent)."""
        return self.decided / self.sent if self.sent else 0.0

    def shortfall(self) -> str | None:
        """One sentence when the judge decided fewer rows than were sent to it, else None."""
        if self.sent and self.decided == self.sent:
            return None
        if not self.sent:
            return f"no row reached the judge: all {self.rows} were decided by rules (pre-checks or cascade)"
        missed = ", ".join(
            f"{self.by_source[s]} {s}"
            for s in sorted(self.by_source)
            if s not in JUDGE_DECIDED | DECIDED_WITHOUT_JUDGE
        )
        shown = list(self.reasons.items())[:SHOWN_REASONS]
        why = "; ".join(f"{reason[:SHOWN_REASON_CHARS]} ({n})" for reason, n in shown)
        if len(self.reasons) > SHOWN_REASONS:
            why += f"; {len(self.reasons) - SHOWN_REASONS} other reason(s)"
        return (
            f"the judge decided {self.decided} of the {self.sent} rows sent to it ({self.fraction:.0%}); "
            f"the others got no verdict ({missed})" + (f", because: {why}" if why else "")
        )

    def failure(self, min_judged: float) -> str | None:
        """The one-line reason this run does not test the judge, or None when it does."""
        if self.sent and self.fraction >= min_judged:
            return None
        return f"{self.shortfall()}; below --min-judged {min_judged:g} (--allow-fallback reports it anyway)"


def judge_coverage(
    sources: Iterable[str | None], reasons: Iterable[str | None] | None = None
) -> JudgeCoverage:
    """Count a judged run's rows by source (``None``: no judge result for the row) and, given each
    row's ``reason`` in the same order, why those sent to the judge got no verdict."""
    listed = list(sources)
    counts = Counter(source or "missing" for source in listed)
    rows = sum(counts.values())
    decided_elsewhere = JUDGE_DECIDED | DECIDED_WITHOUT_JUDGE
    why = Counter(
        reason or "no reason given"
        for source, reason in zip(listed, reasons or (), strict=reasons is not None)
        if (source or "missing") not in decided_elsewhere
    )
    return JudgeCoverage(
        rows=rows,
        sent=rows - sum(counts[s] for s in DECIDED_WITHOUT_JUDGE),
        decided=sum(counts[s] for s in JUDGE_DECIDED),
        by_source=dict(counts),
        reasons=dict(why.most_common()),
    )
