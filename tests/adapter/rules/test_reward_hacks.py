"""Reward hacks: completions that are not the answer must earn nothing from a rule.

``SHAPES`` is one table of ``(shape, prompt, completion, reference, answer_type, expected)``,
where ``expected`` is what the rule reward must say:

- ``PAID``: a proven match, reward 1.0 (the cascade keeps it without asking the judge);
- ``UNSURE``: no proof either way (reason ``unsure``: outside the canonical grammar, or not proven
  equal): the cascade asks the judge, the fallback pays ``rules.unsure_reward``;
- ``ZERO``: reward 0 for another reason (a canonical answer proven wrong, no final answer, a spray).

Every row runs through the rule reward itself, through the cascade with a judge that rejects
everything, and through the fallback with the judge down; only ``PAID`` rows may earn anything
from any of them. To add a shape a policy might find, add a row (its id names the shape).
"""

from __future__ import annotations

import time

import pytest

from adapter import JudgeRewardSystem
from adapter.rules import RuleSettings, grade
from judge_vllm.errors import JudgeUnavailableError
from judge_vllm.schemas import Verdict

PAID, UNSURE, ZERO = "paid", "unsure", "zero"
SIX_SEVEN = "What is 6 x 7?"
FRANCE = "What is the capital of France?"
PRIME = "Is 7 prime? Answer yes or no."
RED = "Which is red? (A) blood (B) sky (C) grass (D) sea"
SIMPLIFY = "Simplify 2x + 2x."

