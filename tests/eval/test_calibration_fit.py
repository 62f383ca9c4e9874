"""``judge-eval --calibrate``: curves fitted on labelled rows, measured on rows they were not fitted on."""

import json

import numpy as np
import pytest

from adapter.pipeline.calibration import CalibrationFile
from eval import calibration_fit
from eval.calibration_fit import (
    MIN_ROWS_PER_LABEL,
    MIN_ROWS_PER_TYPE,
    CalibrationError,
    fit_calibration,
    fit_curve,
)
from eval.cli import main
from eval.scoring import ScoredRow


def _row(i, score, label, answer_type=None, source="judge"):
    return ScoredRow(
        id=str(i), line=i, answer_type=answer_type, label=label, rule=None, rule_explanation="",
        judge=score, judge_score=score, judge_source=source, prompt="p", completion="c", answer="a",
    )  # fmt: skip


def test_isotonic_maps_each_score_to_its_share_of_correct_rows():
    scores = np.array([0.2] * 4 + [0.8] * 4)
    labels = np.array([1, 0, 0, 0, 1, 1, 1, 0], dtype=float)
    curve = fit_curve(scores, labels, "isotonic")
    assert curve.probability(0.2) == pytest.approx(0.25) and curve.probability(0.8) == pytest.approx(0.75)
    assert curve.threshold is not None and 0.2 < curve.threshold <= 0.8


def test_a_judge_whose_half_scores_are_mostly_right_gets_a_lower_threshold():
    """The case from the issue: a judge that ranks well but whose 0.5 cut is wrong."""
    scores = np.array([0.1] * 10 + [0.3] * 10 + [0.9] * 10)
    labels = np.array([0] * 10 + [1] * 8 + [0] * 2 + [1] * 10, dtype=float)
    for method in ("isotonic", "platt"):
        curve = fit_curve(scores, labels, method)
        assert curve.probability(0.3) > 0.5 > curve.probability(0.1), method
        assert curve.threshold is not None and 0.1 < curve.threshold <= 0.3, method


def test_cross_validation_scores_only_rows_the_curve_was_not_fitted_on(monkeypatch):
    rng = np.random.default_rng(1)
    scores = rng.random(60)
    labels = rng.random(60) < scores  # a judge with some signal: a fit on noise pays everything, refused
    rows = [_row(i, float(s), float(y)) for i, (s, y) in enumerate(zip(scores, labels, strict=True))]
    fitted_on, scored = [], []
    real_curves, real_held_out = calibration_fit._curves, calibration_fit._held_out
    monkeypatch.setattr(
        calibration_fit, "_curves", lambda s, *a: fitted_on.append(set(s)) or real_curves(s, *a)
    )
    monkeypatch.setattr(calibration_fit, "_held_out", lambda p, *a: scored.append(p) or real_held_out(p, *a))
    fit = calibration_fit.fit_calibration(rows, "m", "rubric", "fast", folds=5, seed=0)
    everything = {r.judge_score for r in rows}
    assert len(fitted_on) == 6 and fitted_on[-1] == everything  # 5 folds, then the file on every row
    held_out = [everything - train for train in fitted_on[:5]]
    assert all(len(rest) == 12 for rest in held_out) and set().union(*held_out) == everything
    final = fit.calibration.curve(None)
    in_sample = [final.probability(r.judge_score) for r in rows]
    assert not np.allclose(scored[1], in_sample)  # the "after" figures are not the final curve's
    assert fit.calibration.cross_validation["rows"] == 60


def test_answer_types_with_enough_rows_of_both_labels_get_their_own_curve():
    rows = [_row(i, 0.1 + 0.8 * (i % 2), float(i % 2), "NUMBER") for i in range(MIN_ROWS_PER_TYPE)]
    rows += [_row(100 + i, 0.1 + 0.8 * (i % 2), float(i % 2), "TEXT") for i in range(MIN_ROWS_PER_TYPE - 1)]
    assert set(fit_calibration(rows, None, "rubric", "fast").calibration.curves) == {"*", "NUMBER"}


