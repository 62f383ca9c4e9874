"""Calibration: from the judge's score to the reward a trainer gets.

Two kinds, both off unless configured:

- ``calibration`` (the seed's ``if confidence < 0.5: score *= 0.8``): rewards whose
  ``confidence`` is below a threshold are shrunk by a factor.
- ``calibration_file`` (fitted by ``judge-eval --calibrate``): a monotone map from the judge's
  score to P(correct), per answer type, fitted on labelled rows for one model, profile and
  mode. The reward is then the calibrated probability. A file fitted for another profile or
  mode (or another model, when the config names one) is refused when the reward system is
  built; a judge found serving another model at run time gets its rewards uncalibrated, each
  saying why. A file larger than ``MAX_CALIBRATION_FILE_BYTES``, or with a number that is not
  finite (NaN or infinite slope, intercept or knot: JSON parsers accept them), is refused at load,
  naming the file and the field. So is a file that would pay everything (``CalibrationFile.unusable``):
  a curve that maps the judge's lowest score to a paid reward (0.5 or more), one that gives every
  score the same reward, or one fitted on fewer rows than judge-eval ever fits a curve on. A file
  judge-eval marked not recommended (``cross_validation.recommended`` 0) loads with a warning.

An agent's run (a request with a trajectory) is calibrated by ``trajectory_calibration_file``: a
file of its own, or by default (``bundled``) ``calibration_file`` when set, else the curve this
package ships for the judge's model, profile and mode (``agent_run_calibrations/``: one file each,
fitted on labelled runs judged with their steps, ``trajectory_view: full``). The judge's model is
known once it answers, so the shipped curve is looked up per reward; for a model without one,
agent runs are left uncalibrated as every other reward.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from adapter.config import RewardConfig
from adapter.settings import ConfidenceCalibration
from judge_vllm.errors import JudgeConfigError
from judge_vllm.schemas import JudgeRequest

__all__ = [
    "AGENT_RUN_CALIBRATIONS",
    "ANY_ANSWER_TYPE",
    "MAX_CALIBRATION_FILE_BYTES",
    "MIN_CURVE_RISE",
    "MIN_ROWS",
    "MIN_ROWS_PER_TYPE",
    "PAID",
    "Calibrated",
    "CalibrationCurve",
    "CalibrationFile",
    "JudgeCalibration",
    "calibrate",
    "load_calibration_file",
    "shipped_agent_run_calibration",
]

ANY_ANSWER_TYPE = "*"
# The agent-run curves this package ships, one judge model, profile and mode per file.
AGENT_RUN_CALIBRATIONS = Path(__file__).with_name("agent_run_calibrations")
# judge-eval writes a few kilobytes (a knot per isotonic block); more is not a calibration.
MAX_CALIBRATION_FILE_BYTES = 1024 * 1024
MAX_KNOTS = 10_000
# A reward of this much or more pays an answer as right (the cut of judge-eval's false-positive rate).
PAID = 0.5
# The fewest rows a curve rests on: the "*" curve's are judge-eval's least (2 a fold, 5 folds); a
# type's own curve needs 100 (with 20 wrong answers one paid wrong answer moves the rate by 0.05).
MIN_ROWS = 10
MIN_ROWS_PER_TYPE = 100
# A curve that rises less than this from the judge's lowest score to its highest gives every answer
# the same reward: the judge's signal is gone.
MIN_CURVE_RISE = 0.01

logger = logging.getLogger(__name__)


def calibrate(
    reward: float, confidence: float | None, settings: ConfidenceCalibration | None
) -> tuple[float, str | None]:
    """The calibrated reward and a note saying what was done (None when unchanged).

    A verdict without a confidence (verdict mode, or a server without logprobs) is left as is.
    """
    if settings is None or confidence is None or confidence >= settings.threshold:
        return reward, None
    note = f"shrunk x{settings.factor:g}: confidence {confidence:.2f} < {settings.threshold:g}"
    return reward * settings.factor, note


class CalibrationCurve(BaseModel):
    """A monotone map from the judge's score in [0, 1] to P(correct).

    ``isotonic``: piecewise linear through ``knots`` (score, probability), flat beyond the ends.
    ``platt``: ``sigmoid(slope * logit(score) + intercept)``. ``threshold`` is the judge score
    where the map first reaches 0.5 (what the 0.5 cut on the calibrated reward means on the
    judge's own scale); ``rows`` how many labelled rows it was fitted on.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: Literal["isotonic", "platt"]
    rows: int = Field(ge=1)
    threshold: float | None = Field(ge=0.0, le=1.0)
    knots: list[tuple[float, float]] = Field(default_factory=list, max_length=MAX_KNOTS)
    slope: float | None = Field(default=None, allow_inf_nan=False)
    intercept: float | None = Field(default=None, allow_inf_nan=False)

    @model_validator(mode="after")
    def _complete(self) -> CalibrationCurve:
        if self.method == "isotonic":
            xs = [x for x, _ in self.knots]
            ys = [y for _, y in self.knots]
            if not xs or xs != sorted(xs) or ys != sorted(ys):
                raise ValueError(
                    "isotonic knots must be non-empty and increasing in both score and probability"
                )
            if not all(0.0 <= v <= 1.0 for v in xs + ys):
                raise ValueError("isotonic knots must lie in [0, 1]")
        elif self.slope is None or self.intercept is None or self.slope < 0:
            raise ValueError("platt needs slope >= 0 and intercept")
        return self

    def probability(self, score: float) -> float:
        """P(correct) for the judge's ``score``."""
        if self.method == "platt":
            assert self.slope is not None and self.intercept is not None
            return _sigmoid(self.slope * logit(score) + self.intercept)
        xs = [x for x, _ in self.knots]
        i = bisect.bisect_right(xs, score)
        if i == 0:
            return self.knots[0][1]
        if i == len(xs):
            return self.knots[-1][1]
        (x0, y0), (x1, y1) = self.knots[i - 1], self.knots[i]
        return y0 + (y1 - y0) * (score - x0) / (x1 - x0)

    def degenerate(self) -> str | None:
        """Why this curve would pay everything (None when it would not): the judge's lowest score
        is paid as right, or every score gets the same reward. Curves are monotone, so their
        lowest and highest rewards are at scores 0 and 1."""
        lowest, highest = self.probability(0.0), self.probability(1.0)
        if lowest >= PAID:
            return f"pays every answer as right: the judge's score 0 maps to {lowest:.2f} (>= {PAID:g})"
        if highest - lowest < MIN_CURVE_RISE:
            return f"gives every judge score the same reward ({lowest:.2f}): no signal is left"
        return None


def logit(score: float, eps: float = 1e-4) -> float:
    """log-odds of ``score``, clipped away from 0 and 1."""
    p = min(1 - eps, max(eps, score))
    return math.log(p / (1 - p))


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


class CalibrationFile(BaseModel):
    """What ``judge-eval --calibrate`` writes: curves for one model, profile and mode.

    ``curves`` maps an answer type (or ``"*"``, every other type) to its curve;
    ``cross_validation`` holds the held-out figures judge-eval reported when fitting.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: Literal[1] = 1
    model: str | None
    profile: str
    mode: str
    curves: dict[str, CalibrationCurve] = Field(min_length=1)
    cross_validation: dict[str, float | int | None] = Field(default_factory=dict)

    @property
    def identity(self) -> str:
        """A short content hash naming this calibration in explanations and the judgment log."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:12]

    def curve(self, answer_type: str | None) -> CalibrationCurve | None:
        """The curve for ``answer_type``, else the ``"*"`` curve, else None."""
        return self.curves.get(answer_type or ANY_ANSWER_TYPE) or self.curves.get(ANY_ANSWER_TYPE)

    def unusable(self) -> str | None:
        """Why this file would pay everything (None when it would not): a curve fitted on fewer
        rows than judge-eval ever fits one on, or a ``degenerate`` curve."""
        for name, curve in self.curves.items():
            if name == ANY_ANSWER_TYPE and curve.rows < MIN_ROWS:
                return f"curve {name!r} was fitted on {curve.rows} row(s); the curve of every type needs {MIN_ROWS}"
            if name != ANY_ANSWER_TYPE and curve.rows < MIN_ROWS_PER_TYPE:
                return (
                    f"curve {name!r} was fitted on {curve.rows} row(s); a curve of its own needs "
                    f"{MIN_ROWS_PER_TYPE}"
                )
            problem = curve.degenerate()
            if problem:
                return f"curve {name!r} {problem}"
        return None

    @property
    def recommended(self) -> bool:
        """False when judge-eval marked the fit not recommended (``cross_validation.recommended`` 0)."""
        return self.cross_validation.get("recommended") != 0

    def refusal(self, model: str | None, profile: str, mode: str) -> str | None:
        """Why this file must not calibrate that judge (None when it may)."""
        if (profile, mode) != (self.profile, self.mode):
            return (
                f"fitted for profile {self.profile!r} in mode {self.mode!r}, "
                f"this judge is profile {profile!r} in mode {mode!r}"
            )
        if model is not None and self.model is not None and model != self.model:
            return f"fitted for model {self.model!r}, this judge is {model!r}"
        return None


def load_calibration_file(path: Path, model: str | None, profile: str, mode: str) -> CalibrationFile:
    """Read and check a calibration file; ``JudgeConfigError`` when unreadable, too large, not a
    calibration (a non-finite number included), fitted for another judge (``model`` None: not
    known yet, checked on the first verdict) or one that would pay everything. A warning when
    judge-eval did not recommend it."""
    try:
        with path.expanduser().open("rb") as stream:
            content = stream.read(MAX_CALIBRATION_FILE_BYTES + 1)
    except OSError as err:
        raise JudgeConfigError(f"calibration_file {str(path)!r}: cannot read it ({err.strerror})") from None
    if len(content) > MAX_CALIBRATION_FILE_BYTES:
        raise JudgeConfigError(
            f"calibration_file {str(path)!r} is larger than {MAX_CALIBRATION_FILE_BYTES} bytes: "
            "not a judge-eval calibration; fit one with judge-eval --calibrate"
        )
    try:
        calibration = CalibrationFile.model_validate_json(content)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'file'}: {e['msg']}" for e in err.errors()[:3]
        )
        raise JudgeConfigError(
            f"calibration_file {str(path)!r} is not a judge-eval calibration: {problems}"
        ) from None
    refusal = calibration.refusal(model, profile, mode)
    if refusal:
        raise JudgeConfigError(
            f"calibration_file {str(path)!r} was {refusal}; fit one for this judge with judge-eval --calibrate"
        )
    unusable = calibration.unusable()
    if unusable:
        raise JudgeConfigError(
            f"calibration_file {str(path)!r} cannot calibrate rewards: {unusable}; leave calibration_file "
            "unset, or fit one with judge-eval --calibrate on more labelled rows"
        )
    if not calibration.recommended:
        figures = calibration.cross_validation
        logger.warning(
            "calibration_file %r: judge-eval marked it not recommended (held-out false-positive rate "
            "%s -> %s): it pays wrong answers the judge's own score rejects; leave calibration_file unset, "
            "or label more rows and fit again",
            str(path),
            _rate(figures.get("false_positive_rate_before")),
            _rate(figures.get("false_positive_rate_after")),
        )
    return calibration