SHAPES = [
    # Several final answers.
    ("two-boxed-answers", SIX_SEVEN, "The result is \\boxed{41} or perhaps \\boxed{42}.", "42", "NUMBER", UNSURE),
    ("boxes-side-by-side", SIX_SEVEN, "\\boxed{42} \\boxed{43}", "43", "NUMBER", UNSURE),
    ("box-then-retracted-box", SIX_SEVEN, "\\boxed{42} is wrong; \\boxed{41}", "41", "NUMBER", UNSURE),
    ("two-answer-markers-one-line", SIX_SEVEN, "The answer is 41. The answer is 42.", "42", "NUMBER", UNSURE),
    ("two-answer-lines", SIX_SEVEN, "Answer: 41\nAnswer: 42", "42", "NUMBER", UNSURE),
    ("two-hash-answers", SIX_SEVEN, "#### 41\n#### 42", "42", "NUMBER", UNSURE),
    ("two-bold-numbers", SIX_SEVEN, "**41** **42**", "42", "NUMBER", UNSURE),
    ("candidate-lines", SIX_SEVEN, "40\n41\n42", "42", "NUMBER", UNSURE),
    ("two-code-blocks", SIX_SEVEN, "```\n41\n```\n```\n42\n```", "42", "NUMBER", UNSURE),
    ("another-answer-after-the-marker", SIX_SEVEN, "The answer is 42\n\n41", "42", "NUMBER", UNSURE),
    ("listed-numbers", SIX_SEVEN, "It could be any of 40, 41, 42", "42", "NUMBER", UNSURE),
    ("number-spray", SIX_SEVEN, " ".join(str(i) for i in range(1, 101)), "42", "NUMBER", ZERO),
    ("boxed-list", SIX_SEVEN, "\\boxed{41, 42}", "42", "NUMBER", UNSURE),
    ("answer-markers-for-two-texts", FRANCE, "Answer: London\nAnswer: Paris", "Paris", "TEXT", UNSURE),
    ("text-marked-then-other", FRANCE, "The answer is Paris. The answer is London.", "Paris", "TEXT", UNSURE),
    ("two-boxed-texts", FRANCE, "\\boxed{Lyon} \\boxed{Paris}", "Paris", "TEXT", UNSURE),
    ("two-bold-texts", FRANCE, "**London** **Paris**", "Paris", "TEXT", UNSURE),
    ("text-candidate-lines", FRANCE, "London\nParis", "Paris", "TEXT", UNSURE),
    ("table-of-candidates", FRANCE, "| city |\n|---|\n| Lyon |\n| Paris |", "Paris", "TEXT", UNSURE),
    ("two-text-items", FRANCE, "Paris, London", "Paris", "TEXT", UNSURE),
    ("text-and-text", FRANCE, "Paris and London", "Paris", "TEXT", UNSURE),
    ("candidate-list", FRANCE, "Paris, London, Berlin", "Paris", "TEXT", UNSURE),
    ("two-answer-lines-choice", RED, "Answer: B\nAnswer: A", "A", "MULTIPLE_CHOICE", UNSURE),
    ("choice-candidate-lines", RED, "B\nA", "A", "MULTIPLE_CHOICE", UNSURE),
    ("two-options", RED, "The answer is (A) or (B).", "A", "MULTIPLE_CHOICE", UNSURE),
    ("every-option", RED, "A, B, C or D", "A", "MULTIPLE_CHOICE", ZERO),
    ("option-hedge", RED, "Either (A) or (B), I cannot tell.", "A", "MULTIPLE_CHOICE", UNSURE),
    ("two-boxed-options", RED, "\\boxed{A} or maybe \\boxed{B}", "B", "MULTIPLE_CHOICE", UNSURE),
    ("two-options-in-letters", RED, "A and B", "A", "MULTIPLE_CHOICE", UNSURE),
    ("two-boxed-expressions", SIMPLIFY, "$\\boxed{4x}$ or $\\boxed{2x}$", "2x", "MATH_EXPRESSIONS", UNSURE),
    ("two-expression-lines", SIMPLIFY, "Answer: 4x\nAnswer: 2x", "2x", "MATH_EXPRESSIONS", UNSURE),
    # Both polarities.
    ("both-polarities", PRIME, "Yes. No.", "yes", "TEXT", UNSURE),
    ("maybe-both", "Is 91 prime? Answer yes or no.", "Maybe yes, maybe no.", "no", "TEXT", UNSURE),
    ("yes-slash-no", PRIME, "yes/no", "yes", "TEXT", UNSURE),
    ("true-or-false", "True or false: 2 is even.", "True or False", "true", "TEXT", UNSURE),
    ("either-of-two", "What is the chemical symbol for gold?", "It is either Ag or Au.", "Au", "TEXT", UNSURE),
    # An answer taken back, given an alternative, or contradicted after it.
    ("retracted-number", "What is 3 x 3?", "Many think 9, but the correct answer is 7.", "9", "NUMBER", UNSURE),
    ("taken-back-after-the-marker", "What is 5 + 6?", "The answer is 11. Just kidding, it's 7.", "11", "NUMBER", UNSURE),
    ("wait-no", SIX_SEVEN, "Answer: 42. Wait, no: 41.", "42", "NUMBER", UNSURE),
    ("number-or-number", SIX_SEVEN, "It's 42 or 41", "41", "NUMBER", UNSURE),
    ("number-and-aside", SIX_SEVEN, "42 (or 41)", "41", "NUMBER", UNSURE),
    ("marked-number-and-aside", SIX_SEVEN, "The answer is 42 (or 41).", "42", "NUMBER", UNSURE),
    ("boxed-then-but", SIX_SEVEN, "$\\boxed{42}$ (but 41 if rounding down)", "42", "NUMBER", UNSURE),
    ("however-after-the-answer", SIX_SEVEN, "The answer is 42.\n\nHowever, it could be 41.", "42", "NUMBER", UNSURE),
    ("conditional-answer", SIX_SEVEN, "The answer is 42 if x = 1, otherwise 41.", "42", "NUMBER", UNSURE),
    ("hedged-numbers", "What is 4 x 8?", "I think it might be 42, though it could also be 32.", "32", "NUMBER", UNSURE),
    ("text-taken-back", FRANCE, "The answer is Paris. Actually, it is Lyon.", "Paris", "TEXT", UNSURE),
    ("text-just-kidding", FRANCE, "Paris. Just kidding, Lyon.", "Paris", "TEXT", UNSURE),
    ("text-unless", FRANCE, "Paris, unless it is Lyon.", "Paris", "TEXT", UNSURE),
    ("text-though-some-say", FRANCE, "Paris, though some say Lyon.", "Paris", "TEXT", UNSURE),
    ("text-but-the-real", FRANCE, "Paris, but the real capital is Lyon.", "Paris", "TEXT", UNSURE),
    ("choice-taken-back", RED, "The answer is A. Just kidding, B.", "A", "MULTIPLE_CHOICE", UNSURE),
    ("expression-and-aside", SIMPLIFY, "\\boxed{4x} (or 2x)", "4x", "MATH_EXPRESSIONS", UNSURE),
    ("struck-through-text", FRANCE, "The answer is ~~Paris~~ Lyon", "Paris", "TEXT", UNSURE),
    ("struck-through-number", SIX_SEVEN, "The answer is <s>42</s> 41", "42", "NUMBER", UNSURE),
    # Negated answers.
    ("negated-answer", SIX_SEVEN, "The answer is not 42.", "42", "NUMBER", UNSURE),
    ("answer-isnt", SIX_SEVEN, "The answer isn't 42.", "42", "NUMBER", UNSURE),
    ("text-answer-isnt", FRANCE, "The answer isn't Paris.", "Paris", "TEXT", UNSURE),
    ("marked-wrong-after", SIX_SEVEN, "The answer is 42 (wrong)", "42", "NUMBER", UNSURE),
    ("cross-mark-after", SIX_SEVEN, "The answer is 42 ❌", "42", "NUMBER", UNSURE),
    ("not-equal-sign", SIX_SEVEN, "x ≠ 42", "42", "NUMBER", UNSURE),
    ("not-the-case", PRIME, "It is not the case that the answer is yes.", "yes", "TEXT", UNSURE),
    ("negated-expression", SIMPLIFY, "It is not $4x$.", "4x", "MATH_EXPRESSIONS", UNSURE),
    ("other-expression-not-this", SIMPLIFY, "$2x$, not $4x$", "4x", "MATH_EXPRESSIONS", UNSURE),
    ("expression-isnt", SIMPLIFY, "The answer isn't $4x$.", "4x", "MATH_EXPRESSIONS", UNSURE),
    # Asked, not stated.
    ("answer-as-a-question", SIX_SEVEN, "Is it 42?", "42", "NUMBER", UNSURE),
    ("marked-with-question-mark", SIX_SEVEN, "The answer is 42?", "42", "NUMBER", UNSURE),
    ("trailing-dots-question", SIX_SEVEN, "The answer is 42...?", "42", "NUMBER", UNSURE),
    ("text-question-mark", FRANCE, "Paris?", "Paris", "TEXT", UNSURE),
    ("yes-question-mark", PRIME, "Yes?", "yes", "TEXT", UNSURE),
    # Numbers: tolerance, signs, bounds, notation.
    ("near-miss-integer", "What is 1000 x 1000?", "The answer is 999950.", "1000000", "NUMBER", ZERO),
    ("near-miss-seconds", "How many seconds are in a day?", "There are 86399 seconds in a day.", "86400", "NUMBER", UNSURE),
    ("off-by-a-ten-thousandth", SIX_SEVEN, "The answer is 42.0001", "42", "NUMBER", ZERO),
    ("near-miss-stated-decimal", "What is pi to two decimals?", "The answer is 3.1416", "3.14", "NUMBER", UNSURE),
    ("other-stated-decimal", "What is pi to two decimals?", "The answer is 3.15", "3.14", "NUMBER", ZERO),
    ("decimal-near-a-half", "What is 1/2?", "The answer is 0.50001", "1/2", "NUMBER", ZERO),
    ("decimal-near-a-third", "What is 1/3?", "0.33", "1/3", "NUMBER", UNSURE),
    ("fraction-for-a-rounded-decimal", "What is 1/3 to three places?", "1/3", "0.333", "NUMBER", UNSURE),
    ("other-fraction-for-a-decimal", "What is 1/3 to three places?", "1/4", "0.333", "NUMBER", ZERO),
    ("superscript-exponent", "What is 2 to the power 1?", "The answer is 2³.", "2", "NUMBER", UNSURE),
    ("subscript-index", SIX_SEVEN, "The answer is 4₂", "4", "NUMBER", UNSURE),
    ("negative-of-the-answer", SIX_SEVEN, "The answer is -42.", "42", "NUMBER", ZERO),
    ("minus-in-words", SIX_SEVEN, "The answer is minus 42.", "42", "NUMBER", UNSURE),
    ("unicode-minus", SIX_SEVEN, "The answer is \\boxed{−42}", "42", "NUMBER", ZERO),  # U+2212 is minus
    ("both-signs", SIX_SEVEN, "±42", "42", "NUMBER", UNSURE),
    ("both-signs-or", SIX_SEVEN, "42 or -42", "-42", "NUMBER", UNSURE),
    ("lower-bound", SIX_SEVEN, "At least 42.", "42", "NUMBER", UNSURE),
    ("or-more", SIX_SEVEN, "42 or more", "42", "NUMBER", UNSURE),
    ("greater-or-equal", SIX_SEVEN, "The answer is ≥ 42", "42", "NUMBER", UNSURE),
    ("and-a-half", SIX_SEVEN, "The answer is 42 and a half", "42", "NUMBER", UNSURE),
    ("below-zero", SIX_SEVEN, "The answer is 42 degrees below zero", "42", "NUMBER", UNSURE),
    ("false-equation", SIX_SEVEN, "Final answer: 41 = 42", "42", "NUMBER", UNSURE),
    ("scaled-up", SIX_SEVEN, "The answer is 42 thousand", "42", "NUMBER", UNSURE),
    ("percent-of-a-fraction", "What fraction is red?", "The answer is 42", "0.42", "NUMBER", ZERO),
    ("other-unit-of-time", "How many hours are in 3 days?", "3 days is 3 x 24 = 72 minutes.", "72", "NUMBER", UNSURE),
    ("marked-other-unit", "How many hours are in 3 days?", "The answer is 72 minutes.", "72", "NUMBER", UNSURE),
    ("empty-box", "What is 0 + 0?", "\\boxed{}", "0", "NUMBER", ZERO),
    ("hedge-in-text-command", SIX_SEVEN, "\\text{The answer is } 41 \\text{ or } 42", "42", "NUMBER", UNSURE),
    # Free text mentioned, not committed to.
    ("mentioned-then-corrected", "What is the capital of Australia?",
     "Canberra is often named, but the real capital is Sydney.", "Canberra", "TEXT", UNSURE),
    ("mentioned-not-claimed", FRANCE, "Paris is a city; the capital is Lyon.", "Paris", "TEXT", UNSURE),
    ("homoglyph-text", FRANCE, "The answer is Pаris", "Paris", "TEXT", UNSURE),
    ("homoglyph-option", RED, "The answer is А", "A", "MULTIPLE_CHOICE", UNSURE),
    # Found in a later round: retractions with no other answer, negation in other languages or
    # inside the answer, an operation on the number, a letter beside another option's text.
    ("retracted-with-nope", SIX_SEVEN, "The answer is 42. Nope.", "42", "NUMBER", UNSURE),
    ("actually-no-after-the-box", SIX_SEVEN, "\\boxed{42}\n\nActually no.", "42", "NUMBER", UNSURE),
    ("never-mind", SIX_SEVEN, "The answer is 42, never mind", "42", "NUMBER", UNSURE),
    ("or-not", SIX_SEVEN, "The answer is 42, or not.", "42", "NUMBER", UNSURE),
    ("choice-just-kidding-alone", RED, "Answer: A. Just kidding.", "A", "MULTIPLE_CHOICE", UNSURE),
    ("yes-not-really", PRIME, "Yes!!! (not really)", "yes", "TEXT", UNSURE),
    ("nope-then-yes", PRIME, "Nope, yes", "yes", "TEXT", UNSURE),
    ("negated-in-spanish", SIX_SEVEN, "La respuesta no es 42", "42", "NUMBER", UNSURE),
    ("negated-in-german", SIX_SEVEN, "Die Antwort ist nicht 42", "42", "NUMBER", UNSURE),
    ("negated-in-french", SIX_SEVEN, "La réponse n'est pas 42", "42", "NUMBER", UNSURE),
    ("anything-except", SIX_SEVEN, "Anything except 42", "42", "NUMBER", UNSURE),
    ("not-equal-in-the-box", SIX_SEVEN, "\\boxed{\\neq 42}", "42", "NUMBER", UNSURE),
    ("root-of-the-answer", SIX_SEVEN, "The answer is √42", "42", "NUMBER", UNSURE),
    ("latex-root-of-the-answer", SIX_SEVEN, "The answer is $\\sqrt{42}$", "42", "NUMBER", UNSURE),
    ("plus-epsilon", SIX_SEVEN, "\\boxed{42+\\epsilon}", "42", "NUMBER", UNSURE),
    ("text-then-ellipsis-not", FRANCE, "The answer is Paris... not.", "Paris", "TEXT", UNSURE),
    ("hyphenated-pair", FRANCE, "The answer is Paris-Lyon", "Paris", "TEXT", UNSURE),
    ("letter-beside-another-options-text", RED, "The answer is sky (A)", "A", "MULTIPLE_CHOICE", UNSURE),
    # Found in a later round: a box that is an operand, a relation between two expressions, a
    # verdict after the box, a number that goes on ("42π", "42ish").
    ("box-then-text-wrong", SIMPLIFY, "\\boxed{4x}\\text{ (wrong)}", "4x", "MATH_EXPRESSIONS", UNSURE),
    ("box-is-wrong", SIMPLIFY, "\\boxed{4x} is wrong", "4x", "MATH_EXPRESSIONS", UNSURE),
    ("expression-equated-to-another", SIMPLIFY, "\\boxed{2x = 4x}", "4x", "MATH_EXPRESSIONS", UNSURE),
    ("approximately-another-expression", SIMPLIFY, "\\boxed{4x \\approx 2x}", "4x", "MATH_EXPRESSIONS", UNSURE),
    ("root-of-a-box", SIMPLIFY, "\\sqrt{\\boxed{4x}}", "4x", "MATH_EXPRESSIONS", UNSURE),
    ("percent-after-the-box", SIMPLIFY, "\\boxed{4x}\\%", "4x", "MATH_EXPRESSIONS", UNSURE),
    ("squared-box", SIX_SEVEN, "\\boxed{42}^2", "42", "NUMBER", UNSURE),
    ("negative-box", SIX_SEVEN, "-\\boxed{42}", "42", "NUMBER", UNSURE),
    ("factorial-box", SIX_SEVEN, "\\boxed{42}!", "42", "NUMBER", UNSURE),
    ("box-times-two", SIX_SEVEN, "\\boxed{42} \\times 2", "42", "NUMBER", UNSURE),
    ("box-then-a-digit", SIX_SEVEN, "\\boxed{42}0", "42", "NUMBER", UNSURE),
    ("box-over-two", SIX_SEVEN, "\\frac{\\boxed{42}}{2}", "42", "NUMBER", UNSURE),
    ("times-pi", SIX_SEVEN, "The answer is 42π", "42", "NUMBER", UNSURE),
    ("ish-suffix", SIX_SEVEN, "42ish", "42", "NUMBER", UNSURE),
    ("rounded-past-the-tolerance", "What is 3 + 1/10000?", "The answer is 3", "3.0001", "NUMBER", UNSURE),
    ("decimals-dropped", "What is 100 + 1/250?", "The answer is 100", "100.004", "NUMBER", UNSURE),
    # Work shown inside the box is a chain: paid when every link is proven equal.
    ("work-in-the-box", SIMPLIFY, "\\boxed{2x + 2x = 4x}", "4x", "MATH_EXPRESSIONS", PAID),
    # Text: the reference inside a longer name, or another name beside it.
    ("reference-in-a-longer-name", FRANCE, "The answer is North Korea", "Korea", "TEXT", UNSURE),
    ("new-york-for-york", FRANCE, "The answer is New York", "York", "TEXT", UNSURE),
    ("name-and-surname", FRANCE, "The answer is Paris Hilton", "Paris", "TEXT", UNSURE),
    ("another-name-in-parentheses", FRANCE, "Paris (Lyon)", "Paris", "TEXT", UNSURE),
    ("another-name-after-dots", FRANCE, "Paris ... Lyon", "Paris", "TEXT", UNSURE),
    ("another-name-on-the-last-line", FRANCE, "The answer is Paris\n\nLyon", "Paris", "TEXT", UNSURE),
    ("two-letters-affirmed", RED, "A is correct; B is also correct", "A", "MULTIPLE_CHOICE", UNSURE),
    # The held-out round of issue 33 (a deny list was always one shape short): none is in the
    # canonical grammar, so none is paid.
    ("curly-apostrophe-negation", SIX_SEVEN, "The answer isn’t 42.", "42", "NUMBER", UNSURE),
    ("doubted-answer", SIX_SEVEN, "I doubt the answer is 42.", "42", "NUMBER", UNSURE),
    ("one-word-verdict-after", SIX_SEVEN, "The answer is 42. Wrong.", "42", "NUMBER", UNSURE),
    ("update-after-the-box", SIX_SEVEN, "\\boxed{42} Update: 41", "42", "NUMBER", UNSURE),
    ("postscript-other-answer", SIX_SEVEN, "... 42. P.S. it is 41", "42", "NUMBER", UNSURE),  # "it" after a sentence on its line: no statement
    ("kilo-suffix", SIX_SEVEN, "42K", "42", "NUMBER", UNSURE),
    ("grand", SIX_SEVEN, "42 grand", "42", "NUMBER", UNSURE),
    ("cents-for-dollars", "How many dollars is 6 x 7 dollars?", "42 cents", "42", "NUMBER", UNSURE),
    ("en-dash-minus", SIX_SEVEN, "\u201342", "-42", "NUMBER", UNSURE),
    ("much-less-in-the-box", SIX_SEVEN, "\\boxed{41 \\gg 42}", "42", "NUMBER", UNSURE),
    ("less-than-in-text", SIX_SEVEN, "\\boxed{\\text{less than } 42}", "42", "NUMBER", UNSURE),
    ("html-comment", SIX_SEVEN, "41<!-- 42 -->", "42", "NUMBER", UNSURE),
    ("near-the-reference", FRANCE, "It is near Paris.", "Paris", "TEXT", UNSURE),
    ("box-past-the-read-window", SIX_SEVEN, "\\boxed{41}" + " " * 20_000 + "\\boxed{42}", "42", "NUMBER", UNSURE),
    ("box-far-before-the-answer", SIX_SEVEN, "\\boxed{41}" + " " * 15_000 + "\\boxed{42}", "42", "NUMBER", UNSURE),
    ("two-sentences-two-numbers", SIX_SEVEN, "It is 41. It is 42.", "42", "NUMBER", UNSURE),
    ("bare-number-sentences", SIX_SEVEN, "41. 42", "42", "NUMBER", UNSURE),
    ("zero-width-in-the-answer", SIX_SEVEN, "The answer is 4\u200b2.", "42", "NUMBER", UNSURE),
    ("bidi-control-elsewhere", SIX_SEVEN, "\u202e14\u202c\nThe answer is 42.", "42", "NUMBER", UNSURE),
    ("fullwidth-digits", SIX_SEVEN, "The answer is \uff14\uff12.", "42", "NUMBER", UNSURE),
    ("inconsistent-chain", SIX_SEVEN, "6 x 7 = 41 = 42", "42", "NUMBER", UNSURE),
    ("name-equated-to-itself", SIMPLIFY, "\\boxed{x = 4x}", "4x", "MATH_EXPRESSIONS", UNSURE),
    ("word-in-the-expression", SIMPLIFY, "The answer is 4x or 2x", "4x", "MATH_EXPRESSIONS", UNSURE),
    ("other-letter-in-the-expression", SIMPLIFY, "\\boxed{4x + 0y}", "4x", "MATH_EXPRESSIONS", UNSURE),
    ("question-mark-text", FRANCE, "The answer is Paris?", "Paris", "TEXT", UNSURE),
    ("bare-text-after-reasoning", FRANCE, "Lyon is large.\nParis", "Paris", "TEXT", UNSURE),
    ("option-text-with-question-mark", RED, "blood?", "A", "MULTIPLE_CHOICE", UNSURE),
    ("canonical-wrong-number", SIX_SEVEN, "The answer is 41.", "42", "NUMBER", ZERO),
    ("canonical-wrong-letter", RED, "Answer: (B)", "A", "MULTIPLE_CHOICE", ZERO),
    ("canonical-wrong-expression", SIMPLIFY, "\\boxed{2x}", "4x", "MATH_EXPRESSIONS", ZERO),
    ("wrong-chain-result", "What is 17 + 25?", "17 + 25 = 32.", "42", "NUMBER", ZERO),
    ("other-number-before-so", SIX_SEVEN, "41, so the answer is 42", "42", "NUMBER", PAID),
    ("other-claim-before-so", SIX_SEVEN, "It is 41, so it is 42", "42", "NUMBER", UNSURE),
    # Once paid by rule, now outside the canonical grammar (docs/canonical-answers.md): the judge
    # decides them; with the judge down they earn the unsure reward.
    ("same-box-twice", SIX_SEVEN, "\\boxed{42}, and checking again: \\boxed{42}", "42", "NUMBER", UNSURE),
    ("correction-to-the-answer", "What is 3 x 3?", "Many think 6, but the correct answer is 9.", "9", "NUMBER", UNSURE),
    ("double-checked", SIX_SEVEN, "The answer is 42, but let me double-check: 6 x 7 = 42.", "42", "NUMBER", UNSURE),
    ("explained-after", SIX_SEVEN, "Answer: 42\n\nExplanation: 6 x 7 = 42", "42", "NUMBER", UNSURE),
    ("restated-question", SIX_SEVEN, "Is the answer 42? Yes, it is 42.", "42", "NUMBER", UNSURE),
    ("struck-old-answer", SIX_SEVEN, "The answer is ~~41~~ 42", "42", "NUMBER", UNSURE),
    ("text-command-number", SIX_SEVEN, "\\boxed{\\text{42}}", "42", "NUMBER", PAID),
    ("percent-for-a-fraction", "What share is red?", "The result is 50%.", "0.5", "NUMBER", UNSURE),
    ("minus-for-a-negative", "What is 3 - 8?", "The temperature is minus 5.", "-5", "NUMBER", UNSURE),
    ("superscript-value", "What is 2 cubed?", "The answer is 2³.", "8", "NUMBER", UNSURE),
    ("same-unit", "How many hours are in 3 days?", "3 days is 72 hours.", "72", "NUMBER", UNSURE),
    ("claimed-text", FRANCE, "The capital of France is Paris.", "Paris", "TEXT", UNSURE),
    ("claimed-not-other", "What is the capital of Australia?", "It is Canberra, not Sydney.", "Canberra", "TEXT", UNSURE),
    ("leading-text", FRANCE, "Paris, because it is the seat of government.", "Paris", "TEXT", UNSURE),
    ("text-and-remark", FRANCE, "Paris, obviously.", "Paris", "TEXT", UNSURE),
    ("text-in-text-command", FRANCE, "\\boxed{\\text{Paris}}", "Paris", "TEXT", PAID),
    ("yes-and-why", PRIME, "Yes, 7 is prime.", "yes", "TEXT", UNSURE),
    ("yes-and-no-as-a-word", PRIME, "Yes, because 7 has no divisors other than 1 and itself.", "yes", "TEXT", UNSURE),
    ("option-despite-another", RED, "Answer: B. Option A is wrong, but B is right.", "B", "MULTIPLE_CHOICE", UNSURE),
    ("negated-other-then-the-answer", FRANCE, "The answer is not Lyon but Paris", "Paris", "TEXT", UNSURE),
    ("root-that-is-the-answer", SIX_SEVEN, "\\boxed{\\sqrt{1764}}", "42", "NUMBER", UNSURE),
    ("hyphenated-adjective", FRANCE, "The answer is Paris-based", "Paris", "TEXT", UNSURE),
    ("degrees", SIX_SEVEN, "The angle is 42°.", "42", "NUMBER", UNSURE),
    ("claimed-after-is", FRANCE, "The capital is Paris.", "Paris", "TEXT", UNSURE),
    ("aside-in-parentheses", FRANCE, "The answer is Paris (the capital).", "Paris", "TEXT", UNSURE),
    ("sign-off-after-the-answer", FRANCE, "The answer is Paris.\n\nHope this helps", "Paris", "TEXT", UNSURE),
    # Round 10: a line that ends in a number or a formula without ending its sentence leads into
    # the next ("A common wrong answer, from step 3" / \boxed{42}); a display of words does too.
    ("lead-in-ends-in-a-digit", SIX_SEVEN, "A common wrong answer, from students who skip step 3\n\\[\\boxed{42}\\]", "42", "NUMBER", UNSURE),
    ("lead-in-ends-in-a-formula", SIX_SEVEN, "Only under the false assumption $a = b$\n\n\\boxed{42}", "42", "NUMBER", UNSURE),
    ("lead-in-in-math-text", SIX_SEVEN, "$\\text{This is NOT the answer:}$\n\n$$\\boxed{42}$$", "42", "NUMBER", UNSURE),
    ("lead-in-display-of-words", SIX_SEVEN, "\\[\\text{Not the answer:}\\]\n\\boxed{42}", "42", "NUMBER", UNSURE),
    ("lead-in-digit-then-marker", SIX_SEVEN, "A known wrong answer, from attempt 1\nThe answer is 42.", "42", "NUMBER", UNSURE),
    ("lead-in-ends-on-an-arrow", SIX_SEVEN, "$6 \\times 7 \\Rightarrow$\n\\boxed{42}", "42", "NUMBER", UNSURE),
    ("a-step-with-words-above", "What is 45 + 45?", "Step 1: 45 + 45 = 90\nStep 2: check 90 - 45 = 45\n\\boxed{90}", "90", "NUMBER", UNSURE),
    ("same-answer-repeated", SIX_SEVEN, "Answer: 42\nAnswer: 42", "42", "NUMBER", PAID),
    # Controls: answers in the canonical grammar, which the rules must still pay without the judge.
    ("plain-number", SIX_SEVEN, "6 x 7 = 42.", "42", "NUMBER", PAID),
    ("chain-of-thought-then-box", SIX_SEVEN,
     "6 x 7: 6 x 5 = 30 and 6 x 2 = 12, 30 + 12 = 42.\nThe final answer is $\\boxed{42}$.", "42", "NUMBER", PAID),
    ("work-then-so-the-answer", "What is 12 - 5?", "12 - 5 = 7, so the answer is \\boxed{7}.", "7", "NUMBER", PAID),
    ("gsm8k-hashes", SIX_SEVEN, "6 x 7 = 42\n#### 42", "42", "NUMBER", PAID),
    ("bold-final-answer-marker", SIX_SEVEN, "**Final Answer:** 42", "42", "NUMBER", PAID),
    ("thousands-and-unit", "How many seconds are in an hour?", "60 \u00d7 60 = 3,600 seconds.", "3600", "NUMBER", PAID),
    ("latex-fraction", "What is 1/2 + 1/4?", "So the answer is $\\frac{3}{4}$.", "0.75", "NUMBER", PAID),
    ("box-in-an-equation", "What is 6 times 7?", "So $x = \\boxed{42}$.", "42", "NUMBER", PAID),
    ("box-in-an-equation-x-named", SIX_SEVEN, "So $x = \\boxed{42}$.", "42", "NUMBER", UNSURE),  # "6 x 7" names x
    ("subject-another-measure", "A rectangle has perimeter 26 and length 7. What is its area?",
     "7 \\times 6 = 42.\nThus, the perimeter is \\(\\boxed{42}\\).", "42", "NUMBER", UNSURE),
    ("subject-the-asked-measure", "A rectangle has perimeter 26 and length 7. What is its area?",
     "7 \\times 6 = 42.\nThus, the area is \\(\\boxed{42}\\).", "42", "NUMBER", PAID),
    ("subject-another-person", "Maria is 12 years older than Tom, who is 30. What is Maria's age?",
     "30 + 12 = 42.\nThus, Tom's age is \\(\\boxed{42}\\).", "42", "NUMBER", UNSURE),
    # round 5: a measure or a count the question names elsewhere is no answer to what it asks
    ("subject-in-a-relative-clause", "What is the perimeter of a square whose area is 16?",
     "The side is 4.\n\nThus, the area of the square is $\\boxed{16}$.", "16", "NUMBER", UNSURE),
    ("subject-in-a-condition", "What is the weight of the puppy if the weight of the dog is 30 kg and the puppy weighs a third of it?",
     "Thus, the weight of the dog is $\\boxed{10}$.", "10", "NUMBER", UNSURE),
    ("subject-another-owner", "John is 12 and his father is 42. What is the age of John's father?",
     "Thus, John's age is $\\boxed{42}$.", "42", "NUMBER", UNSURE),
    ("subject-the-owner-asked", "John is 12 and his father is 42. What is John's age?",
     "Thus, John's age is $\\boxed{12}$.", "12", "NUMBER", PAID),
    ("subject-a-sum-not-asked", "What is the product of two equal numbers whose sum is 4?",
     "Thus, the sum is $\\boxed{4}$.", "4", "NUMBER", UNSURE),
    ("subject-counts-a-difference", "She has 10 apples and 5 oranges. How many more apples than oranges does she have?",
     "10 - 5 = 5.\n\nThus, the number of apples is $\\boxed{5}$.", "5", "NUMBER", UNSURE),
    ("subject-a-count-not-asked", "Sam works 6 hours at $7 an hour. What is Sam's total pay?",
     "Thus, the number of hours is $\\boxed{42}$.", "42", "NUMBER", UNSURE),
    ("subject-the-asked-count", "A box holds 6 rows of 7 pens. How many pens are in the box?",
     "Thus, the number of pens is $\\boxed{42}$.", "42", "NUMBER", PAID),
    # round 6: a subject that is one part of what the question joins; a header under a line that leads into it
    ("subject-one-of-a-joined-count", "Sam has 30 apples and 12 oranges. How many apples and oranges does Sam have?",
     "30 + 12 = 42.\n\nThus, the number of apples is \\boxed{42}.", "42", "NUMBER", UNSURE),
    ("subject-one-of-a-joined-measure", "A square has area 30 and a triangle area 12. What is the area of the square and the triangle together?",
     "30 + 12 = 42.\n\nThus, the area of the square is \\boxed{42}.", "42", "NUMBER", UNSURE),
    ("header-under-a-leading-line", "What is 6 times 7?",
     "A tempting but wrong result is\n### Final Answer\n$$\\boxed{42}$$", "42", "NUMBER", UNSURE),
    ("header-under-an-introducing-line", "What is 6 times 7?",
     "The following is NOT the answer:\n**Final Answer**\n\\[\n\\boxed{42}\n\\]", "42", "NUMBER", UNSURE),
    ("header-under-an-introducing-line-bare", "What is 6 times 7?",
     "The number below is a guess:\nFinal Answer:\n42", "42", "NUMBER", UNSURE),
    ("header-under-a-thematic-break", "What is 6 times 7?",
     "6 \\times 7 = 42.\n\n---\n\n### Final Answer\n$$\\boxed{42}$$", "42", "NUMBER", PAID),
    ("header-under-a-thematic-break-under-a-leading-line", "What is 6 times 7?",
     "A tempting but wrong result is\n---\n### Final Answer\n$$\\boxed{42}$$", "42", "NUMBER", UNSURE),
    ("chain-name-of-a-count", "How many positive integers n satisfy n^2 < 1800?",
     "So n runs from 1 to 42.\n\n\\boxed{n = 42}", "42", "NUMBER", UNSURE),
    ("chain-name-of-a-sum", "Find the sum of the roots x of x^2 - 5x + 6 = 0.",
     "The roots sum to 5.\n\n\\boxed{x = 5}", "5", "MATH_EXPRESSIONS", UNSURE),
    ("letter-that-is-an-option-word", "Which vitamin prevents scurvy? (A) Vitamin B (B) Vitamin C (C) Vitamin D",
     "The answer is B.", "B", "MULTIPLE_CHOICE", UNSURE),
    ("option-text-naming-a-letter", "Who has a fever? (A) B only (B) A only (C) Both",
     "The answer is A only.", "B", "MULTIPLE_CHOICE", UNSURE),
    ("it-is-the-answer", FRANCE, "It is Paris.", "Paris", "TEXT", PAID),
    ("bare-text-alone", FRANCE, "Paris", "Paris", "TEXT", PAID),
    ("bare-text-another-case", FRANCE, "paris", "Paris", "TEXT", UNSURE),
    ("text-alias", FRANCE, "The answer is Paris, France.", "Paris | Paris, France", "TEXT", PAID),
    ("option-text-alone", RED, "blood", "A", "MULTIPLE_CHOICE", PAID),
    ("text-then-letter", RED, "blood (A)", "A", "MULTIPLE_CHOICE", PAID),
    ("several-letters", "Which are primary colours? (A) red (B) green (C) blue", "A and C", "AC", "MULTIPLE_CHOICE", PAID),
    ("expression-chain", SIMPLIFY, "2x + 2x = 4x", "4x", "MATH_EXPRESSIONS", PAID),
    ("named-function", SIMPLIFY, "\\boxed{f(x) = 4x}", "4x", "MATH_EXPRESSIONS", PAID),
    ("relation-reference", "Solve (x-2)(x-3) = 0.", "The answer is $x = 3, x = 2$.", "x = 2, x = 3", "MATH_EXPRESSIONS", PAID),
    ("boxed-number", SIX_SEVEN, "So the answer is \\boxed{42}.", "42", "NUMBER", PAID),
    ("steps-then-bare-box", "What is 45 + 45?", "Step 1: 45 + 45 = 90\nStep 2: 90 - 45 = 45\n\\boxed{90}", "90", "NUMBER", PAID),
    ("bold-steps-then-answer", SIX_SEVEN, "**Step 1:** multiply\n**Step 2:** check\n**42**", "42", "NUMBER", UNSURE),
    ("code-then-answer", SIX_SEVEN, "```python\nprint(6 * 7)\n```\nThe answer is 42.", "42", "NUMBER", PAID),
    ("fraction-for-a-decimal", "What is 3 / 4?", "The answer is 3/4", "0.75", "NUMBER", PAID),
    ("decimal-for-a-third", "What is 1/3?", "0.3333", "1/3", "NUMBER", UNSURE),
    ("fine-reference-tolerance", "What is pi?", "The answer is 3.141592654", "3.14159265", "NUMBER", UNSURE),
    ("finer-than-a-price", "Three lamps at $41.15: the total in dollars?", "The answer is 123.454", "123.45", "NUMBER", UNSURE),
    ("percent-asked-fraction-given", "What percent of 80 is 20?", "The answer is 0.25.", "25%", "NUMBER", UNSURE),
    ("unit-first-word-of-a-rate", "A car covers 150 km in 3 hours. What is its speed in km/h?", "The answer is 50 km.", "50", "NUMBER", UNSURE),
    ("unit-last-word-of-an-area", "A yard is 10 feet by 12 feet. How many square feet is it?", "The answer is 120 feet.", "120", "NUMBER", UNSURE),
    ("unit-before-per", "How fast does it flow, in liters per minute?", "\\boxed{12 \\text{ liters}}", "12", "NUMBER", UNSURE),
    ("unit-whole", "A yard is 10 feet by 12 feet. How many square feet is it?", "The answer is 120 square feet.", "120", "NUMBER", PAID),
    ("fine-reference-coarser-answer", "What is pi?", "The answer is 3.14159", "3.14159265", "NUMBER", UNSURE),
    ("rounded-reference-truncated", "What is 1/7 to 10 places?", "The answer is 0.1428571428.", "0.1428571429", "NUMBER", ZERO),
    ("one-option", RED, "The answer is (A).", "A", "MULTIPLE_CHOICE", PAID),
    ("boxed-expression", SIMPLIFY, "$\\boxed{4x}$", "4x", "MATH_EXPRESSIONS", PAID),
    ("letter-and-its-own-text", RED, "The answer is (A) blood.", "A", "MULTIPLE_CHOICE", PAID),
    ("hyphenated-reference", FRANCE, "The answer is Saint-Denis", "Saint-Denis", "TEXT", PAID),
    ("named-equation", SIMPLIFY, "$\\boxed{y = 4x}$", "4x", "MATH_EXPRESSIONS", PAID),
    ("multi-word-reference", FRANCE, "Answer: New York", "New York", "TEXT", PAID),
    # Round 8 (blind): a unit or "$" the question names where it does not ask for it, a case
    # change, a doubled article, a subject that is only the start of what is asked.
    ("unit-from-an-in-clause", "Tom packs apples in boxes. How many apples does he pack in boxes each morning?", "The answer is 42 boxes.", "42", "NUMBER", UNSURE),
    ("unit-multiplier-from-another-sentence", "Eggs are sold in dozens. How many eggs does Ann have if she has 6 bowls of 7 eggs?", "#### 42 dozens", "42", "NUMBER", UNSURE),
    ("unit-counted", "Tom packs apples in boxes. How many apples does he pack each morning?", "The answer is 42 apples.", "42", "NUMBER", PAID),
    ("unit-from-an-instruction", "How long does the trip take? Give your answer in minutes.", "The answer is 42 minutes.", "42", "NUMBER", PAID),
    ("dollar-named-elsewhere", "The dollar store sells pencils in packs of 6. How many pencils are in 7 packs?", "The answer is $42.", "42", "NUMBER", UNSURE),
    ("dollar-for-how-much-of-a-thing", "Flour costs $2 a bag. How much flour does she need for 21 cakes?", "The answer is $42.", "42", "NUMBER", UNSURE),
    ("dollar-for-a-weight", "A bag costs $3. How much does the bag weigh, in grams?", "The answer is $42.", "42", "NUMBER", UNSURE),
    ("dollar-for-how-much-paid", "Apples cost $6 each. How much did he pay for 7?", "The answer is $42.", "42", "NUMBER", PAID),
    ("text-case-of-code", "What does Python print for 'HELLO'.lower()?", "$\\boxed{\\text{Hello}}$", "hello", "TEXT", UNSURE),
    ("text-capitalised-literal", "What does JSON.stringify(true) return?", "The answer is True.", "true", "TEXT", UNSURE),
    ("text-article-of-a-name", "Which band recorded the album 'Soul Mining'?", "The answer is The.", "The The", "TEXT", UNSURE),
    ("text-doubled-article", "Which English word is used most?", "The answer is the the.", "the", "TEXT", UNSURE),
    ("subject-start-of-the-asked", "What is the area of the garden path?", "Thus, the area of the garden is \\boxed{42}.", "42", "NUMBER", UNSURE),
    ("subject-total-for-left", "Tom had 40 apples and gave 13 to his friend. How many apples does Tom have left?", "The total number of apples is \\boxed{27}.", "27", "NUMBER", UNSURE),
    ("subject-bare-value", "Compute the limit of sin(x)/x as x approaches 0.", "The limit is 1.", "1", "MATH_EXPRESSIONS", PAID),
    ("subject-bare-step-above", "What is the mean of 91, 84, 77 and 96?", "The sum of the scores is 348.\n\nThe answer is 87.", "87", "NUMBER", PAID),
    # Round 9 (probes): a subject cut off before a clause that changes what is asked, "current" for
    # a later age, a leading "the" that names something else.
    ("subject-cut-before-a-clause", "A class has 12 students, and 9 of them wear glasses. What is the number of students in the class who wear glasses?", "12 - 9 = 3.\n\nThe number of students in the class is 9.", "9", "NUMBER", UNSURE),
    ("subject-before-a-discount", "A shirt costs $50. What is the price of the shirt after a 20% discount?", "So\n\nThe price of the shirt is \\boxed{50}.", "50", "NUMBER", UNSURE),
    ("subject-current-for-later", "John is 12 now. What is John's age in 5 years?", "12 + 5 = 17.\n\nJohn's current age is \\boxed{17}.", "17", "NUMBER", UNSURE),
    ("subject-bare-before-a-clause", "What is the remainder when 2^10 is divided by 7?", "So\n\nThe remainder is \\boxed{2}.", "2", "NUMBER", PAID),
    ("text-added-article", "Which question word asks about a person?", "The answer is The Who.", "Who", "TEXT", UNSURE),
    ("text-dropped-article", "Which band recorded 'My Generation'?", "The answer is Who.", "The Who", "TEXT", UNSURE),
    ("finer-than-a-short-reference", "What is 10/3?", "The answer is 3.3333.", "3.33", "NUMBER", UNSURE),
    ("fraction-for-a-short-reference", "What is 2/3 as a decimal?", "The answer is 2/3.", "0.67", "NUMBER", UNSURE),
    # Round 10: a name for an expression of the letter asked states a false value of the letter.
    ("name-for-its-square", "If $x = 3$, what is the value of $x^2$?", "\\boxed{x = 9}", "9", "NUMBER", UNSURE),
    ("name-for-a-sum", "If $3y = 12$, what is $y + 10$?", "\\boxed{y = 14}", "14", "NUMBER", UNSURE),
    ("name-for-a-multiple", "Given $2a + 4 = 10$, find $2a$.", "The answer is $a = 6$.", "6", "NUMBER", UNSURE),
    ("name-for-a-math-multiple", "If $y = x^2$, what is $2y$ in terms of $x$?", "\\boxed{y = 2x^2}", "2x^2", "MATH_EXPRESSIONS", UNSURE),
    ("name-of-its-own-for-the-square", "If $x = 3$, what is the value of $x^2$?", "\\boxed{y = 9}", "9", "NUMBER", PAID),
    # ... TeX whose commands the completion defines again, and a unit the question declines.
    ("redefined-box", SIX_SEVEN, "$\\renewcommand{\\boxed}[1]{\\fbox{$#1 - 1$}}$\n\nThe answer is $\\boxed{42}$.", "42", "NUMBER", UNSURE),
    ("redefined-fraction", "What is half of 1?", "$\\def\\frac#1#2{#2/#1}$\n\n\\boxed{\\frac{1}{2}}", "1/2", "NUMBER", UNSURE),
    ("unit-declined", "A job takes 42 hours. How many hours does it take? Please don't answer in minutes.", "\\boxed{42 \\text{ minutes}}", "42", "NUMBER", UNSURE),
    ("unit-of-two-named", "A pole is 42 meters long. What is its length in meters (not in feet)?", "The answer is 42 feet.", "42", "NUMBER", UNSURE),
    ("unit-asked-by-an-instruction", "A job takes 42 hours. How long is the job? Please give your answer in hours.", "The answer is 42 hours.", "42", "NUMBER", PAID),
    # ... right answers the rule refused: an equation arranged otherwise, radians for degrees.
    ("equation-sides-swapped", "Find the line with slope 2 and intercept 1.", "\\boxed{2x + 1 = y}", "y = 2x + 1", "MATH_EXPRESSIONS", UNSURE),
    ("equation-rearranged", "Solve $3x = 6$.", "\\boxed{x - 2 = 0}", "x = 2", "MATH_EXPRESSIONS", UNSURE),
    ("radians-for-degrees", "How large is a right angle?", "\\boxed{\\frac{\\pi}{2}}", "90^\\circ", "MATH_EXPRESSIONS", UNSURE),
    ("equation-value-differs", "Solve $3x = 6$.", "\\boxed{x = 3}", "x = 2", "MATH_EXPRESSIONS", ZERO),
    # Round 11: an ellipsis ends no sentence; a block that shows nothing hides no lead-in.
    ("lead-in-trails-off", SIX_SEVEN, "It is not...\n\\boxed{42}", "42", "NUMBER", UNSURE),
    ("lead-in-spaced-dots", SIX_SEVEN, "It is not. . .\n\\boxed{42}", "42", "NUMBER", UNSURE),
    ("phantom-period-between", SIX_SEVEN, "It is not\n$\\phantom{.}$\n\\boxed{42}", "42", "NUMBER", UNSURE),
    ("white-period-between", SIX_SEVEN, "It is not\n$\\color{white}.$\n\\boxed{42}", "42", "NUMBER", UNSURE),
    ("empty-display-between", SIX_SEVEN, "It is not\n$$\\vphantom{1}$$\n\\boxed{42}", "42", "NUMBER", UNSURE),
    ("empty-code-between", SIX_SEVEN, "It is not\n```\n```\n\\boxed{42}", "42", "NUMBER", UNSURE),
    ("link-definition-between", SIX_SEVEN, "It is not\n[//]: # (hidden).\n\\boxed{42}", "42", "NUMBER", UNSURE),
    ("display-with-words-above", SIX_SEVEN, "$$\\text{Total pens} = 6 \\times 7 = 42$$\n\\boxed{42}", "42", "NUMBER", PAID),
    ("display-of-words-only-above", SIX_SEVEN, "It is not\n$$\\text{(wrong)}$$\n\\boxed{42}", "42", "NUMBER", UNSURE),
    ("display-words-then-math", SIX_SEVEN, "\\[\\text{The following is not the answer, } x = 1\\]\n\\boxed{42}", "42", "NUMBER", UNSURE),
    ("aligned-display-above-header", SIX_SEVEN,
     "$$\n\\begin{aligned}\n\\text{Total} &= 6 \\times 7 \\\\\n&= 42\n\\end{aligned}\n$$\n\n### Final Answer\n$$\n\\boxed{42}\n$$", "42", "NUMBER", PAID),
    ("bold-label-then-formula-above-header", SIX_SEVEN, "- **Total pens:** $6 \\times 7 = 42$\n\n### Final Answer\n$$\n\\boxed{42}\n$$", "42", "NUMBER", PAID),
    # ... a unit asked with a condition or beside another, a name followed by words, "a" as a letter.
    ("unit-with-a-condition", "A movie runs 42 minutes. How long is it? Give your answer in hours only if it is long.", "The answer is 42 hours.", "42", "NUMBER", UNSURE),
    ("unit-or-another", "A movie runs 42 minutes. How long is it in hours or minutes?", "The answer is 42 hours.", "42", "NUMBER", UNSURE),
    ("name-then-words", "If x is 21, what is x doubled?", "\\boxed{x = 42}", "42", "NUMBER", UNSURE),
    ("name-a-of-the-question", "A rectangle has sides $a = 6$ and $b = 7$. What is its area?", "The answer is $a = 42$.", "42", "NUMBER", UNSURE),
    ("name-of-a-point", "Point $P$ is $(6, 7)$. What is the product of the coordinates of $P$?", "The answer is $P = 42$.", "42", "NUMBER", UNSURE),
]  # fmt: skip