@pytest.mark.parametrize("rows_per_type", [37, 44, 52])
def test_answer_types_with_a_small_sample_take_the_global_curve(rows_per_type):
    rows = [_row(i, (i % 10) / 10, float(i % 3 != 0), "NUMBER") for i in range(rows_per_type)]
    rows += [_row(100 + i, (i % 10) / 10, float(i % 2), "TEXT") for i in range(MIN_ROWS_PER_TYPE)]
    rows += [_row(300 + i, (i % 10) / 10, float(i % 10 != 0), "EXPR") for i in range(MIN_ROWS_PER_TYPE)]
    assert MIN_ROWS_PER_TYPE // 10 < MIN_ROWS_PER_LABEL  # EXPR: enough rows, too few wrong answers
    assert set(fit_calibration(rows, None, "rubric", "fast").calibration.curves) == {"*", "TEXT"}


def _small_sample(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A strict judge on a small sample: its wrong answers score low, its right ones anywhere above 0.2."""
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) < 0.7).astype(float)
    return np.where(labels == 1, rng.uniform(0.2, 1.0, n), rng.beta(1.2, 5, n)), labels


@pytest.mark.parametrize("seed", range(5))
def test_the_isotonic_curve_is_continuous_and_never_steps_to_one_at_the_lowest_right_answer(seed):
    scores, labels = _small_sample(40, seed)
    curve = fit_curve(scores, labels, "isotonic")
    lowest_right = float(scores[labels == 1].min())
    assert curve.probability(lowest_right) < 0.9  # a step curve put it at the top block's value
    grid = np.linspace(0, 1, 201)
    values = np.array([curve.probability(float(x)) for x in grid])
    assert np.all(np.diff(values) >= 0) and np.max(np.diff(values)) < 0.2  # monotone, no cliff


def test_the_lowest_right_answers_are_not_paid_in_full_by_a_step():
    """The issue's curve: every row above the lowest right answer was right, so a step curve
    mapped the judge's 0.22 and 0.37 to 1.00; the centred curve rises to it along a line."""
    wrong = [0.02, 0.05, 0.08, 0.1, 0.12, 0.15, 0.18, 0.2]
    right = [0.22, 0.37, 0.55, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95]
    curve = fit_curve(np.array(wrong + right), np.array([0.0] * len(wrong) + [1.0] * len(right)), "isotonic")
    assert curve.probability(0.22) < 0.5 and curve.probability(0.37) < 0.5 < curve.probability(0.55)
    assert curve.probability(0.95) == 1.0 and curve.probability(0.02) == 0.0


def _strict_judge_rows(seed: int, sizes=(37, 44, 52, 48)):
    """The issue's data: per-type samples of 37-52 rows from a strict judge whose low scores are
    often right; calibrating it pays the wrong answers among them."""
    rows = []
    for k, n in enumerate(sizes):
        scores, labels = _small_sample(n, seed * 10 + k)
        rows += [_row(len(rows), float(s), float(y), f"T{k}") for s, y in zip(scores, labels, strict=True)]
    return rows


@pytest.mark.parametrize("seed", range(3))
def test_a_calibration_that_raises_the_held_out_false_positive_rate_is_not_recommended(seed):
    fit = fit_calibration(_strict_judge_rows(seed), None, "rubric", "fast")
    assert fit.after.false_positive_rate > fit.before.false_positive_rate_ci.high
    assert fit.caution is not None and fit.caution.startswith(
        f"its cross-validated false-positive rate rises from {fit.before.false_positive_rate:.2f} (95% CI"
    )
    assert fit.lines()[-1].startswith("Not recommended: ") and fit.calibration.cross_validation["recommended"] == 0


def test_a_calibration_that_lowers_the_false_positive_rate_is_recommended():
    rng = np.random.default_rng(4)
    labels = (rng.random(200) < 0.5).astype(float)
    scores = np.clip(np.where(labels == 1, 0.8, 0.6) + rng.normal(0, 0.08, 200), 0, 1)  # lenient: pays all
    rows = [_row(i, float(s), float(y)) for i, (s, y) in enumerate(zip(scores, labels, strict=True))]
    fit = fit_calibration(rows, None, "rubric", "fast")
    assert fit.after.false_positive_rate < fit.before.false_positive_rate
    assert fit.caution is None and fit.lines()[-1].startswith("Recommended")
    assert fit.calibration.cross_validation["recommended"] == 1


@pytest.mark.parametrize(
    "rows",
    [
        [_row(i, 0.9, 1.0) for i in range(40)],
        [_row(i, 0.9, float(i % 2)) for i in range(6)],
        [_row(i, 0.9, float(i % 2), source="rule_fallback") for i in range(40)],
    ],
    ids=["one-label", "too-few-rows", "judge-never-decided"],
)
def test_rows_that_cannot_support_a_calibration_are_refused(rows):
    with pytest.raises(CalibrationError, match="calibration needs"):
        fit_calibration(rows, None, "rubric", "fast")


@pytest.mark.parametrize(
    ("rows", "reason"),
    [
        ([_row(i, 0.2 + 0.6 * (i % 2), float(i % 5 != 0)) for i in range(40)], "pays every answer as right"),
        ([_row(i, 0.2 + 0.6 * (i % 2), float(i % 3 == 0)) for i in range(42)], "gives every judge score the same reward"),
    ],
    ids=["mostly-right-at-every-score", "no-signal"],
)  # fmt: skip
def test_a_fit_that_would_pay_everything_is_refused_not_written(rows, reason):
    """Issue 41: judge-eval wrote such files and the reward system loaded them silently."""
    with pytest.raises(CalibrationError, match=reason):
        fit_calibration(rows, None, "rubric", "fast")


def test_a_type_whose_own_curve_would_pay_everything_takes_the_global_curve():
    rows = [_row(i, 0.05 + 0.9 * (i % 2), float(i % 2), "NUMBER") for i in range(MIN_ROWS_PER_TYPE)]
    rows += [_row(1000 + i, 0.05 + 0.9 * (i % 2), 1.0, "TEXT") for i in range(MIN_ROWS_PER_TYPE)]  # all right
    rows += [
        _row(2000 + i, 0.05 + 0.9 * (i % 2), float(i % 2), "TEXT") for i in range(2 * MIN_ROWS_PER_LABEL)
    ]
    fit = fit_calibration(rows, None, "rubric", "fast")
    assert sorted(fit.calibration.curves) == ["*", "NUMBER"] and fit.calibration.unusable() is None


def _labelled_rows(n=40):
    """Half right; half of the wrong ones quote the reference (the fake judge pays those)."""
    rows = []
    for i in range(n):
        right = i % 2 == 0
        quoted = i % 4 == 1
        completion = (
            f"The answer is {i}"
            if right
            else (f"Not {i}, the answer is {i + 1}" if quoted else f"It is {i + 1}")
        )
        rows.append({"id": f"r{i}", "prompt": f"What is {i}?", "completion": completion, "answer": str(i),
                     "answer_type": "NUMBER", "label": 1 if right else 0})  # fmt: skip
    return rows


def test_calibrate_round_trip_fit_then_config_then_rewards_as_fitted(
    tmp_path, write_jsonl, write_config, read_scores, fake_judge, capsys
):
    data = write_jsonl(tmp_path / "d.jsonl", _labelled_rows())
    calib = tmp_path / "calib.json"
    config = write_config(tmp_path / "c.yaml", fake_judge.url, tmp_path / "cache")
    argv = ["--data", str(data), "--no-progress", "--config"]
    assert main([*argv, str(config), "--out", str(tmp_path / "fit"), "--calibrate", str(calib)]) == 0
    calibration = CalibrationFile.model_validate_json(calib.read_text())
    assert (calibration.model, calibration.profile, calibration.mode) == ("fake-judge", "binary", "fast")
    assert "## Calibration" in (tmp_path / "fit" / "report.md").read_text()
    assert "cross-validation, held-out rows only" in capsys.readouterr().out

    used = write_config(tmp_path / "u.yaml", fake_judge.url, tmp_path / "cache", calibration_file=str(calib))
    assert main([*argv, str(used), "--out", str(tmp_path / "used")]) == 0
    rows = read_scores(tmp_path / "used")
    judged = [r for r in rows if r["judge_source"] in ("judge", "cache")]
    assert judged and len({r["judge_score"] for r in judged}) == 2
    for row in judged:
        expected = calibration.curve(row["answer_type"]).probability(row["judge_score"])
        assert row["judge"] == pytest.approx(expected)
    paid_wrong = [r["judge"] for r in judged if r["label"] == 0 and r["judge_score"] == 1.0]
    assert paid_wrong and all(
        0.5 < p < 1.0 for p in paid_wrong
    )  # the fake pays quoted wrong answers: 2 in 3 right


def test_a_calibration_for_another_profile_stops_judge_eval_with_the_reason(
    tmp_path, write_jsonl, write_config, fake_judge, capsys
):
    calib = tmp_path / "calib.json"
    calib.write_text(json.dumps({"model": None, "profile": "rubric", "mode": "fast",
                                 "curves": {"*": {"method": "platt", "rows": 9, "threshold": 0.5, "slope": 1, "intercept": 0}}}))  # fmt: skip
    data = write_jsonl(tmp_path / "d.jsonl", _labelled_rows(8))
    config = write_config(
        tmp_path / "c.yaml", fake_judge.url, tmp_path / "cache", calibration_file=str(calib)
    )
    assert (
        main(["--data", str(data), "--no-progress", "--config", str(config), "--out", str(tmp_path / "o")])
        == 2
    )
    assert "fitted for profile 'rubric'" in capsys.readouterr().err


def test_calibrate_on_too_few_rows_is_exit_2_after_writing_the_report(
    tmp_path, write_jsonl, write_config, fake_judge, capsys
):
    data = write_jsonl(tmp_path / "d.jsonl", _labelled_rows(6))
    config = write_config(tmp_path / "c.yaml", fake_judge.url, tmp_path / "cache")
    argv = ["--data", str(data), "--no-progress", "--config", str(config), "--out", str(tmp_path / "o")]
    assert main([*argv, "--calibrate", str(tmp_path / "calib.json")]) == 2
    assert "calibration needs at least 10" in capsys.readouterr().err
    assert (tmp_path / "o" / "report.md").exists() and not (tmp_path / "calib.json").exists()


def test_calibrate_refuses_a_curve_that_pays_every_answer_and_writes_nothing(
    tmp_path, write_jsonl, write_config, fake_judge, capsys
):
    # The fake judge pays a completion that quotes the reference: right answers in words score 0,
    # and so do the few wrong ones; a curve that pays score 0 pays every answer (issue 41: it was
    # written "not recommended" and then loaded silently).
    shown = [("It is a number I will not write", 1)] * 16 + [("no idea", 0)] * 4 + [("It is {i}", 1)] * 20
    rows = [
        {"id": f"r{i}", "prompt": f"What is {i}?", "completion": text.format(i=i), "answer": str(i), "label": label}
        for i, (text, label) in enumerate(shown)
    ]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    config = write_config(tmp_path / "c.yaml", fake_judge.url, tmp_path / "cache")
    argv = ["--data", str(data), "--no-progress", "--config", str(config), "--out", str(tmp_path / "o")]
    assert main([*argv, "--calibrate", str(tmp_path / "calib.json")]) == 2
    err = capsys.readouterr().err
    assert (
        "error: --calibrate: the fitted curve '*' pays every answer as right: the judge's score 0 maps to 0.80"
        in err
    )
    assert "set calibration_file" not in err and not (tmp_path / "calib.json").exists()
    assert (tmp_path / "o" / "report.md").exists()
