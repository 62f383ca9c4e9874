"""OpenRLHF remote reward model: ``/get_reward`` over real HTTP with OpenRLHF's request shape.

OpenRLHF (openrlhf/utils/agent.py, ``SingleTurnAgentExecutor._fetch_rewards_via_http``) posts
``{"query": [...], "prompts": [...], "labels": [...]}``, calls ``raise_for_status()`` and reads
``rewards``, ``scores`` and ``extra_logs``. Queries are ``decode(prompt + response tokens,
skip_special_tokens=False)``, so they carry the chat template and the end-of-turn token.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapter.integrations import openrlhf, openrlhf_inprocess, openrlhf_protocol, openrlhf_reward_func
from adapter.integrations.openrlhf import create_app
from adapter.integrations.openrlhf_protocol import (
    FALLBACK_REASON_CODES,
    OTHER_REASON_CODE,
    OpenRLHFRewards,
    split_query,
    unavailable_message,
)
from adapter.result import RewardResult
from judge_vllm.errors import JudgeConfigError, JudgeError
from judge_vllm.testing.asgi_server import ApiServer
from judge_vllm.testing.ports import free_port

REPO = Path(__file__).resolve().parents[3]
TEMPLATE = "<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"


def _config(url: str, tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    return {"judge_url": url, "cache_dir": str(tmp_path / "cache"), "max_retries": 0, **overrides}


def _payload(questions: list[str], responses: list[str], labels: list[Any]) -> dict[str, list[Any]]:
    prompts = [TEMPLATE.format(question=q) for q in questions]
    queries = [p + r + "<|im_end|>" for p, r in zip(prompts, responses, strict=True)]
    return {"query": queries, "prompts": prompts, "labels": labels}


@pytest.fixture
def rm(fake_judge, tmp_path) -> Iterator[str]:
    """The reward model's /get_reward URL, in front of the fake judge."""
    app = create_app(_config(fake_judge.url, tmp_path), max_batch=8)
    with ApiServer(app) as server:
        yield f"{server.url}/get_reward"


@pytest.mark.parametrize(
    ("query", "prompt", "response"),
    [
        ("PROMPT: 2+2?\nANSWER: It is 4.", "PROMPT: 2+2?\nANSWER:", "It is 4."),
        (TEMPLATE.format(question="2+2?") + "4<|im_end|>", TEMPLATE.format(question="2+2?"), "4"),
        ("Q?\nA: 5<|eot_id|>", "Q?\nA:", "5"),
        ("Q?\nA: 5</s></s>", "Q?\nA:", "5"),
        ("Q?\nA: 5<end_of_turn>\n", "Q?\nA:", "5"),
        # prompt cut from the left by OpenRLHF (prompt_token_ids[-max_prompt_length:])
        ("the end of a long prompt. A: 7", "A very long start, then the end of a long prompt.", "A: 7"),
        # decode differs at the prompt's end (a merged space)
        ("Question: 2+2?\nAnswer:It is 4.", "Question: 2+2?\nAnswer: ", "It is 4."),
        ("no relation at all", "something else", "no relation at all"),
        ("just a response", "", "just a response"),
        ("", "prompt", ""),
    ],
)
def test_split_query(query, prompt, response):
    assert split_query(query, prompt) == response


@pytest.mark.parametrize("module", [openrlhf, openrlhf_protocol, openrlhf_inprocess, openrlhf_reward_func])
def test_all_names_what_the_module_defines(module):
    assert [name for name in module.__all__ if not hasattr(module, name)] == []


def test_get_reward_with_openrlhfs_request_shape(rm):
    # Each question mentions the right answer, so a response still holding its prompt would pass.
    payload = _payload(
        ["Is 2+2 equal to 4 or 5?", "Is the capital of France Paris or Lyon?", "Is 3*3 equal to 9 or 6?"],
        ["It is 5.", "It is Paris.", "It is 6."],
        ["4", "Paris", 9],
    )
    reply = httpx.post(rm, json=payload, timeout=60)
    reply.raise_for_status()
    body = reply.json()
    assert body["rewards"] == [0.0, 1.0, 0.0]
    assert body["scores"] == body["rewards"]
    logs = body["extra_logs"]
    assert set(logs) == {*FLAGS, "judge_latency_s", "judge_confidence"}
    assert all(len(values) == 3 for values in logs.values())
    # the end-of-turn token is cut, so no completion is taken for role spoofing
    assert logs["judge_prechecked"] == [0.0, 0.0, 0.0]


