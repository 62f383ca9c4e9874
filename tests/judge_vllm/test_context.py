"""Token-budget arithmetic: what is kept of an overlong completion, and when it cannot fit."""

import pytest

from judge_vllm.context import (
    CUT_SLACK_TOKENS,
    MIN_KEPT_TOKENS,
    cut_tokens,
    join_cut,
    marker_tokens,
    might_overflow,
)
from judge_vllm.errors import ContextOverflowError, JudgeRequestError


def test_cut_keeps_a_quarter_head_and_three_quarters_tail():
    ids = list(range(1000))
    head, tail, omitted = cut_tokens(ids, excess=200)
    kept = 1000 - 200 - CUT_SLACK_TOKENS - marker_tokens(1000)
    assert len(head) + len(tail) == kept and omitted == 1000 - kept
    assert head == ids[: kept // 4] and tail == ids[-(kept - kept // 4) :]
    assert tail[-1] == 999  # the end, where the final answer is, survives


def test_cut_refuses_when_too_little_would_remain():
    room = CUT_SLACK_TOKENS + marker_tokens(200) + MIN_KEPT_TOKENS
    with pytest.raises(ContextOverflowError, match="--max-model-len") as info:
        cut_tokens(list(range(200)), excess=200 - room + 1)
    assert isinstance(info.value, JudgeRequestError)  # not retried, answered by the fallback
    head, tail, _ = cut_tokens(list(range(200)), excess=200 - room)
    assert len(head) + len(tail) == MIN_KEPT_TOKENS


def test_join_marks_the_cut():
    assert join_cut("start", "end", 42) == "start\n[... 42 tokens omitted ...]\nend"


@pytest.mark.parametrize("n", [200, 6_035, 123_456])
def test_the_cut_leaves_room_for_its_marker_and_the_slack(n):
    head, tail, omitted = cut_tokens(list(range(n)), excess=n // 3)
    room = n - n // 3 - len(head) - len(tail)
    assert room >= len(join_cut("", "", omitted).encode()) + CUT_SLACK_TOKENS  # no token is under a byte


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
