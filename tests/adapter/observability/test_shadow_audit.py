"""The shadow audit: rows the cascade's rule decided, judged too in the background, compared.

The labelled set: sums whose reference is the sum. The rule pays every right sum it can prove;
the judge of these tests rejects the boxed ones (as a judge would reject a shape a grammar should
not have paid), pays the others that hold the reference, and refuses the rest.
"""

import asyncio
import json
import logging
import time

import pytest

from adapter import JudgeRewardSystem
from adapter.dispatch.activity import RewardActivity
from adapter.observability import shadow_audit
from adapter.observability.answer_form import answer_form
from adapter.observability.shadow_audit import CallBudget, ShadowAudit, audit_outcome
from adapter.settings import AuditSettings
from judge_vllm.schemas import JudgeRequest, Verdict
from judge_vllm.testing.fake_backend import FakeBackend


class RejectsBoxes(FakeBackend):
    """Pays a completion that holds the reference, unless it is boxed."""

    def _judge(self, request):
        if "\\boxed" in request.completion:
            return Verdict(score=0.0, label="no match")
        return super()._judge(request)


class Held(FakeBackend):
    """Answers nothing until ``release`` is set (on the reward system's loop)."""

    def __init__(self):
        super().__init__()
        self.release: asyncio.Event | None = None

    async def judge_many(self, requests):
        self.release = self.release or asyncio.Event()
        await self.release.wait()
        return await super().judge_many(requests)


def _boxed(k):  # the rule pays it; the judge rejects it
    a, b = 10 + k, 20 + 2 * k
    return {"prompt": f"What is {a} + {b}?", "completion": f"{a} + {b} = {a + b}.\n\n\\boxed{{{a + b}}}",
            "answer": str(a + b), "answer_type": "NUMBER", "label": 0}  # fmt: skip


def _marked(k):  # the rule pays it; so does the judge
    a, b = 100 + k, 7 * k
    return {"prompt": f"What is {a} + {b}?", "completion": f"The answer is {a + b}.", "answer": str(a + b),
            "answer_type": "NUMBER", "label": 1}  # fmt: skip


def _wrong(k):  # the rule proves it wrong; the judge refuses it
    a, b = 300 + k, 3 * k
    return {"prompt": f"What is {a} + {b}?", "completion": f"The answer is {a + b + 1}.", "answer": str(a + b),
            "answer_type": "NUMBER", "label": 0}  # fmt: skip


ROWS = [*map(_boxed, range(8)), *map(_marked, range(6)), *map(_wrong, range(5))]


def _config(tmp_path, **audit):
    return {
        "strategy": "cascade",
        "use_cache": False,
        "batch_wait": 0.0,
        "startup_check": "off",  # the tests count and time the backends' calls
        "judgment_log_path": str(tmp_path / "judgments.jsonl"),
        "audit": {"shadow_rate": 1.0, "max_calls_per_minute": 1000, "min_rows": 5, **audit},
    }


def _items(rows):
    return [{k: r[k] for k in ("prompt", "completion", "answer", "answer_type")} for r in rows]


def _wait_judged(rs, n, timeout_s=60.0):  # a bound for a hang, not a timing
    deadline = time.monotonic() + timeout_s
    while rs.get_metrics()["shadow_audit"]["judged"] + rs.get_metrics()["shadow_audit"]["failed"] < n:
        assert time.monotonic() < deadline, rs.get_metrics()["shadow_audit"]
        time.sleep(0.01)


def _warnings(caplog):
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "shadow audit" in r.getMessage()
    ]


