"""Where a completion's final statement is, by construction: its blocks, the last one, and what
stands right above it (docs/canonical-answers.md, "Where the final statement is").

- One reasoning block is set aside (``judge_vllm.reasoning.reasoning_end``): a ``<think>`` block
  that opens the completion, or the one the chat template opened, up to the first ``</think>``
  outside a code block. Any other ``</think>`` is text.
- A block is one line, or one element over several lines: a display block (``\\[`` ... ``\\]``,
  ``$$`` ... ``$$``), an ``<answer>`` ... ``</answer>`` element, a fenced code block.
- The final statement is the last block that is not blank, never a code block or a list item.
  The block that is not blank above it must end a sentence (``.``), be a formula and nothing
  else (``17 + 25 = 42``, ``$6 \\times 7 = 42$``, a display of one) or after its last colon
  (``The sale price is: $240 - 84 = 156$``), be a code block or an
  ``<answer>`` element, or be an answer header; otherwise it leads into the final
  block and a qualifier there ("It is not" / "42", "A common wrong answer is:" / "\\boxed{42}")
  would be cut off. It may start the final statement itself: the two are read as one, and must
  parse whole ("So, the area is:" / "\\[\\boxed{9\\pi}\\]", "Thus, the answer is" / "\\boxed{A}").
  A Markdown heading ("#### 42") and an
  ``<answer>`` element start afresh. An answer header starts afresh by the same test on the block
  above it ("A tempting but wrong result is" / "### Final Answer" / "$$\\boxed{42}$$" is no
  statement). A thematic break ("---") is passed over: the block above it is the one above.
- Within one line, a final sentence after other sentences is a statement only when it carries a
  marker, a box or a tag (``adapter.rules.proof`` asks the grammar).

Nothing here is a pattern over free text: blocks are found by their delimiters, and the grammar
files decide what a statement is.
"""

from __future__ import annotations

from dataclasses import dataclass

from judge_vllm.reasoning import UnclosedReasoning, reasoning_end

__all__ = ["Block", "answer_start", "blocks", "is_formula", "sentence_starts"]

_SENTENCE_ENDS = (".", "!", "?")
# What may close a line after the "." that ends its sentence ("$x = 42.$", "**It is 42.**").
_CLOSERS = ("$", "\\)", "\\]", "*", "_", "}")
# Math delimiters around a line that is a formula and nothing else.
_MATH_DELIMITERS = (("$$", "$$"), ("\\[", "\\]"), ("$", "$"), ("\\(", "\\)"))
# What a formula is written with, besides digits, single letters and TeX commands: an allow-list.
_FORMULA_SIGNS = frozenset(" +-*/=<>^_(){}[],.!|'\u2212\u00d7\u00b7\u00f7\u2264\u2265\u2260\u2248")
# How a formula may end for the next block to start afresh: not on an operator ("6 \\times 7 =").
_FORMULA_ENDS = frozenset("0123456789)}]!|'")
# The TeX commands a formula may end on: values, not operators ("= 2\\pi", not "41 \\Rightarrow").
_VALUE_COMMANDS = frozenset(
    {"pi", "infty", "circ", "alpha", "beta", "gamma", "delta", "epsilon", "theta", "lambda", "mu", "nu",
     "rho", "sigma", "tau", "phi", "omega", "ldots", "cdots", "dots"}
)  # fmt: skip
# Where a display or element opens, and what closes it.
_ELEMENTS = (("\\[", "\\]"), ("$$", "$$"), ("<answer>", "</answer>"), ("```", "```"))
# A line indented this much after a blank line is a Markdown code block.
_INDENT = "    "


@dataclass(frozen=True)
class Block:
    """A line, or an element over several lines: its text, where it starts in the completion,
    and what delimits it ("" for a line; "    " for a line of an indented code block)."""

    text: str
    start: int
    element: str = ""

    @property
    def blank(self) -> bool:
        """A blank line."""
        return not self.text.strip()

    @property
    def code(self) -> bool:
        """A fenced or indented code block: text, never a statement."""
        return self.element in ("```", _INDENT)

    def ends_a_paragraph(self) -> bool:
        """A sentence ends here (".": "$x = 42.$" too), the block is a formula and nothing else or
        after its last colon (a step of the work: "The sale price is: $240 - 84 = 156$"), or a
        code block or an ``<answer>`` element ends: what follows does not continue a phrase of
        this block ("It is not" / "42", "Is it this?" / "\\boxed{42}", "A common wrong answer,
        from step 3" / "\\boxed{42}", "\\[\\text{Not the answer:}\\]" / "\\boxed{42}"), blank lines
        between or not."""
        if self.code or self.element == "<answer>":
            return True
        text = self.text.strip()
        while text.endswith(_CLOSERS):
            text = text[: -len(next(c for c in _CLOSERS if text.endswith(c)))].rstrip()
        _, colon, worked = self.text.rpartition(":")
        return text.endswith(".") or is_formula(self.text) or bool(colon and is_formula(worked))

    @property
    def thematic_break(self) -> bool:
        """A Markdown thematic break ("---", "***", "___"): it separates sections and says nothing,
        so the block above it is what stands above the next one."""
        marks = "".join(self.text.split())
        return not self.element and len(marks) >= 3 and len(set(marks)) == 1 and marks[0] in "-*_"

    @property
    def list_item(self) -> bool:
        """A Markdown list item ("- 12" is a bullet, not minus twelve)."""
        text = self.text.lstrip()
        number, dot, rest = text.partition(". ")
        return text.startswith(("- ", "* ", "+ ")) or bool(dot and number.isdigit() and rest)