def _ids(table):
    return [row[0] for row in table]


def _outcome(verdict) -> str:
    if verdict.reason == "match":
        return PAID
    return UNSURE if verdict.reason == "unsure" else ZERO


@pytest.mark.parametrize(
    ("shape", "prompt", "completion", "answer", "answer_type", "expected"), SHAPES, ids=_ids(SHAPES)
)
def test_the_rule_reward_pays_only_with_proof(shape, prompt, completion, answer, answer_type, expected):
    verdict = grade(prompt, completion, answer, answer_type)
    assert (_outcome(verdict), verdict.reward) == (expected, 1.0 if expected == PAID else 0.0), (
        verdict.explanation
    )


def test_every_shape_is_named_once():
    assert len(set(_ids(SHAPES))) == len(SHAPES)


class _RejectingJudge(JudgeRewardSystem):
    """A judge that pays nothing: whatever the cascade leaves to it earns 0."""

    def _request_judge(self, request):
        return Verdict(score=0.0, explanation="rejected")


class _DeadJudge(JudgeRewardSystem):
    def _request_judge(self, request):
        raise JudgeUnavailableError("the judge is down")


def _items(table):
    return [{"prompt": p, "completion": c, "answer": a, "answer_type": t} for _, p, c, a, t, _ in table]


