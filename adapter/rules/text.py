"""Free-text answers: normalised match, with negation ("not Paris") counted as wrong."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalise", "text_match"]

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCT = re.compile(r"[^\w\s]")
_SPACES = re.compile(r"\s+")
_NEGATION = re.compile(r"\b(?:not|no|never|isnt|wasnt|arent|neither|nor)\s+(?:\w+\s+){0,2}$")
_NEGATED_AFTER = re.compile(r"^\s*(?:is|was|are|were)\s+(?:not|never)\b|^\s*(?:isnt|wasnt|arent)\b")
_CLAUSES = re.compile(r"[,;:.!?]+|\bbut\b")
_HEDGE = re.compile(r"\b(?:or|either)\b")


def normalise(text: str) -> str:
    """Lowercase, no accents, punctuation or articles, single spaces."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    return _SPACES.sub(" ", _ARTICLES.sub(" ", _PUNCT.sub(" ", text))).strip()


def text_match(gold: str, span: str) -> tuple[bool, str]:
    """(match, why): the normalised reference appears in the answer span, not negated or hedged."""
    g, s = normalise(gold), normalise(span)
    if not g or not s:
        return False, "empty"
    if g == s:
        return True, "match"
    pattern = re.compile(rf"(?<!\w){re.escape(g)}(?!\w)")
    clauses = [normalise(c.replace("'", "")) for c in _CLAUSES.split(span.lower())]
    mentions = [(c, m) for c in clauses for m in pattern.finditer(c)]
    if not mentions:
        return False, "mismatch"
    if all(_NEGATION.search(c[: m.start()]) or _NEGATED_AFTER.match(c[m.end() :]) for c, m in mentions):
        return False, "negated"
    if _HEDGE.search(s) and len(s.split()) > len(g.split()) + 1:
        return False, "hedged"
    return True, "match"
