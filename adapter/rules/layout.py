"""Where a completion's final statement is, by construction: its blocks, the last one, and what
stands right above it (docs/canonical-answers.md, "Where the final statement is").

- One reasoning block is set aside (``judge_vllm.reasoning.reasoning_end``): a ``<think>`` block
  that opens the completion, or the one the chat template opened, up to the first ``</think>``
  outside a code block. Any other ``</think>`` is text.
- A block is one line, or one element over several lines: a display block (``\\[`` ... ``\\]``,
  ``$$`` ... ``$$``), an ``<answer>`` ... ``</answer>`` element, a fenced code block.
- The final statement is the last block that is not blank, never a code block or a list item.
  The block that is not blank above it must end a sentence or a formula (``.``, a digit, ``$``,
  ``\\)``, ``\\]``), be an element, or be an answer header; otherwise it leads into the final
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

__all__ = ["Block", "answer_start", "blocks", "sentence_starts"]

_SENTENCE_ENDS = (".", "!", "?")
# How a block may end for the next one to start afresh: a sentence or a formula ("?", "!" and ":"
# lead into what follows).
_LINE_ENDS = (".", "$", "\\)", "\\]")
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
        """A sentence or a formula ends here ("." , a digit, "$", "\\)", "\\]"), or an element
        does: what follows does not continue a phrase of this block ("It is not" / "42", "Is it
        this?" / "\\boxed{42}"), blank lines between or not."""
        stripped = self.text.rstrip()
        return bool(self.element) or stripped.endswith(_LINE_ENDS) or stripped[-1:].isdigit()

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
