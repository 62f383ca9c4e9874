"""``calibration_file``: judge-eval's fitted curves turn the judge's score into the reward."""

import json
import math

import pytest

from adapter import JudgeRewardSystem
from adapter.pipeline.calibration import (
    AGENT_RUN_CALIBRATIONS,
    MAX_CALIBRATION_FILE_BYTES,
    CalibrationCurve,
    CalibrationFile,
    load_calibration_file,
    shipped_agent_run_calibration,
)
from judge_vllm.errors import JudgeConfigError
from judge_vllm.schemas import JudgeRequest, Verdict
from judge_vllm.testing.fake_backend import FakeBackend

STEP = CalibrationCurve(method="isotonic", rows=40, threshold=0.5, knots=[(0.2, 0.1), (0.8, 0.7)])


def _file(tmp_path, model="fake-judge", profile="binary", mode="fast", curves=None):
    calibration = CalibrationFile(model=model, profile=profile, mode=mode, curves=curves or {"*": STEP})
    path = tmp_path / "calib.json"
    path.write_text(calibration.model_dump_json())
    return path, calibration


@pytest.mark.parametrize(("score", "expected"), [(0.0, 0.1), (0.2, 0.1), (0.5, 0.4), (0.8, 0.7), (1.0, 0.7)])
def test_isotonic_curve_interpolates_between_knots_and_is_flat_beyond(score, expected):
    assert STEP.probability(score) == pytest.approx(expected)


def test_platt_curve_is_monotone():
    curve = CalibrationCurve(method="platt", rows=10, threshold=None, slope=1.5, intercept=-0.4)
    values = [curve.probability(s / 10) for s in range(11)]
    assert values == sorted(values) and 0.0 < values[0] < values[-1] < 1.0


@pytest.mark.parametrize(
    "knots",
    [[], [(0.8, 0.2), (0.2, 0.1)], [(0.2, 0.5), (0.8, 0.1)], [(0.2, 1.5)]],
    ids=["empty", "unsorted-score", "decreasing", "out-of-range"],
)
def test_a_curve_that_is_not_monotone_is_refused(knots):
    with pytest.raises(ValueError):
        CalibrationCurve(method="isotonic", rows=1, threshold=None, knots=knots)


def test_answer_types_fall_back_to_the_any_curve():
    other = CalibrationCurve(method="isotonic", rows=30, threshold=None, knots=[(0.0, 0.0), (1.0, 0.2)])
    calibration = CalibrationFile(
        model=None, profile="rubric", mode="fast", curves={"*": STEP, "NUMBER": other}
    )
    assert calibration.curve("NUMBER") is other
    assert calibration.curve("TEXT") is STEP and calibration.curve(None) is STEP


@pytest.mark.parametrize(
    ("judge", "message"),
    [
        ({"profile": "binary"}, "profile 'rubric' in mode 'fast'"),
        ({"mode": "verdict"}, "mode 'fast'"),
        ({"model": "another-model"}, "fitted for model 'fake-judge'"),
    ],
    ids=["other-profile", "other-mode", "other-model"],
)
def test_a_calibration_for_another_judge_is_refused_when_the_system_is_built(tmp_path, judge, message):
    path, _ = _file(tmp_path, profile="rubric")
    config = {"model": None, "profile": "rubric", "mode": "fast", **judge}
    with pytest.raises(JudgeConfigError, match=message) as caught:
        load_calibration_file(path, config["model"], config["profile"], config["mode"])
    assert "judge-eval --calibrate" in str(caught.value)
    with pytest.raises(JudgeConfigError, match=message):
        JudgeRewardSystem({"cache_dir": str(tmp_path / "c"), "calibration_file": str(path), **config})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read it"),
        ("{}", "not a judge-eval calibration"),
        ("[1, 2", "not a judge-eval calibration"),
    ],
    ids=["missing", "empty-object", "broken-json"],
)
def test_an_unreadable_calibration_file_is_a_config_error(tmp_path, content, message):
    path = tmp_path / "calib.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(JudgeConfigError, match=message):
        load_calibration_file(path, None, "rubric", "fast")


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("field", ["slope", "intercept"])
def test_a_platt_curve_with_a_number_that_is_not_finite_is_refused_naming_file_and_field(
    tmp_path, field, value
):
    curve = {"method": "platt", "rows": 40, "threshold": 0.5, "slope": 1.0, "intercept": 0.0, field: value}
    content = {"model": None, "profile": "rubric", "mode": "fast", "curves": {"*": curve}}
    path = tmp_path / "calib.json"
    path.write_text(json.dumps(content))  # json writes NaN / Infinity, which JSON parsers accept
    with pytest.raises(JudgeConfigError) as caught:
        load_calibration_file(path, None, "rubric", "fast")
    assert str(path) in str(caught.value) and f"curves.*.{field}" in str(caught.value)


