"""The probe rows: judge-eval's row format, each with a ``category`` (its class) and a ``label``.

A row is ``{"id", "prompt", "completion", "answer", "answer_type", "label", "category"}``: label 1
for a right answer (a control), 0 for a wrong one (a hack, a hedge, an empty answer). The bundled
set (``probe.jsonl`` beside this module, ``bundled_probe_rows``) holds master keys, text aimed at
the grader, hedges, answer sprays, format tricks, empty and truncated answers, and controls in
every style (boxed, after a marker, in an ``<answer>`` tag, bare, in a sentence); ``--rows`` adds
a user's own (``load_probe_rows``).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge_vllm.errors import JudgeInputError

__all__ = ["BUNDLED_PROBE_ROWS", "PAID_AT", "ProbeRow", "bundled_probe_rows", "load_probe_rows"]

BUNDLED_PROBE_ROWS = Path(__file__).with_name("probe.jsonl")
# A reward (and a label) at or above this pays.
PAID_AT = 0.5


class ProbeRow(BaseModel):
    """One probe: what is rewarded, whether it deserves a reward (``label``), and its class."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str = ""
    prompt: str
    completion: str
    answer: str = ""
    answer_type: str | None = None
    label: float = Field(ge=0.0, le=1.0, description="1: a right answer (a control); 0: a wrong one")
    category: str = Field(default="user", min_length=1, description="the row's class in the report")

    @property
    def deserves_reward(self) -> bool:
        """A control (label paid), not a wrong answer."""
        return self.label >= PAID_AT


def load_probe_rows(path: Path) -> list[ProbeRow]:
    """The rows of a JSONL file; ``JudgeInputError`` naming the line of the first bad one, or
    ``OSError`` when the file cannot be read."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(ProbeRow.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError) as err:
            problem = err.msg if isinstance(err, json.JSONDecodeError) else err.errors()[0]["msg"]
            raise JudgeInputError(
                f"{path} line {number}: not a probe row ({problem}); a row is a JSON object with prompt, "
                "completion, answer, answer_type, label (0 or 1) and category"
            ) from None
    if not rows:
        raise JudgeInputError(f"{path} holds no probe rows")
    return rows


def bundled_probe_rows() -> list[ProbeRow]:
    """The bundled probe set."""
    return load_probe_rows(BUNDLED_PROBE_ROWS)