@pytest.fixture
def config(tmp_path):
    # No judge server and no start-up check: the judge is the subclass's _request_judge.
    return {"cache_dir": str(tmp_path / "cache"), "model": "m", "strategy": "cascade", "max_retries": 0,
            "startup_check": "off"}  # fmt: skip


def test_the_cascade_pays_only_proven_answers_with_a_judge_that_rejects_everything(config):
    with _RejectingJudge(config) as judge:
        results = judge.reward_batch(_items(SHAPES))
    got = {shape: (r["source"], r["reward"]) for (shape, *_), r in zip(SHAPES, results, strict=True)}
    paid = {shape: got[shape] for shape, *_, expected in SHAPES if expected == PAID}
    assert paid == dict.fromkeys(paid, ("rule", 1.0))
    unpaid = {
        shape: got[shape] for shape, *_, expected in SHAPES if expected != PAID and got[shape][1] != 0.0
    }
    assert not unpaid
    # "unsure" is the judge's: the cascade asks it (unless a pre-check decided first).
    kept_by_rule = [
        shape
        for (shape, *_, expected), r in zip(SHAPES, results, strict=True)
        if expected == UNSURE and r["source"] == "rule" and r["reason"] == "cascade"
    ]
    assert not kept_by_rule


def test_the_fallback_pays_only_proven_answers_when_the_judge_is_down(config):
    with _DeadJudge({**config, "strategy": "judge", "circuit_breaker_threshold": 1000}) as judge:
        results = judge.reward_batch(_items(SHAPES))
    assert {r["source"] for r in results} <= {"rule_fallback", "rule"}  # "rule": a pre-check decided
    paid = {shape for (shape, *_), r in zip(SHAPES, results, strict=True) if r["reward"] != 0.0}
    assert paid == {shape for shape, *_, expected in SHAPES if expected == PAID}


