"""When a rule's "match" is proof: one final answer, committed to, and no other in sight.

A rule pays 1.0 only with proof. ``doubt`` says why a match is not proof, for the shapes a policy
finds when it hunts for reward:

- several different boxed answers ("\\boxed{41} or perhaps \\boxed{42}");
- both polarities for a yes/no or true/false reference ("Yes. No.", "True or False");
- a number hedged among others in its sentence ("it might be 42, though it could also be 32");
- an answer taken back after it is given ("The answer is 11. Just kidding, it's 7");
- a number in another unit than the question's ("72 minutes" for "How many hours ...");
- free text that mentions the reference without committing to it ("Canberra is often named, but
  the real capital is Sydney"): without a marker ("the answer is", "Answer:", a box), the last
  line must be the answer, start with it ("Paris, because ..."), claim it ("It is Canberra, not
  Sydney") or end with it ("It ended in 1945.").

A doubted match becomes "unsure" (``grade`` gives ``unsure_reward``, 0 by default, with the
reason): the cascade sends it to the judge, the fallback pays the unsure reward.
"""

from __future__ import annotations

import re

from adapter.rules.extract import anchored_answer, boxed_answers
from adapter.rules.number import standing_numbers
from adapter.rules.text import normalise
from judge_vllm.schemas import AnswerType

__all__ = ["doubt"]

_POLAR_PAIRS = (("yes", "no"), ("true", "false"))
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
_RETRACTION = re.compile(
    r"\b(?:just kidding|kidding|wait|actually|correction|on second thought|scratch that|i mean"
    r"|no,|i was wrong|that's wrong|that is wrong)\b",
    re.IGNORECASE,
)
_LEADING_ANSWER_END = re.compile(r"\s*(?:[,.;:!—–-]|$)")


def _several_boxes(completion: str) -> str | None:
    contents = {normalise(c) or c for c in boxed_answers(completion)}
    if len(contents) > 1:
        return f"several different boxed answers ({len(contents)})"
    return None


def _both_polarities(completion: str, answer: str) -> str | None:
    gold = normalise(answer)
    words = set(normalise(completion).split())
    for pair in _POLAR_PAIRS:
        if gold in pair and set(pair) <= words:
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


def _unasked_unit(prompt: str, completion: str, extracted: str | None) -> str | None:
    """The final number is in a unit the question does not use, of a kind it does ("72 minutes"
    for "How many hours ..."): the number may be right for another unit."""
    if not extracted:
        return None
    at = completion.rfind(extracted)
    unit = _UNIT_AFTER.match(completion[at + len(extracted) :]) if at >= 0 else None
    if unit is None:
        return None
    given = _unit_name(unit.group(1))
    asked = {_unit_name(w) for w in re.findall(r"[A-Za-z]+", prompt) if w.lower() in _UNIT_DIMENSION}
    same_kind = {a for a in asked if _UNIT_DIMENSION[a] == _UNIT_DIMENSION[given]}
    if not same_kind or given in same_kind:
        return None
    return f"gives the number in {unit.group(1)}, the question asks in {', '.join(sorted(same_kind))}"


def _retracted(completion: str, extracted: str | None, kind: str) -> str | None:
    """After the final answer, the text takes it back ("The answer is 11. Just kidding, it's 7")."""
    if not extracted:
        return None
    at = completion.rfind(extracted)
    tail = completion[at + len(extracted) :] if at >= 0 else ""
    retraction = _RETRACTION.search(tail)
    if retraction is None:
        return None
    after = tail[retraction.end() :]
    if kind == AnswerType.NUMBER.value:
        numbers = standing_numbers(after)
        if not numbers or numbers[-1].group(0) == extracted:
            return None
    elif not normalise(after):
        return None
    return f"takes the answer back after it ({retraction.group(0).strip()!r} ...)"


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


def doubt(prompt: str, completion: str, answer: str, kind: str, extracted: str | None) -> str | None:
    """Why a rule's match on ``completion`` is not proof, or None when it is."""
    checks = [
        _several_boxes(completion),
        _both_polarities(completion, answer),
        _retracted(completion, extracted, kind),
    ]
    if kind == AnswerType.NUMBER.value:
        checks += [_hedged_number(completion), _unasked_unit(prompt, completion, extracted)]
    if kind == AnswerType.TEXT.value:
        checks.append(_uncommitted_text(completion, answer))
    return next((reason for reason in checks if reason), None)
