"""Free-text answers: normalised match, where a negated, hedged, revised or listed mention is wrong.

The reference counts when it appears (case, accents, punctuation and articles ignored) in a clause
that does not negate it ("It is not Paris", "Paris is wrong"), the answer does not hedge ("Paris or
London"), does not revise it ("Some say Paris, but it's actually Lyon") and is not a list of
candidates ("Paris, London, Berlin").
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalise", "text_match"]

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCT = re.compile(r"[^\w\s]")
_SPACES = re.compile(r"\s+")
_NEGATION = re.compile(r"\b(?:not|no|never|isnt|wasnt|arent|neither|nor)\s+(?:\w+\s+){0,2}$")
_NEGATED_AFTER = re.compile(
    r"^\s*(?:(?:is|was|are|were|would be|seems)\s+(?:not|never|wrong|incorrect|false|a wrong)\b"
    r"|(?:isnt|wasnt|arent)\b)"
)
_CLAUSES = re.compile(r"[,;:.!?]+|\bbut\b")
_HEDGE = re.compile(r"\b(?:or|either)\b")
_CONTRAST = re.compile(r"\b(?:but|however|instead)\b")
_CLAIM = re.compile(r"\b(?:its|it is|it was|answer|actually|correct|right|rather|instead)\b")
_LIST_SEPARATORS = re.compile(r"[,;/\n]|\bor\b|\band\b", re.IGNORECASE)
MIN_LIST_ITEMS = 3


def normalise(text: str) -> str:
    """Lowercase, no accents, punctuation or articles, single spaces."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    return _SPACES.sub(" ", _ARTICLES.sub(" ", _PUNCT.sub(" ", text))).strip()


def _is_list(gold: str, span: str) -> bool:
    """A list of short candidates ("Paris, London, Berlin"; "Paris London Berlin Madrid")."""
    budget = max(3, len(gold.split()) + 1)
    items = [normalise(item) for item in _LIST_SEPARATORS.split(span) if normalise(item)]
    if (
        len(items) >= MIN_LIST_ITEMS
        and normalise(gold) in items
        and all(len(i.split()) <= budget for i in items)
    ):
        return True
    words = span.split()
    capitalised = all(word[:1].isupper() or not word[:1].isalpha() for word in words)
    return capitalised and len(words) >= len(gold.split()) + MIN_LIST_ITEMS


def text_match(gold: str, span: str) -> tuple[bool, str]:
    """(match, why): the normalised reference appears in the answer span, not negated, hedged,
    revised or listed among other candidates."""
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
    revision = _CONTRAST.split(normalise(span.replace("'", "")))[-1]
    if revision != s.replace("'", "") and not pattern.search(revision) and _CLAIM.search(revision):
        return False, "revised"
    if _is_list(gold, span):
        return False, "listed"
    return True, "match"