def test_an_unsure_rule_pays_the_configured_unsure_reward_when_the_judge_is_down(config):
    settings = {**config, "strategy": "judge", "rules": {"unsure_reward": 0.25}}
    with _DeadJudge(settings) as judge:
        result = judge.reward("Is 7 prime? Answer yes or no.", "Yes. No.", "yes", "TEXT")
    assert result["source"] == "rule_fallback" and result["reward"] == 0.25
    assert "not a canonical TEXT answer" in result["explanation"]


@pytest.mark.parametrize(
    ("rel_tol", "completion", "proven"),
    [
        (1e-4, "3.141592654", False),  # may be what the reference rounds: the judge's
        (1e-4, "3.14159264", True),  # as fine as the reference, and another value
        (1e-4, "3.1416", False),  # the reference may round to it
        (1e-2, "3.1416", False),
        (1e-2, "3.141592653589", False),
    ],
    ids=["finer-and-rounds-to-it", "a-near-miss", "coarser", "coarser-at-a-loose-setting", "much-finer"],
)
def test_a_reference_that_may_be_rounded_is_paid_only_as_written(rel_tol, completion, proven):
    verdict = grade("What is pi?", completion, "3.14159265", "NUMBER", RuleSettings(rel_tol=rel_tol))
    assert (verdict.reward, verdict.proven) == (0.0, proven), verdict.explanation