def test_a_calibration_file_larger_than_the_bound_is_refused_unparsed(tmp_path):
    path, _ = _file(tmp_path)
    with path.open("a") as stream:
        stream.write(" " * MAX_CALIBRATION_FILE_BYTES)  # still valid JSON, but no calibration is this large
    with pytest.raises(JudgeConfigError, match=f"larger than {MAX_CALIBRATION_FILE_BYTES} bytes"):
        load_calibration_file(path, "fake-judge", "binary", "fast")


def _system(fake_judge, tmp_path, calibration_path, **extra):
    return JudgeRewardSystem(
        {
            "judge_url": fake_judge.url,
            "mode": "fast",
            "cache_dir": str(tmp_path / "cache"),
            "calibration_file": str(calibration_path),
            "judgment_log_path": str(tmp_path / "judgments.jsonl"),
            **extra,
        }
    )


def test_rewards_are_the_calibrated_probability_and_the_log_names_the_calibration(fake_judge, tmp_path):
    path, calibration = _file(tmp_path)
    with _system(fake_judge, tmp_path, path) as rs:
        right = rs.reward("What is 2 + 2?", "The answer is 4", "4", "NUMBER")
        wrong = rs.reward("What is 2 + 2?", "The answer is 5", "4", "NUMBER")
    for result in (right, wrong):
        assert result["source"] == "judge"
        assert result["reward"] == pytest.approx(STEP.probability(result["judge_score"]))
        assert result["calibration"] == calibration.identity
        assert f"({calibration.identity})" in result["explanation"]
    assert right["reward"] > wrong["reward"]
    logged = [json.loads(line) for line in (tmp_path / "judgments.jsonl").read_text().splitlines()]
    assert [line["calibration"] for line in logged] == [calibration.identity] * 2
    assert [line["score"] for line in logged] == [right["judge_score"], wrong["judge_score"]]


def test_a_judge_found_serving_another_model_is_left_uncalibrated_with_the_reason(fake_judge, tmp_path):
    path, _ = _file(tmp_path, model="the-model-it-was-fitted-for")
    with _system(fake_judge, tmp_path, path) as rs:  # model unset: known only once the judge answers
        result = rs.reward("What is 2 + 2?", "The answer is 4", "4", "NUMBER")
    assert result["source"] == "judge" and result["calibration"] is None
    assert result["reward"] == result["judge_score"]
    assert (
        "not calibrated: calibration_file fitted for model 'the-model-it-was-fitted-for'"
        in result["explanation"]
    )


def _written(tmp_path, curves, **cross_validation):
    content = {
        "model": None,
        "profile": "rubric",
        "mode": "fast",
        "curves": curves,
        "cross_validation": cross_validation,
    }
    path = tmp_path / "calib.json"
    path.write_text(json.dumps(content))
    return path


FITTED = {"method": "isotonic", "rows": 200, "threshold": 0.5, "knots": [[0.1, 0.05], [0.9, 0.95]]}


