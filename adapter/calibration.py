"""Confidence calibration: shrink judge rewards the judge itself was unsure of (the seed's
``if confidence < 0.5: score *= 0.8``). Off unless ``calibration`` is set in the config."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ConfidenceCalibration", "calibrate"]


class ConfidenceCalibration(BaseModel):
    """Rewards whose ``confidence`` is below ``threshold`` are multiplied by ``factor``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    factor: float = Field(default=0.8, ge=0.0, le=1.0)


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
