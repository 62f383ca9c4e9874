"""The judgment log: an opt-in, sampled JSONL audit log of finished rewards.

Set ``judgment_log_path`` in the reward config (``{pid}`` in it becomes the process id, for
trainers that reward in several processes). Each sampled reward becomes one JSON line
(``judgment_line``): time, request id, answer_type, profile, mode, model, source, reward,
the judge's score, label, confidence and explanation, reason, latency, and the inputs, each
text cut to ``judgment_log_max_chars`` (``cut_text``: head and tail kept, a marker between).
An agent's trajectory is logged as the judge is shown it, fitted to ``judgment_log_max_chars``
(``logged_trajectory``: the end kept, the last tool result always, runs left out counted),
with each turn's score (``step_scores``, None where not judged) when process rewards are on.
Nothing else: no metadata, no error text, no config, no header; every text is scrubbed of
secrets (``judge_vllm.redaction``) before it is cut, so not even a cut fragment of a key remains.

The shadow audit (``adapter.observability.shadow_audit``) writes lines of its own into the same
file, each with ``kind: "shadow_audit"`` and no ``source``: a row the rule decided, the judge's
verdict on it, and the two compared (``record_audit``). Every such line is written while the log
is on (the audit has sampled its rows already); ``judge-eval --from-log`` reports them apart.

Sampling is a pure function of the request id (``sampled``): a reward is logged when a hash
of its id falls below ``judgment_log_sample_rate``, so the same request is in or out in every
process and every run, and a trainer's own request ids pick the same sample each time.

The reward's thread only samples and puts the finished result on a bounded queue; a full
queue drops the line (counted). A writer thread serialises the lines and appends them in
batches to the file, which is rotated at ``judgment_log_max_bytes`` with
``judgment_log_backups`` older files kept (``path.1`` the newest), so the log never holds
much more than ``max_bytes x (backups + 1)``. A failed write (full disk, unwritable path)
loses its lines, counted as errors, with a warning when writing starts failing and when it
works again: rewards never see it. Reward systems in one process that name the same file
share its writer (and its counts); ``close()`` writes what is queued, then closes the file.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

import pydantic_core
from typing_extensions import TypedDict

from adapter.config import RewardConfig
from adapter.fork_safety import reset_after_fork
from adapter.observability.judgment_writer import (
    JudgmentWriter,
    LineSink,
    RotatingFile,
    open_writer,
    release_writer,
)
from adapter.result import RewardResult, Source
from judge_vllm.redaction import scrub
from judge_vllm.schemas import JudgeRequest
from judge_vllm.trajectory import CallStep, Elided, ResultStep, TextStep, Trajectory, fit_trajectory

__all__ = [
    "JudgmentEntry",
    "JudgmentLine",
    "JudgmentLog",
    "JudgmentLogCounts",
    "LoggedStep",
    "cut_text",
    "judgment_line",
    "logged_text",
    "logged_trajectory",
    "sampled",
]

QUEUE_SIZE = 10_000
# A key this short could match ordinary text; real API keys are far longer.
_HASH_SPACE = float(1 << 64)


class JudgmentLogCounts(TypedDict):
    """A judgment log's file and sample rate, and its lines: logged, dropped (queue full), lost to
    write errors, and queued."""

    path: str
    sample_rate: float
    logged: int
    dropped: int
    errors: int
    queued: int


def sampled(request_id: str, rate: float) -> bool:
    """Whether the reward for ``request_id`` is logged at ``rate`` (a pure function of both)."""
    if rate >= 1.0:
        return True
    if rate <= 0.0:
        return False
    digest = hashlib.blake2b(request_id.encode("utf-8", "replace"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / _HASH_SPACE < rate


def logged_text(text: str | None, max_chars: int) -> str | None:
    """``text`` as a log line holds it: scrubbed of secrets, then cut to ``max_chars``."""
    return None if text is None else cut_text(scrub(text), max_chars)


def cut_text(text: str, max_chars: int) -> str:
    """``text`` if it fits in ``max_chars``; else its head and tail around a marker saying how
    many characters were cut (the result is ``max_chars`` plus the marker long)."""
    if len(text) <= max_chars:
        return text
    head = max_chars // 2
    tail = max_chars - head
    return f"{text[:head]} [... {len(text) - max_chars} chars cut ...] {text[len(text) - tail :]}"


class LoggedStep(TypedDict, total=False):
    """One step of an agent's trajectory in a log line: its number in the trajectory (from 1), its
    kind (``text``, ``call``, ``result``; a result's ``role``: tool or user) and its text, scrubbed
    and clipped; or, for a run of steps the line leaves out, how many (``elided``)."""

    step: int
    kind: str
    role: str
    text: str
    elided: int


class JudgmentEntry(NamedTuple):
    """A sampled reward as queued by the reward's thread (serialised by the writer); a tuple,
    because building it is on the reward's path. ``trajectory``: the agent's steps as logged."""

    unix_time: float
    result: RewardResult
    request: JudgeRequest | None
    model: str | None
    score: float | None
    trajectory: list[LoggedStep] | None = None


class JudgmentLine(TypedDict):
    """One line of the judgment log, before it is JSON (``time`` a UTC datetime; texts cut)."""

    time: datetime.datetime
    request_id: str
    answer_type: str | None
    profile: str
    mode: str
    model: str | None
    source: Source
    reward: float | None
    score: float | None
    label: str | None
    confidence: float | None
    calibration: str | None
    explanation: str | None
    reason: str | None
    latency_ms: float
    detailed_scores: dict[str, float] | None
    judge_scores: dict[str, float | None] | None
    prompt: str | None
    completion: str | None
    answer: str | None
    final_answer: str | None
    trajectory: list[LoggedStep] | None
    step_scores: list[float | None] | None


def judgment_line(entry: JudgmentEntry, profile: str, mode: str, max_chars: int) -> JudgmentLine:
    """The object logged for one reward, as ``pydantic_core.to_json`` takes it (the time is a
    UTC datetime); docs/eval.md shows a line."""
    result, request = entry.result, entry.request

    def text(value: str | None) -> str | None:
        return None if value is None else cut_text(scrub(value), max_chars)  # scrubbed before the cut

    return {
        "time": datetime.datetime.fromtimestamp(entry.unix_time, datetime.timezone.utc),
        "request_id": result.request_id,
        "answer_type": request.answer_type if request else None,
        "profile": profile,
        "mode": mode,
        "model": entry.model,
        "source": result.source,
        "reward": result.reward,
        "score": entry.score,
        "label": result.label,
        "confidence": result.confidence,
        "calibration": result.calibration,
        "explanation": text(result.explanation),
        "reason": text(result.reason),
        "latency_ms": round(result.latency_ms, 3),
        "detailed_scores": result.detailed_scores,
        "judge_scores": result.judge_scores,
        # The request's texts were scrubbed and cut when the line was queued (``_as_logged``).
        "prompt": request.prompt if request else None,
        "completion": request.completion if request else None,
        "answer": request.answer if request else None,
        "final_answer": request.final_answer if request else None,
        "trajectory": entry.trajectory,
        "step_scores": result.step_scores,
    }


def logged_trajectory(trajectory: Trajectory, max_chars: int) -> list[LoggedStep]:
    """``trajectory``'s steps within about ``max_chars``, fitted as the judge's view is
    (``fit_trajectory``), each text scrubbed of secrets before it is clipped."""
    scrubbed = trajectory.model_copy(update={"steps": tuple(_scrubbed(s) for s in trajectory.steps)})
    logged: list[LoggedStep] = []
    for item in fit_trajectory(scrubbed, max_chars).items:
        if isinstance(item, Elided):
            logged.append({"elided": item.count})
        elif isinstance(step := item.step, TextStep):
            logged.append({"step": item.number, "kind": step.kind, "text": step.text})
        elif isinstance(step, CallStep):
            logged.append({"step": item.number, "kind": step.kind, "text": f"{step.name}({step.arguments})"})
        else:
            logged.append({"step": item.number, "kind": step.kind, "role": step.role, "text": step.content})
    return logged


def _scrubbed(step: TextStep | CallStep | ResultStep) -> TextStep | CallStep | ResultStep:
    if isinstance(step, TextStep):
        return step.model_copy(update={"text": scrub(step.text)})
    if isinstance(step, CallStep):
        return step.model_copy(update={"name": scrub(step.name), "arguments": scrub(step.arguments)})
    return step.model_copy(update={"content": scrub(step.content)})


def _as_logged(request: JudgeRequest | None, max_chars: int) -> JudgeRequest | None:
    """``request`` with its texts as the log writes them, scrubbed of secrets, then cut to
    ``max_chars``: a queued line holds bounded bytes, never a whole 10 MB completion (nor a
    trajectory: it is queued as ``logged_trajectory``)."""
    if request is None:
        return None
    texts: dict[str, object] = {
        name: cut_text(scrub(value), max_chars)
        for name in ("prompt", "completion", "answer", "final_answer")
        if isinstance(value := getattr(request, name), str)
    }
    return request.model_copy(update={**texts, "trajectory": None})


class JudgmentLog:
    """A reward system's judgment log; inert when ``judgment_log_path`` is unset or the rate is 0.

    ``model`` is asked for the judge's model name when a line is queued. ``sink`` (tests,
    benchmarks) replaces the rotating file for a path; ``queue_size`` bounds the lines waiting.
    """

    def __init__(
        self,
        config: RewardConfig,
        model: Callable[[], str | None],
        sink: Callable[[Path], LineSink] | None = None,
        queue_size: int | None = None,
    ) -> None:
        self.path_template = config.judgment_log_path
        self.rate = config.judgment_log_sample_rate
        self._enabled = self.path_template is not None and self.rate > 0.0
        self._model = model
        self._profile, self._mode = config.profile, config.mode
        self._max_chars = config.judgment_log_max_chars
        self._max_bytes, backups = config.judgment_log_max_bytes, config.judgment_log_backups
        self._sink = sink or (lambda path: RotatingFile(path, self._max_bytes, backups))
        self._queue_size = queue_size or QUEUE_SIZE
        self._writer: JudgmentWriter | None = None
        self._closed = False
        self._lock = threading.Lock()
        reset_after_fork(self)

    def _after_fork_in_child(self) -> None:
        self._writer = None
        self._lock = threading.Lock()

    def record(self, result: RewardResult, request: JudgeRequest | None, score: float | None = None) -> None:
        """Queue ``result`` for the log if it is sampled (``score``: the judge's, uncalibrated)."""
        if not self._enabled or not sampled(result.request_id, self.rate):
            return
        writer = self._writer or self._open()
        if writer is not None:
            logged = _as_logged(request, self._max_chars)
            steps = None
            if request is not None and request.trajectory is not None:
                steps = logged_trajectory(request.trajectory, self._max_chars)
            writer.put(self._render, JudgmentEntry(time.time(), result, logged, self._model(), score, steps))

    @property
    def max_chars(self) -> int:
        """Each logged text's bound (``judgment_log_max_chars``)."""
        return self._max_chars

    def record_audit(self, line: Mapping[str, object]) -> None:
        """Queue a shadow audit's line (its texts already ``logged_text``); the time, the model,
        the profile, the mode and ``kind: "shadow_audit"`` are added. Every one is logged while the
        log is on."""
        if not self._enabled:
            return
        writer = self._writer or self._open()
        if writer is not None:
            writer.put(self._render_audit, (time.time(), self._model(), line))

    def _render_audit(self, item: tuple[float, str | None, Mapping[str, object]]) -> bytes:
        unix_time, model, line = item
        moment = datetime.datetime.fromtimestamp(unix_time, datetime.timezone.utc)
        head = {"time": moment, "kind": "shadow_audit", "profile": self._profile, "mode": self._mode}
        return pydantic_core.to_json({**head, "model": model, **line})

    def _render(self, entry: JudgmentEntry) -> bytes:
        """The entry's JSON line, UTF-8 (on the writer thread)."""
        return pydantic_core.to_json(judgment_line(entry, self._profile, self._mode, self._max_chars))

    def _open(self) -> JudgmentWriter | None:
        with self._lock:
            if self._writer is None and self._enabled and self.path_template is not None:
                path = Path(str(self.path_template).replace("{pid}", str(os.getpid())))
                path = path.expanduser().absolute()
                self._writer = open_writer(path, self._sink, self._queue_size, self._max_bytes)
            return self._writer

    def snapshot(self) -> JudgmentLogCounts | None:
        """Counts for ``get_metrics()`` (per file): lines logged, dropped (queue full), lost to
        write errors, and queued; None when the log is off."""
        if self.path_template is None:
            return None
        writer = self._writer
        return {
            "path": str(writer.path if writer else self.path_template),
            "sample_rate": self.rate,
            "logged": writer.logged if writer else 0,
            "dropped": writer.dropped if writer else 0,
            "errors": writer.errors if writer else 0,
            "queued": writer.queued if writer else 0,
        }

    def close(self) -> None:
        """Stop logging; the last log on a file writes what is queued and closes it. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed, self._enabled = True, False
            writer = self._writer
        if writer is not None:
            release_writer(writer)
