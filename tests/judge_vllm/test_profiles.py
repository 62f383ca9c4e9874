"""Judge profiles: loading, label parsing with and without logprobs, reasoning replies, errors."""

import math

import pytest
from pydantic import ValidationError

from judge_vllm.contract import label_verdict, ranking_regex, ranking_verdict
from judge_vllm.errors import JudgeConfigError, JudgeInputError, JudgeParseError, JudgeReasoningCutError
from judge_vllm.profiles import builtin_profile_names, load_profile
from judge_vllm.schemas import (
    JudgeReply,
    JudgeRequest,
    LogprobPosition,
    parse_chat_reply,
    parse_completion_reply,
)
from judge_vllm.settings import JudgeClientConfig

CV = load_profile("compassverifier")
COT = load_profile("compassverifier-cot")
GV = load_profile("general-verifier")
PROMETHEUS = load_profile("prometheus")


def _reply(text, finish="stop", positions=None):
    return JudgeReply(0, text, finish, positions)


def _at(token, **probs):
    return LogprobPosition(token=token, logprobs={k: math.log(p) for k, p in probs.items()})


def test_every_bundled_profile_loads_and_states_its_source_and_licence():
    names = builtin_profile_names()
    assert set(names) >= {
        "rubric",
        "binary",
        "compassverifier",
        "compassverifier-cot",
        "xverify",
        "general-verifier",
        "prometheus",
        "criterion",
        "pairwise",
        "listwise",
    }
    for name in names:
        profile = load_profile(name)
        assert profile.source and profile.licence
        assert bool(profile.labels) == (profile.output != "ranking")  # a ranking's letters are no labels


def test_a_ranking_is_every_letter_shown_once_best_first():
    verdict = ranking_verdict("C>A>B", "stop", 3)
    assert verdict.ranking == [2, 0, 1] and verdict.label == "C>A>B" and verdict.score == 0.5
    assert ranking_verdict("A", "stop", 1).score == 1.0
    for bad in ("A>B", "A>A>B", "A>B>D", "A, B, C", ""):
        with pytest.raises(JudgeParseError):
            ranking_verdict(bad, "stop", 3)
    with pytest.raises(JudgeParseError, match="cut short"):
        ranking_verdict("A>B>", "length", 3)


def test_a_ranking_profile_takes_no_labels_and_no_choice_constraint(tmp_path):
    for k, extra in enumerate(("labels: {A: 1.0}\nconstraint: regex\nregex: '[A-B]'", "constraint: choice")):
        folder = tmp_path / str(k)
        folder.mkdir()
        (folder / "user.j2").write_text("{{ responses | length }}")
        (folder / "profile.yaml").write_text(f"output: ranking\n{extra}\n")
        with pytest.raises(JudgeConfigError, match="ranking has no labels"):
            load_profile(str(folder))


def test_compassverifier_reward_is_p_of_a_and_c_is_an_invalid_response():
    v = label_verdict(_reply("A", "length", [_at("A", A=0.6, B=0.3, C=0.1)]), CV.labels)
    assert v.score == pytest.approx(0.6) and v.confidence == pytest.approx(0.6) and v.label == "A"
    invalid = label_verdict(_reply("C"), CV.labels)
    assert invalid.score == 0.0 and invalid.label == "C" and "invalid" in invalid.explanation


def test_label_probabilities_add_the_bare_and_the_spaced_token():
    v = label_verdict(_reply(" A", positions=[_at(" A", **{" A": 0.3, "A": 0.3, "B": 0.4})]), CV.labels)
    assert v.score == pytest.approx(0.6)


def test_unknown_or_missing_labels_are_typed_errors():
    with pytest.raises(JudgeParseError, match="not a label"):
        label_verdict(_reply("D"), CV.labels)
    with pytest.raises(JudgeParseError, match="no verdict"):
        label_verdict(_reply("I think it is right."), COT.labels, COT.verdict_pattern)
    with pytest.raises(JudgeParseError, match="cut short"):
        label_verdict(_reply("Analysis: the candidate", "length"), COT.labels, COT.verdict_pattern)


def test_chain_of_thought_label_is_the_last_boxed_letter_and_its_position_is_found():
    text = "Step 1: compare \\boxed{B}? no.\nFinal Judgment: \\boxed{A} - CORRECT"
    tokens = ["Step 1: compare \\boxed{", "B", "}? no.\nFinal Judgment: \\boxed{", "A", "} - CORRECT"]
    positions = [LogprobPosition(t, {t: 0.0}) for t in tokens]
    positions[3] = _at("A", A=0.9, B=0.05, C=0.05)
    v = label_verdict(_reply(text, positions=positions), COT.labels, COT.verdict_pattern)
    assert v.label == "A" and v.score == pytest.approx(0.9)
    assert "Step 1" in v.explanation  # the analysis is the explanation


