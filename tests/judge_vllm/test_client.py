"""The async client against a loopback fake server: retry policy, batching, parsing errors."""

import re

import httpx
import openai
import pytest

from judge_vllm.client import CONTEXT_FIT_CALLS, CONTEXT_FIT_PROMPTS, JudgeClient, api_root
from judge_vllm.errors import (
    ContextOverflowError,
    JudgeParseError,
    JudgeRequestError,
    JudgeTimeoutError,
    JudgeUnavailableError,
)
from judge_vllm.retry import classify
from judge_vllm.schemas import JudgeReply, JudgeRequest, Verdict
from judge_vllm.settings import JudgeClientConfig
from judge_vllm.testing.fake_server import FaultPlan


def _client(url: str, **kw) -> JudgeClient:
    return JudgeClient(JudgeClientConfig(judge_url=url, **kw))


def _requests(n: int) -> list[JudgeRequest]:
    return [JudgeRequest(prompt="q", completion=f"the answer is {i}", answer=str(i % 2)) for i in range(n)]


async def test_500_then_200_is_retried(fake_judge):
    fake_judge.set_plan(FaultPlan(script=["error", "error", "ok"]))
    async with _client(fake_judge.url, max_retries=3) as client:
        verdict = await client.judge(_requests(1)[0])
    assert isinstance(verdict, Verdict)
    assert fake_judge.counts["error"] == 2 and fake_judge.counts["ok"] == 1


async def test_400_is_not_retried(fake_judge):
    fake_judge.set_plan(FaultPlan(script=["reject", "ok"]))
    async with _client(fake_judge.url, max_retries=3) as client:
        with pytest.raises(JudgeRequestError) as info:
            await client.judge(_requests(1)[0])
    assert info.value.status_code == 400
    assert fake_judge.counts["reject"] == 1 and fake_judge.counts["ok"] == 0


async def test_retries_are_bounded(fake_judge):
    fake_judge.set_plan(FaultPlan(error_rate=1.0))
    async with _client(fake_judge.url, max_retries=2) as client:
        with pytest.raises(JudgeUnavailableError, match="500"):
            await client.judge(_requests(1)[0])
    assert fake_judge.counts["error"] == 3


async def test_hang_times_out(fake_judge):
    fake_judge.set_plan(FaultPlan(script=["hang"]))
    async with _client(fake_judge.url, max_retries=0, judge_timeout=0.3) as client:
        with pytest.raises(JudgeTimeoutError):
            await client.judge(_requests(1)[0])


async def test_dropped_connection_is_retried(fake_judge):
    fake_judge.set_plan(FaultPlan(script=["drop", "ok"]))
    async with _client(fake_judge.url, max_retries=1) as client:
        assert isinstance(await client.judge(_requests(1)[0]), Verdict)


@pytest.mark.parametrize("action", ["garbage", "length"])
async def test_bad_output_is_a_parse_error_and_not_retried(fake_judge, action):
    fake_judge.set_plan(FaultPlan(script=[action, "ok"]))
    async with _client(fake_judge.url, max_retries=3) as client:
        with pytest.raises(JudgeParseError):
            await client.judge(_requests(1)[0])
    assert fake_judge.counts["ok"] == 0


async def test_judge_many_uses_the_batch_endpoint_and_keeps_order(fake_judge):
    async with _client(fake_judge.url) as client:
        results = await client.judge_many(_requests(6))
    assert [r.score for r in results] == [
        1.0 if str(i % 2) in f"the answer is {i}" else 0.0 for i in range(6)
    ]
    assert fake_judge.counts["/v1/chat/completions/batch"] == 1
    assert fake_judge.counts["/v1/chat/completions"] == 0


async def test_judge_many_falls_back_to_single_calls_on_404(fake_judge):
    fake_judge.set_plan(FaultPlan(batch_endpoint=False))
    async with _client(fake_judge.url) as client:
        first = await client.judge_many(_requests(4))
        second = await client.judge_many(_requests(4))
    assert all(isinstance(r, Verdict) for r in first + second)
    assert fake_judge.counts["/v1/chat/completions/batch"] == 1  # learned once
    assert fake_judge.counts["/v1/chat/completions"] == 8