@pytest.mark.parametrize(
    ("curves", "reason"),
    [
        ({"*": {**FITTED, "knots": [[0, 1]]}}, "curve '*' pays every answer as right: the judge's score 0 maps to 1.00"),
        ({"*": {"method": "platt", "rows": 200, "threshold": 0.0, "slope": 0.0, "intercept": 50.0}},
         "curve '*' pays every answer as right: the judge's score 0 maps to 1.00"),
        ({"*": {**FITTED, "knots": [[0.5, 0.3]]}}, "curve '*' gives every judge score the same reward (0.30)"),
        ({"*": FITTED, "NUMBER": {**FITTED, "rows": 1}}, "curve 'NUMBER' was fitted on 1 row(s); a curve of its own needs 100"),
        ({"*": {**FITTED, "rows": 3}}, "curve '*' was fitted on 3 row(s); the curve of every type needs 10"),
    ],
    ids=["single-knot-pays-all", "platt-flat-high", "flat", "type-curve-from-1-row", "any-curve-from-3-rows"],
)  # fmt: skip
def test_a_calibration_that_pays_everything_is_refused_at_load_in_one_line(tmp_path, curves, reason):
    """Issue 41: these loaded silently and paid every answer (or the same for all)."""
    path = _written(tmp_path, curves)
    with pytest.raises(JudgeConfigError) as caught:
        load_calibration_file(path, None, "rubric", "fast")
    message = str(caught.value)
    assert reason in message and str(path) in message and "\n" not in message
    with pytest.raises(JudgeConfigError, match="cannot calibrate rewards"):
        JudgeRewardSystem(
            {"cache_dir": str(tmp_path / "c"), "calibration_file": str(path), "profile": "rubric"}
        )


def test_a_calibration_judge_eval_did_not_recommend_loads_with_a_warning(tmp_path, caplog):
    path = _written(
        tmp_path, {"*": FITTED}, recommended=0, false_positive_rate_before=0.05, false_positive_rate_after=0.3
    )
    load_calibration_file(path, None, "rubric", "fast")
    (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warning.startswith(f"calibration_file {str(path)!r}: judge-eval marked it not recommended")
    assert "false-positive rate 0.05 -> 0.30" in warning
    caplog.clear()
    load_calibration_file(_written(tmp_path, {"*": FITTED}, recommended=1), None, "rubric", "fast")
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


def test_the_shipped_agent_run_calibration_loads_for_its_judge_and_moves_the_cut_up():
    """agent_run_calibrations/: fitted on three labelled agent-run sets judged by the 1.5B judge
    (docs/trajectories.md); the bundled contract model may not use it."""
    path = AGENT_RUN_CALIBRATIONS / "qwen2.5-coder-1.5b-agent-runs.json"
    calibration = load_calibration_file(path, "qwen2.5-coder-1.5b", "binary", "fast")
    assert calibration.recommended and calibration.cross_validation["rows"] >= 200
    curve = calibration.curve("*")
    assert curve is not None and curve.probability(0.5) < 0.5 < curve.probability(0.65)  # the scores run high
    with pytest.raises(JudgeConfigError, match="fitted for model"):
        load_calibration_file(path, "smollm2-135m", "binary", "fast")
    assert shipped_agent_run_calibration("qwen2.5-coder-1.5b", "binary", "fast") == calibration
    for path in AGENT_RUN_CALIBRATIONS.glob("*.json"):  # every shipped curve passes a user file's checks
        shipped = CalibrationFile.model_validate_json(path.read_bytes())
        assert load_calibration_file(path, shipped.model, shipped.profile, shipped.mode).recommended
    for judge in (("smollm2-135m", "binary", "fast"), ("qwen2.5-coder-1.5b", "compassverifier", "fast"),
                  ("qwen2.5-coder-1.5b", "binary", "verdict"), (None, "binary", "fast")):  # fmt: skip
        assert shipped_agent_run_calibration(*judge) is None


AGENT_RUN = [
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 2}'}}]},
    {"role": "tool", "tool_call_id": "1", "content": "4"},
    {"role": "assistant", "content": "The answer is 4."},
]  # fmt: skip


