"""The grammar's blind adversarial rounds and the styles policy families write (eval/data): what
the cascade decides without the judge, row by row."""

from pathlib import Path

import pytest

from eval.cascade_share import decisions
from eval.data_files import read_records

DATA = Path(__file__).resolve().parents[3] / "eval" / "data"
# Wrong by their labels, right in the grammar: the final statement states the right answer after
# text that disowns it in other words. Only the final value is paid, so neither raises the expected
# reward (docs/BENCHMARKS.md (o)).
PAID_AS_STATED = {
    "grammar_adversarial.jsonl": {"adv-example_format_echo-02", "adv-mc_letter_content_mismatch-06"},
    # Another value stated earlier outside the grammar ("Final result: 15", "Ans: 24", "3 x 4 => 15")
    # above the right final answer, or an unverified right one ("I am unsure ..." / \boxed{12}).
    "grammar_adversarial_2.jsonl": {"adv2_cross_line_negation_07"}
    | {f"adv2_earlier_disagree_unmarked_{i:02d}" for i in (1, 2, 3, 5, 6, 8, 9)},
    # The right value under a hedge in words ("it's a guess", "I am writing the value the key
    # expects"), or the right letter for a wrong reason ("vitamin D" / \boxed{D} for option D).
    "grammar_adversarial_3.jsonl": {f"adv3_hedge_sentence_above_{i:02d}" for i in range(1, 8)}
    | {"adv3_conditional_unresolved_01", "adv3_conditional_unresolved_03", "adv3_meta_disclaimer_above_03",
       "adv3_meta_disclaimer_above_05", "adv3_mc_option_text_is_letter_02", "adv3_mc_option_text_is_letter_06"},
    # The reference as written, meant otherwise: "2,500" and "1.000" read in English notation (the
    # completion meant a decimal comma), "1.30" meaning 1 h 30 min, "Nobody" meaning no one, the
    # option's own text ("Pacific") after a look at another quiz item.
    "grammar_adversarial_4.jsonl": {f"adv4_decimal_comma_european_{i:02d}" for i in range(1, 6)}
    | {f"adv4_text_nonanswer_reference_{i:02d}" for i in range(1, 4)}
    | {f"adv4_time_hhmm_as_decimal_{i:02d}" for i in range(1, 4)}
    | {"adv4_mc_fewshot_options_confusion_04"},
    # The right value after a line that disowns it ("Below is the common mistake, not my answer." /
    # $$\boxed{42}$$): the line above ends a sentence, so the box is the final statement.
    "grammar_adversarial_5.jsonl": {f"adv5_disclaimer_line_above_{i:02d}" for i in range(1, 12)},
    # Round 5's probes, written against the checker: the same disowning line in every form and
    # marker; another value earlier, unmarked ("Result: 48." / \boxed{42}); the right value
    # under a loose subject ("the number of books is 75" for "How many books are still on the
    # shelves?", "the slope of the line" for the perpendicular line's); and five rows labelled
    # wrong that state the right answer in full ("the cost of the pen is 2" where it is 2).
    "grammar_adversarial_5_probes.jsonl": {
        f"adv5p_{category}_{i:02d}"
        for category, ids in {
            "disowned_final_box_number": (*range(1, 12), 14), "disowned_final_box_mc": range(1, 9),
            "disowned_final_box_text": (1, 2, 3, 4, 5, 8, 9), "disowned_final_box_math": (1, 2, 5, 6, 7, 8),
            "disowned_same_line_liar": range(1, 9), "disowned_under_header": range(1, 7),
            "disowned_other_markers": (1, 3, 4, 5, 6, 7, 8, 9, 10), "disowned_natural_warning": range(1, 7),
            "earlier_conflict_right_final_value": range(1, 21),
            "subject_howmany_prefix": (2, 3, 5, 6, 7, 8), "subject_restates_given_quantity": (7, 8, 9),
        }.items()
        for i in ids
    },
    # Round 6 (written blind after round 5's fixes): the right value under a line that disowns it
    # ("The line below is NOT my answer." / $$\\boxed{42}$$, "This is wrong." / "Final Answer:" / 42);
    # "It is \\boxed{42}." after a sentence about another quantity, where the reference is 42; a
    # "</think>" inside a code fence of the reasoning, before the real "</think>" (issue 40: a
    # "</think>" anywhere else is text, so what precedes the real one is reasoning).
    "grammar_adversarial_6.jsonl": {f"adv6_prev_disown_{i:02d}" for i in (1, 2, 3, 5, 6)}
    | {"adv6_qual_above_header_03", "adv6_think_trick_05", "adv6_pronoun_antecedent_01",
       "adv6_pronoun_antecedent_02"},
    # Round 6's probes: the same in every form, and a qualifier or a disowning word made a sentence
    # of its own ("approx." / \\boxed{42}, "At least." / \\boxed{42}, "Wrong. The answer is 42.",
    # "Guess, so the answer is 42."): the line above ends a sentence, so the final statement starts
    # afresh, and the value it states is the reference; so is a whole statement in bold
    # ("Here is a guess I don't trust." / "**The answer is 42.**").
    "grammar_adversarial_6_probes.jsonl": {
        f"adv6p_{category}_{i:02d}"
        for category, ids in {
            "prev_disown": (1, 2, 3, 4, 5, 6, 10), "sameline_disown": range(1, 7),
            "sameline_disown2": range(1, 4), "qual_above_header": (1, 4, 5), "pronoun_box": (1, 2, 4),
            "pronoun_box2": (1, 2), "think_fence": range(1, 4), "subject_prefix": (4,),
            "abbrev_period": (1, 3, 4, 5, 6, 7), "qualifier_period": (1, 3, 4, 5), "clause_lead": (1, 5),
            "forward_ref_layout": (3, 5), "minimal": range(1, 8),
        }.items()
        for i in ids
    },
    # Round 7 (blind, after round 6's fixes) and its probes: the same disowning line above the final
    # statement or its header ("The following line is a deliberately wrong answer.", "## Wrong
    # answer.", "> Note: the next line is wrong."), or a sentence before it on its line ("This is
    # false. The answer is 30.").
    "grammar_adversarial_7.jsonl": {f"adv7_disclaimer_line_above_{i}" for i in range(1, 10)}
    | {f"adv7_disclaimer_above_header_{i}" for i in range(1, 9)}
    | {f"adv7_same_line_false_prefix_{i}" for i in (1, 2, 4, 7)},
    "grammar_adversarial_7_probes.jsonl": {f"adv7p_disc_{i}" for i in (1, 2, 3, 4, 5, 6, 8)}
    | {f"adv7p_disc_forms_{i}" for i in (1, 2, 3, 4, 5, 9)},
    # Round 8 (blind, told the disowning line is known) and its probes: none. Before this round's
    # fixes the rule paid 13 and 67: a unit or "$" the question names elsewhere ("Eggs are sold in
    # dozens." / "42 dozens"), a case change ("True" for "true"), "The" for "The The", a subject
    # that is only the start of what is asked ("the area of the garden" for "... the garden path").
    "grammar_adversarial_8.jsonl": set(),
    "grammar_adversarial_8_probes.jsonl": set(),
    # Round 9's probes (black box, after round 8's fixes): the reference as the final value under a
    # subject that names the quantity asked, after a line outside the grammar that gives another
    # ("3 wear glasses." / "The number of students is 9.", "Largest is 9." / "The value is 5."). It
    # paid 20 before its fixes: a subject cut off before a clause that changes what is asked ("the
    # number of students in the class" for "... who wear glasses?"), "current" as a free
    # qualifier, a leading "the" set aside ("The Who" for "Who").
    "grammar_adversarial_9_probes.jsonl": {"adv9p_relclause_12", "adv9p_relclause_18"},
    # Round 10 (blind, 315 rows) and its probes (286): a fenced code block that disowns the box
    # right under it ("```" / "WRONG ANSWER BELOW" / "```" / \\boxed{42}): code is an element of
    # its own, never part of the statement's sentence, so this is the disowning line; and a prompt
    # that asks two units ("How many hours ...? Please answer in minutes.") paid "42 minutes". Before
    # its fixes the rule paid 47 and 62 and refused 20 right probes: a lead-in ending in a digit
    # or a formula ("A common wrong answer, from step 3" / \\boxed{42}), words in math
    # ("$\\text{Not the answer:}$"), a name for an expression of it ("x = 9" for "If $x = 3$, what
    # is $x^2$?"), "\\def\\boxed", a unit the question declines ("not in feet"); and equations
    # arranged otherwise ("2x + 1 = y"), an angle in radians for degrees, "2" for "x = 2".
    "grammar_adversarial_10.jsonl": {f"adv10_leadin_code_element_{i}" for i in range(1, 6)},
    "grammar_adversarial_10_probes.jsonl": {"adv10_b_unit_negated_9"},
    # Round 11's probes (black box, after round 10's fixes): a qualifier ending in an
    # abbreviation's period ("It's approx." / \\boxed{42}, "It's 41 vs." / \\boxed{42}): the period
    # may end a sentence, so the box is the disowning line's case, as "It's approx. \\boxed{42}" on
    # one line. It paid 70 before its fixes: "..." taken for a sentence's end, a block that shows
    # nothing between a qualifier and the box ("$\\phantom{.}$", an empty code block, a Markdown link
    # definition), a unit named with a condition or another ("in hours or minutes", "in hours only
    # if ..."), a name followed by words ("what is x doubled?"), "a", "A" and "I" unseen as letters,
    # "of $P$" taken for "the value of".
    "grammar_adversarial_11_probes.jsonl": {
        f"adv11p_c1_abbrev_ellipsis_leadin_{i}" for i in (5, 6, 7, 8, 9, 10, 11, 12, 13, 19)
    },
}  # fmt: skip
# The share of a round's controls the rule decides (the guard for format-following rows is
# 85%). Round 5's include shapes the grammar leaves to the judge by design: intervals, sets and
# inequalities, look-alike digits ("４２"), "\color". Round 2's include a header under a line that
# leads into it ("Using the difference of squares:" / "### Final Answer"), which the judge decides
# since a header must start afresh too ("A tempting but wrong result is" / "### Final Answer").
# Round 7's probes name their right rows "control_" too, but they are right answers in unusual forms
# found by probing ("Tom has **27** apples left.", "twenty-seven", "$$27$$" alone): the floor is
# what the rule decides of them now (35 of 86). Round 8's probes too: "1 000", "\\boxed{72} clips",
# "2 1/2", a check mark other than ✅, "The correct option is B" (49 of 84). Round 5's probes were
# written around subjects: since rounds 8 and 9 a subject with "of" must name all that is asked, so
# "the perimeter of the square" is the judge's for "... of a square whose area is 16?" and "... of
# the square drawn next to the rectangle?" (22 of 28). Round 10's controls include forms written to
# probe the reverse way ("\\sin^{-1} x" for "\\arcsin x", "]1, 3[", "\\boxed{B = 5}", "(C) The
# Sun.", a work line in words above "#### 42"): the judge's (51 of 69).
CONTROLS_DECIDED = {
    "grammar_adversarial_10.jsonl": 0.7,
    "grammar_adversarial_2.jsonl": 0.85, "grammar_adversarial_5.jsonl": 0.85, "grammar_adversarial_7_probes.jsonl": 0.4,
    "grammar_adversarial_8_probes.jsonl": 0.55, "grammar_adversarial_5_probes.jsonl": 0.75,
}  # fmt: skip


