"""``JudgeMember``: one judge of an ensemble or an escalation, with its own breaker and counters."""

import asyncio

import pytest

from adapter.dispatch.breaker import CircuitBreaker, call_failed
from adapter.dispatch.members import JudgeMember
from judge_vllm.errors import CircuitOpenError, JudgeParseError, JudgeUnavailableError
from judge_vllm.schemas import JudgeRequest, Verdict
from judge_vllm.testing.fake_backend import FakeBackend

REQUESTS = [JudgeRequest(prompt="What is 2 + 2?", completion=f"It is {n}", answer="4") for n in (4, 5)]


def _member(backend: FakeBackend, threshold: int = 1) -> JudgeMember:
    return JudgeMember("judge", lambda: backend, CircuitBreaker(threshold, 60.0), None)


async def test_a_member_that_fails_opens_its_breaker_and_is_then_skipped_without_a_call():
    backend = FakeBackend(fail_with=JudgeUnavailableError("connection refused"))
    member = _member(backend)
    failed = await member.judge_many(REQUESTS)
    skipped = await member.judge_many(REQUESTS)
    assert [type(o) for o in failed] == [JudgeUnavailableError] * 2
    assert [type(o) for o in skipped] == [CircuitOpenError] * 2 and "judge judge" in str(skipped[0])
    assert backend.calls == [2]  # the second call never reached the judge
    snapshot = member.snapshot()
    assert snapshot["circuit_breaker"]["state"] == "open"
    assert (snapshot["judge_calls"], snapshot["judged_items"]) == (1, 2)
    assert snapshot["errors"] == {"JudgeUnavailableError": 2}


async def test_an_open_member_says_so_at_once_when_asked_for_its_model():
    member = _member(FakeBackend(fail_with=JudgeUnavailableError("down")))
    member.backend.model = None  # a server that must be asked
    await member.judge_many(REQUESTS)
    with pytest.raises(CircuitOpenError, match="its model is not known"):
        await member.model_name()


async def test_a_cancelled_call_frees_the_half_open_probe():
    class Hanging(FakeBackend):
        async def judge_many(self, requests):
            await asyncio.sleep(60)

    member = JudgeMember("judge", Hanging, CircuitBreaker(1, 0.0), None)
    member.breaker.record_failure()  # open, and due for its probe at once
    call = asyncio.ensure_future(member.judge_many(REQUESTS))
    await asyncio.sleep(0.01)
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)
    assert member.breaker.allow()  # the probe slot is free again


def test_the_backend_is_made_on_first_use_and_again_in_a_forked_child():
    made = []
    member = JudgeMember("judge", lambda: made.append(1) or FakeBackend(), CircuitBreaker(1, 60.0), "m")
    assert member.known_model == "m" and member.snapshot()["context_cuts"] == 0 and not made
    first = member.backend
    assert member.backend is first and len(made) == 1
    member._after_fork_in_child()
    assert member.backend is not first and len(made) == 2


def test_a_call_fails_when_every_outcome_is_a_server_fault():
    down, bad = JudgeUnavailableError("down"), JudgeParseError("garbage")
    assert call_failed([down, down])
    assert not call_failed([down, Verdict(score=1.0)])
    assert not call_failed([bad, bad])  # the server answered
    assert not call_failed([CircuitOpenError("open")])  # nothing was sent
    assert not call_failed([])
