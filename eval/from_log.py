"""Reading judgment logs back (``judge-eval --from-log``): one pass, bounded memory.

``read_logs`` streams every line of the given files (the rotated set in any order: lines are
bucketed by their own time) into a ``LogAggregator`` and returns a ``LogSummary``:

- rewards per source and answer_type: count, mean and a histogram on [0, 1];
- fallbacks (sources ``rule_fallback`` and ``error``) and their reasons, per time bucket;
- a reward-hacking watch list: high-reward completions, grouped after normalisation
  (case-folded, whitespace collapsed), most distinct prompts first;
- the judge's labels per profile and mode;
- the shadow audit's lines (``kind: "shadow_audit"``: a row the cascade's rule decided, judged
  too): outcomes per grammar form and per answer_type, the form whose rule-paid rows the judge
  rejected most often first, each with an example.

A line that is not a logged judgment (not JSON, no ``time``/``source``, a reward outside
[0, 1]) is counted and skipped; so is a truncated last line, named as such.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "HIST_BINS",
    "AuditGroup",
    "FallbackBucket",
    "LabelCount",
    "LogProblem",
    "LogSummary",
    "LoggedAudit",
    "LoggedJudgment",
    "RewardHistogram",
    "WatchedCompletion",
    "bucket_minutes_for",
    "normalise_completion",
    "read_logs",
    "summarize_lines",
]

HIST_BINS = 10
FALLBACK_SOURCES = ("rule_fallback", "error")
# Bucket sizes the time table picks from (minutes): the smallest giving at most MAX_BUCKETS.
NICE_BUCKETS = (1, 5, 15, 60, 360, 1440, 10_080)
MAX_BUCKETS = 24
KEPT_PROBLEMS = 100
TRUNCATED = "truncated last line (the writer stopped mid-line)"


class LoggedJudgment(BaseModel):
    """The fields of one logged judgment that the report reads (others are ignored)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    time: datetime.datetime
    source: str
    reward: float | None = Field(default=None, ge=0.0, le=1.0)
    request_id: str = ""
    answer_type: str | None = None
    profile: str | None = None
    mode: str | None = None
    model: str | None = None
    label: str | None = None
    reason: str | None = None
    prompt: str | None = None
    completion: str | None = None