async def test_one_bad_choice_in_a_batch_fails_only_that_slot(fake_judge):
    fake_judge.set_plan(FaultPlan(script=["garbage"]))
    async with _client(fake_judge.url) as client:
        results = await client.judge_many(_requests(3))
    assert all(isinstance(r, JudgeParseError) for r in results)
    async with _client(fake_judge.url) as client:
        assert all(isinstance(r, Verdict) for r in await client.judge_many(_requests(3)))


async def test_model_defaults_to_the_first_listed(fake_judge):
    async with _client(fake_judge.url) as client:
        assert await client.model_name() == "fake-judge"


async def test_fast_mode_reads_label_logprobs(fake_judge):
    async with _client(fake_judge.url, mode="fast") as client:
        verdict = await client.judge(JudgeRequest(prompt="q", completion="it is 7", answer="7"))
    assert verdict.score > 0.99 and verdict.confidence is not None


async def test_health_reports_unreachable_without_raising():
    async with _client("http://127.0.0.1:9", max_retries=0, judge_timeout=1) as client:
        state = await client.health()
    assert state["reachable"] is False and "connect" in state["error"]


def test_api_root_accepts_v1_suffix():
    assert api_root("http://h:1/v1/") == "http://h:1"
    assert api_root("http://h:1") == "http://h:1"


@pytest.mark.parametrize(
    ("status", "kind"),
    [(500, JudgeUnavailableError), (503, JudgeUnavailableError), (429, JudgeUnavailableError),
     (408, JudgeUnavailableError), (400, JudgeRequestError), (401, JudgeRequestError),
     (404, JudgeRequestError), (422, JudgeRequestError)],
)  # fmt: skip
def test_classify_status_codes(status, kind):
    request = httpx.Request("POST", "http://x")
    err = openai.APIStatusError("boom", response=httpx.Response(status, request=request), body=None)
    assert type(classify(err)) is kind


def _overlong(answer: str = "4") -> JudgeRequest:
    return JudgeRequest(
        prompt="What is 2+2?", completion="7 " * 2500 + f"so the answer is {answer}", answer=answer
    )


async def test_overlong_completion_is_cut_by_tokens_to_fit_the_context(fake_judge):
    fake_judge.set_plan(FaultPlan(max_model_len=3500))
    request = _overlong()
    async with _client(fake_judge.url) as client:
        verdict = await client.judge(request)
        assert client.context_cuts == 1
    assert verdict.score == 1.0  # the fake judge found the answer: the end was kept
    sent = fake_judge.last_body["messages"][-1]["content"]
    assert "tokens omitted ..." in sent and "so the answer is 4" in sent
    assert len(request.completion) > 3500  # uncut, it would not have fit
    assert fake_judge.counts["/detokenize"] == 2


