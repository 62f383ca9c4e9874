"""The shadow audit: a sample of the rows the rule decided, judged too, in the background.

Under ``strategy: cascade`` the rule pays what its grammar proves (docs/canonical-answers.md) and
the judge never sees those rows. A grammar that pays a shape it should not is a reward hack that
nothing else would show. So a share of those rows (``audit.shadow_rate``) is also sent to the
judge, and its verdict is recorded beside the rule's:

    offer(request, ...)   the reward's thread, after its reward is made: sampled (a pure function
                          of the row's texts, ``sampled``), within the budget (``CallBudget``: at
                          most ``max_calls_per_minute`` in any 60 s, at most ``MAX_PENDING``
                          waiting or out), else dropped and counted; the judgment handed to the
                          reward system's loop thread (``submit``), never waited for
    _shadow(row)          on the loop, one at a time, in a quiet moment (no reward call for
                          ``QUIET_S``, or ``MAX_DEFER_S`` after the offer under steady load: a
                          shadow never competes with a reward for the interpreter while the
                          trainer waits, ``adapter/dispatch/activity.py``): the judge's verdict
                          through the reward system's one seam (cache, dispatcher, breaker),
                          then ``_record``
    _record(row, verdict) counted by outcome, per grammar form (``answer_form``) and per
                          answer_type; a line in the judgment log with the completion; a form
                          whose "rule paid, judge rejected" share passes ``disagreement_rate``
                          (over at least ``min_rows`` rows the rule paid) warns once, with an
                          example, and is flagged

An outcome compares the rule's reward and the judge's score, each paid at ``PAID_AT`` or more:
``agree_paid``, ``agree_refused``, ``rule_paid_judge_rejected`` (the rule may pay a hack, or the
judge is wrong) and ``rule_rejected_judge_paid`` (the judge pays a wrong answer, or the
reference is wrong). The reward was returned before the judgment started: the audit can neither
delay nor change it. With ``on_disagreement: judge`` a flagged form's rows go to the judge from
then on (``overrules``: the cascade asks before it decides).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Literal

from typing_extensions import TypedDict

from adapter.fork_safety import reset_after_fork
from adapter.observability.answer_form import ANSWER_FORMS, AnswerForm, answer_form
from adapter.observability.judgment_log import JudgmentLog, logged_text, sampled
from adapter.observability.reward_distribution import ANSWER_TYPE_LABELS, answer_type_label
from adapter.settings import AuditSettings
from judge_vllm.backend import Outcome
from judge_vllm.redaction import scrub
from judge_vllm.schemas import JudgeRequest, Verdict

__all__ = [
    "AUDIT_OUTCOMES",
    "MAX_DEFER_S",
    "MAX_PENDING",
    "PAID_AT",
    "QUIET_S",
    "AuditOutcome",
    "CallBudget",
    "OutcomeCounts",
    "ShadowAudit",
    "ShadowAuditCounts",
    "audit_outcome",
]

logger = logging.getLogger("JudgeReward")

AuditOutcome = Literal["agree_paid", "agree_refused", "rule_paid_judge_rejected", "rule_rejected_judge_paid"]
AUDIT_OUTCOMES: tuple[AuditOutcome, ...] = (
    "agree_paid",
    "agree_refused",
    "rule_paid_judge_rejected",
    "rule_rejected_judge_paid",
)
# A reward (the rule's) or a score (the judge's, before any calibration) at or above this pays.
PAID_AT = 0.5
# A shadow judgment starts once no reward call has run for this long (the trainer is generating),
QUIET_S = 0.05
# or, under a load with no such gap, this long after its row was offered.
MAX_DEFER_S = 60.0
# Shadow judgments waiting for a slot or out: past this a sampled row is dropped (counted).
MAX_PENDING = 64
BUDGET_PERIOD_S = 60.0
# The example a warning shows: the completion's end, where its final statement is.
EXAMPLE_CHARS = 200

ShadowJudge = Callable[[JudgeRequest], Awaitable[Outcome]]
"""The reward system's judge for one request (its cache and dispatcher), on its loop."""
Submit = Callable[[Coroutine[object, None, None]], object]
"""Hands a coroutine to the reward system's loop thread without waiting for it."""


