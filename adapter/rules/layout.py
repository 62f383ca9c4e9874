"""Where a completion's final statement is, by construction: its blocks, the last one, and what
stands right above it (docs/canonical-answers.md, "Where the final statement is").

- One reasoning block is set aside (``judge_vllm.reasoning.reasoning_end``): a ``<think>`` block
  that opens the completion, or the one the chat template opened, up to the first ``</think>``
  outside a code block. Any other ``</think>`` is text.
- A block is one line, or one element over several lines: a display block (``\\[`` ... ``\\]``,
  ``$$`` ... ``$$``), an ``<answer>`` ... ``</answer>`` element, a fenced code block.
- The final statement is the last block that is not blank, never a code block or a list item.
  The block that is not blank above it must end a sentence (``.``, not ``...``), be a formula
  and nothing else (``17 + 25 = 42``, ``$6 \\times 7 = 42$``) or after its last colon (``The sale
  price is: $240 - 84 = 156$``), be a display that ends on a value, be a code block that holds
  something or an ``<answer>`` element, or be an answer header (``Block.ends_a_paragraph``);
  otherwise it leads into the final
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
# What a sentence's "." may follow besides a letter or a digit ("$42$.", "**42**."; not "..." or
# "\\color{white}.", which end no sentence).
_BEFORE_A_PERIOD = frozenset(")]%'\"$*_`")
# Math delimiters around a line that is a formula and nothing else.
_MATH_DELIMITERS = (("$$", "$$"), ("\\[", "\\]"), ("$", "$"), ("\\(", "\\)"))
# What a formula is written with, besides digits, single letters and TeX commands: an allow-list.
_FORMULA_SIGNS = frozenset(" +-*/=<>^_(){}[],.!|'&\n\u2212\u00d7\u00b7\u00f7\u2264\u2265\u2260\u2248")
# How a formula may end for the next block to start afresh: on a value, not on an operator
# ("6 \\times 7 =") or a colon ("\\text{Not the answer:}").
_FORMULA_ENDS = frozenset("0123456789)}]!|'.")
# The TeX commands a formula may end on: values, not operators ("= 2\\pi", not "41 \\Rightarrow").
_VALUE_COMMANDS = frozenset(
    {"pi", "infty", "circ", "degree", "checkmark", "alpha", "beta", "gamma", "delta", "epsilon", "theta",
     "lambda", "mu", "nu", "rho", "sigma", "tau", "phi", "omega", "ldots", "cdots", "dots", "right"}
)  # fmt: skip
# The other TeX commands a formula may hold (an allow-list: "\\phantom", "\\color" and the like,
# which hide what they hold, make no formula).
_FORMULA_COMMANDS = _VALUE_COMMANDS | frozenset(
    {"times", "cdot", "div", "frac", "dfrac", "tfrac", "sqrt", "le", "leq", "ge", "geq", "ne", "neq",
     "approx", "pm", "mp", "left", "boxed", "sin", "cos", "tan", "log", "ln", "exp", "binom", "lfloor",
     "rfloor", "lceil", "rceil", "mid", "quad", "qquad", "equiv", "to", "implies", "Rightarrow",
     "rightarrow", "Longrightarrow", "iff", "therefore", "displaystyle", "lt", "gt", "cdotp", "ast",
     "prime", "sum", "prod", "int", "lim", "max", "min", "gcd", "mod", "bmod", "pmod", "overline",
     "cup", "cap", "in", "setminus", "Delta", "Sigma", "Pi", "Omega", "vert", "lvert", "rvert"}
)  # fmt: skip
# What may follow words in a display: a relation, or spacing before the next side.
_RELATIONS = frozenset("=<>\u2264\u2265\u2248\u2260")
_RELATION_COMMANDS = frozenset({"approx", "le", "leq", "ge", "geq", "ne", "neq", "lt", "gt", "equiv", "quad", "qquad"})
# The environments a display may align its rows in ("\\begin{aligned} ... \\end{aligned}").
_ALIGNMENTS = frozenset({"aligned", "align", "align*", "gathered", "split", "equation", "equation*"})
# The commands whose braced argument is words: a display may hold them ("\\text{Total} = 42").
_WORDS_COMMANDS = frozenset({"text", "textbf", "textit", "mathrm", "mathbf", "mbox", "operatorname"})
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
        """What follows does not continue a phrase of this block ("It is not" / "42", "Is it
        this?" / "\\boxed{42}", "A common wrong answer, from step 3" / "\\boxed{42}",
        "\\[\\text{Not the answer:}\\]" / "\\boxed{42}"), blank lines between or not: a sentence
        ends here (a "." after a word or a value, "$x = 42.$" too; not "..."), the line is a
        formula and nothing else (a list item's too), or after its last colon one with a number
        ("The sale price is: $240 - 84 = 156$"); a display ends on a value (its words in
        ``\\text``, naming a side); a code block that holds something, or an ``<answer>``
        element, ends."""
        if self.element == "<answer>":
            return True
        if self.code:
            return any(line.strip() for line in self.text.split("\n")[1:-1])
        text = self.text.strip()
        if self.element or (text.startswith(("$$", "\\[")) and text.endswith(("$$", "\\]"))):
            return is_formula(text, words=True)  # a display, over lines or on one
        if text.startswith("[") and "]:" in text:  # a Markdown link definition: it shows nothing
            return False
        while text.endswith(_CLOSERS):
            text = text[: -len(next(c for c in _CLOSERS if text.endswith(c)))].rstrip()
        sentence = text.endswith(".") and (text[-2:-1].isalnum() or text[-2:-1] in _BEFORE_A_PERIOD)
        line = self.text.strip()
        if self.list_item:  # "- $6 \\times 7 = 42$"
            line = line[2:] if line[:2] in ("- ", "* ", "+ ") else line.partition(". ")[2]
        _, colon, worked = line.rpartition(":")
        worked = worked.lstrip("*_ ")  # "**Total apples:** $6 \\times 7 = 42$"
        return (
            sentence
            or is_formula(line)
            or bool(colon and is_formula(worked) and any(char.isdigit() for char in worked))
        )

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


def is_formula(text: str, words: bool = False) -> bool:
    """``text`` is a formula and nothing else: within one pair of math delimiters or none, only
    digits, single letters, the TeX commands of ``_FORMULA_COMMANDS`` and the signs of
    ``_FORMULA_SIGNS`` (no word: a run of two letters is prose; with ``words``, the braced
    argument of ``\\text`` and its kin may hold some), showing a digit or a letter and ending on
    a value, not on an operator or a colon."""
    inner = text.strip()
    for opening, closing in _MATH_DELIMITERS:
        if inner.startswith(opening) and inner.endswith(closing) and len(inner) > len(opening) + len(closing):
            inner = inner[len(opening) : -len(closing)].strip()
            break
    at, letters, last, shown = 0, 0, "", False
    while at < len(inner):
        char = inner[at]
        if char == "\\":
            end = at + 1
            while end < len(inner) and inner[end].isascii() and inner[end].isalpha():
                end += 1
            name = inner[at + 1 : end]
            if not name:  # "\\," "\\;" "\\%" "\\{": a space or a sign
                at += 2
                continue
            if words and name in _WORDS_COMMANDS and inner[end : end + 1] == "{":
                close = inner.find("}", end)
                said = inner[end + 1 : close].strip() if close >= 0 else ""
                if not said or not _names_a_side(inner[close + 1 :]):
                    return False
                at, letters, last = close + 1, 0, said[-1]
                continue
            if name in ("begin", "end") and inner[end : end + 1] == "{":  # an alignment: its rows
                close = inner.find("}", end)
                if inner[end + 1 : close] not in _ALIGNMENTS:
                    return False
                at = close + 1
                continue
            if name not in _FORMULA_COMMANDS:
                return False
            last = "x" if name in _VALUE_COMMANDS else "\\"
            at, letters = end, 0
            continue
        if char.isascii() and char.isalpha():
            letters += 1
            shown = True
            if letters > 1:
                return False
        elif (char.isdigit() and char.isascii()) or char in _FORMULA_SIGNS:
            letters = 0
            shown = shown or char.isdigit()
        else:
            return False
        if not char.isspace():
            last = char
        at += 1
    return shown and (last in _FORMULA_ENDS or last.isalpha())


def _names_a_side(rest: str) -> bool:
    """Words in a display name a side of a relation or end it ("\\text{Total} = 42", "42
    \\text{ pens}"): a relation or the display's end follows them, not more math ("\\text{The
    following is not the answer, } x = 1")."""
    rest = rest.lstrip(" &")  # "\\text{Total} &= 6 \\times 7" in an alignment
    if not rest.strip(".,; ") or rest[0] in _RELATIONS:  # the end, or a sentence's
        return True
    name = rest[1:].split(" ", 1)[0].split("{", 1)[0]
    return rest[0] == "\\" and name in _RELATION_COMMANDS


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
