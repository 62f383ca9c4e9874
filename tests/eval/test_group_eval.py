"""``judge-eval --group-modes``: labelled groups, ordering accuracy, and an honest report (the
judges are in-process ``ComparingBackend``s: plumbing, never quality)."""

import pytest

from adapter import JudgeRewardSystem, RewardConfig
from eval.cli import main
from eval.dataset import EvalRow
from eval.group_eval import evaluate_group_modes, group_modes_blocks, labelled_groups, parse_group_mode
from eval.report import to_markdown
from judge_vllm.errors import JudgeParseError
from judge_vllm.testing.fake_backend import ComparingBackend


def _row(k, prompt, completion, label, answer="ref"):
    return EvalRow(id=str(k), line=k + 1, prompt=prompt, completion=completion, answer=answer, label=label)


ROWS = [
    _row(0, "q1", "good answer +", 1.0),
    _row(1, "q1", "bad answer", 0.0),
    _row(2, "q1", "fine answer +", 1.0),
    _row(3, "q2", "only right ones +", 1.0),
    _row(4, "q2", "still right +", 1.0),
    _row(5, "q3", "alone", 0.0),
    _row(6, "q4", "right +", 1.0),
    _row(7, "q4", "wrong", 0.0),
    _row(8, "q4", "wrong", 0.0, answer="another reference"),
]


def test_only_groups_with_a_correct_and_an_incorrect_member_count():
    groups = labelled_groups(ROWS)
    assert [[r.id for r in g] for g in groups] == [["0", "1", "2"], ["6", "7"]]


def _evaluate(preference, modes=("pointwise", "pairwise", "listwise")):
    config = RewardConfig(reward_timeout=5, batch_wait=0.01)
    parsed = [parse_group_mode(m, None) for m in modes]

    def judge(config):
        ranks = config.group.mode == "listwise"
        return JudgeRewardSystem(config, backend=ComparingBackend(preference, ranks=ranks))

    return evaluate_group_modes(labelled_groups(ROWS), config, parsed, make_judge=judge)


def test_a_judge_that_prefers_the_correct_member_orders_every_pair_right():
    stats = _evaluate(lambda text: text.count("+"))
    comparative = {s.mode: s for s in stats if s.mode != "pointwise"}
    assert {s.pairs for s in stats} == {3}  # (0,1), (2,1) and (6,7)
    assert (
        comparative["pairwise"].ordering_accuracy == 1.0 and comparative["listwise"].ordering_accuracy == 1.0
    )
    assert comparative["pairwise"].judgments == 6 + 2 and comparative["listwise"].judgments == 3 + 2
    assert all(s.judged_share == 1.0 for s in stats)


def test_an_anchored_group_counts_each_members_own_judgment_beside_the_comparisons():
    """Under the cascade, a group the rule decides none of is judged alone member by member, and
    the members judged right (the two that hold the reference) are compared: 3 + 2 judgments."""
    rows = [_row(0, "q", "It is ref, I would say +", 1.0), _row(1, "q", "no idea at all", 0.0),
            _row(2, "q", "ref, I think ++", 1.0)]  # fmt: skip
    config = RewardConfig(reward_timeout=5, batch_wait=0.01, strategy="cascade")

    def judge(config):
        return JudgeRewardSystem(config, backend=ComparingBackend(lambda text: text.count("+")))

    (stats,) = evaluate_group_modes(
        labelled_groups(rows), config, [parse_group_mode("pairwise", None)], make_judge=judge
    )
    assert (stats.judgments, stats.ordering_accuracy, stats.judged_share) == (3 + 2, 1.0, 1.0)


def test_a_position_biased_judge_orders_at_chance():
    stats = _evaluate(lambda text: 0.0, modes=("pairwise", "listwise"))
    assert [s.ordering_accuracy for s in stats] == [0.5, 0.5]  # every member tied


def test_a_mode_the_judge_did_not_decide_is_reported_and_compared_with_nothing():
    stats = _evaluate(lambda text: text.count("+"))
    failed = stats[1].model_copy(update={"judged_share": 0.2})
    text = to_markdown(group_modes_blocks([stats[0], failed, stats[2]], "data.jsonl", 0.9))
    assert "No figure for pairwise" in text
    assert "pairwise orders better" not in text


def test_a_mode_whose_judge_failed_shows_no_figure_in_the_table_and_says_why():
    # No start-up check: the listwise judge fails from the start.
    config = RewardConfig(reward_timeout=5, batch_wait=0.01, startup_check="off")

    def judge(config):
        backend = ComparingBackend(lambda text: text.count("+"), ranks=config.group.mode == "listwise")
        if config.group.mode == "listwise":  # a judge that cannot write a ranking
            backend.fail_with = JudgeParseError("no ranking in the reply")
        return JudgeRewardSystem(config, backend=backend)

    modes = [parse_group_mode(m, None) for m in ("pairwise", "listwise")]
    stats = evaluate_group_modes(labelled_groups(ROWS), config, modes, make_judge=judge)
    text = to_markdown(group_modes_blocks(stats, "data.jsonl", 0.9))
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in text.splitlines() if line.startswith("| ")}
    assert stats[1].judged_share == 0.0 and stats[1].ordering_accuracy is not None  # the rule's ordering
    assert rows["listwise"][4] == "no figure" and rows["listwise"][5] == ""
    assert rows["pairwise"][4] == "1.000"
    assert "No figure for listwise: below --min-judged 0.9, the judge decided 0 of the 5 rows" in text
    assert "because: no comparison of this member could be judged: no ranking in the reply (5)" in text


def test_a_schedule_and_a_bad_mode_are_read_from_the_name():
    name, settings = parse_group_mode("pairwise:anchor", None)
    assert (name, settings.mode, settings.schedule) == ("pairwise:anchor", "pairwise", "anchor")
    with pytest.raises(ValueError):
        parse_group_mode("tournament", None)


def test_the_cli_says_when_there_is_no_labelled_group(tmp_path, write_jsonl, capsys):
    data = write_jsonl(tmp_path / "d.jsonl", [{"prompt": "q", "completion": "c", "answer": "a", "label": 1}])
    assert (
        main(
            ["--data", str(data), "--out", str(tmp_path / "o"), "--group-modes", "pairwise", "--no-progress"]
        )
        == 2
    )
    assert "no labelled groups" in capsys.readouterr().err


def test_the_cli_exits_3_when_the_judge_did_not_judge(tmp_path, write_jsonl, capsys):
    rows = [
        {"prompt": "q", "completion": c, "answer": "a", "label": lab}
        for c, lab in (("yes a", 1), ("nope", 0))
    ]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    config = tmp_path / "c.yaml"
    # startup_check warn: the run goes on with its judge down, for the coverage check to catch.
    config.write_text(
        "judge_url: http://127.0.0.1:9\nreward_timeout: 1\nmax_retries: 0\nstartup_check: warn\n"
    )
    code = main(["--data", str(data), "--config", str(config), "--out", str(tmp_path / "o"),
                 "--group-modes", "pairwise", "--no-progress"])  # fmt: skip
    assert code == 3
    assert "No figure for pairwise" in (tmp_path / "o" / "groups.md").read_text()
    err = capsys.readouterr().err
    assert "error: pairwise: the judge decided 0 of the 2 rows sent to it (0%)" in err
    assert "cannot connect to the judge server" in err
