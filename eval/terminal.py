"""What judge-eval prints: report blocks as rich tables on a terminal, and as plain text (aligned
columns, no markdown, no line wrapped at 80 columns) when the output is piped to a file or a pager."""

from __future__ import annotations

from collections.abc import Sequence

from rich import table as rich
from rich.console import Console

from eval.report import Block, Heading, Paragraph, Table, to_text

__all__ = ["print_blocks"]


def _say(console: Console, text: str, style: str | None = None) -> None:
    console.print(text, style=style, markup=False, highlight=False, emoji=False, soft_wrap=True)


def _rich_table(block: Table) -> rich.Table:
    table = rich.Table()
    for i, column in enumerate(block.header):
        table.add_column(column, justify="left" if i == 0 else "right")
    for row in block.rows:
        table.add_row(*row)
    return table


def print_blocks(console: Console, blocks: Sequence[Block]) -> None:
    """Print ``blocks``: on a terminal, text as it is and tables drawn by rich; piped, the plain
    text of ``eval.report.to_text``."""
    if not console.is_terminal:
        console.print(to_text(blocks), end="", markup=False, highlight=False, emoji=False, soft_wrap=True)
        return
    for block in blocks:
        if isinstance(block, Table):
            console.print(_rich_table(block))
        elif isinstance(block, Heading):
            _say(console, block.text, "bold")
        elif isinstance(block, Paragraph):
            _say(console, f"{block.lead}: {block.text}" if block.lead else block.text)
        else:
            _say(console, f"{block.alt}: {block.path}")
