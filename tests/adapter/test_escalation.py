"""``escalate_to``: a second judge asked only where the first judge's reward is in the band.

Two loopback fake judges; the fake pays 1 when the reference appears in the response, else 0.
"""

import pytest

from adapter import create_judge_reward
from adapter.escalation import EscalatingJudge
from adapter.pipeline.calibration import CalibrationCurve, CalibrationFile
from judge_vllm.errors import JudgeConfigError
from judge_vllm.testing.fake_server import FakeJudgeServer, FaultPlan

ITEMS = [
    {"prompt": "What is 2 + 2?", "completion": "The answer is 4", "answer": "4", "answer_type": "NUMBER"},
    {"prompt": "What is 3 + 3?", "completion": "Not 6, the answer is 7", "answer": "6", "answer_type": "NUMBER"},
    {"prompt": "What is 5 + 5?", "completion": "It is 11", "answer": "10", "answer_type": "NUMBER"},
]


@pytest.fixture
def second_judge():
    with FakeJudgeServer(model="second-judge") as server:
        yield server


def _config(tmp_path, first, second, band=(0.5, 1.0), **second_extra):
    return {
        "judge_url": first.url,
        "mode": "fast",
        "startup_check": "off",  # the tests count what each judge is asked, and some start down
        "cache_dir": str(tmp_path / "first"),
        "escalation_band": list(band),
        "escalate_to": {"judge_url": second.url, "mode": "fast", "cache_dir": str(tmp_path / "second"), **second_extra},
    }


def _judged_items(server):
    return sum(server.judged_prompts.values())


def _curve_file(tmp_path, name, model, knots):
    """A calibration file for the fake's binary fast verdicts: its path."""
    calibration = CalibrationFile(model=model, profile="binary", mode="fast",
                                  curves={"*": CalibrationCurve(method="isotonic", rows=40, threshold=0.5, knots=knots)})  # fmt: skip
    path = tmp_path / name
    path.write_text(calibration.model_dump_json())
    return str(path)


def test_only_rewards_in_the_band_reach_the_second_judge(fake_judge, second_judge, tmp_path):
    # The second judge pays 0.8 where the fake would pay 1: its rewards are visible as such.
    path = _curve_file(tmp_path, "calib.json", "second-judge", [(0.0, 0.1), (1.0, 0.8)])
    with create_judge_reward(_config(tmp_path, fake_judge, second_judge, calibration_file=path)) as judge:
        assert isinstance(judge, EscalatingJudge)
        results = judge.reward_batch(ITEMS)
        metrics = judge.get_metrics()
    assert [r["source"] for r in results] == ["judge"] * 3
    assert [r["judge_scores"] for r in results] == [
        {"first": 1.0, "second": 0.8},
        {"first": 1.0, "second": 0.8},
        {"first": 0.0, "second": None},
    ]
    assert [r["reward"] for r in results] == [0.8, 0.8, 0.0]
    assert results[0]["explanation"].startswith("escalated: first judge 1.00 in [0.5, 1]")
    assert _judged_items(fake_judge) == 3 and _judged_items(second_judge) == 2
    assert metrics["escalations"] == 2 and set(metrics["judges"]) == {"first", "second"}
    assert metrics["judge_calls"] == metrics["judges"]["first"]["judge_calls"] + metrics["judges"]["second"]["judge_calls"]


def test_an_unavailable_second_judge_leaves_the_first_judges_reward(fake_judge, second_judge, tmp_path):
    second_judge.set_plan(FaultPlan(error_rate=1.0))
    config = _config(tmp_path, fake_judge, second_judge, max_retries=0)
    with create_judge_reward(config) as judge:
        result = judge.reward(**ITEMS[0])
    assert result["source"] == "judge" and result["reward"] == 1.0
    assert result["judge_scores"] == {"first": 1.0, "second": None}
    assert "second judge unavailable" in result["explanation"]


def test_an_unavailable_first_judge_falls_back_without_asking_the_second(fake_judge, second_judge, tmp_path):
    fake_judge.set_plan(FaultPlan(error_rate=1.0))
    config = {**_config(tmp_path, fake_judge, second_judge, band=(0.0, 1.0)), "max_retries": 0}
    with create_judge_reward(config) as judge:
        result = judge.reward(**ITEMS[0])
    assert result["source"] == "rule_fallback"
    assert _judged_items(second_judge) == 0


