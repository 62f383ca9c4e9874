"""Multiple choice: the option letter(s) a completion commits to, and the options in a prompt.

A completion commits to letters through a marker ("Answer: C", "\\boxed{C}", "the correct option
is (C)"), a last line that is only letters ("C", "A, B and D"), one letter it affirms ("I choose C",
"so C.", "C is correct"), or the text of exactly one option of the prompt ("The capital is Rome"). A letter beside another
option's text ("The answer is sky (A)" where (B) is sky) gives no answer.
Negated letters ("not C", "(A) is wrong") do not count; several candidates without a commitment
("A or C", "(A) ... (B) ... (C)") give no answer.
"""

from __future__ import annotations

import re

from adapter.rules.extraction.anchors import anchored_answer
from adapter.rules.extraction.texts import text_match

__all__ = ["chosen_letters", "gold_letters", "letters_of", "parse_options"]

MAX_PROMPT_CHARS = 20_000
_WRAPPER = re.compile(r"\\(?:text|mathrm|textbf|mathbf|mbox)\s*\{([^{}]*)\}")
_LETTER_LIST = re.compile(r"[\s(),;&A-J]+")
_AND = re.compile(r"\band\b")
_LOWER_ONE = re.compile(r"\(?([a-j])\)?[.)]?")
_HEAD = re.compile(r"(?:\(([A-J])\)|([A-J])[.):])\s+\S")  # "(C) Paris" / "C. Paris"
_AFFIRMED_HEAD = re.compile(
    r"\(?([A-J])\)?\s+(?:is|would be|should be|seems)\s+(?:the\s+)?(?:correct|right|answer|best|valid|true)\b"
)
# The lookahead takes one space, not \s+: it runs after every character of the lazy (.+?), so \s+
# would rescan a long run of spaces once per character (the text is stripped afterwards).
_OPTION = re.compile(r"(?:^|\s)\(?([A-J])[).:]\s*(.+?)(?=\s\(?[A-J][).:]\s|\n|$)")
# A letter the completion affirms: "(C)", "C)", "is C", "choose C", "so C", "C is correct".
_AFFIRMED = re.compile(
    r"(?<![A-Za-z\\])\(([A-J])\)"
    r"|^[ \t]*\(?([A-J])[).:]?[ \t]*$"
    r"|^[ \t]*\(?([A-J])[).:]\s"
    r"|(?<![A-Za-z'\\(])([A-J])\)"
    r"|(?:\bis|'s|\bchoose|\bchose|\bpick|\bselect|\boption|\bchoice|\bso|\bthus|\btherefore|\bhence)"
    r"\s+\(?([A-J])\b(?![.']?[A-Za-z])"
    r"|(?<![A-Za-z'\\])([A-J])\s+(?:is|would be|should be)\s+(?:also\s+)?(?:the\s+)?(?:correct|right|answer|best|valid|true)\b",
    re.MULTILINE,
)
_NEGATED_BEFORE = re.compile(
    r"(?:\bnot|\bn't|\bnever|\bexcept|\bexclude|\brule out|\beliminate)\s*$", re.IGNORECASE
)
_NEGATED_AFTER = re.compile(
    r"^\s*(?:is|are|would be|seems)\s+(?:not\b|wrong|incorrect|false|impossible|ruled out)", re.IGNORECASE
)
_HEDGE = re.compile(r"\b(?:or|either|maybe|perhaps)\b", re.IGNORECASE)
_MARKED = re.compile(r"\(([A-J])\)|\b([A-J])[.)]\s")


def _unwrap(span: str) -> str:
    return _WRAPPER.sub(r"\1", span).strip().strip("*$ ").rstrip(".").strip()


def letters_of(span: str) -> set[str] | None:
    """Letters if the span is only option letters: "C", "(C)", "A, B and D", "ABD", "c", "(C) Paris"."""
    span = _unwrap(span)
    if re.fullmatch(r"[A-J]{2,10}", span):
        return set(span)
    if _LETTER_LIST.fullmatch(_AND.sub(" ", span)):
        return set(re.findall(r"[A-J]", span)) or None
    lower = _LOWER_ONE.fullmatch(span)
    if lower:
        return {lower.group(1).upper()}
    head = _HEAD.match(span) or _AFFIRMED_HEAD.match(span)
    if head and not _HEDGE.search(span) and len(set(_MARKED.findall(span))) <= 1:
        return {next(g for g in head.groups() if g)}  # "(C) Paris", not "(A) or (B)"
    return None


def parse_options(prompt: str) -> dict[str, str]:
    """Option letter -> option text, from "(A) text (B) text" or one option per line."""
    tail = prompt[-MAX_PROMPT_CHARS:]
    return {m.group(1): m.group(2).strip() for m in _OPTION.finditer(tail)}


def gold_letters(answer: str) -> set[str]:
    """The reference letter(s): "C", "(C) Paris", "ABD", "A, B, D"."""
    return letters_of(answer) or set()


def _by_option_text(span: str, prompt: str) -> set[str] | None:
    """The one option whose text the span affirms (not negated, not hedged), else None."""
    options = parse_options(prompt)
    found = {letter for letter, text in options.items() if text_match(text, span)[0]}
    # The longest option text wins when one contains another ("New York" vs "York").
    if len(found) > 1:
        longest = max(found, key=lambda letter: len(options[letter]))
        if all(text_match(options[letter], options[longest])[0] for letter in found):
            found = {longest}
    return found if len(found) == 1 else None


def _affirmed_letters(text: str) -> set[str]:
    """Letters the text affirms, minus those it negates ("not (A)", "(B) is wrong")."""
    letters = set()
    for match in _AFFIRMED.finditer(text):
        letter = next(g for g in match.groups() if g)
        before, after = text[max(0, match.start() - 16) : match.start()], text[match.end() : match.end() + 24]
        if not (_NEGATED_BEFORE.search(before) or _NEGATED_AFTER.match(after)):
            letters.add(letter)
    return letters


def chosen_letters(completion: str, prompt: str) -> set[str] | None:
    """The option(s) the completion commits to, or None (no answer, or several without commitment)."""
    anchored = anchored_answer(completion)
    if anchored is not None:
        letters = letters_of(anchored)
        if letters is not None:
            return letters
        if _HEDGE.search(anchored):
            return None
        affirmed = _affirmed_letters(anchored)
        if len(affirmed) != 1:
            return _by_option_text(anchored, prompt)
        named = _by_option_text(_MARKED.sub(" ", anchored), prompt)
        return None if named is not None and named != affirmed else affirmed  # "sky (A)": which?
    lines = [line for line in completion.strip().splitlines() if line.strip()]
    if not lines:
        return None
    if len(lines[-1].strip()) <= 12:
        last = letters_of(lines[-1])
        if last is not None:
            return last
    affirmed = _affirmed_letters(completion)
    if len(affirmed) == 1 and not _HEDGE.search(lines[-1]):
        return affirmed
    if not affirmed:
        return _by_option_text(lines[-1], prompt)
    return None
