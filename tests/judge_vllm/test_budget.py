"""``Budget``: one call's time, and the client bounding its attempts by the requests' budgets."""

import time

import pytest

from judge_vllm.budget import Budget, latest_judge_by
from judge_vllm.client import JudgeClient
from judge_vllm.errors import JudgeTimeoutError
from judge_vllm.schemas import JudgeRequest, Verdict
from judge_vllm.settings import JudgeClientConfig
from judge_vllm.testing.fake_server import FaultPlan


def test_a_budget_counts_down_from_its_start_and_never_below_zero():
    budget = Budget.start(judge_s=2.0, answer_s=5.0)
    assert 0 < budget.judge_left() <= 2.0 < budget.answer_left() <= 5.0
    spent = Budget(started=time.monotonic() - 10, judge_by=time.monotonic() - 5, answer_by=time.monotonic() - 1)
    assert (spent.judge_left(), spent.answer_left()) == (0.0, 0.0)


def test_the_answer_is_never_due_before_the_judge():
    budget = Budget.start(judge_s=4.0, answer_s=1.0)
    assert budget.answer_by == budget.judge_by


def test_a_groups_comparisons_get_their_own_judge_time_from_the_same_start():
    budget = Budget.start(judge_s=2.0, answer_s=5.0)
    comparing = budget.judged_for(30.0, reserve_s=5.0)
    assert comparing.started == budget.started
    assert (comparing.judge_by - budget.started, comparing.answer_by - budget.started) == pytest.approx((30.0, 35.0))


def test_a_call_serving_several_requests_runs_until_the_last_is_due():
    early, late = Budget.start(1.0, 1.0), Budget.start(9.0, 9.0)
    assert latest_judge_by([early, None, late]) == late.judge_by
    assert latest_judge_by([None, None]) is None


async def test_the_client_gives_up_when_the_requests_budget_is_spent_not_at_its_own_timeout(fake_judge):
    """judge_timeout allows 30 s; the server takes 3 s; the request's call is due in 0.3 s."""
    fake_judge.set_plan(FaultPlan(latency_s=3.0))
    request = JudgeRequest(prompt="q", completion="the answer is 4", answer="4", budget=Budget.start(0.3, 0.3))
    async with JudgeClient(JudgeClientConfig(judge_url=fake_judge.url, judge_timeout=30, max_retries=3)) as client:
        await client.model_name()  # discovery is not part of the judgment's call
        (outcome,) = await client.judge_many([request])
    assert isinstance(outcome, JudgeTimeoutError)


async def test_a_request_without_a_budget_keeps_the_clients_own_timeout(fake_judge):
    fake_judge.set_plan(FaultPlan(latency_s=0.5))
    async with JudgeClient(JudgeClientConfig(judge_url=fake_judge.url, judge_timeout=30)) as client:
        (outcome,) = await client.judge_many([JudgeRequest(prompt="q", completion="the answer is 4", answer="4")])
    assert isinstance(outcome, Verdict)
