"""Numbers in answers: parsing every common notation, and picking the one a completion commits to.

A number "stands" when it is not negated ("11 would be wrong", "not 11") and not an exponent or
index. It is "bare" when it is not part of a larger expression ("2x", "3\\pi", "\\sqrt{4}",
"2^3"); such expressions are returned whole, for a symbolic comparison.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from adapter.rules.extraction.anchors import trailing_expression

__all__ = ["committed_value", "final_number_text", "parse_number", "standing_numbers"]

_NUM = r"(?:[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+)"
_NUM_RE = re.compile(_NUM)
_DECIMAL_COMMA = re.compile(r"^[-+]?\d+,\d{1,2}$|^[-+]?0,\d+$")
_SPACED_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(?: \d{3})+(?:\.\d+)?$")
_FRAC = re.compile(
    r"^([-+]?)\\[dt]?frac\s*(?:\{\s*(" + _NUM + r")\s*\}\s*\{\s*(" + _NUM + r")\s*\}|(\d)\s*(\d))$"
)
_SLASH = re.compile(r"^(" + _NUM + r")\s*/\s*(" + _NUM + r")$")
_TIMES_TEN = re.compile(r"^(" + _NUM + r")\s*(?:\\times|\\cdot|×|x|\*)\s*10\s*\^\s*\{?\s*([-+]?\d+)\s*\}?$")
_MULTIPLIER = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_SCALED = re.compile(r"^(" + _NUM + r")\s*(thousand|million|billion|trillion)s?\b\s*(.*)$", re.IGNORECASE)
_TEXT_CMD = re.compile(r"\\(?:text|mathrm|textbf|textit|mbox|operatorname)\s*\{([^{}]*)\}")
_UNIT_WORDS = re.compile(
    r"\s*(?:[A-Za-zµ°Ω]+(?![A-Za-zµ°Ω])\.?(?:\s*\^\s*\{?-?\d\}?)?(?:\s*/\s*[A-Za-zµ°]+(?:\s*\^\s*\{?-?\d\}?)?)?\s*){1,4}"
)
# Words after a number that make it part of an expression or a claim, not a unit.
_MATH_WORDS = frozenset(
    re.findall(
        r"\w+",
        "pi sqrt root i e x y z n k t a b c d r times over plus minus divided squared cubed log ln sin cos "
        "tan or and to through between hundred dozen half halves third thirds quarter quarters "
        "is are was were be would not no never wrong incorrect false but if",
    )
)
_UNIT_LETTERS = frozenset("mgshLKVWJN")
_NEGATED_AFTER = re.compile(
    r"^\s*(?:(?:would be|is|are|was|will be)\s*)?(?:wrong|incorrect|not\b)|^\s*is not\b", re.IGNORECASE
)
_NEGATED_BEFORE = re.compile(r"(?:\bnot|\bisn't|\bnever|\bno)\s*$", re.IGNORECASE)
# A number as it stands in running text: a LaTeX fraction, scientific notation, or plain.
_TOKEN = re.compile(
    r"(?<![A-Za-z\d.])(?:"
    r"[-+]?\\[dt]?frac\s*\{\s*(?:" + _NUM + r")\s*\}\s*\{\s*(?:" + _NUM + r")\s*\}"
    r"|(?:" + _NUM + r")\s*(?:\\times|\\cdot|×)\s*10\s*\^\s*\{?\s*[-+]?\d+\s*\}?"
    r"|(?:" + _NUM + r")\s*/\s*(?:" + _NUM + r")(?![\d/])"
    r"|[-+]?\d+,\d{1,2}(?![\d,])"
    r"|(?:" + _NUM + r"))"
)
_EXPONENT_BEFORE = re.compile(r"[\^_]\s*\{?\s*$")
_EXPRESSION_BEFORE = re.compile(r"(?:[*/{]|\\(?!text|quad|qquad|approx|mbox|mathrm|sim)[A-Za-z]+)\s*$")
_EXPRESSION_AFTER = re.compile(
    r"^(?:\s*[\^*!_]|[(/]|\s*\\(?!text|mathrm|mbox|quad|qquad)[A-Za-z]|\s*(?:pi|sqrt|i)\b"
    r"|(?![" + "".join(sorted(_UNIT_LETTERS)) + r"])[A-Za-z](?![A-Za-z]))"
)
# Where the explanation after an anchored answer starts: "42 because ...", "7 (since ...)". Each
# branch starts only where a whitespace run starts (?<!\s): else every space of a long run would
# rescan the rest of the run.
_EXPLANATION = re.compile(
    r"(?<!\s)\s+(?:because|since|as|which|so|given|from|by|where|when|due|after|using|via|if|for|with|in)\b"
    r"|(?<!\s)\s*\(|(?<!\s)\s+(?:--|–|—)\s+|;\s*",
)
# A pair or interval "(1, 2]"; up to its first comma, so that no two .* compete for the commas.
_TUPLE = re.compile(r"[(\[][^\n,]*,.*[)\]]")
_VALUE_SIDE = re.compile(r"=|≈|\\approx|\\equiv")
_LEAD_WORDS = re.compile(
    r"^(?:(?:approximately|approx\.?|about|around|roughly|exactly|just|only|equal to|equals|is|of|"
    r"that|it is|it's|we get|we have)\s+)+",
    re.IGNORECASE,
)
_LIST = re.compile(r"\b(?:or|and|to|between|either|through|until|nor)\b|,\s|;|\d\s*[-–]\s*\d", re.IGNORECASE)




def _clean(text: str) -> str:
    text = _TEXT_CMD.sub(r" \1", text)
    text = text.replace("−", "-").replace("\\!", "").replace("\\,", "").replace("\\ ", " ")
    text = text.replace("\\%", "%").replace("{,}", ",").replace("\\left", "").replace("\\right", "")
    text = re.sub(r"\\?[$€£¥]|\bdollars?\b|\bUSD\b|\beuros?\b", " ", text)
    text = re.sub(r"\s+percent\b", "%", text, flags=re.IGNORECASE)
    text = text.strip().rstrip(".;:,").strip()
    while len(text) > 1 and text[0] + text[-1] in ("{}", "()", "[]") and _balanced(text[1:-1]):
        if text[0] != "{" and "," in text:
            break  # "(1,2)" is a pair or an interval, not the number 1.2
        text = text[1:-1].strip()
    return re.sub(r"^([-+])\s+(?=[\d.])", r"\1", text)


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"{": 1, "(": 1, "[": 1, "}": -1, ")": -1, "]": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _without_units(text: str) -> str:
    """ "5 cm^2" -> "5", "42 red apples" -> "42"; "2x", "3 pi", "4 or 5" are left as they are."""
    match = re.match(_NUM + r"(?:\s*/\s*" + _NUM + r")?", text)
    if not match or match.end() == len(text):
        return text
    rest = text[match.end() :]
    if not _UNIT_WORDS.fullmatch(rest):
        return text
    words = re.findall(r"[A-Za-zµ°Ω]+", rest)
    if any(word.lower() in _MATH_WORDS for word in words):
        glued_unit = not rest[0].isspace() and len(words) == 1 and words[0] in _UNIT_LETTERS
        if not glued_unit:
            return text
    if not rest[0].isspace() and len(words[0]) == 1 and words[0] not in _UNIT_LETTERS and words[0] != "°":
        return text  # "2x": a variable, not a unit
    return match.group(0)


def parse_number(text: str) -> tuple[float, bool] | None:
    """(value, is_percent) for a string that is one number in any common notation, else None."""
    if not isinstance(text, str) or len(text) > 200:
        return None
    s = _clean(text)
    percent = s.endswith("%")
    s = s.rstrip("%").strip()
    if _SPACED_THOUSANDS.match(s):
        s = s.replace(" ", "")
    if _DECIMAL_COMMA.match(s):  # "1000,99", "0,111": a decimal comma, not a thousands separator
        s = s.replace(",", ".")
    scale = 1.0
    scaled = _SCALED.match(s)
    if scaled and (not scaled.group(3) or _without_units("0 " + scaled.group(3)) == "0"):
        s, scale = scaled.group(1), _MULTIPLIER[scaled.group(2).lower()]
    s = _without_units(s)
    if s.endswith("%"):
        percent, s = True, s.rstrip("%").strip()
    value = _value(s)
    if value is None or not math.isfinite(value * scale):
        return None
    return value * scale, percent


def _value(s: str) -> float | None:
    builders: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], float]], ...] = (
        (
            _FRAC,
            lambda m: (
                (-1 if m.group(1) == "-" else 1) * _ratio(m.group(2) or m.group(4), m.group(3) or m.group(5))
            ),
        ),
        (_SLASH, lambda m: _ratio(m.group(1), m.group(2))),
        (_TIMES_TEN, lambda m: _to_float(m.group(1)) * 10.0 ** int(m.group(2))),
    )
    for pattern, build in builders:
        match = pattern.match(s)
        if match:
            try:
                return build(match)
            except (ZeroDivisionError, OverflowError):
                return None
    return _to_float(s) if _NUM_RE.fullmatch(s) else None


def _ratio(top: str, bottom: str) -> float:
    return _to_float(top) / _to_float(bottom)


def _to_float(token: str) -> float:
    return float(token.replace(",", ""))


def standing_numbers(text: str) -> list[re.Match[str]]:
    """Numbers in running text that are not negated ("11 would be wrong", "not 11") nor exponents."""
    kept = []
    for match in _TOKEN.finditer(text):
        before = text[max(0, match.start() - 24) : match.start()]
        if _EXPONENT_BEFORE.search(before):
            continue
        if _NEGATED_AFTER.match(text[match.end() : match.end() + 24]):
            continue
        if _NEGATED_BEFORE.search(before[-12:]):
            continue
        kept.append(match)
    return kept


def _is_bare(text: str, match: re.Match[str]) -> bool:
    """Not part of a larger expression: "2x", "3\\pi", "\\sqrt{4}", "2^3", "2(x+1)" are not bare."""
    before = text[max(0, match.start() - 24) : match.start()]
    after = text[match.end() : match.end() + 24]
    return not (_EXPRESSION_BEFORE.search(before) or _EXPRESSION_AFTER.match(after))


def _with_suffix(text: str, match: re.Match[str]) -> str:
    """The number plus a trailing percent sign or scale word ("1.5 million"), if any."""
    tail = text[match.end() : match.end() + 12]
    if tail.lstrip().startswith(("%", "\\%")):
        return match.group(0) + "%"
    scale = re.match(r"\s*(thousand|million|billion|trillion)\b", tail, re.IGNORECASE)
    return match.group(0) + (" " + scale.group(1) if scale else "")


def committed_value(span: str) -> str | None:
    """The number (or numeric expression) an anchored answer commits to; None for a list or hedge."""
    if parse_number(span) is not None:
        return span
    head = _EXPLANATION.split(span, maxsplit=1)[0].strip() or span
    head = _VALUE_SIDE.split(head)[-1].strip() or head
    head = _LEAD_WORDS.sub("", head).strip().strip("$").strip()
    if parse_number(head) is not None or _TUPLE.fullmatch(head):
        return head  # a tuple or interval "(1,2)" is compared whole
    numbers = standing_numbers(head)
    if not numbers:
        return None
    if len({m.group(0) for m in numbers}) > 1 or len(numbers) > 1:
        return None if _LIST.search(head) else head  # "3 or 4": no commitment; "2\sqrt{3}": symbolic
    return _with_suffix(head, numbers[0]) if _is_bare(head, numbers[0]) else head


def final_number_text(text: str, anchored: str | None) -> str | None:
    """The text of the final number: from the anchored answer if there is one (None if it commits
    to no single value), else the last standing number ("7, but 11 would be wrong" -> 7).
    A number inside an expression ("2\\sqrt{3}") gives the expression, for a symbolic check."""
    if anchored is not None:
        return committed_value(anchored)
    last_line = text.strip().rsplit("\n", 1)[-1].strip()
    if parse_number(last_line) is not None:
        return last_line
    numbers = standing_numbers(text)
    if not numbers:
        return None
    if _is_bare(text, numbers[-1]):
        return _with_suffix(text, numbers[-1])
    return trailing_expression(text)
