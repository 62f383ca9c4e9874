"""Multiple choice: the option letter(s) a completion commits to, and the options in a prompt."""

from __future__ import annotations

import re

from adapter.rules.extract import anchored_answer
from adapter.rules.text import normalise

__all__ = ["chosen_letters", "gold_letters", "parse_options"]

_LETTERS = "ABCDEFGHIJ"
_LETTER_SET = re.compile(r"^\(?([A-J])\)?(?:\s*(?:,|and|&|\s)\s*\(?([A-J])\)?)*[.)]?$")
_LOWER_SET = re.compile(r"^\(?([a-j])\)?[.)]?$")
_OPTION = re.compile(r"(?:^|\s|\n)\(?([A-J])[).:]\s*(.+?)(?=\s+\(?[A-J][).:]\s|\n|$)")
_STANDALONE = re.compile(
    r"(?<![A-Za-z])\(([A-J])\)|(?:^|\n)\s*([A-J])[).:]?\s*$|(?<![A-Za-z'])([A-J])\)"
    r"|(?:\bis|'s|\bchoose|\bpick|\bselect|\boption|\bchoice)\s+([A-J])\b(?![.']?[A-Za-z])"
)


def _letters_of(span: str) -> set[str] | None:
    """Letters if the span is only option letters: "C", "(C)", "A, B and D", "ABD", "c"."""
    span = span.strip().strip("*$").strip()
    if re.fullmatch(r"[A-J]{2,10}", span):
        return set(span)
    if _LETTER_SET.match(span):
        return set(re.findall(r"[A-J]", span))
    lower = _LOWER_SET.match(span)
    if lower:
        return {lower.group(1).upper()}
    head = re.match(r"^(?:\(([A-J])\)|([A-J])[.):])\s+\S", span)  # "(C) Paris" / "C. Paris"
    if head:
        return {head.group(1) or head.group(2)}
    return None


def parse_options(prompt: str) -> dict[str, str]:
    """Option letter -> option text, from "(A) text (B) text" or one option per line."""
    return {m.group(1): m.group(2).strip() for m in _OPTION.finditer(prompt)}


def gold_letters(answer: str) -> set[str]:
    """The reference letter(s): "C", "(C) Paris", "ABD", "A, B, D"."""
    return _letters_of(answer) or set()


def _by_option_text(span: str, prompt: str) -> set[str] | None:
    options = parse_options(prompt)
    said = normalise(span)
    found = {letter for letter, text in options.items() if normalise(text) and normalise(text) in said}
    # The longest option text wins when one contains another ("New York" vs "York").
    if len(found) > 1:
        longest = max(found, key=lambda letter: len(options[letter]))
        if all(normalise(options[letter]) in normalise(options[longest]) for letter in found):
            found = {longest}
    return found or None


def chosen_letters(completion: str, prompt: str) -> set[str] | None:
    """The option(s) the completion commits to, or None (no answer, or several without commitment)."""
    anchored = anchored_answer(completion)
    if anchored is not None:
        return _letters_of(anchored) or _by_option_text(anchored, prompt)
    lines = [line for line in completion.strip().splitlines() if line.strip()]
    if lines:
        last = _letters_of(lines[-1])
        if last is not None and len(lines[-1].strip()) <= 12:
            return last
    mentioned = {next(g for g in m.groups() if g) for m in _STANDALONE.finditer(completion)}
    if len(mentioned) == 1:
        return mentioned
    if not mentioned and lines:
        return _by_option_text(lines[-1], prompt)
    return None
