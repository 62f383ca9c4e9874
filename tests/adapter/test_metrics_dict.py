"""``MetricsDict`` and ``RewardDict`` say what ``get_metrics()`` and ``reward()`` return: every
required key there, no key they do not declare, every value of its declared type (nested too)."""

import sys
import types
from typing import Literal, Union, get_args, get_origin

import pytest

# typing_extensions' version: on Python 3.10, typing's get_type_hints keeps NotRequired[...].
from typing_extensions import get_type_hints, is_typeddict

from adapter import MetricsDict, MultiJudge, RewardDict, create_judge_reward
from judge_vllm.testing.fake_server import FakeJudgeServer

ITEMS = [{"prompt": "What is 2+2?", "completion": "The answer is 4.", "answer": "4", "answer_type": "NUMBER"}]


def problem(value: object, hint: object, path: str = "", names: dict[str, object] | None = None) -> str | None:
    """Where ``value`` differs from the type ``hint``, or None when it conforms (``names``: where a
    hint given as a string is looked up; Python 3.10 leaves those inside ``dict[str, "X"]``)."""
    if isinstance(hint, str):
        hint = eval(hint, names or {})  # a forward reference to a TypedDict of the same module
    origin = get_origin(hint)
    if is_typeddict(hint):
        if not isinstance(value, dict):
            return f"{path}: {type(value).__name__}, not a dict"
        hints = get_type_hints(hint)
        names = vars(sys.modules[hint.__module__])
        missing, unknown = hint.__required_keys__ - set(value), set(value) - set(hints)
        if missing or unknown:
            return f"{path}: missing {sorted(missing)}, undeclared {sorted(unknown)}"
        return next((p for k, v in value.items() if (p := problem(v, hints[k], f"{path}.{k}", names))), None)
    if origin in (Union, types.UnionType):
        found = [problem(value, arg, path, names) for arg in get_args(hint)]
        return None if None in found else " or ".join(p for p in found if p)
    if origin is Literal:
        return None if value in get_args(hint) else f"{path}: {value!r} not in {get_args(hint)}"
    if origin is dict:
        key_type, value_type = get_args(hint)
        if not isinstance(value, dict):
            return f"{path}: {type(value).__name__}, not a dict"
        return next(
            (p for k, v in value.items()
             if (p := problem(k, key_type, f"{path}[key]", names) or problem(v, value_type, f"{path}[{k!r}]", names))),
            None,
        )  # fmt: skip
    if origin is list:
        if not isinstance(value, list):
            return f"{path}: {type(value).__name__}, not a list"
        return next(
            (p for k, v in enumerate(value) if (p := problem(v, get_args(hint)[0], f"{path}[{k}]", names))), None
        )
    if hint is type(None):
        return None if value is None else f"{path}: {value!r} is not None"
    expected = (int, float) if hint is float else hint
    assert isinstance(expected, type | tuple), f"{path}: no check for {hint}"
    ok = isinstance(value, expected) and not (isinstance(value, bool) and hint is not bool)
    return None if ok else f"{path}: {value!r} is not {hint}"


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        ({"reward": 1.0}, RewardDict),
        (
            {**dict.fromkeys(RewardDict.__annotations__), "source": "judge", "request_id": "r", "extra": 1},
            RewardDict,
        ),
        (1, str),
        (True, float),
        ({"a": "x"}, dict[str, float]),
        ("oops", Literal["judge", "cache"]),
    ],
)
def test_the_check_finds_a_value_off_its_type(value, hint):
    assert problem(value, hint) is not None


def test_metrics_and_rewards_of_a_judge_with_replicas_a_cache_and_a_judgment_log(tmp_path):
    with FakeJudgeServer() as one, FakeJudgeServer() as two:
        config = {"judge_replicas": [one.url, two.url], "cache_dir": str(tmp_path / "cache"),
                  "judgment_log_path": str(tmp_path / "log.jsonl"), "canary_interval": None}  # fmt: skip
        with create_judge_reward(config) as judge:
            results = judge.reward_batch(ITEMS)
            judge.probe_canaries()
            metrics = judge.get_metrics()
    assert "replicas" in metrics and metrics["cache"] is not None and metrics["judgment_log"] is not None
    assert metrics["reward_distribution"]["sources"]
    assert problem(metrics, MetricsDict) is None
    assert [problem(r, RewardDict) for r in results] == [None]


def test_metrics_of_an_ensemble_and_of_an_escalating_judge(tmp_path):
    with FakeJudgeServer() as one, FakeJudgeServer() as two:
        with MultiJudge(
            {"judge_urls": [one.url, two.url], "cache_dir": str(tmp_path / "ensemble")}
        ) as ensemble:
            ensemble.reward_batch(ITEMS)
            ensembled = ensemble.get_metrics()
        # No start-up check: its tiny judgment would be one more escalation than the rewards'.
        config = {"judge_url": one.url, "cache_dir": str(tmp_path / "first"), "escalation_band": [0.0, 1.0],
                  "startup_check": "off",
                  "escalate_to": {"judge_url": two.url, "cache_dir": str(tmp_path / "second")}}  # fmt: skip
        with create_judge_reward(config) as escalating:
            escalating.reward_batch(ITEMS)
            escalated = escalating.get_metrics()
    assert len(ensembled["judges"]) == 2 and escalated["escalations"] == 1
    assert problem(ensembled, MetricsDict) is None
    assert problem(escalated, MetricsDict) is None
