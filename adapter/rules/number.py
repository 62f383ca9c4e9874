"""Numbers in answers: parsing every common notation, and picking the final one."""

from __future__ import annotations

import math
import re

__all__ = ["final_number_text", "numbers_equal", "parse_number"]

_NUM = r"(?<![A-Za-z])(?:[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+)"
_DECIMAL_COMMA = re.compile(r"^[-+]?\d+,\d{1,2}$|^[-+]?0,\d+$")
_SPACED_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(?: \d{3})+(?:\.\d+)?$")
_NUMBER = re.compile(_NUM)
_FRAC = re.compile(r"^([-+]?)\\[dt]?frac\s*\{\s*(" + _NUM + r")\s*\}\s*\{\s*(" + _NUM + r")\s*\}$")
_SLASH = re.compile(r"^(" + _NUM + r")\s*/\s*(" + _NUM + r")$")
_TIMES_TEN = re.compile(r"^(" + _NUM + r")\s*(?:\\times|\\cdot|×|x|\*)\s*10\s*\^\s*\{?\s*([-+]?\d+)\s*\}?$")
_TEXT_CMD = re.compile(r"\\(?:text|mathrm|textbf|mbox)\s*\{([^{}]*)\}")
_UNITS = re.compile(r"(?<=[\d.])\s*(?:[a-zA-Z°]+(?:/[a-zA-Z]+)?\^?\d?|degrees?)\.?$")
_NEGATED_AFTER = re.compile(
    r"^\s*(?:would be|is|are|was|will be)?\s*(?:wrong|incorrect|not\b)|^\s*is not\b", re.IGNORECASE
)
_NEGATED_BEFORE = re.compile(r"(?:\bnot|\bisn't|\bnever|\bno)\s*$", re.IGNORECASE)
_HEDGE = re.compile(r"\b(?:or|either)\b", re.IGNORECASE)
# A number as it stands in running text: a LaTeX fraction, scientific notation, or plain.
_TOKEN = re.compile(
    r"[-+]?\\[dt]?frac\s*\{\s*(?:" + _NUM + r")\s*\}\s*\{\s*(?:" + _NUM + r")\s*\}"
    r"|(?:" + _NUM + r")\s*(?:\\times|\\cdot|×)\s*10\s*\^\s*\{?\s*[-+]?\d+\s*\}?"
    r"|(?:" + _NUM + r")\s*/\s*(?:" + _NUM + r")(?![\d/])"
    r"|[-+]?\d+,\d{1,2}(?![\d,])"
    r"|(?:" + _NUM + r")"
)


def _clean(text: str) -> str:
    text = _TEXT_CMD.sub(r"\1", text)
    text = text.replace("−", "-").replace("\\!", "").replace("\\,", "").replace("\\ ", " ")
    text = text.replace("\\%", "%").replace("{,}", ",")
    text = re.sub(r"\\?[$€£¥]|dollars?|USD", " ", text)
    text = text.strip().rstrip(".;:").strip()
    while len(text) > 1 and text[0] + text[-1] in ("{}", "()", "[]") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"{": 1, "(": 1, "[": 1, "}": -1, ")": -1, "]": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def parse_number(text: str) -> tuple[float, bool] | None:
    """(value, is_percent) for a string that is one number in any common notation, else None."""
    if not isinstance(text, str) or len(text) > 200:
        return None
    s = _clean(text)
    percent = s.endswith("%")
    s = s.rstrip("%").strip()
    if _SPACED_THOUSANDS.match(s):
        s = s.replace(" ", "")
    comma = _DECIMAL_COMMA.match(s)
    if comma:  # "1000,99", "0,111": a decimal comma, not a thousands separator
        s = s.replace(",", ".")
    if not re.fullmatch(_NUM, s):
        s = _UNITS.sub("", s).strip()
    for pattern, build in (
        (_FRAC, lambda m: (-1 if m.group(1) == "-" else 1) * _to_float(m.group(2)) / _to_float(m.group(3))),
        (_SLASH, lambda m: _to_float(m.group(1)) / _to_float(m.group(2))),
        (_TIMES_TEN, lambda m: _to_float(m.group(1)) * 10 ** int(m.group(2))),
    ):
        match = pattern.match(s)
        if match:
            try:
                return build(match), percent
            except ZeroDivisionError:
                return None
    if re.fullmatch(_NUM, s):
        value = _to_float(s)
        return (value, percent) if math.isfinite(value) else None
    return None


def _to_float(token: str) -> float:
    return float(token.replace(",", ""))


def numbers_equal(gold: str, pred: str, rel_tol: float, abs_tol: float) -> bool:
    """True when both parse and agree within tolerance (a percent may stand for its fraction)."""
    g, p = parse_number(gold), parse_number(pred)
    if g is None or p is None:
        return False
    candidates_g = {g[0]} | ({g[0] / 100} if g[1] else set())
    candidates_p = {p[0]} | ({p[0] / 100} if p[1] else set())
    if g[1] != p[1]:  # "50%" vs "0.5"
        candidates_g |= {g[0] / 100} if g[1] else set()
        candidates_p |= {p[0] / 100} if p[1] else set()
    return any(
        math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol) for a in candidates_g for b in candidates_p
    )


def _standing_numbers(text: str) -> list[re.Match[str]]:
    """Numbers in running text that are not negated ("11 would be wrong", "not 11")."""
    kept = []
    for match in _TOKEN.finditer(text):
        if _NEGATED_AFTER.match(text[match.end() : match.end() + 24]):
            continue
        if _NEGATED_BEFORE.search(text[max(0, match.start() - 12) : match.start()]):
            continue
        kept.append(match)
    return kept


def final_number_text(text: str, anchored: str | None) -> str | None:
    """The text of the final number: the anchored answer if it holds one number, else the
    last number in the text that is not negated ("7, but 11 would be wrong" -> 7)."""
    if anchored is not None:
        if parse_number(anchored) is not None:
            return anchored
        numbers = _standing_numbers(anchored)
        if _HEDGE.search(anchored) and len({m.group(0) for m in numbers}) > 1:
            return None  # "3 or 4": no commitment
        if numbers:
            return _span_with_suffix(anchored, numbers[0])
        return None
    numbers = _standing_numbers(text)
    return _span_with_suffix(text, numbers[-1]) if numbers else None


def _span_with_suffix(text: str, match: re.Match[str]) -> str:
    """The number plus a trailing percent sign, if any."""
    tail = text[match.end() : match.end() + 4]
    return match.group(0) + ("%" if tail.lstrip().startswith(("%", "\\%")) else "")
