"""User patterns (a profile's verdict_pattern): checked at load, bounded at every search."""

import pytest
import regex

from judge_vllm.contract import label_verdict
from judge_vllm.errors import JudgeParseError
from judge_vllm.patterns import PatternTimeout, UserPattern, compile_user_pattern
from judge_vllm.profiles import load_profile
from judge_vllm.schemas import JudgeReply


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(x+x+)+y"], ids=["nested-plus", "double-plus"])
def test_a_catastrophic_pattern_is_a_config_error_at_load(pattern):
    with pytest.raises(ValueError, match="catastrophic backtracking"):
        compile_user_pattern(pattern, "verdict_pattern")


def test_a_catastrophic_verdict_pattern_is_refused_when_the_profile_loads(user_profile):
    folder = user_profile("labels: {'Yes': 1.0, 'No': 0.0}\nconstraint: none\nverdict_pattern: '(a+)+$'\nmax_tokens: 64\n")
    with pytest.raises(Exception, match="catastrophic backtracking"):
        load_profile(str(folder))


def test_a_search_that_runs_out_of_time_is_bounded_and_typed():
    # A pattern the probes would refuse, built directly: every search is bounded all the same.
    pattern = UserPattern(r"(x+x+)+y", regex.compile(r"(x+x+)+y"))
    with pytest.raises(PatternTimeout):
        pattern.search("x" * 5000, timeout_s=0.05)


def test_a_judge_reply_that_times_the_verdict_pattern_out_is_a_parse_error(monkeypatch):
    import judge_vllm.contract as contract

    slow = UserPattern(r"(x+x+)+(y)", regex.compile(r"(x+x+)+(y)"))
    monkeypatch.setattr(contract, "compile_user_pattern", lambda pattern, field: slow)
    reply = JudgeReply(0, "x" * 5000, "stop", None)
    with pytest.raises(JudgeParseError, match="took more than"):
        label_verdict(reply, {"y": 1.0}, r"(x+x+)+(y)")


def test_bundled_verdict_patterns_pass_the_probes():
    for name in ("general-verifier", "prometheus", "compassverifier-cot"):
        assert load_profile(name).verdict_pattern