class LoggedAudit(BaseModel):
    """The fields of one shadow audit line that the report reads (``kind: "shadow_audit"``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    time: datetime.datetime
    kind: Literal["shadow_audit"]
    outcome: Literal["agree_paid", "agree_refused", "rule_paid_judge_rejected", "rule_rejected_judge_paid"]
    form: str = "?"
    answer_type: str | None = None
    completion: str | None = None


class AuditGroup(BaseModel):
    """Shadow-audited rows of one grammar form (or answer_type) by outcome."""

    name: str
    audited: int
    rule_paid: int
    rule_paid_judge_rejected: int
    rule_rejected_judge_paid: int
    paid_rejected_rate: float | None = Field(description="rule_paid_judge_rejected / rule_paid")
    example: str | None = Field(
        description="a completion the rule paid and the judge rejected (else one the judge paid and the rule refused)"
    )


class LogProblem(BaseModel):
    """A line that was skipped, and why."""

    file: str
    line: int
    message: str


class RewardHistogram(BaseModel):
    """Rewards of one source and answer_type (``answer_type`` "all" sums a source's rows)."""

    source: str
    answer_type: str
    n: int
    mean: float | None
    counts: list[int] = Field(description=f"{HIST_BINS} bins on [0, 1]; 1.0 is in the last")
    no_reward: int = Field(description="rewards that were None (source error)")


class FallbackBucket(BaseModel):
    """One time bucket: judgments, fallbacks and the fallbacks' reasons."""

    start: datetime.datetime
    n: int
    fallbacks: int
    reasons: dict[str, int]


class WatchedCompletion(BaseModel):
    """A completion (normalised) that earned a high reward more than once."""

    completion: str = Field(description="one logged form of it (its second occurrence)")
    count: int
    distinct_prompts: int
    mean_reward: float
    sources: dict[str, int]


class LabelCount(BaseModel):
    """How often the judge gave one label under one profile and mode."""

    profile: str
    mode: str
    label: str
    n: int
    share: float
    mean_reward: float | None


class LogSummary(BaseModel):
    """Everything the ``--from-log`` report shows (written as log_report.json)."""

    files: list[str]
    lines: int
    judgments: int
    bad_lines: int
    problems: list[LogProblem] = Field(description=f"the first {KEPT_PROBLEMS}")
    first: datetime.datetime | None
    last: datetime.datetime | None
    models: dict[str, int]
    sources: dict[str, int]
    histograms: list[RewardHistogram]
    bucket_minutes: int
    fallback_buckets: list[FallbackBucket]
    high_reward: float
    watch_list: list[WatchedCompletion]
    labels: list[LabelCount]
    audit_lines: int = Field(description="shadow audit lines (not judgments)")
    audit_forms: list[AuditGroup] = Field(description="per grammar form, the worst disagreement first")
    audit_answer_types: list[AuditGroup] = Field(description="per answer_type, the worst disagreement first")


def normalise_completion(text: str) -> str:
    """The completion as the watch list groups it: case-folded, whitespace collapsed."""
    return " ".join(text.casefold().split())


def bucket_minutes_for(first: datetime.datetime, last: datetime.datetime) -> int:
    """The smallest of ``NICE_BUCKETS`` that covers the span in at most ``MAX_BUCKETS`` buckets."""
    span_min = (last - first).total_seconds() / 60
    return next((m for m in NICE_BUCKETS if span_min / m < MAX_BUCKETS), NICE_BUCKETS[-1])


def _utc(moment: datetime.datetime) -> datetime.datetime:
    """Aware UTC (a naive time is taken as UTC, as the log writes it)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc)


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).digest()


@dataclass
class _Rewards:
    """Count, sum and histogram of rewards; a None reward is counted apart."""

    n: int = 0
    none: int = 0
    total: float = 0.0
    bins: list[int] = field(default_factory=lambda: [0] * HIST_BINS)

    def add(self, reward: float | None) -> None:
        self.n += 1
        if reward is None:
            self.none += 1
        else:
            self.total += reward
            self.bins[min(int(reward * HIST_BINS), HIST_BINS - 1)] += 1

    def merged(self, other: _Rewards) -> _Rewards:
        bins = [a + b for a, b in zip(self.bins, other.bins, strict=True)]
        return _Rewards(self.n + other.n, self.none + other.none, self.total + other.total, bins)

    @property
    def mean(self) -> float | None:
        present = self.n - self.none
        return self.total / present if present else None


@dataclass
class _Watched:
    """High rewards for one normalised completion; its text is kept once it repeats."""

    rewards: _Rewards = field(default_factory=_Rewards)
    prompts: set[bytes] = field(default_factory=set)
    sources: Counter[str] = field(default_factory=Counter)
    text: str | None = None


@dataclass
class _Audited:
    """Shadow audit outcomes of one form or answer_type, and an example of each disagreement."""

    outcomes: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)

    def add(self, line: LoggedAudit) -> None:
        self.outcomes[line.outcome] += 1
        if line.outcome.startswith("rule_") and line.completion and line.outcome not in self.examples:
            self.examples[line.outcome] = line.completion

    def group(self, name: str) -> AuditGroup:
        rejected, paid = self.outcomes["rule_paid_judge_rejected"], self.outcomes["agree_paid"]
        example = self.examples.get("rule_paid_judge_rejected") or self.examples.get(
            "rule_rejected_judge_paid"
        )
        return AuditGroup(
            name=name,
            audited=sum(self.outcomes.values()),
            rule_paid=paid + rejected,
            rule_paid_judge_rejected=rejected,
            rule_rejected_judge_paid=self.outcomes["rule_rejected_judge_paid"],
            paid_rejected_rate=rejected / (paid + rejected) if paid + rejected else None,
            example=example,
        )


def _worst_first(audited: dict[str, _Audited]) -> list[AuditGroup]:
    """Groups by their "rule paid, judge rejected" rate, then count, then the other direction."""
    groups = [a.group(name) for name, a in audited.items()]
    return sorted(
        groups,
        key=lambda g: (
            -(g.paid_rejected_rate or 0.0),
            -g.rule_paid_judge_rejected,
            -g.rule_rejected_judge_paid,
            g.name,
        ),
    )


_Key = tuple[str, str]  # (source, answer_type)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


@dataclass
class LogAggregator:
    """Counts from judgments added one at a time: memory grows with distinct sources, answer
    types, minutes, labels and high-reward completions (a digest each), not with lines."""

    high_reward: float
    rewards: dict[_Key, _Rewards] = field(default_factory=lambda: defaultdict(_Rewards))
    per_minute: Counter[datetime.datetime] = field(default_factory=Counter)
    fallbacks_per_minute: dict[datetime.datetime, Counter[str]] = field(
        default_factory=lambda: defaultdict(Counter)
    )
    watched: dict[bytes, _Watched] = field(default_factory=lambda: defaultdict(_Watched))
    labels: dict[tuple[str, str, str], _Rewards] = field(default_factory=lambda: defaultdict(_Rewards))
    models: Counter[str] = field(default_factory=Counter)
    first: datetime.datetime | None = None
    last: datetime.datetime | None = None
    audit_lines: int = 0
    audit_forms: dict[str, _Audited] = field(default_factory=lambda: defaultdict(_Audited))
    audit_types: dict[str, _Audited] = field(default_factory=lambda: defaultdict(_Audited))

    def add_audit(self, line: LoggedAudit) -> None:
        """Count one shadow audit line (not a judgment: no reward of its own)."""
        self.audit_lines += 1
        self.audit_forms[line.form].add(line)
        self.audit_types[line.answer_type or "none"].add(line)

    def add(self, j: LoggedJudgment) -> None:
        """Count one judgment."""
        moment = _utc(j.time)
        self.first = moment if self.first is None else min(self.first, moment)
        self.last = moment if self.last is None else max(self.last, moment)
        self.rewards[(j.source, j.answer_type or "none")].add(j.reward)
        minute = moment.replace(second=0, microsecond=0)
        self.per_minute[minute] += 1
        if j.source in FALLBACK_SOURCES:
            self.fallbacks_per_minute[minute][j.reason or "unknown"] += 1
        # Rewards decided before the judge's model was discovered carry none.
        self.models[j.model or "(not known)"] += 1
        if j.label is not None:
            self.labels[(j.profile or "?", j.mode or "?", j.label)].add(j.reward)
        if j.reward is not None and j.reward >= self.high_reward and j.completion:
            watched = self.watched[_digest(normalise_completion(j.completion))]
            watched.rewards.add(j.reward)
            watched.prompts.add(_digest(normalise_completion(j.prompt or "")))
            watched.sources[j.source] += 1
            if watched.rewards.n == 2:
                watched.text = j.completion


def _histogram(source: str, answer_type: str, rewards: _Rewards) -> RewardHistogram:
    return RewardHistogram(
        source=source,
        answer_type=answer_type,
        n=rewards.n,
        mean=rewards.mean,
        counts=rewards.bins,
        no_reward=rewards.none,
    )


def _histograms(agg: LogAggregator) -> list[RewardHistogram]:
    """Per source (most rewards first), each answer_type, then the source's total."""
    by_source: dict[str, list[_Key]] = defaultdict(list)
    for key in sorted(agg.rewards):
        by_source[key[0]].append(key)
    totals = {
        source: functools.reduce(_Rewards.merged, (agg.rewards[k] for k in keys), _Rewards())
        for source, keys in by_source.items()
    }
    out = []
    for source in sorted(by_source, key=lambda name: (-totals[name].n, name)):
        keys = by_source[source]
        out += [_histogram(source, key[1], agg.rewards[key]) for key in keys]
        if len(keys) > 1:
            out.append(_histogram(source, "all", totals[source]))
    return out


def _fallback_buckets(agg: LogAggregator, minutes: int) -> list[FallbackBucket]:
    """Buckets of ``minutes`` aligned to the Unix epoch (UTC), those with judgments only."""
    size = datetime.timedelta(minutes=minutes)
    totals: Counter[datetime.datetime] = Counter()
    reasons: dict[datetime.datetime, Counter[str]] = defaultdict(Counter)
    for minute, n in agg.per_minute.items():
        start = _EPOCH + (minute - _EPOCH) // size * size
        totals[start] += n
        reasons[start].update(agg.fallbacks_per_minute.get(minute, {}))
    return [
        FallbackBucket(
            start=start,
            n=n,
            fallbacks=sum(reasons[start].values()),
            reasons=dict(reasons[start].most_common()),
        )
        for start, n in sorted(totals.items())
    ]


def _watch_list(agg: LogAggregator, top: int) -> list[WatchedCompletion]:
    repeated = [w for w in agg.watched.values() if w.text is not None]
    repeated.sort(key=lambda w: (-len(w.prompts), -w.rewards.n, w.text or ""))
    return [
        WatchedCompletion(
            completion=w.text or "",
            count=w.rewards.n,
            distinct_prompts=len(w.prompts),
            mean_reward=w.rewards.mean or 0.0,
            sources=dict(w.sources.most_common()),
        )
        for w in repeated[:top]
    ]


def _labels(agg: LogAggregator) -> list[LabelCount]:
    totals: Counter[tuple[str, str]] = Counter()
    for (profile, mode, _), rewards in agg.labels.items():
        totals[(profile, mode)] += rewards.n
    return [
        LabelCount(
            profile=profile,
            mode=mode,
            label=label,
            n=rewards.n,
            share=rewards.n / totals[(profile, mode)],
            mean_reward=rewards.mean,
        )
        for (profile, mode, label), rewards in sorted(agg.labels.items())
    ]


def parse_log_line(text: str) -> LoggedJudgment | LoggedAudit | str:
    """One line as a judgment or a shadow audit line, or why it is neither."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        return f"not valid JSON: {err.msg} (column {err.colno})"
    if not isinstance(data, dict):
        return f"expected a JSON object, got {type(data).__name__}"
    try:
        if data.get("kind") == "shadow_audit":
            return LoggedAudit.model_validate(data)
        return LoggedJudgment.model_validate(data)
    except ValidationError as err:
        return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())


def summarize_lines(
    files: Sequence[tuple[str, Iterable[str]]],
    top: int = 10,
    high_reward: float = 0.9,
    bucket_minutes: int | None = None,
) -> LogSummary:
    """The summary of ``(name, lines)`` pairs (lines with their newlines, as a file gives them)."""
    agg = LogAggregator(high_reward)
    lines = judgments = bad = 0
    problems: list[LogProblem] = []
    for name, file_lines in files:
        for number, text in enumerate(file_lines, start=1):
            if not text.strip():
                continue
            lines += 1
            parsed = parse_log_line(text)
            if isinstance(parsed, LoggedJudgment):
                judgments += 1
                agg.add(parsed)
                continue
            if isinstance(parsed, LoggedAudit):
                agg.add_audit(parsed)
                continue
            bad += 1
            if len(problems) < KEPT_PROBLEMS:
                message = TRUNCATED if not text.endswith("\n") else parsed
                problems.append(LogProblem(file=name, line=number, message=message))
    minutes = bucket_minutes or (bucket_minutes_for(agg.first, agg.last) if agg.first and agg.last else 1)
    sources: Counter[str] = Counter()
    for (source, _), rewards in agg.rewards.items():
        sources[source] += rewards.n
    return LogSummary(
        files=[name for name, _ in files],
        lines=lines,
        judgments=judgments,
        bad_lines=bad,
        problems=problems,
        first=agg.first,
        last=agg.last,
        models=dict(agg.models.most_common()),
        sources=dict(sources.most_common()),
        histograms=_histograms(agg),
        bucket_minutes=minutes,
        fallback_buckets=_fallback_buckets(agg, minutes),
        high_reward=high_reward,
        watch_list=_watch_list(agg, top),
        labels=_labels(agg),
        audit_lines=agg.audit_lines,
        audit_forms=_worst_first(agg.audit_forms),
        audit_answer_types=_worst_first(agg.audit_types),
    )


def read_logs(
    paths: Sequence[Path], top: int = 10, high_reward: float = 0.9, bucket_minutes: int | None = None
) -> LogSummary:
    """Read judgment log files (``OSError`` when one cannot be opened) and summarise them."""
    handles = [path.open(encoding="utf-8", errors="replace", newline="") for path in paths]
    try:
        named = [(str(path), handle) for path, handle in zip(paths, handles, strict=True)]
        return summarize_lines(named, top, high_reward, bucket_minutes)
    finally:
        for handle in handles:
            handle.close()