def test_rule_paid_rows_the_judge_rejects_are_counted_by_form_and_type_and_warn_once(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    with JudgeRewardSystem(_config(tmp_path), backend=RejectsBoxes()) as rs:
        audited = rs.reward_batch(_items(ROWS))
        ruled = [r["reason"] == "cascade" for r in audited]
        _wait_judged(rs, sum(ruled))
        audit = rs.get_metrics()["shadow_audit"]
    with JudgeRewardSystem(
        {**_config(tmp_path), "audit": {"shadow_rate": 0.0}}, backend=RejectsBoxes()
    ) as rs:
        plain = rs.reward_batch(_items(ROWS))

    # Every row the rule decided is audited, and only those (a full CI run once saw 18 of the 19
    # decided by rule: the other row's source is in this message).
    shown = [(r["source"], r["reason"]) for r in audited]
    assert sum(ruled) >= len(ROWS) - 1, shown
    assert [(r["reward"], r["source"]) for r, by_rule in zip(audited, ruled, strict=True) if by_rule] == [
        (r["reward"], r["source"]) for r, by_rule in zip(plain, ruled, strict=True) if by_rule
    ]  # the audit changed no reward
    expected = [1.0] * 14 + [0.0] * 5
    assert [r["reward"] for r, by in zip(audited, ruled, strict=True) if by] == [e for e, by in zip(expected, ruled, strict=True) if by]
    n = sum(ruled)
    assert (audit["sampled"], audit["sent"], audit["judged"], audit["over_budget"]) == (n, n, n, 0)
    boxes, marked, wrong = sum(ruled[:8]), sum(ruled[8:14]), sum(ruled[14:])
    assert audit["outcomes"] == {
        "agree_paid": marked, "agree_refused": wrong, "rule_paid_judge_rejected": boxes, "rule_rejected_judge_paid": 0,
    }  # fmt: skip
    assert audit["by_form"]["box"]["rule_paid_judge_rejected"] == boxes
    assert audit["by_form"]["box"]["paid_rejected_rate"] == 1.0
    assert audit["by_form"]["marker"]["rule_paid_judge_rejected"] == 0
    assert audit["by_form"]["marker"]["agree_refused"] == wrong
    assert audit["by_answer_type"]["NUMBER"]["rule_paid_judge_rejected"] == boxes
    assert audit["flagged_forms"] == ["box"]
    (warning,) = _warnings(caplog)
    assert "form 'box'" in warning and "\\\\boxed{" in warning  # the form and an example

    lines = [json.loads(line) for line in (tmp_path / "judgments.jsonl").read_text().splitlines()]
    shadow = [line for line in lines if line.get("kind") == "shadow_audit"]
    rejected = [line for line in shadow if line["outcome"] == "rule_paid_judge_rejected"]
    assert len(shadow) == n and len(rejected) == boxes
    assert {line["form"] for line in rejected} == {"box"}
    assert {line["completion"] for line in rejected} == {r["completion"] for r, by in zip(ROWS[:8], ruled[:8], strict=True) if by}
    assert all(line["rule_reward"] == 1.0 and line["judge_score"] == 0.0 for line in rejected)


def test_the_budget_bounds_the_shadow_judge_calls(tmp_path):
    backend = FakeBackend()
    rows = [_marked(k) for k in range(400)]
    config = _config(tmp_path, shadow_rate=0.02, max_calls_per_minute=3)
    with JudgeRewardSystem(config, backend=backend) as rs:
        rs.reward_batch(_items(rows))
        _wait_judged(rs, 3)
        audit = rs.get_metrics()["shadow_audit"]
    assert audit["sampled"] > 3  # the rate sampled more rows than the budget allows
    assert audit["sent"] == 3 and audit["over_budget"] == audit["sampled"] - 3
    assert sum(backend.calls) == 3  # the cascade decided every row: these are the shadow calls


def test_a_reward_is_returned_before_its_shadow_judgment(tmp_path):
    backend = Held()
    with JudgeRewardSystem(_config(tmp_path), backend=backend) as rs:
        started = time.monotonic()
        result = rs.reward(**_items([_boxed(0)])[0])
        assert time.monotonic() - started < 2.0
        assert (result["reward"], result["source"]) == (1.0, "rule")
        audit = rs.get_metrics()["shadow_audit"]
        assert (audit["sent"], audit["judged"]) == (1, 0)  # still out: close() cancels it
    assert rs.get_metrics()["shadow_audit"]["failed"] == 1


def test_on_disagreement_judge_sends_a_flagged_forms_rows_to_the_judge(tmp_path):
    config = _config(tmp_path, on_disagreement="judge")
    with JudgeRewardSystem(config, backend=RejectsBoxes()) as rs:
        rs.reward_batch(_items([_boxed(k) for k in range(5)]))
        _wait_judged(rs, 5)
        later = rs.reward_batch(_items([_boxed(k) for k in range(5, 8)] + [_marked(0)]))
    assert [(r["source"], r["reward"]) for r in later] == [("judge", 0.0)] * 3 + [("rule", 1.0)]


@pytest.mark.parametrize(
    ("completion", "form"),
    [
        ("17 + 25 = 42.\n\n\\boxed{42}", "box"),
        ("So the answer is:\n\\[\n\\boxed{42}\n\\]", "box"),
        ("Adding them.\n\n<answer>\\boxed{42}</answer>", "tag"),
        ("The final answer is 42.", "marker"),
        ("**Final Answer:** 42", "marker"),
        ("#### 42", "marker"),
        ("It's 42.", "marker"),
        ("The sum of 17 and 25.\n\n42", "bare"),
        ("\\boxed{41} was wrong.\n\n42", "bare"),
    ],
)
def test_the_form_is_read_from_the_final_paragraph(completion, form):
    assert answer_form(completion) == form


def test_the_budget_is_a_sliding_minute():
    now = [0.0]
    budget = CallBudget(3, clock=lambda: now[0])
    assert [budget.take() for _ in range(4)] == [True, True, True, False]
    now[0] = 59.9
    assert not budget.take()
    now[0] = 60.0
    assert budget.take() and budget.take() and budget.take() and not budget.take()


@pytest.mark.parametrize(
    ("rule", "judge", "outcome"),
    [
        (1.0, 0.9, "agree_paid"),
        (0.0, 0.1, "agree_refused"),
        (1.0, 0.2, "rule_paid_judge_rejected"),
        (0.0, 0.5, "rule_rejected_judge_paid"),
    ],
)
def test_outcomes(rule, judge, outcome):
    assert audit_outcome(rule, judge) == outcome


def _audit_one(busy, judged):
    """Offer one rule-paid row to an audit whose reward system is busy while ``busy[0]``; the
    shadow judgment's task, once it is made."""

    async def judge(request):
        judged.append(request.completion)
        return Verdict(score=1.0, label="match")

    tasks = []
    audit = ShadowAudit(
        AuditSettings(shadow_rate=1.0, max_calls_per_minute=10),
        judge,
        lambda coro: tasks.append(asyncio.get_running_loop().create_task(coro)),
        quiet_for=lambda: 0.0 if busy[0] else 1.0,
    )
    request = JudgeRequest(prompt="What is 2 + 2?", completion="The answer is 4.", answer="4", answer_type="NUMBER")
    assert audit.offer(request, 1.0, "rule: equal")
    return audit, tasks


def test_a_shadow_judgment_waits_until_no_reward_runs(monkeypatch):
    monkeypatch.setattr(shadow_audit, "MAX_DEFER_S", 3600.0)
    busy, judged = [True], []

    async def scenario():
        audit, tasks = _audit_one(busy, judged)
        for _ in range(20):  # the loop turns, and turns again: the reward system stays busy
            await asyncio.sleep(0.01)
        assert judged == [] and audit.snapshot()["judged"] == 0
        busy[0] = False
        await asyncio.wait_for(tasks[0], 60)  # a bound for a hang, not a timing
        assert judged == ["The answer is 4."] and audit.snapshot()["judged"] == 1

    asyncio.run(scenario())


def test_under_steady_load_a_shadow_judgment_runs_once_deferred_long_enough(monkeypatch):
    monkeypatch.setattr(shadow_audit, "MAX_DEFER_S", 0.0)
    busy, judged = [True], []

    async def scenario():
        audit, tasks = _audit_one(busy, judged)
        await asyncio.wait_for(tasks[0], 60)
        assert judged == ["The answer is 4."] and audit.snapshot()["judged"] == 1

    asyncio.run(scenario())


def test_reward_activity_is_quiet_only_between_reward_calls():
    now = [100.0]
    activity = RewardActivity(clock=lambda: now[0])
    now[0] = 101.0
    assert activity.quiet_for() == 1.0
    with activity.busy():
        now[0] = 105.0
        with activity.busy():
            assert activity.quiet_for() == 0.0
        assert activity.quiet_for() == 0.0  # one call is still in flight
    now[0] = 105.5
    assert activity.quiet_for() == 0.5