def is_formula(text: str) -> bool:
    """``text`` is a formula and nothing else: within one pair of math delimiters or none, only
    digits, single letters, TeX commands and the signs of ``_FORMULA_SIGNS`` (no word: a run of
    two letters is prose, "\\text{Wrong:}" too), ending on a value, not on an operator."""
    inner = text.strip()
    for opening, closing in _MATH_DELIMITERS:
        if inner.startswith(opening) and inner.endswith(closing) and len(inner) > len(opening) + len(closing):
            inner = inner[len(opening) : -len(closing)].strip()
            break
    at, letters, last = 0, 0, ""
    while at < len(inner):
        char = inner[at]
        if char == "\\" and inner[at + 1 : at + 2].isalpha():  # a TeX command: "\\times", "\\pi"
            end = at + 1
            while end < len(inner) and inner[end].isalpha():
                end += 1
            last = "x" if inner[at + 1 : end] in _VALUE_COMMANDS else "\\"
            at, letters = end, 0
            continue
        if char.isascii() and char.isalpha():
            letters += 1
            if letters > 1:
                return False
        elif (char.isdigit() and char.isascii()) or char in _FORMULA_SIGNS:
            letters = 0
        else:
            return False
        if not char.isspace():
            last = char
        at += 1
    return bool(inner) and (last in _FORMULA_ENDS or last.isalpha())


def answer_start(completion: str) -> int:
    """Where the text after the policy's reasoning block starts (``judge_vllm.reasoning``); the
    end of the completion when its reasoning never closes (there is then no final statement)."""
    try:
        return reasoning_end(completion)
    except UnclosedReasoning:
        return len(completion)


def _opens(line: str) -> tuple[str, str] | None:
    """The element a line opens and leaves open ("\\[" with no "\\]" after it), if any."""
    stripped = line.strip()
    for opening, closing in _ELEMENTS:
        if not stripped.startswith(opening):
            continue
        rest = stripped[len(opening) :]
        if closing not in rest:
            return opening, closing
    return None


def blocks(text: str, offset: int = 0) -> list[Block]:
    """``text`` as blocks, in order (``offset``: where ``text`` starts in the completion)."""
    found: list[Block] = []
    lines = text.split("\n")
    at = offset
    index = 0
    while index < len(lines):
        line = lines[index]
        start = at
        opened = _opens(line)
        if opened is None:
            indented = line.startswith((_INDENT, "\t")) and (not found or found[-1].blank or found[-1].code)
            found.append(Block(line, start, _INDENT if indented and line.strip() else ""))
            at += len(line) + 1
            index += 1
            continue
        opening, closing = opened
        end = index + 1
        while end < len(lines) and closing not in lines[end]:
            end += 1
        if end == len(lines):  # never closed: each line is text
            found.append(Block(line, start))
            at += len(line) + 1
            index += 1
            continue
        element = "\n".join(lines[index : end + 1])
        found.append(Block(element, start, opening))
        at += len(element) + 1
        index = end + 1
    return found


def sentence_starts(line: str) -> list[tuple[int, bool]]:
    """Where a statement may start inside ``line``, in order, and whether it starts a sentence:
    after a ``.``, ``!`` or ``?`` and a space (a sentence), or after a ``,`` and a space (a clause,
    which counts only when it is led by "so", "thus", ... and a marker: the grammar decides)."""
    starts = []
    for index in range(1, len(line) - 1):
        if line[index - 1] in (*_SENTENCE_ENDS, ",") and line[index] == " ":
            follow = index + 1
            while follow < len(line) and line[follow] == " ":
                follow += 1
            if follow < len(line):
                starts.append((follow, line[index - 1] != ","))
    return starts