def test_inline_reasoning_is_skipped_and_probabilities_read_at_the_verdict():
    text = "<think>A or B? The answer matches.</think>\nA"
    tokens = ["<think>", "A", " or B? The answer matches.", "</think>", "\n", "A"]
    positions = [LogprobPosition(t, {t: 0.0}) for t in tokens]
    positions[1] = _at("A", A=0.1, B=0.9)  # a label inside the reasoning must not be read
    positions[5] = _at("A", A=0.8, B=0.2)
    v = label_verdict(_reply(text, positions=positions), CV.labels)
    assert v.label == "A" and v.score == pytest.approx(0.8)


def test_reasoning_apart_from_content_is_ignored():
    body = '{"choices": [{"index": 0, "finish_reason": "stop", "message": {"content": "B", "reasoning_content": "maybe A"}}]}'
    (reply,) = parse_chat_reply(body)
    assert label_verdict(reply, CV.labels).label == "B"


def test_a_reply_cut_inside_its_reasoning_is_a_reasoning_cut_error():
    with pytest.raises(JudgeReasoningCutError) as info:
        label_verdict(_reply("<think>Let me compare the two answers carefully", "length"), CV.labels)
    assert info.value.reason == "Judge reply cut inside its reasoning"


def test_general_verifier_reads_final_decision_from_a_completions_reply():
    body = (
        '{"choices": [{"index": 0, "text": "The student wrote x+1, equal.\\nFinal Decision: Yes", "finish_reason": "stop",'
        ' "logprobs": {"tokens": ["The student wrote x+1, equal.\\nFinal Decision:", " Yes"],'
        ' "token_logprobs": [0.0, -0.1], "top_logprobs": [null, {" Yes": -0.1, " No": -2.4}]}}]}'
    )
    (reply,) = parse_completion_reply(body)
    v = label_verdict(reply, GV.labels, GV.verdict_pattern)
    p_yes = math.exp(-0.1) / (math.exp(-0.1) + math.exp(-2.4))
    assert v.label == "Yes" and v.score == pytest.approx(p_yes)


def test_prometheus_reads_result_and_keeps_the_feedback():
    v = label_verdict(
        _reply("The response is right but terse. [RESULT] 4"), PROMETHEUS.labels, PROMETHEUS.verdict_pattern
    )
    assert v.score == 0.75 and v.label == "4" and "terse" in v.explanation


def test_prometheus_needs_a_score_rubric_and_the_config_says_so():
    with pytest.raises(ValueError, match="score_rubric"):
        JudgeClientConfig(profile="prometheus")


def test_unknown_profile_is_a_config_error_listing_the_bundled_ones():
    with pytest.raises(ValueError, match="compassverifier"):
        JudgeClientConfig(profile="no-such-profile")


def test_a_users_own_profile_folder_loads(tmp_path):
    (tmp_path / "ask.j2").write_text(
        "Is {{ completion }} the same as {{ answer }}? Reply Same or Different.\n"
    )
    (tmp_path / "profile.yaml").write_text(
        "user_template: ask.j2\nlabels: {Same: 1, Different: 0}\nmax_tokens: 4\n"
    )
    profile = JudgeClientConfig(profile=str(tmp_path)).judge_profile()
    assert profile.name == tmp_path.name and profile.endpoint == "chat"


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("labels: {A: 1}\nconstraint: regex\n", "needs a regex"),
        ("labels: {A: 1}\nverdict_pattern: 'A'\n", "group"),
        ("labels: {A: invalid}\n", "at least one label"),
        ("labels: {A: 2}\n", "less than or equal"),
        ("labels: {A: 1}\nuser_template: missing.j2\n", "not in"),
        ("labels: {A: 1}\nendpoint: completions\nsystem_template: s.j2\n", "no system message"),
        ("- a list\n", "mapping"),
    ],
)
def test_bad_user_profiles_are_clear_config_errors(tmp_path, yaml_text, message):
    (tmp_path / "user.j2").write_text("{{ completion }}\n")
    (tmp_path / "profile.yaml").write_text(yaml_text)
    with pytest.raises(JudgeConfigError, match=message):
        load_profile(str(tmp_path / "profile.yaml"))


def test_verdict_mode_on_a_profile_without_one_is_a_clear_error():
    assert JudgeClientConfig(profile="rubric", mode="verdict").judge_profile().output == "json"
    with pytest.raises(ValidationError, match="profile 'compassverifier' answers with a label only"):
        JudgeClientConfig(profile="compassverifier", mode="verdict")


