"""Fitting a calibration (``judge-eval --calibrate FILE``) and measuring it where it was not fitted.

The judge's own score (``judge_score``: before any calibration) of the labelled rows the judge
decided is mapped to P(correct) by isotonic regression (the default: monotone, no shape
assumed) or Platt scaling (a logistic curve on the score's log-odds). The isotonic curve is
centred: one knot per isotonic block, at the block's mean score, joined by straight lines, so it
is continuous and strictly increasing instead of a staircase whose first step sits on the lowest
right answer (a step fitted on 40 rows mapped judge scores 0.22 and 0.37 to 1.00).

One curve for every answer type (``"*"``), plus one per answer type with at least
``MIN_ROWS_PER_TYPE`` rows, ``MIN_ROWS_PER_LABEL`` of each label; fewer rows fit noise (curves
from 37-52 rows paid held-out wrong answers), and such a type takes the ``"*"`` curve, as does a
type whose own curve would pay everything (``CalibrationCurve.degenerate``: its lowest score paid
as right, or one reward for every score). A fit whose ``"*"`` curve would pay everything is
refused (``CalibrationError``), not written: the reward system would refuse the file. The reward
config takes the file as ``calibration_file`` (``adapter.pipeline.calibration``).

The effect is measured by k-fold cross-validation: each fold's rows are scored by curves fitted
on the other folds, so no figure comes from the rows its curve was fitted on. ``before`` is the
judge's own score on the same rows; accuracy and false-positive rate cut at 0.5. A calibration
whose cross-validated false-positive rate rises above the 95% bootstrap interval of the judge's
own is fitted and written, but not recommended (``CalibrationFit.caution`` says why): it would
pay wrong answers that the judge's score rejects, which is what RL learns to exploit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy.optimize import isotonic_regression, minimize

from adapter.pipeline.calibration import (
    ANY_ANSWER_TYPE,
    MIN_ROWS_PER_TYPE,
    CalibrationCurve,
    CalibrationFile,
    logit,
)
from eval.coverage import JUDGE_DECIDED
from eval.intervals import Array, Interval, accuracy, bootstrap, false_positive_rate
from eval.metrics import THRESHOLD
from eval.scoring import ScoredRow

__all__ = [
    "DEFAULT_FOLDS",
    "MIN_ROWS_PER_LABEL",
    "MIN_ROWS_PER_TYPE",
    "CalibrationError",
    "CalibrationFit",
    "HeldOut",
    "fit_calibration",
]

Method = Literal["isotonic", "platt"]
DEFAULT_FOLDS = 5
# A curve of its own for an answer type: MIN_ROWS_PER_TYPE (100) rows, 20 of each label. With 20
# wrong answers one paid wrong answer moves the false-positive rate by 0.05, and a block of the
# curve rests on several rows, not on the one lowest right answer. The reward system refuses a
# type's curve fitted on fewer rows.
MIN_ROWS_PER_LABEL = 20
THRESHOLD_GRID = np.linspace(0.0, 1.0, 1001)


class CalibrationError(ValueError):
    """The rows cannot support a calibration (too few, one label only, or a curve that would pay
    everything)."""


class HeldOut(BaseModel):
    """Figures on held-out rows: agreement with the labels, false-positive rate (with its 95%
    bootstrap interval), Brier score."""

    model_config = ConfigDict(frozen=True)

    accuracy: float
    false_positive_rate: float | None
    brier: float
    false_positive_rate_ci: Interval | None = None


class CalibrationFit(BaseModel):
    """The fitted file and what cross-validation measured: the judge's score vs the calibrated one;
    ``caution`` why the calibration is not recommended (None when it is)."""

    model_config = ConfigDict(frozen=True)

    calibration: CalibrationFile
    rows: int
    folds: int
    before: HeldOut
    after: HeldOut
    caution: str | None = None

    def lines(self) -> list[str]:
        """The fit in words, for the terminal and the report."""
        curves = ", ".join(
            f"{name} ({curve.rows} rows, threshold {'n/a' if curve.threshold is None else f'{curve.threshold:.2f}'})"
            for name, curve in self.calibration.curves.items()
        )
        return [
            f"Calibration ({self.calibration.curves[ANY_ANSWER_TYPE].method}) fitted on {self.rows} labelled rows "
            f"the judge decided; curves: {curves}.",
            f"{self.folds}-fold cross-validation, held-out rows only: agreement {self.before.accuracy:.2f} -> "
            f"{self.after.accuracy:.2f}, false-positive rate {_rate(self.before)} -> {_rate(self.after)}, "
            f"Brier {self.before.brier:.3f} -> {self.after.brier:.3f} (judge score -> calibrated).",
            f"Not recommended: {self.caution}. Leave calibration_file unset, or label more rows and fit again."
            if self.caution
            else "Recommended: the held-out false-positive rate does not rise beyond the judge's own interval.",
        ]


def _rate(held_out: HeldOut) -> str:
    return "n/a" if held_out.false_positive_rate is None else f"{held_out.false_positive_rate:.2f}"


def _isotonic(scores: Array, labels: Array) -> list[tuple[float, float]]:
    """Centred isotonic regression: a knot per block of the fit, at its rows' mean score."""
    unique, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    shares = np.bincount(inverse, weights=labels) / counts  # tied scores are one weighted point
    fitted = isotonic_regression(shares, weights=counts.astype(float)).x
    # A block is a run of one fitted value; blocks rise by more than rounding, so knots stay sorted.
    starts = np.flatnonzero(np.r_[True, np.diff(fitted) > 1e-12])
    knots = []
    for start, end in zip(starts, [*starts[1:], len(unique)], strict=True):
        weight = counts[start:end]
        centre = float(np.average(unique[start:end], weights=weight))
        knots.append((centre, float(fitted[start])))
    return knots


