"""When a rule's "match" is proof: one final answer, committed to, and no other in sight.

A rule pays 1.0 only with proof. ``doubt`` says why a match is not proof, for the shapes a policy
finds when it hunts for reward:

- several different final answers: boxes ("\\boxed{41} or perhaps \\boxed{42}"), markers ("The
  answer is 41. The answer is 42.", "Answer: B\\nAnswer: A"), bold values ("**41** **42**"), or
  bare candidates on lines or in code blocks of their own ("41\\n42");
- both polarities for a yes/no or true/false reference ("Yes. No.", "True or False");
- a number hedged among others in its sentence ("it might be 42, though it could also be 32"),
  listed with others ("40, 41, 42"), with both signs ("±42"), as a bound ("at least 42", "42 or
  more"), with a subscript ("4₂": an index or a base), or in another unit than the question's
  ("72 minutes" for "How many hours ...");
- an answer taken back or given an alternative after it ("The answer is 11. Just kidding, it's
  7", "42 (or 41)", "42 if x = 1, otherwise 41", "Paris, unless it is Lyon");
- an answer taken back with nothing after it ("The answer is 42. Nope.", "Yes (not really)");
- a box that is an operand ("-\\boxed{42}", "\\boxed{42}^2", "\\frac{\\boxed{42}}{2}"), or an
  expression answer that relates two expressions ("\\boxed{2x = 4x}"; "y = 4x" names the answer);
- an answer asked, not stated ("Is it 42?", "Paris?");
- an answer negated ("It is not $4x$", "It is not the case that the answer is yes");
- free text that mentions the reference without committing to it ("Canberra is often named, but
  the real capital is Sydney"): without a marker ("the answer is", "Answer:", a box), the last
  line must be the answer, start with it ("Paris, because ..."), claim it ("It is Canberra, not
  Sydney") or end with it ("It ended in 1945."); and it must not list it among others ("Paris,
  London", "Paris and London", "**London** **Paris**").

A doubted match becomes "unsure" (``grade`` gives ``unsure_reward``, 0 by default, with the
reason): the cascade sends it to the judge, the fallback pays the unsure reward. Every check is
linear in the completion's length.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable

from adapter.rules.choice import letters_of
from adapter.rules.extract import anchored_answer, bold_spans, boxed_answers, last_box_at, marked_answers
from adapter.rules.number import committed_value, parse_number, standing_numbers
from adapter.rules.text import normalise
from judge_vllm.schemas import AnswerType

__all__ = ["doubt"]

_NUMBER = AnswerType.NUMBER.value
_TEXT = AnswerType.TEXT.value
_CHOICE = AnswerType.MULTIPLE_CHOICE.value
_MATH = AnswerType.MATH_EXPRESSIONS.value

_POLAR_PAIRS = (("yes", "no"), ("true", "false"))
# The other polarity as it is said: "Nope, yes" says no.
_POLAR_WORDS = {"yes": "yes|yeah|yep|yup", "no": "no|nope|nah", "true": "true", "false": "false"}
# What may follow a yes/no that stands as an answer: another answer, or a connective.
_POLAR_NEXT = "yes|no|true|false|or|and|but|maybe|perhaps|i|it|its|wait|actually|not|definitely|never"
_NUMBER_HEDGE = re.compile(r"\b(?:or|either|maybe|perhaps|possibly|might|could|probably)\b", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n")
_CLAIM_SEPARATOR = re.compile(r"\b(?:is|are|was|were|equals)\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,;:(]|\b(?:not|but|although|though|because|since|and)\b", re.IGNORECASE)
# Units by dimension: a number in one unit answers a question asked in another of the same kind
# ("72 minutes" for "How many hours ...") only by luck.
_DIMENSIONS = {
    "time": "second seconds sec secs minute minutes min mins hour hours hr hrs day days week weeks "
    "month months year years millisecond milliseconds ms",
    "length": "metre metres meter meters km kilometre kilometres kilometer kilometers cm centimetre "
    "centimetres centimeter centimeters mm millimetre millimetres millimeter millimeters mile miles "
    "foot feet ft inch inches yard yards",
    "mass": "gram grams kg kilogram kilograms mg milligram milligrams pound pounds lb lbs ounce ounces "
    "oz tonne tonnes ton tons",
    "volume": "litre litres liter liters ml millilitre millilitres milliliter milliliters gallon gallons",
}
_UNIT_DIMENSION = {word: dim for dim, words in _DIMENSIONS.items() for word in words.split()}
_SAME_UNIT = {"feet": "foot", "inches": "inch", "hrs": "hr", "secs": "sec", "mins": "min", "lbs": "lb"}
_UNIT_AFTER = re.compile(
    r"\s*(" + "|".join(sorted(_UNIT_DIMENSION, key=len, reverse=True)) + r")\b", re.IGNORECASE
)
# After the final answer: a retraction, an alternative, or a contrast.
_TAKEN_BACK = re.compile(
    r"\b(?:just kidding|kidding|wait|actually|correction|on second thought|scratch that|i mean"
    r"|no,|i was wrong|that's wrong|that is wrong"
    r"|or|otherwise|unless|alternatively|instead|rather|maybe|perhaps|possibly"
    r"|(?:could|might|may) (?:also )?be|but|however|though|although|yet|whereas"
    r"|(?:some|others|many|most)(?: \w+)? (?:say|says|think|claim|argue|believe))\b",
    re.IGNORECASE,
)
# After the final answer: a retraction that needs no other answer to take it back ("42. Nope.").
_RETRACTED = re.compile(
    r"\b(?:just kidding|jk|nope|not really|never ?mind|or not|scratch that|i was wrong|that's wrong"
    r"|that is wrong|(?:actually|wait),? no\b|no,? wait)",
    re.IGNORECASE,
)
_LEADING_ANSWER_END = re.compile(r"\s*(?:[,.;:!—–-]|$)")
# Where the sentence of the final answer ends: "?" (asked), or ".", "!", a line break (stated).
_SENTENCE_STOP = re.compile(r"\?|!|\n|\.(?!\d)")
_LEADING_NUMBER = re.compile(r"\s*[-+−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?%?(?![\d.,])")
_STOP_RUN = re.compile(r"[.!?…]+")
_NEGATED_BEFORE = re.compile(
    r"(?:(?:\bnot|n't|\bnever|\bno|\bnicht|\bpas|\bnon|\bnão|\bnao|\bне|不是|不)\s*"
    r"(?:equal to|equals?|be|es|est|ist|è|é|era|sind|sont|son)?"
    r"|\bexcept|\bother than|\banything but|\bexcluding|\bapart from|≠|\\neq?\b|!=|=/=)"
    r"\s*(?:\$|\\\(|\\\[|\\boxed\{)*\s*$",
    re.IGNORECASE,
)
# Right after the answer: a verdict against it ("42 (wrong)", "Paris ❌").
_NEGATED_AFTER = re.compile(
    r"[\s$*)]*(?:\\text\s*\{\s*)?(?:[(\[,;:—–-]|\.{2,}|…|(?:is|was)\s)?\s*"
    r"(?:wrong|incorrect|false|not (?:correct|right|it|true)|not\s*(?:[.!]|$)|nope|no\b|❌|✗|✘|❎|🚫)",
    re.IGNORECASE,
)
_SENTENCE_NEGATION = re.compile(
    r"\b(?:not the case|false that|not true that|untrue that|(?:wrong|incorrect|not correct) to say)\b",
    re.IGNORECASE,
)
_BOTH_SIGNS = re.compile(r"(?:±|∓|\\pm|\\mp|\+/-|\+-|-/\+)\s*\$?\s*$")
_BOUND_BEFORE = re.compile(
    r"(?:\b(?:at least|at most|more than|less than|fewer than|greater than|no more than|no less than"
    r"|over|under|above|below|up to|beyond|exceeds?)|[<>≤≥≦≧]=?|\\[gl]eq?|\\[gl]t|\\geqslant|\\leqslant)"
    r"\s*\$?\s*$",
    re.IGNORECASE,
)
_BOUND_AFTER = re.compile(
    r"^\s*(?:\+(?!\s*[\d(\\])|\+\s*(?:\\(?:var)?epsilon|\\delta|\\eps\b|ε|δ)|or (?:more|less|fewer|greater|higher|lower|above|below|so|over|under)\b"
    r"|and (?:up|above|over|more|below|less)\b|at (?:least|most)\b|plus\b|-?ish\b)",
    re.IGNORECASE,
)
# A root or function applied to the number ("√42", "\\sqrt{42}", "\\log 42"): another value.
_OPERATOR_BEFORE = re.compile(
    r"(?:[√∛∜]|\\(?:sqrt|log|ln|lg|exp|sin|cos|tan|arcsin|arccos|arctan)\b)\s*(?:\[\d+\])?\s*[{(]?\s*$"
)
# A box that is an operand, not the answer: "-\\boxed{42}", "\\frac{\\boxed{42}}{2}", "\\boxed{42}^2",
# "\\boxed{42}!", "\\boxed{42}0" (what is boxed is not what the completion gives).
_BOX_OPERAND_BEFORE = re.compile(
    r"(?:[-+*/^_!√{]|\d|\\(?:sqrt|frac|dfrac|tfrac|times|cdot|div|log|ln|exp|sin|cos|tan)\b\s*(?:\[\d+\])?)"
    r"\s*$"
)
_BOX_OPERAND_AFTER = re.compile(r"\s*(?:[\^_!%/*{\d]|\\(?:%|(?:times|cdot|div|circ)\b))")
# An expression equated to another ("\\boxed{2x = 4x}", "4x \\approx 2x"): a name on the left
# ("y = 4x", "f(x) = 4x") states the answer, anything else may be either side.
_RELATION = re.compile(r"=|\\approx\b|≈|\\sim\b|\\equiv\b")
_NAME = r"[A-Za-z](?:_\{?\w+\}?)?"
_NAME_ON_THE_LEFT = re.compile(rf"\s*(?:{_NAME}(?:\([^()]*\))?|\(\s*{_NAME}(?:\s*,\s*{_NAME})+\s*\))\s*")
_JOINER = re.compile(r"\\q?quad\b|\\text\s*\{\s*(?:and|or)\s*\}|\band\b")
# The number goes on in words ("42 and a half", "42 point 5") or below zero: it is another value.
_CONTINUED_AFTER = re.compile(
    r"^\s*(?:and (?:a |one )?(?:half|quarter|third|fourth|fifth)s?\b|point \w|(?:\w+ )?below zero\b|[-\s]?bce?\b"
    r"|π|\\pi\b)",
    re.IGNORECASE,
)
# "41 = 42": a number alone on the left of "=", at the start of its clause ("6 x 7 = 42" is work).
_EQUATED_BEFORE = re.compile(r"(?:^|[\n:;(]|[.!?]\s)[\s$]*([-+]?\d[\d,]*(?:\.\d+)?)\s*=\s*\$?\s*$")
_LISTED_BEFORE = re.compile(r"\d[\d.,]*\s*(?:[,;/&|]|\band\b|\s)\s*$", re.IGNORECASE)
_SUBSCRIPTED = re.compile(r"\d\s*_\s*\{")
_BOLD_LINE = re.compile(r"(?:\*\*[^*\n]+\*\*[\s,;/&]*){2,}")
_LATEX_SEGMENT = re.compile(r"\$[^$\n]+\$|\\\([^\n]+?\\\)|\\\[[^\n]+?\\\]")
_NEGATED_INSIDE = re.compile(r"\s*(?:≠|\\neq?\b|!=|=/=)")
_NEGATION_FIRST = re.compile(r"\s*(?:not|never|no)\b", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_TEXT_ITEMS = re.compile(r"[,;/&|\n–—()]|\.{2,}|…|(?<=\w)-(?=\w)|\s-\s|\*\*|\b(?:and|or|nor)\b", re.IGNORECASE)
_CLAUSE_WORDS = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|it|its|because|since|as|so|which|that|this|i)\b"
)
_WORD_CHAR = re.compile(r"\w")
# Capitalised words that may stand beside an answer without being part of its name.
_FUNCTION_WORDS = frozenset((
    "the", "a", "an", "it", "its", "is", "in", "at", "on", "of", "so", "thus", "therefore", "hence", "yes", "no",
    "i", "we", "my", "our", "this", "that", "answer", "final", "capital", "city", "country", "because", "since",
    "and", "or", "but",
))  # fmt: skip
_WORD = re.compile(r"[A-Za-z]{2,}")
MAX_CUE_CHARS = 300
_LIST_WINDOW = 16
_NEGATION_WINDOW = 24
MAX_CANDIDATE_WORDS = 3


def _several_boxes(completion: str) -> str | None:
    contents = {normalise(c) or c for c in boxed_answers(completion)}
    if len(contents) > 1:
        return f"several different boxed answers ({len(contents)})"
    return None


def _number_value(span: str) -> Hashable | None:
    value = committed_value(span)
    parsed = parse_number(value) if value is not None else None
    if parsed is not None:
        return round(parsed[0], 9)
    return re.sub(r"[\s$]", "", value) if value is not None else None


def _letters_value(span: str) -> Hashable | None:
    letters = letters_of(span)
    return frozenset(letters) if letters else None


def _math_value(span: str) -> Hashable | None:
    parsed = parse_number(span)
    if parsed is not None:
        return round(parsed[0], 9)
    side = re.sub(r"[\s$\"'`]|\\[,;!\"]", "", span).rsplit("=", 1)[-1]
    return side or None


def _bare_math_value(span: str) -> Hashable | None:
    """An expression with no word in it ("2x + 1", "\\frac{1}{2}"), else None."""
    return None if _WORD.search(re.sub(r"\\[A-Za-z]+", "", span)) else _math_value(span)


def _text_value(answer: str) -> Callable[[str], Hashable | None]:
    budget = max(MAX_CANDIDATE_WORDS, len(normalise(answer).split()) + 1)

    def value(span: str) -> Hashable | None:
        words = normalise(span)
        return words if words and len(words.split()) <= budget else None

    return value


def _value_of(kind: str, answer: str) -> Callable[[str], Hashable | None]:
    """What a marked answer commits to, comparable across spellings: a number's value, a set of
    letters, an expression without spaces, short normalised text; None when it commits to none."""
    if kind == _NUMBER:
        return _number_value
    if kind == _CHOICE:
        return _letters_value
    if kind == _MATH:
        return _math_value
    return _text_value(answer)


def _distinct(values: list[Hashable], kind: str) -> int:
    """How many different answers ``values`` are; for text, one that contains another is the same
    ("Paris" and "Paris, France")."""
    unique = list(dict.fromkeys(values))
    if kind != _TEXT:
        return len(unique)
    words = [f" {v} " for v in unique]
    return sum(not any(w != o and w in o for o in words) for w in words)


def _bold_list(completion: str) -> bool:
    """The last line is only bold spans ("**London** **Paris**"): a list, not emphasis in a sentence."""
    lines = completion.strip().rsplit("\n", 1)
    return bool(_BOLD_LINE.fullmatch(lines[-1].strip()))


def _several_answers(completion: str, answer: str, kind: str) -> str | None:
    """Markers (or, without any, bold spans) that give different answers."""
    spans = marked_answers(completion)
    value = _value_of(kind, answer)
    bold = not spans and (kind != _TEXT or _bold_list(completion))
    if bold:  # emphasis is an answer only when it is nothing else ("**42**", not "**Step 1**")
        spans = bold_spans(completion)
        value = _line_value(kind, answer) or _bare_math_value
    values = [v for v in map(value, spans) if v is not None]
    count = _distinct(values, kind)
    if count > 1:
        return f"gives {count} different {'bold' if bold else 'final'} answers"
    return None


def _line_value(kind: str, answer: str) -> Callable[[str], Hashable | None] | None:
    if kind == _NUMBER:
        return lambda line: None if (parsed := parse_number(line)) is None else round(parsed[0], 9)
    if kind == _CHOICE:
        return lambda line: _letters_value(line) if len(line) <= 12 else None
    if kind == _TEXT:
        return _text_value(answer)
    return None


def _text_candidate(line: str, answer: str) -> bool:
    """A line that reads as another text answer: capitalised as the reference is, no clause in it
    ("Lyon" after "The answer is Paris"; not "Hope this helps")."""
    return line[:1].isupper() == answer.strip()[:1].isupper() and not _CLAUSE_WORDS.search(line.lower())


def _candidate_lines(completion: str, answer: str, kind: str, extracted: str | None) -> str | None:
    """Lines (or code blocks, table rows) that are each only a candidate answer, not all the same:
    without a marker, any two ("41\\n42"; for text, when every line is one: "London\\nParis");
    with one, a last line that gives another answer than the marked one ("Answer: 42\\n41")."""
    value = _line_value(kind, answer)
    if value is None:
        return None
    lines = [line.strip().strip("`*$|- ").rstrip(".") for line in completion.splitlines()]
    lines = [line for line in lines if _WORD_CHAR.search(line) and not _FENCE.match(line)]
    if anchored_answer(completion) is not None:
        last = value(lines[-1]) if lines and (kind != _TEXT or _text_candidate(lines[-1], answer)) else None
        marked = value(extracted) if extracted else None
        if last is not None and marked is not None and _distinct([last, marked], kind) > 1:
            return "ends with another answer than the marked one"
        return None
    values = [value(line) for line in lines]
    if kind == _TEXT and None in values:
        return None
    count = _distinct([v for v in values if v is not None], kind)
    if count > 1:
        return f"lists {count} candidate answers on lines of their own"
    return None


def _both_polarities(completion: str, answer: str) -> str | None:
    """A yes/no (true/false) reference, and the completion also gives the other one as an answer:
    alone or before a connective ("Yes. No.", "True or False"), not as a determiner ("no divisors")."""
    gold = normalise(answer)
    words = normalise(completion)
    for pair in _POLAR_PAIRS:
        if gold in pair:
            other = pair[1] if gold == pair[0] else pair[0]
            if re.search(rf"\b(?:{_POLAR_WORDS[other]})\b(?:$|\s+(?:{_POLAR_NEXT})\b)", words):
                return f"says both {pair[0]!r} and {pair[1]!r}"
    return None


def _hedged_number(completion: str) -> str | None:
    """Without a marker: the sentence of the final number names other numbers and hedges."""
    if anchored_answer(completion) is not None:
        return None
    sentences = [s for s in _SENTENCES.split(completion.strip()) if standing_numbers(s)]
    if not sentences:
        return None
    last = sentences[-1]
    values = {m.group(0) for m in standing_numbers(last)}
    if len(values) > 1 and _NUMBER_HEDGE.search(last):
        return f"hedges between {len(values)} numbers"
    return None


def _unit_name(word: str) -> str:
    word = word.lower()
    return _SAME_UNIT.get(word, word[:-1] if word.endswith("s") and word[:-1] in _UNIT_DIMENSION else word)


def _unasked_unit(prompt: str, completion: str, at: tuple[int, int] | None) -> str | None:
    """The final number is in a unit the question does not use, of a kind it does ("72 minutes"
    for "How many hours ..."): the number may be right for another unit."""
    unit = _UNIT_AFTER.match(completion, at[1]) if at else None
    if unit is None:
        return None
    given = _unit_name(unit.group(1))
    asked = {_unit_name(w) for w in re.findall(r"[A-Za-z]+", prompt) if w.lower() in _UNIT_DIMENSION}
    same_kind = {a for a in asked if _UNIT_DIMENSION[a] == _UNIT_DIMENSION[given]}
    if not same_kind or given in same_kind:
        return None
    return f"gives the number in {unit.group(1)}, the question asks in {', '.join(sorted(same_kind))}"


def _number_shape(completion: str, extracted: str | None, at: tuple[int, int] | None) -> str | None:
    """The final number with both signs, as a bound, with a subscript, or in a list of numbers."""
    if extracted and _SUBSCRIPTED.search(extracted):
        return "the number has a subscript (an index or a base)"
    if at is None:
        return None
    before = completion[max(0, at[0] - _NEGATION_WINDOW) : at[0]]
    after = completion[at[1] : at[1] + _NEGATION_WINDOW]
    if _BOTH_SIGNS.search(before):
        return "gives the number with both signs"
    if _BOUND_BEFORE.search(before) or _BOUND_AFTER.match(after):
        return "gives a bound, not a value"
    if _OPERATOR_BEFORE.search(before) or (extracted and _OPERATOR_BEFORE.search(extracted)):
        return "applies an operation to the number (a root, a function)"
    if _LISTED_BEFORE.search(completion[max(0, at[0] - _LIST_WINDOW) : at[0]]):
        return "lists the number among others"
    if _CONTINUED_AFTER.match(after):
        return "the number goes on after it ('and a half', 'below zero')"
    equated = _EQUATED_BEFORE.search(completion, max(0, at[0] - _NEGATION_WINDOW), at[0])
    left, right = (parse_number(equated.group(1)), parse_number(extracted or "")) if equated else (None, None)
    if left is not None and right is not None and left[0] != right[0]:
        return "equates two different numbers"
    return None


def _last_at(text: str, needle: str) -> tuple[int, int] | None:
    """(start, end) of the last occurrence of ``needle`` in ``text`` that is not part of a longer
    word or number (case ignored), or None."""
    needle = needle.strip()
    if not needle:
        return None
    head = r"(?<![\w.])" if needle[0].isalnum() else ""
    # A number ends at its last digit ("42π", "42ish": what follows is checked as what follows it).
    tail = (r"(?!\d)" if needle[-1].isdigit() else r"(?![\w])") if needle[-1].isalnum() else ""
    last = None
    for last in re.finditer(head + re.escape(needle) + tail, text, re.IGNORECASE):  # noqa: B007
        pass
    return (last.start(), last.end()) if last else None


def _answer_at(completion: str, answer: str, kind: str, extracted: str | None) -> tuple[int, int] | None:
    """Where the final answer stands in the completion: the last mention of the reference (text),
    the last box or LaTeX segment (expressions), else the last mention of the extracted answer;
    None when none appears as written."""
    if kind == _TEXT:
        at = _last_at(completion, answer)
        if at is not None:
            return at
    if kind == _MATH:  # math-verify reads the last box, else the last LaTeX segment
        at = last_box_at(completion)
        last = None
        for last in _LATEX_SEGMENT.finditer(completion):  # noqa: B007 - the last one
            pass
        if at is None and last is not None:
            at = last.start(), last.end()
        if at is not None:
            return at
    at = _last_at(completion, extracted) if extracted else None
    lead = _LEADING_NUMBER.match(extracted or "") if kind == _NUMBER else None
    if at is not None and lead is not None:  # "42 BC": the number itself, then what follows it
        return at[0], at[0] + lead.end()
    return at


def _asked(completion: str, extracted: str | None, at: tuple[int, int] | None) -> str | None:
    """The sentence of the final answer is a question ("Is it 42?", "Paris?")."""
    if extracted and extracted.rstrip().endswith("?"):
        return "asks the answer instead of stating it"
    stop = _SENTENCE_STOP.search(completion, at[1]) if at else None
    run = _STOP_RUN.match(completion, stop.start()) if stop else None
    if run is not None and "?" in run.group(0):  # "42?", "42...?", "42?!"
        return "asks the answer instead of stating it"
    return None


def _other_answer(after: str, extracted: str, answer: str, kind: str) -> bool:
    """Whether ``after`` (the text after a retraction or alternative) names another answer."""
    if kind == _NUMBER:
        numbers = standing_numbers(after)
        if not numbers:
            return False
        last, given = parse_number(numbers[-1].group(0)), parse_number(extracted)
        return last is None or given is None or round(last[0], 9) != round(given[0], 9)
    if kind == _CHOICE:
        letters = set(re.findall(r"(?<![A-Za-z'])\(?([A-HJ])\)?(?![A-Za-z'])|\((I)\)", after))
        return bool({a or b for a, b in letters} - set(extracted))
    words = normalise(after)
    if not words:
        return False
    if kind == _TEXT:
        return f" {normalise(answer)} " not in f" {words} "
    math = [m.group(0) for m in _LATEX_SEGMENT.finditer(after)] + re.findall(r"\d[\d.,]*", after)
    expression = re.sub(r"[\s$]", "", extracted)
    return any(re.sub(r"[\s$]", "", m) not in (expression, "") for m in math)


def _cue_window(tail: str, start: int) -> str:
    """The sentence a cue opens: from ``start`` to the end of the first sentence with words in it
    ("Wait. No: 41." reads up to "41")."""
    words = _WORD_CHAR.search(tail, start, start + MAX_CUE_CHARS)
    if words is None:
        return ""
    stop = _SENTENCE_STOP.search(tail, words.start(), start + MAX_CUE_CHARS)
    return tail[start : stop.start() if stop else start + MAX_CUE_CHARS]


def _taken_back(
    completion: str, answer: str, kind: str, extracted: str | None, at: tuple[int, int] | None
) -> str | None:
    """In a sentence after the final answer, the text takes it back or offers another ("The
    answer is 11. Just kidding, it's 7", "42 (or 41)", "42 if x = 1, otherwise 41", "Paris, unless
    it is Lyon")."""
    if not extracted or at is None:
        return None
    tail = completion[at[1] :]
    for cue in _TAKEN_BACK.finditer(tail):
        after = _cue_window(tail, cue.end())
        if _other_answer(after, extracted, answer, kind):
            return f"takes the answer back or offers another after it ({cue.group(0).strip()!r} ...)"
    return None


def _box_operand(completion: str) -> str | None:
    """The last box is an operand of an expression around it ("-\\boxed{42}", "\\boxed{42}^2")."""
    box = last_box_at(completion)
    if box is None:
        return None
    before = re.sub(r"(?:\$|\\[(\[])+\s*$", "", completion[max(0, box[0] - _NEGATION_WINDOW) : box[0]])
    if _BOX_OPERAND_BEFORE.search(before) or _BOX_OPERAND_AFTER.match(completion, box[1]):
        return "the box is an operand of an expression around it"
    return None


def _top_level_parts(text: str) -> list[str]:
    """``text`` split at commas and semicolons outside brackets ("(x, y) = (5, 8), z = 1")."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char in "([{") - (char in ")]}")
        if char in ",;" and depth <= 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _false_equation(answer: str, kind: str, extracted: str | None) -> str | None:
    """An expression answer (to a reference that is no relation) that relates two expressions
    ("2x = 4x", "4x \\approx 2x"); a name on the left states the answer ("y = 4x", "(x, y) = ...")."""
    if kind != _MATH or not extracted or _RELATION.search(answer):
        return None
    for part in _top_level_parts(_JOINER.sub(",", extracted)):
        relation = _RELATION.search(part)
        if relation and not _NAME_ON_THE_LEFT.fullmatch(part[: relation.start()]):
            return "relates two expressions: either side may be the answer"
    return None


def _retracted(completion: str, at: tuple[int, int] | None) -> str | None:
    """After the final answer the text takes it back without offering another ("The answer is
    42. Nope.", "Answer: A. Just kidding.", "Yes!!! (not really)")."""
    cue = _RETRACTED.search(completion, at[1]) if at else None
    return f"takes the answer back after it ({cue.group(0)!r})" if cue else None


def _negated(completion: str, kind: str, extracted: str | None, at: tuple[int, int] | None) -> str | None:
    """The final answer is negated ("It is not $4x$", an expression read as "not 4x"), or its
    sentence is ("It is not the case that the answer is yes")."""
    if kind == _MATH and extracted and _NEGATION_FIRST.match(extracted):
        return "negates the answer"
    if extracted and _NEGATED_INSIDE.match(extracted):
        return "negates the answer"
    if at is None:
        return None
    before = completion[max(0, at[0] - _NEGATION_WINDOW) : at[0]]
    if _NEGATED_BEFORE.search(before) or _NEGATED_AFTER.match(completion, at[1], at[1] + _NEGATION_WINDOW):
        return "negates the answer"
    sentence_start = max(completion.rfind(stop, 0, at[0]) for stop in ".!?\n") + 1
    if _SENTENCE_NEGATION.search(completion, sentence_start, at[0]):
        return "negates the sentence that gives the answer"
    return None


def _uncommitted_text(completion: str, answer: str) -> str | None:
    """Without a marker, the last line must be the answer, lead with it, claim it after "is", or
    end with it (compared normalised: case, accents, punctuation and articles ignored)."""
    if anchored_answer(completion) is not None:
        return None
    gold = normalise(answer)
    lines = [line.strip() for line in completion.strip().splitlines() if line.strip()]
    if not gold or not lines:
        return None
    line = lines[-1]
    if normalise(line) == gold:
        return None
    lead = re.match(re.escape(answer.strip()), line, re.IGNORECASE)
    if lead and _LEADING_ANSWER_END.match(line[lead.end() :]):
        return None
    sentence = [s for s in _SENTENCES.split(line) if s.strip()][-1]
    claim = normalise(_CLAUSE_END.split(_CLAIM_SEPARATOR.split(sentence)[-1])[0])
    ending = normalise(sentence)
    if claim == gold or ending == gold or ending.endswith(" " + gold):
        return None
    return "mentions the reference without committing to it as the answer"


def _longer_name(answer: str, extracted: str | None) -> str | None:
    """The reference, capitalised, runs on into a capitalised word beside it: a longer name
    ("North Korea" for Korea, "New York" for York, "Paris Hilton" for Paris)."""
    gold = answer.strip()
    if not extracted or not gold[:1].isupper() or normalise(extracted) == normalise(gold):
        return None
    for mention in re.finditer(rf"(?<!\w){re.escape(gold)}(?!\w)", extracted, re.IGNORECASE):
        if not mention.group(0)[:1].isupper():
            continue
        before = re.search(r"(\w+)[^\S\n]+$", extracted[: mention.start()])
        after = re.match(r"[^\S\n]+(\w+)", extracted[mention.end() :])
        for word in (before, after):
            if word and word.group(1)[:1].isupper() and word.group(1).lower() not in _FUNCTION_WORDS:
                return f"the reference is part of a longer name ({word.group(1)!r} beside it)"
    return None


def _listed_text(answer: str, extracted: str | None) -> str | None:
    """The committed text is a list of short items, the reference one of them ("Paris, London",
    "Paris and London", "**London** **Paris**"). Items in another case than the reference's
    mention are remarks, not candidates ("Paris, obviously")."""
    gold = normalise(answer)
    if not extracted or not gold or _TEXT_ITEMS.search(answer) or normalise(extracted) == gold:
        return None
    raw = [item.strip(" \t*$.!") for item in _TEXT_ITEMS.split(extracted)]
    items = [(normalise(item), item) for item in raw if normalise(item)]
    if any(_CLAUSE_WORDS.search(words) for words, _ in items):
        return None  # "Yes, 7 is prime": an answer and a reason, not a list
    budget = max(MAX_CANDIDATE_WORDS, len(gold.split()) + 1)
    mention = next((item for words, item in items if words == gold), None)
    if mention is None or any(len(words.split()) > budget for words, _ in items):
        return None
    others = {
        words
        for words, item in items
        if words != gold
        and not words.startswith(("not ", "no "))
        and item[:1].isupper() == mention[:1].isupper()
    }
    if others:
        return f"lists the reference among {len(others) + 1} candidates"
    return None


def doubt(prompt: str, completion: str, answer: str, kind: str, extracted: str | None) -> str | None:
    """Why a rule's match on ``completion`` is not proof, or None when it is."""
    at = _answer_at(completion, answer, kind, extracted)
    checks: list[Callable[[], str | None]] = [
        lambda: _several_boxes(completion),
        lambda: _several_answers(completion, answer, kind),
        lambda: _candidate_lines(completion, answer, kind, extracted),
        lambda: _both_polarities(completion, answer),
        lambda: _asked(completion, extracted, at),
        lambda: _taken_back(completion, answer, kind, extracted, at),
        lambda: _retracted(completion, at),
        lambda: _box_operand(completion),
        lambda: _false_equation(answer, kind, extracted),
        lambda: _negated(completion, kind, extracted, at),
    ]
    if kind == _NUMBER:
        checks += [
            lambda: _hedged_number(completion),
            lambda: _number_shape(completion, extracted, at),
            lambda: _unasked_unit(prompt, completion, at),
        ]
    if kind == _TEXT:
        checks += [
            lambda: _uncommitted_text(completion, answer),
            lambda: _listed_text(answer, extracted),
            lambda: _longer_name(answer, extracted),
        ]
    return next((reason for reason in (check() for check in checks) if reason), None)