@pytest.mark.parametrize(
    ("chars", "max_model_len"), [(15_000, 4096), (6_000, 4096), (5_000, 3500), (60_000, 32_768)]
)
async def test_a_long_prompt_is_cut_once_in_four_calls(fake_judge, chars, max_model_len):
    """Count, the completion's tokens, its two kept ends; the cut prompt fits (the fake rejects one
    over its context) without being measured again. A second cut (the marker, at one token per
    character as with the fake's tokenizer, outgrew the slack) made it nine; the check five."""
    fake_judge.set_plan(FaultPlan(max_model_len=max_model_len))
    steps = " ".join(f"add {n} to get {n * 7}" for n in range(chars // 10))
    request = JudgeRequest(prompt="What is 2+2?", completion=f"{steps} so the answer is 4.", answer="4")
    async with _client(fake_judge.url, max_completion_chars=chars) as client:
        await client.judge(_requests(1)[0])  # the labels' token ids are asked once, first
        fake_judge.counts.clear()
        verdict = await client.judge(request)
        assert client.context_cuts == 1
    assert verdict.score == 1.0
    assert (fake_judge.counts["/tokenize"], fake_judge.counts["/detokenize"]) == (2, 2)


async def test_context_fitting_calls_are_bounded_however_many_prompts_are_long(fake_judge, monkeypatch):
    fake_judge.set_plan(FaultPlan(max_model_len=3500))
    in_flight, peak = 0, 0
    async with _client(fake_judge.url) as client:
        post = client._post

        async def counted(url, body, *deadline):
            nonlocal in_flight, peak
            fitting = url.endswith("tokenize")
            in_flight += fitting
            peak = max(peak, in_flight)
            try:
                return await post(url, body, *deadline)
            finally:
                in_flight -= fitting

        monkeypatch.setattr(client, "_post", counted)
        results = await client.judge_many([_overlong(str(n)) for n in range(60)])
        assert client.context_cuts == 60
    assert all(isinstance(r, Verdict) for r in results)
    assert CONTEXT_FIT_CALLS >= peak > 1  # 240 /tokenize and /detokenize calls, never all at once


async def test_the_first_long_prompts_are_fitted_first_not_all_call_by_call(fake_judge, monkeypatch):
    """A prompt keeps its fitting slot through all its calls: the first is done before later ones
    start, so a large batch's first calls go out early (lockstep, all finished at about the end)."""
    fake_judge.set_plan(FaultPlan(max_model_len=3500))
    order: list[int] = []
    async with _client(fake_judge.url, mode="verdict") as client:
        post = client._post

        async def recorded(url, body, *deadline):
            if url.endswith("/tokenize"):
                text = body["prompt"] if "prompt" in body else body["messages"][-1]["content"]
                order.append(int(re.search(r"so the answer is (\d+)", text).group(1)))
            return await post(url, body, *deadline)

        monkeypatch.setattr(client, "_post", recorded)
        await client.judge_many([_overlong(str(n)) for n in range(60)])
    assert len(order) == 2 * 60  # each: its count, its completion's tokens
    last_of_first = max(i for i, n in enumerate(order) if n == 0)
    assert all(n < 2 * CONTEXT_FIT_PROMPTS for n in order[: last_of_first + 1])


async def test_prompt_that_cannot_fit_fails_only_its_own_slot(fake_judge):
    fake_judge.set_plan(FaultPlan(max_model_len=3500))
    too_long_question = JudgeRequest(prompt="why? " * 800, completion="x " * 400, answer="4")
    async with _client(fake_judge.url) as client:
        results = await client.judge_many([_overlong(), too_long_question, _requests(1)[0]])
    assert isinstance(results[0], Verdict) and isinstance(results[2], Verdict)
    assert isinstance(results[1], ContextOverflowError) and "shorten the prompt" in str(results[1])
    assert fake_judge.counts["/v1/chat/completions/batch"] == 1


async def test_the_character_budget_applies_first(fake_judge):
    fake_judge.set_plan(FaultPlan(max_model_len=20_000))
    async with _client(fake_judge.url, max_completion_chars=1000) as client:
        await client.judge(_overlong())
        assert client.context_cuts == 0
    sent = fake_judge.last_body["messages"][-1]["content"]
    assert "characters omitted ..." in sent and "so the answer is 4" in sent


async def test_rankings_of_groups_of_different_sizes_go_in_calls_of_their_own(monkeypatch):
    """Each call's constraint is exactly n letters, so a batch of 3- and 4-response rankings is split."""
    client = _client("http://127.0.0.1:9", profile="listwise", model="m")
    bodies: list[dict] = []

    async def complete(path, body, requests):
        bodies.append(body)
        letters = "ABCD"[: 3 if "{2}" in body["structured_outputs"]["regex"] else 4]
        count = len(body["messages"]) if isinstance(body["messages"][0], list) else 1
        return [JudgeReply(k, ">".join(reversed(letters)), "stop") for k in range(count)]

    monkeypatch.setattr(client, "_complete", complete)
    client._tokenize_supported = False  # no server: character budgets only
    requests = [JudgeRequest(prompt="q", responses=("a", "b", "c")), JudgeRequest(prompt="q", responses=("a", "b", "c", "d")),
                JudgeRequest(prompt="q", responses=("c", "a", "b"))]  # fmt: skip
    verdicts = await client.judge_many(requests)
    assert sorted(b["structured_outputs"]["regex"] for b in bodies) == ["[A-C](>[A-C]){2}", "[A-D](>[A-D]){3}"]
    assert [v.ranking for v in verdicts] == [[2, 1, 0], [3, 2, 1, 0], [2, 1, 0]]
    await client.aclose()