def _platt(scores: Array, labels: Array) -> tuple[float, float]:
    z = np.array([logit(float(s)) for s in scores])

    def loss(params: Array) -> float:
        t = params[0] * z + params[1]
        return float(np.sum(np.logaddexp(0.0, t) - labels * t))

    found = minimize(loss, np.array([1.0, 0.0]), method="L-BFGS-B", bounds=[(0.0, None), (None, None)])
    return float(found.x[0]), float(found.x[1])


def _threshold(curve: CalibrationCurve) -> float | None:
    for score in THRESHOLD_GRID:
        if curve.probability(float(score)) >= THRESHOLD:
            return float(score)
    return None


def fit_curve(scores: Array, labels: Array, method: Method) -> CalibrationCurve:
    """One monotone curve from judge scores to P(correct) on these rows (labels binarised)."""
    binary = (labels >= THRESHOLD).astype(float)
    if method == "isotonic":
        draft = CalibrationCurve(
            method=method, rows=len(scores), threshold=None, knots=_isotonic(scores, binary)
        )
    else:
        slope, intercept = _platt(scores, binary)
        draft = CalibrationCurve(
            method=method, rows=len(scores), threshold=None, slope=slope, intercept=intercept
        )
    return draft.model_copy(update={"threshold": _threshold(draft)})


def _both_labels(labels: Array) -> bool:
    positive = labels >= THRESHOLD
    return bool(positive.any() and (~positive).any())


def _curves(
    scores: Array, labels: Array, types: Sequence[str | None], method: Method
) -> dict[str, CalibrationCurve]:
    curves = {ANY_ANSWER_TYPE: fit_curve(scores, labels, method)}
    for answer_type in sorted({t for t in types if t}):
        mask = np.array([t == answer_type for t in types])
        if _enough_for_a_curve(labels[mask]):
            curve = fit_curve(scores[mask], labels[mask], method)
            if curve.degenerate() is None:  # else the type takes the "*" curve
                curves[answer_type] = curve
    return curves


def _enough_for_a_curve(labels: Array) -> bool:
    positive = int((labels >= THRESHOLD).sum())
    return len(labels) >= MIN_ROWS_PER_TYPE and min(positive, len(labels) - positive) >= MIN_ROWS_PER_LABEL


