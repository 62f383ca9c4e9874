"""The reward facade with judge profiles, the policy's reasoning, and the rule-first cascade
(against the loopback fake judge: these check plumbing, never judge quality)."""

import asyncio
import re

import pytest

from adapter import JudgeRewardSystem
from judge_vllm.testing.fake_server import FaultPlan


def _system(url, tmp_path, **overrides):
    config = {"judge_url": url, "cache_dir": str(tmp_path / "cache"), "batch_wait": 0.01, **overrides}
    return JudgeRewardSystem(config)


def test_the_policys_reasoning_is_stripped_before_judging(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, use_cache=False) as rs:
        result = rs.reward("q", "<think>maybe 5, or 7?</think>\nThe answer is 7", "7")
    assert result["source"] == "judge" and result["reward"] == 1.0
    sent = fake_judge.last_body["messages"][-1]["content"]
    assert "The answer is 7" in sent and "maybe 5" not in sent


def test_reasoning_that_never_closes_has_a_defined_reward_and_reason(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, startup_check="off") as rs:  # the judge is never asked
        result = rs.reward("q", "<think>Let me think about 7 and", "7")
        batch = rs.reward_batch([{"prompt": "q", "completion": "<think>still thinking", "answer": "7"}])
    assert (result["reward"], result["source"], result["reason"]) == (0.0, "rule", "unclosed_reasoning")
    assert batch[0]["reason"] == "unclosed_reasoning"
    assert fake_judge.counts["/v1/chat/completions"] + fake_judge.counts["/v1/chat/completions/batch"] == 0


def test_reasoning_stripping_can_be_turned_off_or_use_other_delimiters(fake_judge, tmp_path):
    delimiters = {"start": "<reasoning>", "end": "</reasoning>"}
    with _system(fake_judge.url, tmp_path, use_cache=False, reasoning_delimiters=delimiters) as rs:
        rs.reward("q", "<reasoning>5?</reasoning> The answer is 7", "7")
        assert "5?" not in fake_judge.last_body["messages"][-1]["content"]
    with _system(fake_judge.url, tmp_path, use_cache=False, strip_reasoning=False) as rs:
        rs.reward("q", "<think>5?</think> The answer is 7", "7")
        assert "5?" in fake_judge.last_body["messages"][-1]["content"]


SURE = [
    ("The answer is \\boxed{7}.", "7", "NUMBER", 1.0),  # verified equal
    ("The answer is \\boxed{8}.", "7", "NUMBER", 0.0),  # a clear NUMBER mismatch
    ("The answer is (B).", "C", "MULTIPLE_CHOICE", 0.0),
    ("So the answer is Paris.", "Paris", "TEXT", 1.0),
]
UNSURE = [
    ("I believe it is Lyon.", "Paris", "TEXT"),  # TEXT mismatch: the judge decides
    ("Expanding, we get \\boxed{x^2+2x+2} (I think).", "(x+1)^2", "MATH_EXPRESSIONS"),  # not canonical
]


def test_cascade_decides_sure_cases_by_rule_and_sends_the_rest_to_the_judge(fake_judge, tmp_path):
    items = [{"prompt": "q", "completion": c, "answer": a, "answer_type": t} for c, a, t, _ in SURE]
    items += [{"prompt": "q", "completion": c, "answer": a, "answer_type": t} for c, a, t in UNSURE]
    with _system(fake_judge.url, tmp_path, use_cache=False, strategy="cascade") as rs:
        results = rs.reward_batch(items)
        single = rs.reward("q", *SURE[0][:3])
        async_one = asyncio.run(rs.areward("q", *UNSURE[0]))
        metrics = rs.get_metrics()
    decided, judged = results[: len(SURE)], results[len(SURE) :]
    assert [(r["source"], r["reason"], r["reward"]) for r in decided] == [
        ("rule", "cascade", s[3]) for s in SURE
    ]
    assert all("decided by rule" in r["explanation"] for r in decided)
    assert [r["source"] for r in judged] == ["judge", "judge"]
    assert single["reason"] == "cascade" and async_one["source"] == "judge"
    assert metrics["cascade"] == {"decided_by_rule": 5, "sent_to_judge": 3, "judge_fraction": 3 / 8}


def test_judge_strategy_sends_everything_to_the_judge(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, use_cache=False) as rs:
        results = rs.reward_batch(
            [{"prompt": "q", "completion": c, "answer": a, "answer_type": t} for c, a, t, _ in SURE]
        )
        metrics = rs.get_metrics()
    assert {r["source"] for r in results} == {"judge"}
    assert metrics["cascade"]["judge_fraction"] is None


def test_compassverifier_invalid_label_is_reported(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, use_cache=False, profile="compassverifier") as rs:
        result = rs.reward("q", "It is 7.", "7")  # the fake answers its second label (B) for no match
    assert result["source"] == "judge" and result["reward"] == 0.0 and result["label"] == "B"
    assert fake_judge.last_body["structured_outputs"] == {"choice": ["A", "B", "C"]}
    assert (
        fake_judge.last_body["messages"][0]["role"] == "user" and len(fake_judge.last_body["messages"]) == 1
    )


