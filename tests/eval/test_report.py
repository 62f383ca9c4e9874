"""The report's document model, its markdown, HTML and plain-text renderings, and the terminal's."""

import io

from rich.console import Console

from eval.dataset import RowProblem
from eval.metrics import summarize
from eval.report import (
    Heading,
    Image,
    Paragraph,
    RunInfo,
    Table,
    build_report,
    fmt,
    to_html,
    to_markdown,
    to_text,
)
from eval.scoring import ScoredRow
from eval.terminal import print_blocks


def _rows():
    def row(i, rule, judge, label, completion="c"):
        return ScoredRow(id=f"r{i}", line=i, answer_type="TEXT", label=label, rule=rule, rule_explanation="rule says",
                         judge=judge, judge_source="judge", judge_explanation="judge says", latency_ms=10.0 * i,
                         prompt="What?", completion=completion, answer="Rome")  # fmt: skip

    return [row(1, 1.0, 0.2, 1, "a | b\nnext <b>bold</b>"), row(2, 0.0, 0.1, 0), row(3, 1.0, 0.9, 1)]


def test_fmt():
    assert fmt(None) == "n/a"
    assert fmt(0.12345) == "0.123"
    assert fmt(2.0, 1) == "2.0"


def test_markdown_escapes_table_cells():
    md = to_markdown(
        [Heading("T", 1), Paragraph("p"), Table(["a", "b"], [["x|y", "1\n2"]]), Image("f.png", "alt")]
    )
    assert md == "# T\n\np\n\n| a | b |\n|---|---|\n| x\\|y | 1<br>2 |\n\n![alt](f.png)\n"


def test_html_escapes_text():
    page = to_html([Heading("<T>"), Table(["a"], [["<script>x</script>"]])])
    assert "<h2>&lt;T&gt;</h2>" in page
    assert "&lt;script&gt;" in page and "<script>" not in page


def test_report_has_every_section_and_the_disagreement_texts():
    rows = _rows()
    run = RunInfo(data="d.jsonl", label_field="label", rule_only=False, judge_url="http://x", model="m",
                  mode="fast", judge_seconds=2.0, judge_calls=1, problems=[RowProblem(line=4, message="bad")])  # fmt: skip
    md = to_markdown(build_report(summarize(rows), run))
    for section in ("## Agreement", "## Confusion matrices", "## Per answer_type", "## Judge sources",
                    "## Throughput and latency", "## Plots", "## Top disagreements", "## Skipped rows"):  # fmt: skip
        assert section in md
    assert "| rule vs judge | 3 | 0.667 |" in md
    assert "| throughput (rows/s) | 1.50 |" in md
    assert "### r1 (TEXT): rule 1.000, judge 0.200 (judge), label 1" in md
    assert "a \\| b<br>next <b>bold</b>" in md
    assert "| 4 | bad |" in md
    assert "![Agreement](agreement.png)" in md


def test_rule_only_report_has_no_judge_sections():
    run = RunInfo(data="d.jsonl", label_field="label", rule_only=True)
    rows = [r.model_copy(update={"judge": None, "judge_source": None, "latency_ms": None}) for r in _rows()]
    md = to_markdown(build_report(summarize(rows), run))
    assert "| rule vs label |" in md
    assert "rule vs judge" not in md
    assert "## Judge sources" not in md and "## Throughput" not in md and "## Top disagreements" not in md


WIDE = [
    Heading("T", 1),
    Paragraph("a sentence longer than eighty columns, " * 3, lead="Note"),
    Table(["variant", "judge items / 1k rows", "seconds"], [["binary-judge", "cached", "12.5"], ["rule", "0", "-"]]),
]


def test_plain_text_has_no_markdown_and_aligns_each_row_on_one_line():
    text = to_text([*WIDE, Table(["a", "b"], [["x|y", "1\n2"]]), Image("f.png", "alt")])
    assert text == (
        "T\n\nNote: " + "a sentence longer than eighty columns, " * 3 + "\n\n"
        "variant       judge items / 1k rows  seconds\n"
        "------------  ---------------------  -------\n"
        "binary-judge                 cached     12.5\n"
        "rule                              0        -\n\n"
        "a      b\n---  ---\nx|y  1 2\n\nalt: f.png\n"
    )
    assert "**" in to_markdown(WIDE) and "<strong>Note</strong>: " in to_html(WIDE)


def test_the_terminal_gets_rich_tables_and_a_pipe_gets_plain_text_unwrapped():
    piped, terminal = io.StringIO(), io.StringIO()
    print_blocks(Console(file=piped, width=80), WIDE)
    print_blocks(Console(file=terminal, width=80, force_terminal=True, color_system=None), WIDE)
    assert piped.getvalue() == to_text(WIDE)  # no line wrapped at the console's 80 columns
    assert max(len(line) for line in piped.getvalue().splitlines()) > 80
    drawn = terminal.getvalue()
    assert "┃ variant" in drawn and "│ binary-judge │" in drawn and "Note: a sentence" in drawn