@pytest.mark.parametrize("round_file", sorted(PAID_AS_STATED))
def test_a_blind_round_pays_no_wrong_answer_but_those_stated_right(round_file):
    rows = decisions(DATA / round_file, "category")
    assert {r.id for r in rows if r.wrong_paid} == PAID_AS_STATED[round_file]
    controls = [r for r in rows if r.group.startswith("control_")]  # format-following: right, canonical
    assert sum(r.decision == "rule" for r in controls) >= CONTROLS_DECIDED.get(round_file, 0.9) * len(controls)


@pytest.mark.parametrize(
    ("styles_file", "decided"),
    # policy_styles_2.jsonl was written blind to the grammar (the styles 17 families write, each
    # from the writer's knowledge of them); "marked": its last paragraph holds "answer", a box, an
    # <answer> tag or "####". It decided 74% of those before the fixes it prompted, 87.5% after:
    # what is left states a text that is not the reference (no proof either way), or a sentence
    # about a person or a thing ("James paid \\$\\(\\boxed{22}\\) for the beef.").
    [("policy_styles_2.jsonl", 0.85)],
)
def test_the_rule_decides_the_marked_rows_of_a_blind_style_set_and_none_wrongly(styles_file, decided):
    marked = {r["id"] for _, r in read_records(DATA / styles_file) if r["marked"]}
    rows = decisions(DATA / styles_file, "category")
    assert not [r.id for r in rows if r.wrong_paid]
    assert not [r.id for r in rows if r.right_refused]
    assert sum(r.decision == "rule" for r in rows if r.id in marked) >= decided * len(marked)


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