def test_general_verifier_gets_the_extracted_answer_on_the_completions_endpoint(fake_judge, tmp_path):
    config = {"use_cache": False, "profile": "general-verifier", "max_tokens": 64, "startup_check": "off"}
    with _system(fake_judge.url, tmp_path, **config) as rs:  # one call, the rewards': no start-up check
        results = rs.reward_batch(
            [
                {
                    "prompt": "What is 3+4?",
                    "completion": "3+4 = 7, so the answer is \\boxed{7}.",
                    "answer": "7",
                },
                {"prompt": "Name it.", "completion": "Hmm, hard to say", "answer": "Paris"},
            ]
        )
    assert [r["source"] for r in results] == ["judge", "judge"] and results[0]["reward"] == 1.0
    body = fake_judge.last_body
    assert fake_judge.counts["/v1/completions"] == 1 and isinstance(
        body["prompt"], list
    )  # one call, two prompts
    assert re.search(r"### Student Answer: <response-\w+>\n7\n</response-", body["prompt"][0])
    assert "so the answer is" not in body["prompt"][0]
    assert (
        body["structured_outputs"] == {"regex": "[\\s\\S]{0,32}Final Decision: (Yes|No)"}
        and body["max_tokens"] == 64
    )
    assert "messages" not in body and "chat_template_kwargs" not in body


def test_prometheus_grades_without_a_reference_against_the_users_rubric(fake_judge, tmp_path):
    rubric = {"criteria": "Is it polite?", **{f"score{i}_description": f"level {i}" for i in range(1, 6)}}
    fake_judge.set_plan(FaultPlan(completion_text="Polite and clear. [RESULT] 4"))
    with _system(fake_judge.url, tmp_path, use_cache=False, profile="prometheus", score_rubric=rubric) as rs:
        result = rs.reward("Write a thank-you note.", "Thank you so much for the flowers!", "")
    assert result["source"] == "judge" and result["reward"] == 0.75 and "Polite" in result["explanation"]
    assert (
        "Is it polite?" in fake_judge.last_body["prompt"]
        and "Reference Answer" not in fake_judge.last_body["prompt"]
    )


def test_chat_template_kwargs_reach_the_judge(fake_judge, tmp_path):
    kwargs = {"enable_thinking": False}
    with _system(fake_judge.url, tmp_path, use_cache=False, chat_template_kwargs=kwargs, max_tokens=3) as rs:
        rs.reward("q", "The answer is 7", "7")
    assert fake_judge.last_body["chat_template_kwargs"] == kwargs and fake_judge.last_body["max_tokens"] == 3


@pytest.mark.parametrize("profile", ["rubric", "compassverifier"])
def test_a_profile_change_is_a_new_cache_key(fake_judge, tmp_path, profile):
    with _system(fake_judge.url, tmp_path, profile=profile) as rs:
        first = rs.reward("q", "The answer is 7", "7")
        again = rs.reward("q", "The answer is 7", "7")
    with _system(fake_judge.url, tmp_path, profile="binary") as rs:
        other = rs.reward("q", "The answer is 7", "7")
    assert (first["source"], again["source"], other["source"]) == ("judge", "cache", "judge")


def test_labels_of_several_tokens_use_the_sampled_label_without_a_logprob_warning(
    fake_judge, tmp_path, caplog
):
    """The fake's tokenizer gives one token per character: xVerify's labels are several tokens."""
    with _system(fake_judge.url, tmp_path, use_cache=False, profile="xverify") as rs:
        result = rs.reward("q", "It is 7.", "7")
        metrics = rs.get_metrics()
    assert result["source"] == "judge" and result["confidence"] is None
    assert (
        "logprobs" not in fake_judge.last_body and fake_judge.last_body["max_tokens"] == 16
    )  # room for a label of several tokens
    assert metrics["coarse_fast_verdicts"] == 0 and "no label logprobs" not in caplog.text


def _word_tokenizer(folder):
    """A tiny local tokenizer: one token per word (so each label is one token)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["[UNK]", "1", "2", "3", "4", "5", "Yes", "No"])}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]").save_pretrained(folder)
    return str(folder)


def test_a_local_tokenizer_gives_label_probabilities_behind_a_server_without_tokenize(
    fake_judge, tmp_path, caplog
):
    """A router that forwards only the OpenAI routes has no /tokenize: the label ids come from
    the judge model's tokenizer, loaded locally once."""
    fake_judge.set_plan(FaultPlan(tokenize=False))
    tokenizer = _word_tokenizer(tmp_path / "tok")
    with _system(fake_judge.url, tmp_path, use_cache=False, tokenizer=tokenizer) as rs:
        result = rs.reward("q", "The answer is 7", "7")
        metrics = rs.get_metrics()
    assert fake_judge.last_body["logprob_token_ids"] == [6, 7]  # Yes, No
    assert result["confidence"] == 1.0 and metrics["coarse_fast_verdicts"] == 0


def test_a_tokenizer_that_cannot_load_means_the_sampled_label_with_a_warning(fake_judge, tmp_path, caplog):
    fake_judge.set_plan(FaultPlan(tokenize=False))
    with _system(fake_judge.url, tmp_path, use_cache=False, tokenizer=str(tmp_path / "missing")) as rs:
        result = rs.reward("q", "The answer is 7", "7")
    assert result["source"] == "judge" and result["confidence"] is None
    assert "could not be loaded" in caplog.text