def test_single_query_shards_and_extra_fields(rm):
    # OpenRLHF's executor sends one query per request; unknown keys from newer versions are ignored.
    payload = {**_payload(["What is 6*7?"], ["The answer is 42."], ["42"]), "future_field": 1}
    body = httpx.post(rm, json=payload).json()
    assert body["rewards"] == [1.0] and body["extra_logs"]["judge_fallback"] == [0.0]


def test_answer_type_from_the_server_or_the_request(fake_judge, tmp_path):
    payload = _payload(["What is 6*7?"], ["I would rather not say."], ["42"])
    with ApiServer(create_app(_config(fake_judge.url, tmp_path), answer_type="NUMBER")) as server:
        typed = httpx.post(f"{server.url}/get_reward", json=payload).json()
        overridden = httpx.post(f"{server.url}/get_reward", json={**payload, "answer_types": ["TEXT"]}).json()
    with ApiServer(create_app(_config(fake_judge.url, tmp_path / "b"))) as server:
        per_request = httpx.post(
            f"{server.url}/get_reward", json={**payload, "answer_types": ["NUMBER"]}
        ).json()
    # NUMBER expected and no number given: decided by a pre-check, never judged
    assert typed["extra_logs"]["judge_prechecked"] == [1.0] and typed["rewards"] == [0.0]
    assert per_request["extra_logs"]["judge_prechecked"] == [1.0]
    assert overridden["extra_logs"]["judge_prechecked"] == [0.0]


@pytest.mark.parametrize(
    ("payload", "field", "words"),
    [
        ({"prompts": ["p"], "labels": ["1"]}, "query", "Field required"),
        ({"query": "p r", "prompts": ["p"], "labels": ["1"]}, "query", "valid list"),
        ({"query": ["p r", "p s"], "prompts": ["p"], "labels": ["1", "2"]}, "body", "prompts has 1 items"),
        ({"query": ["p r"], "prompts": ["p"], "labels": [{"a": 1}]}, "labels[0]", "valid string"),
        ({"query": ["p r"], "prompts": ["p"], "labels": ["1"], "answer_types": []}, "body", "answer_types"),
        ({"query": ["p r"] * 9, "prompts": ["p"] * 9, "labels": ["1"] * 9}, "query", "at most 8 items"),
        (
            {"query": ["p r"], "prompts": ["p"], "labels": ["1"], "answer_types": ["X" * 65]},
            "answer_types[0]",
            "at most 64 characters",
        ),
        (
            {"query": ["p r", "p \ud800"], "prompts": ["p", "p"], "labels": ["1", "2"]},
            "query[1]",
            "lone surrogate",
        ),
        ({"query": ["p r"], "prompts": ["\udfff"], "labels": ["1"]}, "prompts[0]", "lone surrogate (U+DFFF"),
        ({"query": ["p r"], "prompts": ["p"], "labels": ["4 \ud800"]}, "labels[0]", "lone surrogate"),
        (
            {"query": ["p r"], "prompts": ["p"], "labels": ["1"], "answer_types": ["\ud800"]},
            "answer_types[0]",
            "lone surrogate",
        ),
    ],
)
def test_malformed_requests_are_422(rm, payload, field, words):
    # json.dumps escapes a lone surrogate as "\ud800", which JSON decoders read back as one
    body = json.dumps(payload).encode()
    reply = httpx.post(rm, content=body, headers={"content-type": "application/json"})
    assert reply.status_code == 422
    body = reply.json()
    assert field in [e["field"] for e in body["errors"]] and words in body["detail"]


def test_the_servers_answer_type_is_checked_when_the_app_is_built():
    with pytest.raises(
        JudgeConfigError, match=r"answer_type \(--answer-type\): String should have at most 64 characters"
    ):
        create_app({}, answer_type="X" * 65)


def test_a_reward_the_judge_could_not_give_is_a_503_not_a_number(tmp_path):
    closed = free_port()
    payload = _payload(["What is 6*7?"], ["The answer is 42."], ["42"])
    down = f"http://127.0.0.1:{closed}"  # with startup_check warn, served although down from the start
    app = create_app(_config(down, tmp_path, fallback_to_rule=False, startup_check="warn"))
    with ApiServer(app) as server:
        failed = httpx.post(f"{server.url}/get_reward", json=payload)
    app = create_app(_config(down, tmp_path, fallback_to_rule=True, startup_check="warn"))
    with ApiServer(app) as server:
        fallback = httpx.post(f"{server.url}/get_reward", json=payload).json()
    assert failed.status_code == 503 and "Judge unavailable" in failed.json()["detail"]
    assert fallback["rewards"] == [1.0] and fallback["extra_logs"]["judge_fallback"] == [1.0]