def _held_out(probabilities: Array, labels: Array, seed: int) -> HeldOut:
    rate = false_positive_rate(probabilities, labels)
    return HeldOut(
        accuracy=accuracy(probabilities, labels),
        false_positive_rate=None if np.isnan(rate) else rate,
        brier=float(np.mean((probabilities - (labels >= THRESHOLD)) ** 2)),
        false_positive_rate_ci=bootstrap(false_positive_rate, probabilities, labels, seed=seed),
    )


def _caution(before: HeldOut, after: HeldOut) -> str | None:
    """Why not to use the calibration: its held-out false-positive rate rises above the judge's
    own 95% interval (None when it does not)."""
    if before.false_positive_rate is None or after.false_positive_rate is None:
        return None
    interval = before.false_positive_rate_ci
    bound = interval.high if interval is not None else before.false_positive_rate
    if after.false_positive_rate <= bound:
        return None
    shown = f" (95% CI {interval.low:.2f}-{interval.high:.2f})" if interval is not None else ""
    return (
        f"its cross-validated false-positive rate rises from {before.false_positive_rate:.2f}{shown} to "
        f"{after.false_positive_rate:.2f}: it would pay wrong answers that the judge's own score rejects"
    )


def fit_calibration(
    rows: Sequence[ScoredRow],
    model: str | None,
    profile: str,
    mode: str,
    method: Method = "isotonic",
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
) -> CalibrationFit:
    """Fit curves on the labelled rows the judge decided and cross-validate them."""
    kept = [
        r
        for r in rows
        if r.label is not None and r.judge_score is not None and r.judge_source in JUDGE_DECIDED
    ]
    scores = np.array([r.judge_score for r in kept], dtype=float)
    labels = np.array([r.label for r in kept], dtype=float)
    types = [r.answer_type for r in kept]
    if len(kept) < 2 * folds or not _both_labels(labels):
        raise CalibrationError(
            f"calibration needs at least {2 * folds} labelled rows the judge decided, with both labels; "
            f"this run has {len(kept)}"
        )
    fold_of = np.random.default_rng(seed).permutation(len(kept)) % folds
    calibrated = np.empty(len(kept))
    for fold in range(folds):
        test = fold_of == fold
        train = ~test
        if not _both_labels(labels[train]):
            raise CalibrationError(
                "a cross-validation fold holds one label only: label more rows of the rarer kind"
            )
        curves = _curves(
            scores[train], labels[train], [t for t, k in zip(types, train, strict=True) if k], method
        )
        file = CalibrationFile(model=model, profile=profile, mode=mode, curves=curves)
        for i in np.flatnonzero(test):
            curve = file.curve(types[i])
            assert curve is not None  # the "*" curve is always there
            calibrated[i] = curve.probability(float(scores[i]))
    before, after = _held_out(scores, labels, seed), _held_out(calibrated, labels, seed)
    caution = _caution(before, after)
    curves = _curves(scores, labels, types, method)
    pays_everything = curves[ANY_ANSWER_TYPE].degenerate()
    if pays_everything:
        raise CalibrationError(
            f"the fitted curve '*' {pays_everything}: the judge's scores do not separate right from wrong "
            "on these rows, and the reward system would refuse the file; leave calibration_file unset, or "
            "label more rows"
        )
    calibration = CalibrationFile(
        model=model,
        profile=profile,
        mode=mode,
        curves=curves,
        cross_validation={
            "rows": len(kept),
            "folds": folds,
            "seed": seed,
            "accuracy_before": before.accuracy,
            "accuracy_after": after.accuracy,
            "brier_before": before.brier,
            "brier_after": after.brier,
            "false_positive_rate_before": before.false_positive_rate,
            "false_positive_rate_after": after.false_positive_rate,
            "recommended": int(caution is None),
        },
    )
    return CalibrationFit(
        calibration=calibration, rows=len(kept), folds=folds, before=before, after=after, caution=caution
    )