@pytest.mark.parametrize(("given", "profile"), [({}, "binary"), ({"mode": "verdict"}, "rubric"),
                                                ({"profile": None}, "binary")])  # fmt: skip
def test_the_default_profile_is_binary_and_rubric_for_a_verdict(given, profile):
    assert JudgeClientConfig(**given).profile == profile


def test_a_label_followed_by_an_end_of_text_token_is_still_weighed():
    xverify = load_profile("xverify")
    positions = [_at("Correct", Correct=0.7, Incorrect=0.3), LogprobPosition("<|im_end|>", {})]
    v = label_verdict(_reply("Correct", positions=positions), xverify.labels)
    assert v.score == pytest.approx(0.7) and v.confidence == pytest.approx(0.7)


def test_a_label_written_in_several_tokens_is_the_sampled_label():
    xverify = load_profile("xverify")
    positions = [LogprobPosition("In", {"In": -0.1}), LogprobPosition("correct", {"correct": 0.0})]
    v = label_verdict(_reply("Incorrect", positions=positions), xverify.labels)
    assert v.score == 0.0 and v.confidence is None and v.label == "Incorrect"


def test_the_fixed_prompt_cache_is_bounded_whatever_answer_types_arrive():
    from judge_vllm.profiles import FIXED_CACHE_SIZE, load_profile
    from judge_vllm.schemas import JudgeRequest

    profile = load_profile("rubric")
    for i in range(FIXED_CACHE_SIZE * 3):
        request = JudgeRequest(prompt="q", completion="c", answer="a", answer_type=f"made-up type {i}")
        profile.render(request, "c", max_prompt_chars=1000, max_completion_chars=1000)
    assert len(profile._fixed_cache) == FIXED_CACHE_SIZE


def test_comparison_prompts_share_their_start_and_tag_every_response():
    request = JudgeRequest(prompt="Q?", answer="42", responses=("first </response-x>", "second"))
    prompts = {
        name: load_profile(name).render(
            request, "", max_prompt_chars=1000, max_completion_chars=1000, nonce="n"
        )
        for name in ("pairwise", "listwise")
    }
    for prompt in prompts.values():
        assert prompt.user.startswith("QUESTION:\nQ?\n\nREFERENCE ANSWER:\n42\n")
        assert prompt.user.count("<response-n>") == 2 and "<\u200b/response-x>" in prompt.user
    assert "RESPONSE A:" in prompts["listwise"].user and "Rank all 2 responses" in prompts["listwise"].user
    bare = JudgeRequest(prompt="Q?", responses=("a", "b"))
    assert (
        "REFERENCE"
        not in load_profile("pairwise").render(bare, "", max_prompt_chars=9, max_completion_chars=9).user
    )


def test_each_compared_response_gets_its_share_of_the_completion_budget():
    request = JudgeRequest(prompt="Q?", responses=("x" * 500, "y" * 500))
    user = load_profile("pairwise").render(request, "", max_prompt_chars=100, max_completion_chars=400).user
    assert user.count("characters omitted") == 2 and user.count("x") < 250


def test_a_ranking_is_constrained_to_exactly_the_letters_shown():
    assert ranking_regex(1) == "[A-A]" and ranking_regex(4) == "[A-D](>[A-D]){3}"
    listwise = load_profile("listwise")
    assert listwise.constraint_regex(40, 3) == "[A-C](>[A-C]){2}" and listwise.constraint_regex(40) == listwise.regex


def test_a_profile_reads_its_templates_from_the_folder_its_variable_names(tmp_path, monkeypatch):
    folder = tmp_path / "profile"
    folder.mkdir()
    (folder / "profile.yaml").write_text(
        "template_dir_env: MY_PROMPT_DIR\ntemplates_note: get it from upstream\nlabels: {\"Yes\": 1.0, \"No\": 0.0}\n"
    )
    with pytest.raises(JudgeConfigError, match=r"user\.j2 not in .*get it from upstream"):
        load_profile(str(folder))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "user.j2").write_text("Q: {{ prompt }}")
    monkeypatch.setenv("MY_PROMPT_DIR", str(elsewhere))
    profile = load_profile(str(folder / "profile.yaml"))  # another cache entry than the failed load
    assert profile.template_dir == elsewhere.resolve()


def test_a_comparing_profile_refuses_a_single_completion_with_a_clear_error():
    with pytest.raises(JudgeInputError, match="compares responses: it judges groups"):
        load_profile("pairwise").render(JudgeRequest(prompt="Q?", completion="A"), "A", max_prompt_chars=9, max_completion_chars=9)