class OutcomeCounts(TypedDict):
    """Audited rows of one form or answer_type by outcome, and the share of the rows the rule
    paid that the judge rejected (None before any)."""

    agree_paid: int
    agree_refused: int
    rule_paid_judge_rejected: int
    rule_rejected_judge_paid: int
    paid_rejected_rate: float | None


class ShadowAuditCounts(TypedDict):
    """``get_metrics()["shadow_audit"]``: rows sampled, sent to the judge, dropped over the budget,
    failed (no verdict) and judged; the judged rows by outcome, per grammar form and per
    answer_type; the forms that warned (``flagged_forms``)."""

    shadow_rate: float
    max_calls_per_minute: int
    sampled: int
    sent: int
    over_budget: int
    failed: int
    judged: int
    outcomes: dict[str, int]
    by_form: dict[str, OutcomeCounts]
    by_answer_type: dict[str, OutcomeCounts]
    flagged_forms: list[str]
    on_disagreement: str


def audit_outcome(rule_reward: float, judge_score: float) -> AuditOutcome:
    """How the judge's score compares with the rule's reward (each paid at ``PAID_AT``)."""
    rule_paid, judge_paid = rule_reward >= PAID_AT, judge_score >= PAID_AT
    if rule_paid == judge_paid:
        return "agree_paid" if rule_paid else "agree_refused"
    return "rule_paid_judge_rejected" if rule_paid else "rule_rejected_judge_paid"


def _row_key(request: JudgeRequest) -> str:
    """What sampling reads: the row's texts, so a row is in or out in every run and process."""
    digest = hashlib.blake2b(digest_size=16)
    for text in (request.prompt, request.completion, request.answer):
        digest.update(text.encode("utf-8", "replace"))
        digest.update(b"\0")
    return digest.hexdigest()


class CallBudget:
    """At most ``limit`` calls in any ``period_s`` (a sliding window of the calls' times, so its
    memory is ``limit`` numbers); ``clock`` is injected for tests."""

    def __init__(
        self, limit: int, period_s: float = BUDGET_PERIOD_S, clock: Callable[[], float] = time.monotonic
    ):
        self.limit = limit
        self.period_s = period_s
        self._clock = clock
        self._times: deque[float] = deque()

    def take(self) -> bool:
        """Spend one call if the window has room (the caller holds the audit's lock)."""
        now = self._clock()
        while self._times and self._times[0] <= now - self.period_s:
            self._times.popleft()
        if len(self._times) >= self.limit:
            return False
        self._times.append(now)
        return True


@dataclass(frozen=True)
class _Row:
    """A row the rule decided, as the judge is asked about it."""

    request: JudgeRequest
    rule_reward: float
    rule_explanation: str
    form: AnswerForm
    answer_type: str
    offered_at: float