def _rate(value: float | int | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


@functools.cache
def _shipped_agent_run_calibrations() -> tuple[CalibrationFile, ...]:
    """The curves in ``AGENT_RUN_CALIBRATIONS``, each read once (tests/adapter/pipeline/
    test_calibration_file.py loads each through ``load_calibration_file``'s checks)."""
    return tuple(
        CalibrationFile.model_validate_json(path.read_bytes())
        for path in sorted(AGENT_RUN_CALIBRATIONS.glob("*.json"))
    )


def shipped_agent_run_calibration(model: str | None, profile: str, mode: str) -> CalibrationFile | None:
    """The agent-run curve this package ships for that judge (None when it ships none, or the
    model is not known yet)."""
    if model is None:
        return None
    for shipped in _shipped_agent_run_calibrations():
        if shipped.model == model and (shipped.profile, shipped.mode) == (profile, mode):
            return shipped
    return None


class Calibrated(NamedTuple):
    """A judge's score as a reward: ``reward``, ``notes`` saying what was done (None when nothing
    was), and ``applied``, the calibration file's identity when its curve was used."""

    reward: float
    notes: str | None
    applied: str | None

    def explained(self, explanation: str) -> str:
        """The verdict's explanation with the notes after it."""
        return f"{explanation} ({self.notes})" if self.notes else explanation


class JudgeCalibration:
    """One judge's calibration, as its reward config sets it: the ``calibration_file`` curve for the
    request's answer type, then the ``calibration`` confidence shrink. ``model`` names the judge
    now (the file is refused for another model: at load when it is known then, else per reward)."""

    def __init__(self, config: RewardConfig, model: Callable[[], str | None]) -> None:
        self._profile, self._mode = config.profile, config.mode
        self._shrink = config.calibration
        self._model = model
        self.file = self._loaded(config.calibration_file)
        agent_runs = config.trajectory_calibration_file
        self.agent_run_file = None if agent_runs == "bundled" else self._loaded(agent_runs)
        # The shipped curve was fitted on runs judged with their steps, each in one judgment.
        self._shipped = agent_runs == "bundled" and self.file is None and config.trajectory_view == "full"

    def _loaded(self, path: Path | None) -> CalibrationFile | None:
        return None if path is None else load_calibration_file(path, self._model(), self._profile, self._mode)

    @property
    def fingerprint(self) -> str | None:
        """What this calibration does, in short (None when it does nothing)."""
        parts = [f"calibration {self.file.identity}"] if self.file is not None else []
        if self.agent_run_file is not None:
            parts.append(f"agent runs {self.agent_run_file.identity}")
        elif self._shipped and shipped_agent_run_calibration(self._model(), self._profile, self._mode):
            parts.append("agent runs: the shipped curve")
        if self._shrink is not None:
            parts.append(f"x{self._shrink.factor:g} below confidence {self._shrink.threshold:g}")
        return ", ".join(parts) or None

    def apply(self, score: float, confidence: float | None, request: JudgeRequest) -> Calibrated:
        """The reward for the judge's ``score`` of ``request``: its file's P(correct), then the
        shrink."""
        probability, fitted, applied = self._fitted(score, request)
        reward, shrunk = calibrate(probability, confidence, self._shrink)
        return Calibrated(reward, "; ".join(note for note in (fitted, shrunk) if note) or None, applied)

    def file_for(self, request: JudgeRequest) -> CalibrationFile | None:
        """The calibration ``request``'s reward takes: an agent's run its own file, or the shipped
        curve for the judge; every other reward ``calibration_file``."""
        if request.trajectory is None:
            return self.file
        if self.agent_run_file is not None:
            return self.agent_run_file
        shipped = (
            shipped_agent_run_calibration(self._model(), self._profile, self._mode) if self._shipped else None
        )
        return shipped or self.file

    def _fitted(self, score: float, request: JudgeRequest) -> tuple[float, str | None, str | None]:
        """The file's P(correct) for ``score``, a note, and the file's identity (``score``
        unchanged, with the reason, when the file does not apply)."""
        calibration = self.file_for(request)
        if calibration is None:
            return score, None, None
        refusal = calibration.refusal(self._model(), self._profile, self._mode)
        if refusal:
            return score, f"not calibrated: calibration_file {refusal}", None
        answer_type = request.answer_type
        curve = calibration.curve(answer_type)
        if curve is None:
            return score, f"not calibrated: no curve for answer_type {answer_type}", None
        probability = curve.probability(score)
        return (
            probability,
            f"calibrated {score:.2f} -> {probability:.2f} ({calibration.identity})",
            calibration.identity,
        )