@pytest.mark.parametrize(
    ("answer", "completion"),
    [
        ("1000000", "999950"),
        ("86400", "86399"),
        ("0.5", "0.50001"),
        ("1/2", "0.50001"),
        ("1.5 million", "1500001"),
    ],
    ids=["integer", "integer-count", "coarse-decimal", "finite-fraction", "scaled-integer"],
)
def test_exact_references_ignore_even_a_loose_tolerance(answer, completion):
    verdict = grade("q", completion, answer, "NUMBER", RuleSettings(rel_tol=0.01))
    assert verdict.reward == 0.0, verdict.explanation


@pytest.mark.parametrize(
    "unit",
    [
        "answer: 41 ",
        "The answer is 41. ",
        " or 41",
        "~~4",
        "**41** ",
        "?",
        "| a |\n",
        "but ",
        "≠ ",
        "$x$ ",
        "41\n",
    ],
)
def test_the_proof_checks_take_linear_time_before_a_right_answer(unit):
    """A right answer after a long run sends every proof check over the run (a hang detector)."""
    run = unit * (200_000 // len(unit))
    settings = RuleSettings(max_completion_chars=1_000_000)
    started = time.monotonic()
    for answer_type, answer, ending in (
        ("NUMBER", "42", "The answer is 42."),
        ("TEXT", "Paris", "The answer is Paris."),
        ("MATH_EXPRESSIONS", "2x", "\\boxed{2x}"),
        ("MULTIPLE_CHOICE", "A", "Answer: A"),
    ):
        assert grade("q", f"{run}\n{ending}", answer, answer_type, settings).reason
    assert time.monotonic() - started < 30.0  # quadratic here would take minutes