class _UnsureJudge(FakeBackend):
    """A judge serving ``model`` that scores every request 0.55 (the 1.5B judge's scores on
    agent runs sit about there)."""

    def _judge(self, request: JudgeRequest) -> Verdict:
        return Verdict(score=0.55, explanation="unsure")


def _judged_by(served_model, tmp_path, **config):
    """An agent's run and a plain answer, judged by a judge serving ``served_model`` with an
    otherwise default config."""
    settings = {"strategy": "judge", "cache_dir": str(tmp_path / "cache"), "startup_check": "off", **config}
    with JudgeRewardSystem(settings, backend=_UnsureJudge(model=served_model)) as rs:
        return rs.reward("What is 2 + 2?", AGENT_RUN, "4"), rs.reward(
            "What is 2 + 2?", "The answer is 4.", "4"
        )


def test_by_default_agent_runs_take_the_curve_shipped_for_the_judges_model_and_nothing_else_does(tmp_path):
    shipped = shipped_agent_run_calibration("qwen2.5-coder-1.5b", "binary", "fast")
    assert shipped is not None
    run, answer = _judged_by("qwen2.5-coder-1.5b", tmp_path)
    assert run["source"] == "judge" and run["calibration"] == shipped.identity
    curve = shipped.curve("*")
    assert curve is not None and run["reward"] == pytest.approx(curve.probability(run["judge_score"]))
    assert run["judge_score"] == 0.55 and run["reward"] < 0.5  # the curve moves the cut up
    assert answer["source"] == "judge" and answer["calibration"] is None
    assert answer["reward"] == answer["judge_score"]


@pytest.mark.parametrize(
    ("served_model", "config"),
    [
        ("smollm2-135m", {}),
        ("qwen2.5-coder-1.5b", {"trajectory_calibration_file": None}),
        ("qwen2.5-coder-1.5b", {"trajectory_view": "final"}),
        ("qwen2.5-coder-1.5b", {"trajectory_view": "both"}),
    ],
    ids=["another-model", "turned-off", "final-reply-view", "both-views"],
)
def test_agent_runs_are_left_uncalibrated_where_the_shipped_curve_was_not_fitted(
    tmp_path, served_model, config
):
    run, _ = _judged_by(served_model, tmp_path, **config)
    assert run["source"] == "judge" and run["calibration"] is None
    assert run["reward"] == run["judge_score"]


def test_a_calibration_file_of_the_users_own_wins_over_the_shipped_curve(tmp_path):
    path, calibration = _file(tmp_path, model="qwen2.5-coder-1.5b")
    run, answer = _judged_by("qwen2.5-coder-1.5b", tmp_path, calibration_file=str(path))
    assert run["calibration"] == answer["calibration"] == calibration.identity
    agent_path = tmp_path / "agent.json"
    agent_curve = CalibrationCurve(method="isotonic", rows=40, threshold=0.9, knots=[(0.0, 0.0), (1.0, 0.6)])
    agent_path.write_text(calibration.model_copy(update={"curves": {"*": agent_curve}}).model_dump_json())
    run, answer = _judged_by("qwen2.5-coder-1.5b", tmp_path, trajectory_calibration_file=str(agent_path))
    assert run["reward"] == pytest.approx(agent_curve.probability(run["judge_score"]))
    assert answer["calibration"] is None and answer["reward"] == answer["judge_score"]
    with pytest.raises(JudgeConfigError, match="cannot read it"):
        _judged_by("qwen2.5-coder-1.5b", tmp_path, trajectory_calibration_file=str(tmp_path / "missing.json"))
