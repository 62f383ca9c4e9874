"""The grammar's blind adversarial round and the styles policy families write (eval/data): what
the cascade decides without the judge, row by row."""

from pathlib import Path

from eval.cascade_share import decisions

DATA = Path(__file__).resolve().parents[3] / "eval" / "data"
# Wrong by their labels, right in the grammar: the final statement states the right answer after
# text that disowns it in other words. Only the final value is paid, so neither raises the expected
# reward (docs/BENCHMARKS.md (o)).
PAID_AS_STATED = {"adv-example_format_echo-02", "adv-mc_letter_content_mismatch-06"}


def test_the_blind_round_pays_no_wrong_answer_but_the_two_stated_right():
    rows = decisions(DATA / "grammar_adversarial.jsonl", "category")
    assert {r.id for r in rows if r.wrong_paid} == PAID_AS_STATED
    controls = [r for r in rows if r.group.startswith("control_")]
    assert sum(r.decision == "rule" for r in controls) >= 0.9 * len(controls)


def test_the_rule_decides_nine_in_ten_marked_style_rows_and_none_wrongly():
    rows = decisions(DATA / "policy_styles.jsonl", "style")
    assert not [r.id for r in rows if r.wrong_paid]
    unmarked = {"sty-deepseek_v3-04", "sty-deepseek_v3-08", "sty-deepseek_v3-12"}  # "marked": false
    marked = [r for r in rows if r.id not in unmarked]
    assert sum(r.decision == "rule" for r in marked) >= 0.9 * len(marked)


def test_the_rule_decides_half_the_bundled_sample():
    rows = decisions(DATA / "sample.jsonl")
    assert not [r.id for r in rows if r.wrong_paid]
    assert sum(r.decision != "judge" for r in rows) >= len(rows) / 2