def test_pre_checks_answer_before_either_judge(fake_judge, second_judge, tmp_path):
    with create_judge_reward(_config(tmp_path, fake_judge, second_judge, band=(0.0, 1.0))) as judge:
        result = judge.reward("What is 2 + 2?", ":", "4")
    assert result["source"] == "rule"
    assert _judged_items(fake_judge) == 0 and _judged_items(second_judge) == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"escalation_band": [0.8, 0.2]}, "escalation_band"),
        ({"escalation_band": [0.2, 1.5]}, "escalation_band"),
        ({"judge_urls": ["http://a:1", "http://b:2"]}, "cannot be combined"),
        ({"escalate_to": "/nonexistent/second.yaml"}, "second.yaml"),
    ],
    ids=["inverted-band", "band-above-1", "with-an-ensemble", "missing-second-config"],
)
def test_bad_escalation_settings_are_config_errors(tmp_path, extra, message):
    config = {"cache_dir": str(tmp_path / "c"), "escalate_to": {"judge_url": "http://127.0.0.1:9"}, **extra}
    with pytest.raises(JudgeConfigError, match=message):
        create_judge_reward(config)


def test_the_band_applies_to_the_first_judges_calibrated_reward_and_nothing_calibrates_twice(
    fake_judge, second_judge, tmp_path
):
    # The first judge's 1 is calibrated to 0.6 (in the band), its 0 to 0.1 (outside it). Calibrated
    # once more by the escalating system, 0.1 would become 0.15.
    config = {**_config(tmp_path, fake_judge, second_judge, band=(0.5, 0.7)),
              "calibration_file": _curve_file(tmp_path, "first.json", None, [(0.0, 0.1), (1.0, 0.6)])}  # fmt: skip
    with create_judge_reward(config) as judge:
        results = judge.reward_batch(ITEMS)
    assert [r["judge_scores"] for r in results] == [
        {"first": 0.6, "second": 1.0},
        {"first": 0.6, "second": 1.0},
        {"first": 0.1, "second": None},
    ]
    assert [r["reward"] for r in results] == [1.0, 1.0, 0.1]
    assert "calibrated 0.00 -> 0.10" in results[2]["explanation"]
    assert _judged_items(second_judge) == 2


def test_a_first_reward_the_second_judge_could_not_check_is_not_cached(fake_judge, second_judge, tmp_path):
    second_judge.set_plan(FaultPlan(error_rate=1.0))
    config = _config(tmp_path, fake_judge, second_judge, max_retries=0)
    with create_judge_reward(config) as judge:
        unchecked = judge.reward(**ITEMS[0])
        second_judge.set_plan(FaultPlan())  # the second judge is back
        checked = judge.reward(**ITEMS[0])
        again = judge.reward(**ITEMS[0])
    assert unchecked["judge_scores"] == {"first": 1.0, "second": None}
    assert checked["source"] == "judge" and checked["judge_scores"] == {"first": 1.0, "second": 1.0}
    assert again["source"] == "cache" and _judged_items(fake_judge) == 2


def test_a_second_judge_that_is_down_opens_only_its_own_breaker(fake_judge, second_judge, tmp_path):
    second_judge.set_plan(FaultPlan(error_rate=1.0))
    config = {**_config(tmp_path, fake_judge, second_judge, max_retries=0, circuit_breaker_threshold=1),
              "use_cache": False}  # fmt: skip
    with create_judge_reward(config) as judge:
        results = [judge.reward(**ITEMS[0]) for _ in range(3)]
        metrics = judge.get_metrics()
    assert {r["reward"] for r in results} == {1.0} and {r["source"] for r in results} == {"judge"}
    assert metrics["judges"]["second"]["circuit_breaker"]["state"] == "open"
    assert metrics["judges"]["first"]["circuit_breaker"]["state"] == "closed"
    assert second_judge.counts["error"] == 1 and metrics["escalations"] == 3  # asked once, then skipped


def test_the_parts_of_a_group_are_the_first_judges(fake_judge, second_judge, tmp_path):
    config = {**_config(tmp_path, fake_judge, second_judge, band=(0.0, 1.0)), "group": {"mode": "pairwise"}}
    group = [{"prompt": "What is 2 + 2?", "completion": c, "answer": "4"} for c in ("It is 4.", "It is 5.")]
    with create_judge_reward(config) as judge:
        results = judge.reward_group(group)
    assert {r["source"] for r in results} == {"judge"}
    assert _judged_items(fake_judge) > 0 and _judged_items(second_judge) == 0
