"""``MultiJudge``: an ensemble is one reward system over member judges (``EnsembleBackend``), each
with its own breaker; the fake judge pays 1 when the reference appears in the response, else 0."""

import pytest

from adapter import JudgeRewardSystem, create_judge_reward
from adapter.ensemble import MultiJudge, none_answered
from adapter.pipeline.calibration import CalibrationCurve, CalibrationFile
from judge_vllm.errors import (
    CircuitOpenError,
    JudgeError,
    JudgeParseError,
    JudgeTimeoutError,
    JudgeUnavailableError,
)
from judge_vllm.testing.fake_server import FakeJudgeServer, FaultPlan

QUESTION = "What is 2 + 2?"


@pytest.fixture
def down():
    with FakeJudgeServer(FaultPlan(error_rate=1.0)) as server:
        yield server


def _config(urls, tmp_path, **extra):
    return {
        "judge_urls": urls,
        "cache_dir": str(tmp_path / "c"),
        "max_retries": 0,
        "batch_wait": 0.0,
        **extra,
    }


def test_a_member_that_is_down_opens_only_its_own_breaker_and_the_ensemble_answers_from_the_other(
    fake_judge, down, tmp_path
):
    config = _config([down.url, fake_judge.url], tmp_path, circuit_breaker_threshold=2, use_cache=False,
                     startup_check="off")  # counts every call each judge gets  # fmt: skip
    with create_judge_reward(config) as ensemble:
        results = [ensemble.reward(QUESTION, f"It is 4, try {n}.", "4") for n in range(5)]
        metrics = ensemble.get_metrics()
    assert {r["source"] for r in results} == {"judge"} and {r["reward"] for r in results} == {1.0}
    assert all(r["judge_scores"] == {down.url: None, fake_judge.url: 1.0} for r in results)
    judges = metrics["judges"]
    assert judges[down.url]["circuit_breaker"]["state"] == "open"
    assert judges[fake_judge.url]["circuit_breaker"]["state"] == "closed"
    assert metrics["circuit_breaker"]["state"] == "closed"  # the ensemble's own: it kept answering
    assert judges[down.url]["judge_calls"] == 2 and down.counts["error"] == 2  # then skipped
    assert judges[fake_judge.url]["judge_calls"] == 5


def test_with_every_member_down_the_reward_falls_back_naming_why(down, tmp_path):
    with (
        FakeJudgeServer(FaultPlan(error_rate=1.0)) as other,
        create_judge_reward(_config([down.url, other.url], tmp_path, startup_check="off")) as ensemble,
    ):
        result = ensemble.reward(QUESTION, "It is 4.", "4")
    assert result["source"] == "rule_fallback" and result["reason"] == "Judge unavailable"
    assert "none of 2 judges answered: Judge unavailable" in result["error"]


def test_a_verdict_a_member_could_not_give_is_not_cached(fake_judge, down, tmp_path):
    config = _config([down.url, fake_judge.url], tmp_path, circuit_breaker_threshold=100)
    with create_judge_reward(config) as ensemble:
        partial = ensemble.reward(QUESTION, "It is 4.", "4")
        down.set_plan(FaultPlan())  # the member is back
        whole = ensemble.reward(QUESTION, "It is 4.", "4")
        again = ensemble.reward(QUESTION, "It is 4.", "4")
    assert partial["source"] == "judge" and partial["judge_scores"] == {down.url: None, fake_judge.url: 1.0}
    assert whole["source"] == "judge" and whole["judge_scores"] == {down.url: 1.0, fake_judge.url: 1.0}
    assert again["source"] == "cache" and again["judge_scores"] == whole["judge_scores"]


def test_an_ensemble_never_answers_from_a_single_judges_cache_of_the_same_model(fake_judge, tmp_path):
    """The ensemble's verdicts are cached under its members' models and its aggregate, never under
    one judge's model, even when the config names that model."""
    config = {"cache_dir": str(tmp_path / "c"), "model": "fake-judge"}
    with JudgeRewardSystem({**config, "judge_url": fake_judge.url}) as single:
        assert single.reward(QUESTION, "It is 4.", "4")["source"] == "judge"
        assert single.reward(QUESTION, "It is 4.", "4")["source"] == "cache"
    other = fake_judge.url.replace("127.0.0.1", "localhost")
    with MultiJudge({**config, "judge_urls": [fake_judge.url, other]}) as ensemble:
        first = ensemble.reward(QUESTION, "It is 4.", "4")
        model = ensemble.get_metrics()["model"]
    assert first["source"] == "judge" and first["judge_scores"] == {fake_judge.url: 1.0, other: 1.0}
    assert model == "mean of [fake-judge, fake-judge]"


@pytest.mark.parametrize(
    ("errors", "kind"),
    [
        ([JudgeUnavailableError("a"), JudgeUnavailableError("b")], JudgeUnavailableError),
        ([CircuitOpenError("a"), CircuitOpenError("b")], CircuitOpenError),
        ([JudgeParseError("a"), JudgeParseError("b")], JudgeParseError),
        ([JudgeParseError("a"), JudgeTimeoutError("b")], JudgeUnavailableError),
        ([JudgeParseError("a"), CircuitOpenError("b")], JudgeError),
    ],
    ids=["all-down", "all-open", "all-garbage", "garbage-and-timeout", "garbage-and-open"],
)
def test_none_answered_is_the_members_kind_when_they_agree_else_a_server_fault_if_any(errors, kind):
    error = none_answered(errors)
    assert type(error) is kind
    assert str(error).startswith(f"none of {len(errors)} judges answered: ")


@pytest.mark.parametrize("fitted_for", ["mean of [fake-judge, fake-judge]", "fake-judge"])
def test_an_ensemble_calibrates_its_aggregate_once_with_a_file_fitted_for_the_ensemble(
    fake_judge, tmp_path, fitted_for
):
    curve = CalibrationCurve(method="isotonic", rows=40, threshold=0.5, knots=[(0.0, 0.1), (1.0, 0.8)])
    path = tmp_path / "calib.json"
    path.write_text(
        CalibrationFile(
            model=fitted_for, profile="binary", mode="fast", curves={"*": curve}
        ).model_dump_json()
    )
    urls = [fake_judge.url, fake_judge.url.replace("127.0.0.1", "localhost")]
    with MultiJudge(_config(urls, tmp_path, calibration_file=str(path))) as ensemble:
        result = ensemble.reward(QUESTION, "It is 4.", "4")
    assert result["judge_score"] == 1.0 and set(result["judge_scores"].values()) == {1.0}
    if fitted_for == "fake-judge":  # one judge's file: not the ensemble's
        assert (
            result["reward"] == 1.0
            and "not calibrated: calibration_file fitted for model 'fake-judge'" in result["explanation"]
        )
    else:
        assert result["reward"] == 0.8 and result["explanation"].count("calibrated 1.00 -> 0.80") == 1