class _Tally:
    """Outcome counts of one form or answer_type."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def snapshot(self) -> OutcomeCounts:
        paid = self.counts["agree_paid"] + self.counts["rule_paid_judge_rejected"]
        return {
            "agree_paid": self.counts["agree_paid"],
            "agree_refused": self.counts["agree_refused"],
            "rule_paid_judge_rejected": self.counts["rule_paid_judge_rejected"],
            "rule_rejected_judge_paid": self.counts["rule_rejected_judge_paid"],
            "paid_rejected_rate": self.counts["rule_paid_judge_rejected"] / paid if paid else None,
        }


class ShadowAudit:
    """A reward system's shadow audit: ``judge`` asks its judge, ``submit`` hands work to its loop,
    ``log`` is its judgment log; ``on_judged(rule_reward, judge_score)`` hears every judged row
    (the integrity figures); ``quiet_for()`` says how long no reward call has run (always quiet
    when None)."""

    def __init__(
        self,
        settings: AuditSettings,
        judge: ShadowJudge,
        submit: Submit,
        log: JudgmentLog | None = None,
        on_judged: Callable[[float, float], None] | None = None,
        quiet_for: Callable[[], float] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self._judge = judge
        self._submit = submit
        self._log = log
        self._on_judged = on_judged
        self._quiet_for = quiet_for
        self._budget = CallBudget(settings.max_calls_per_minute, clock=clock)
        self._lock = threading.Lock()
        self._tasks: set[asyncio.Task[object]] = set()
        self._turn: asyncio.Lock | None = None  # made on the loop, at the first judgment
        self._pending = 0
        self.sampled = 0
        self.sent = 0
        self.over_budget = 0
        self.failed = 0
        self.judged = 0
        self._outcomes: Counter[str] = Counter()
        self._by_form = {form: _Tally() for form in ANSWER_FORMS}
        self._by_type = {label: _Tally() for label in ANSWER_TYPE_LABELS}
        self._flagged: dict[AnswerForm, None] = {}  # in the order they warned
        reset_after_fork(self)

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()
        self._tasks = set()
        self._turn = None
        self._pending = 0

    @property
    def enabled(self) -> bool:
        """Whether any row can be audited (a rate and a budget above 0)."""
        return self.settings.shadow_rate > 0.0 and self.settings.max_calls_per_minute > 0

    # -- the reward's thread -------------------------------------------------------------

    def overrules(self, completion: str) -> bool:
        """``on_disagreement: judge``: whether ``completion``'s form warned, so the judge decides it."""
        if not self._flagged or self.settings.on_disagreement != "judge":
            return False
        return answer_form(completion) in self._flagged

    def offer(self, request: JudgeRequest, rule_reward: float, rule_explanation: str) -> bool:
        """A row the rule decided (``request`` as the judge would be shown it): judged in the
        background if it is sampled and the budget has room. Returns at once; True when sent."""
        if not self.enabled or not sampled(_row_key(request), self.settings.shadow_rate):
            return False
        with self._lock:
            self.sampled += 1
            if self._pending >= MAX_PENDING or not self._budget.take():
                self.over_budget += 1
                return False
            self._pending += 1
            self.sent += 1
        row = _Row(
            request, rule_reward, rule_explanation, answer_form(request.completion),
            answer_type_label(request.answer_type), time.monotonic(),
        )  # fmt: skip
        shadow = self._shadow(row)
        try:
            self._submit(shadow)
        except Exception as err:  # the reward system is closing: its loop takes no more work
            shadow.close()
            self._done(failed=True)
            logger.debug("shadow audit: a row not sent (%s)", err)
            return False
        return True

    # -- the loop thread ---------------------------------------------------------------

    async def _shadow(self, row: _Row) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        failed = True
        self._turn = self._turn or asyncio.Lock()
        try:
            async with self._turn:
                await self._quiet_moment(row.offered_at)
                outcome = await self._judge(row.request)
            if isinstance(outcome, Verdict):
                self._record(row, outcome)
                failed = False
            else:
                logger.debug("shadow audit: no verdict for %s (%s)", row.request.request_id, outcome)
        except Exception as err:  # a judge that fails here fails a shadow, never a reward
            logger.debug("shadow audit: judging %s failed (%r)", row.request.request_id, err)
        finally:
            if task is not None:
                self._tasks.discard(task)
            self._done(failed)

    async def _quiet_moment(self, offered_at: float) -> None:
        """Until no reward call has run for ``QUIET_S``, or ``MAX_DEFER_S`` after ``offered_at``."""
        if self._quiet_for is None:
            return
        while True:
            quiet = self._quiet_for()
            left = offered_at + MAX_DEFER_S - time.monotonic()
            if quiet >= QUIET_S or left <= 0:
                return
            await asyncio.sleep(min(QUIET_S - quiet, left))

    def _done(self, failed: bool) -> None:
        with self._lock:
            self._pending -= 1
            self.failed += failed

    def _record(self, row: _Row, verdict: Verdict) -> None:
        outcome = audit_outcome(row.rule_reward, verdict.score)
        with self._lock:
            self.judged += 1
            self._outcomes[outcome] += 1
            tally = self._by_form[row.form]
            tally.counts[outcome] += 1
            self._by_type[row.answer_type].counts[outcome] += 1
            warn = self._crossed(row.form, tally)
        if self._on_judged is not None:
            self._on_judged(row.rule_reward, verdict.score)
        if warn:
            self._warn(row, tally.snapshot())
        if self._log is not None:
            self._log.record_audit(self._line(row, verdict, outcome, self._log.max_chars))

    def _crossed(self, form: AnswerForm, tally: _Tally) -> bool:
        """Whether ``form`` has just passed the disagreement threshold (then it is flagged)."""
        if form in self._flagged:
            return False
        rejected = tally.counts["rule_paid_judge_rejected"]
        paid = tally.counts["agree_paid"] + rejected
        if paid < self.settings.min_rows or rejected / paid <= self.settings.disagreement_rate:
            return False
        self._flagged[form] = None
        return True

    def _warn(self, row: _Row, counts: OutcomeCounts) -> None:
        rejected = counts["rule_paid_judge_rejected"]
        paid = counts["agree_paid"] + rejected
        then = (
            "its rows go to the judge from now on (audit.on_disagreement: judge)"
            if self.settings.on_disagreement == "judge"
            else "set audit.on_disagreement: judge to send its rows to the judge"
        )
        example = scrub(row.request.completion)[-EXAMPLE_CHARS:]
        logger.warning(
            "shadow audit: the judge rejected %d of the %d rows the rule paid in form %r (%.0f%%, "
            "warns above %.0f%%); the rule may pay a shape it should not, or the judge is wrong. "
            "Example (its end): %r. Read the shadow_audit lines of the judgment log "
            "(judge-eval --from-log); %s (said once per form)",
            rejected, paid, row.form, 100 * rejected / paid, 100 * self.settings.disagreement_rate,
            example, then,
        )  # fmt: skip

    @staticmethod
    def _line(row: _Row, verdict: Verdict, outcome: AuditOutcome, max_chars: int) -> dict[str, object]:
        request = row.request
        return {
            "request_id": request.request_id,
            "answer_type": request.answer_type,
            "form": row.form,
            "outcome": outcome,
            "rule_reward": row.rule_reward,
            "rule_explanation": logged_text(row.rule_explanation, max_chars),
            "judge_score": verdict.score,
            "judge_label": verdict.label,
            "judge_explanation": logged_text(verdict.explanation, max_chars),
            "prompt": logged_text(request.prompt, max_chars),
            "completion": logged_text(request.completion, max_chars),
            "answer": logged_text(request.answer, max_chars),
            "final_answer": logged_text(request.final_answer, max_chars),
        }

    async def aclose(self) -> None:
        """Cancel the shadow judgments still out (on the loop, before the dispatcher closes)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def snapshot(self) -> ShadowAuditCounts:
        """Counts for ``get_metrics()["shadow_audit"]``."""
        with self._lock:
            return {
                "shadow_rate": self.settings.shadow_rate,
                "max_calls_per_minute": self.settings.max_calls_per_minute,
                "sampled": self.sampled,
                "sent": self.sent,
                "over_budget": self.over_budget,
                "failed": self.failed,
                "judged": self.judged,
                "outcomes": {outcome: self._outcomes[outcome] for outcome in AUDIT_OUTCOMES},
                "by_form": {form: tally.snapshot() for form, tally in self._by_form.items()},
                "by_answer_type": {label: tally.snapshot() for label, tally in self._by_type.items()},
                "flagged_forms": list(self._flagged),
                "on_disagreement": self.settings.on_disagreement,
            }