def _result(source: str, **fields: Any) -> dict[str, Any]:
    return RewardResult(reward=0.5, source=source, request_id="r", latency_ms=250.0, **fields).to_dict()


FLAGS = ("judge_source", "judge_fallback", "judge_cached", "judge_prechecked", "judge_fallback_reason")


@pytest.mark.parametrize(
    ("result", "numbers", "confidence"),
    [
        (_result("judge", confidence=0.9), (0, 0, 0, 0, 0), 0.9),
        (_result("cache", confidence=0.8), (1, 0, 1, 0, 0), 0.8),
        (_result("rule", reason="injection"), (2, 0, 0, 1, 0), 0.0),
        (_result("rule_fallback", reason="Circuit breaker open"), (3, 1, 0, 0, 3), 0.0),
        (_result("rule_fallback", reason="Request queue full"), (3, 1, 0, 0, 4), 0.0),
        (_result("rule_fallback", reason="a reason added later"), (3, 1, 0, 0, OTHER_REASON_CODE), 0.0),
        (_result("judge"), (0, 0, 0, 0, 0), 0.0),  # a JSON-contract verdict has no confidence
    ],
)
def test_extra_logs_are_numbers_for_source_reason_and_confidence(result, numbers, confidence):
    logs = OpenRLHFRewards.from_results([result]).extra_logs
    assert tuple(logs[name][0] for name in FLAGS) == numbers
    assert logs["judge_confidence"] == [confidence] and logs["judge_latency_s"] == [0.25]


def _subclasses(cls: type) -> list[type]:
    return [cls] + [sub for direct in cls.__subclasses__() for sub in _subclasses(direct)]


def test_every_judge_failure_reason_has_its_own_code():
    reasons = {cls.reason for cls in _subclasses(JudgeError)}
    assert reasons <= set(FALLBACK_REASON_CODES)
    codes = list(FALLBACK_REASON_CODES.values())
    assert len(set(codes)) == len(codes) and 0.0 not in codes and OTHER_REASON_CODE not in codes


def test_unavailable_message_names_the_missing_rewards_and_why():
    results = [_result("judge"), {**_result("error", reason="Judge unavailable"), "reward": None}]
    assert unavailable_message(results[:1]) is None
    assert unavailable_message(results) == (
        "1 of 2 rewards unavailable (Judge unavailable): the judge failed and fallback_to_rule is off"
    )


def test_a_timeout_openrlhf_would_not_wait_for_is_refused():
    create_app(REPO / "configs" / "openrlhf.yaml")
    create_app({"reward_timeout": 170.0})
    with pytest.raises(JudgeConfigError, match=r"reward_timeout 170\.5 s: .* set reward_timeout to at most 170"):
        create_app({"reward_timeout": 170.5})


def _openrlhf_trainer_flags() -> set[str]:
    """The flags OpenRLHF 0.11's ``train_ppo_ray`` parser declares (read from its source)."""
    spec = importlib.util.find_spec("openrlhf")
    assert spec is not None and spec.submodule_search_locations, "openrlhf missing: run scripts/setup.sh"
    source = (Path(spec.submodule_search_locations[0]) / "cli" / "train_ppo_ray.py").read_text()
    return {
        node.args[0].value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "add_argument"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }


def test_documented_openrlhf_flags_are_the_ones_openrlhf_declares():
    files = [
        REPO / "README.md",
        REPO / "docs" / "integrations.md",
        REPO / "docs" / "http_api.md",
        REPO / "configs" / "openrlhf.yaml",
        REPO / "adapter" / "cli.py",
        *sorted((REPO / "adapter" / "integrations").glob("openrlhf*.py")),
    ]
    text = "\n".join(path.read_text() for path in files)
    documented = set(re.findall(r"--[a-z_]+\.[a-z_.]*[a-z_]", text))  # OpenRLHF 0.11's dotted flags
    declared = _openrlhf_trainer_flags()
    assert {"--reward.remote_url", "--data.label_key"} <= documented
    assert documented - declared == set()
    # OpenRLHF 0.11 rejects the flags of earlier versions ("unrecognized arguments")
    assert re.findall(r"--(?:remote_rm_url|label_key)\b", text) == []
