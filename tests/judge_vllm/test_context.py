"""Token-budget arithmetic: what is kept of an overlong completion, and when it cannot fit."""

import pytest

from judge_vllm.context import CUT_SLACK_TOKENS, MIN_KEPT_TOKENS, cut_tokens, join_cut, might_overflow
from judge_vllm.errors import ContextOverflowError, JudgeRequestError


def test_cut_keeps_a_quarter_head_and_three_quarters_tail():
    ids = list(range(1000))
    head, tail, omitted = cut_tokens(ids, excess=200)
    kept = 1000 - 200 - CUT_SLACK_TOKENS
    assert len(head) + len(tail) == kept and omitted == 1000 - kept
    assert head == ids[: kept // 4] and tail == ids[-(kept - kept // 4) :]
    assert tail[-1] == 999  # the end, where the final answer is, survives


def test_cut_refuses_when_too_little_would_remain():
    with pytest.raises(ContextOverflowError, match="--max-model-len") as info:
        cut_tokens(list(range(100)), excess=100 - CUT_SLACK_TOKENS - MIN_KEPT_TOKENS + 1)
    assert isinstance(info.value, JudgeRequestError)  # not retried, answered by the fallback
    head, tail, _ = cut_tokens(list(range(100)), excess=100 - CUT_SLACK_TOKENS - MIN_KEPT_TOKENS)
    assert len(head) + len(tail) == MIN_KEPT_TOKENS


def test_join_marks_the_cut():
    assert join_cut("start", "end", 42) == "start\n[... 42 tokens omitted ...]\nend"


@pytest.mark.parametrize(
    ("content", "max_model_len", "expected"),
    [
        ("x" * 100, 4096, False),  # provably fits
        ("x" * 4000, 4096, True),  # could overflow: ask the server
        ("é" * 1000, 2200, True),  # 2000 UTF-8 bytes: bytes, not characters, bound tokens
        ("x", None, True),  # context unknown: ask the server
    ],
)
def test_might_overflow_is_false_only_when_the_prompt_surely_fits(content, max_model_len, expected):
    assert might_overflow(content, max_tokens=144, max_model_len=max_model_len) is expected
