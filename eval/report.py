"""``report.md`` and ``report.html``: one document model, rendered three times.

``build_report`` turns an ``EvalSummary`` and the run's facts into a list of blocks
(headings, paragraphs, tables, images); ``to_markdown`` and ``to_html`` render them, and
``to_text`` renders any blocks as plain text for a terminal's piped output (``eval.terminal``).
Numbers are printed with three decimals; an undefined statistic prints as ``n/a``.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, field_validator

from eval.cached import CACHED, cached_note, cost_cell
from eval.coverage import JudgeCoverage
from eval.dataset import RowProblem
from eval.intervals import Interval
from eval.metrics import THRESHOLD, EvalSummary, GroupStats, PairStats
from eval.scoring import ScoredRow
from eval.verdict import Assessment
from judge_vllm.redaction import redact_url

__all__ = [
    "Block",
    "Heading",
    "Image",
    "Paragraph",
    "RunInfo",
    "Table",
    "build_report",
    "fmt",
    "to_html",
    "to_markdown",
    "to_text",
]

MAX_TEXT_CHARS = 600
PLOTS = (
    ("reward_hist.png", "Rule vs judge reward distributions"),
    ("agreement.png", "Agreement"),
    ("reliability.png", "Reliability of the judge's reward"),
)


class RunInfo(BaseModel):
    """Facts about the run that ``scores.jsonl`` does not hold."""

    model_config = ConfigDict(frozen=True)

    data: str
    label_field: str
    rule_only: bool
    judge_url: str | None = None
    model: str | None = None
    mode: str | None = None
    judge_seconds: float | None = None
    judge_calls: int | None = None
    problems: list[RowProblem] = []
    coverage: JudgeCoverage | None = None

    @field_validator("judge_url")
    @classmethod
    def _without_credentials(cls, url: str | None) -> str | None:
        """The judge's URL as the report shows it: without its credentials (``http://***@host``)."""
        return None if url is None else redact_url(url)


@dataclass(frozen=True)
class Heading:
    """A section title; ``level`` 1 is the document title."""

    text: str
    level: int = 2


@dataclass(frozen=True)
class Paragraph:
    """Plain text (escaped in both renderings), after its ``lead`` in bold when it has one."""

    text: str
    lead: str = ""


@dataclass(frozen=True)
class Table:
    """A table of plain-text cells."""

    header: Sequence[str]
    rows: Sequence[Sequence[str]]


@dataclass(frozen=True)
class Image:
    """A figure next to the report."""

    path: str
    alt: str


Block = Heading | Paragraph | Table | Image


def fmt(value: float | None, digits: int = 3) -> str:
    """A number with ``digits`` decimals, or ``n/a``."""
    return "n/a" if value is None else f"{value:.{digits}f}"


def _label(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT_CHARS else text[:MAX_TEXT_CHARS] + " [...]"


def _pair_row(name: str, pair: PairStats | None) -> list[str] | None:
    if pair is None:
        return None
    return [name, str(pair.n), fmt(pair.agreement), fmt(pair.kappa), fmt(pair.pearson), fmt(pair.spearman),
            fmt(pair.precision), fmt(pair.recall), fmt(pair.f1)]  # fmt: skip


def _agreement_section(summary: EvalSummary) -> list[Block]:
    pairs = [("rule vs judge", summary.rule_vs_judge), ("rule vs label", summary.rule_vs_label),
             ("judge vs label", summary.judge_vs_label)]  # fmt: skip
    rows = [row for name, pair in pairs if (row := _pair_row(name, pair)) is not None]
    if not rows:
        return [Heading("Agreement"), Paragraph("Nothing to compare: no judge scores and no labels.")]
    header = ["pair", "n", "agreement", "kappa", "Pearson", "Spearman", "precision", "recall", "F1"]
    return [
        Heading("Agreement"),
        Paragraph(
            f"Scores and labels are binarised at {THRESHOLD} (>= {THRESHOLD} is correct) for agreement, "
            "Cohen's kappa, precision, recall, F1 and the confusion matrices; Pearson and Spearman use the "
            "raw values. Against a label, agreement is accuracy, and precision/recall/F1 are those of the "
            "reward for the 'correct' class."
        ),
        Table(header, rows),
    ]


def _confusion_section(summary: EvalSummary) -> list[Block]:
    blocks: list[Block] = [Heading("Confusion matrices")]
    for pair in (summary.rule_vs_judge, summary.rule_vs_label, summary.judge_vs_label):
        if pair is None:
            continue
        c = pair.confusion
        blocks.append(
            Table(
                [f"{pair.a} (rows) / {pair.b} (columns)", f"{pair.b} 0", f"{pair.b} 1"],
                [[f"{pair.a} 0", str(c.n00), str(c.n01)], [f"{pair.a} 1", str(c.n10), str(c.n11)]],
            )
        )
    return blocks if len(blocks) > 1 else []


def _group_table(column: str, groups: Sequence[GroupStats]) -> Table:
    header = [column, "n", "rule mean", "judge mean", "agreement", "rule accuracy", "judge accuracy"]
    rows = [[g.name, str(g.n), fmt(g.rule_mean), fmt(g.judge_mean), fmt(g.agreement),
             fmt(g.rule_accuracy), fmt(g.judge_accuracy)] for g in groups]  # fmt: skip
    return Table(header, rows)


def _answer_type_section(summary: EvalSummary) -> list[Block]:
    return [Heading("Per answer_type"), _group_table("answer_type", summary.per_answer_type)]


def _group_section(summary: EvalSummary, group_by: str) -> list[Block]:
    if not summary.per_group:
        return []
    return [Heading(f"Per {group_by}"), _group_table(group_by, summary.per_group)]


def _with_ci(value: float | None, ci: Interval | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" + (f" [{ci.low:.3f}, {ci.high:.3f}]" if ci else "")


def _cached_rows(run: RunInfo) -> int:
    return run.coverage.by_source.get("cache", 0) if run.coverage else 0


def _verdict_section(assessment: Assessment, run: RunInfo) -> list[Block]:
    header = ["scorer", "labelled rows", "agreement", "kappa", "AUROC (rows)", "false-positive rate",
              "judge calls / 1k rows", "seconds / 1k rows"]  # fmt: skip
    cached = _cached_rows(run)

    def cost(value: float | None, digits: int) -> str:  # only the judge's row has a cost
        return fmt(value, digits) if value is None else cost_cell(fmt(value, digits), cached, run.judge_calls)

    rows = [[s.name, str(s.n), _with_ci(s.accuracy, s.accuracy_ci), _with_ci(s.kappa, s.kappa_ci),
             f"{_with_ci(s.auroc, s.auroc_ci)} ({s.auroc_rows})",
             _with_ci(s.false_positive_rate, s.false_positive_rate_ci),
             cost(s.judge_calls_per_1000, 0), cost(s.seconds_per_1000, 1)]
            for s in assessment.scorers]  # fmt: skip
    note = cached_note({"judge": (cached, run.coverage.rows)}) if run.coverage else None
    return [
        Heading("Verdict"),
        *(Paragraph(line) for line in assessment.lines),
        *([Paragraph(note, lead="Cached")] if note else []),
        Heading("Against the labels, with 95% intervals"),
        Paragraph(
            "Bootstrap intervals (1,000 row resamples, --seed). The judge's AUROC is taken on the rows it "
            "decided (source judge or cache), the others' on every labelled row. The false-positive rate is "
            "the share of label-0 rows paid 0.5 or more: what a policy learns to exploit. The baselines "
            "know nothing: a judge must beat them."
        ),
        Table(header, rows),
    ]


def _calibration_section(lines: Sequence[str]) -> list[Block]:
    if not lines:
        return []
    return [Heading("Calibration"), *(Paragraph(line) for line in lines)]


def _source_section(summary: EvalSummary) -> list[Block]:
    if not summary.sources:
        return []
    header = ["source", "n", "share", "judge mean", "agreement with rule", "judge accuracy"]
    rows = [[s.source, str(s.n), fmt(s.share), fmt(s.judge_mean), fmt(s.agreement), fmt(s.judge_accuracy)]
            for s in summary.sources]  # fmt: skip
    return [
        Heading("Judge sources"),
        Paragraph(
            "judge: a fresh verdict; cache: a stored verdict; rule: decided by a pre-check (master keys, "
            "injections, empty answers) without the judge; rule_fallback: the judge failed and the rule "
            "reward stood in; error: no reward."
        ),
        Table(header, rows),
    ]


def _speed_section(summary: EvalSummary, run: RunInfo) -> list[Block]:
    if run.rule_only or summary.latency is None:
        return []
    seconds = run.judge_seconds or 0.0
    cached = _cached_rows(run)
    rows = [
        ["rows answered from the cache", str(cached)],
        ["judge run (s)", cost_cell(fmt(seconds, 1), cached, run.judge_calls)],
        ["throughput (rows/s)", cost_cell(fmt(summary.rows / seconds if seconds else None, 2), cached, run.judge_calls)],
        ["judge calls (HTTP batches)", "n/a" if run.judge_calls is None else cost_cell(str(run.judge_calls), cached, run.judge_calls)],
        ["latency p50 (ms)", fmt(summary.latency.p50, 1)],
        ["latency p95 (ms)", fmt(summary.latency.p95, 1)],
        ["latency p99 (ms)", fmt(summary.latency.p99, 1)],
    ]
    return [
        Heading("Throughput and latency"),
        Paragraph(
            "Throughput is rows answered per second of the judge run (cache hits and pre-checks "
            "included). Rows answered from the cache took no judge call and no judge time, so where there are "
            f"any these figures are not the judge's: they are marked '{CACHED}' ('X + {CACHED}' when the judge "
            "answered some rows too). A row's latency runs from the start of its reward_batch chunk to its answer, "
            "so it includes queueing behind the rest of the chunk."
        ),
        Table(["measure", "value"], rows),
    ]


def _disagreement_blocks(rows: Sequence[ScoredRow]) -> list[Block]:
    if not rows:
        return []
    blocks: list[Block] = [
        Heading("Top disagreements"),
        Paragraph("Rows where the binarised rule and judge rewards differ, the largest gap first."),
    ]
    for r in rows:
        blocks.append(
            Heading(
                f"{r.id} ({r.answer_type or 'no answer_type'}): rule {fmt(r.rule)}, judge {fmt(r.judge)} "
                f"({r.judge_source}), label {_label(r.label)}",
                level=3,
            )
        )
        fields = [("prompt", r.prompt), ("completion", r.completion), ("answer", r.answer),
                  ("judge explanation", r.judge_explanation or ""), ("rule explanation", r.rule_explanation)]  # fmt: skip
        blocks.append(Table(["field", "text"], [[name, _clip(text)] for name, text in fields]))
    return blocks


def _overview(summary: EvalSummary, run: RunInfo) -> list[Block]:
    judge = (
        "rule only (no judge)"
        if run.rule_only
        else f"judge {run.model or '?'} at {run.judge_url}, mode {run.mode}"
    )
    shortfall = run.coverage.shortfall() if run.coverage else None
    notice = [Paragraph(f"Warning: {shortfall}. Where it did not, the judge's column shows the rule "
                        "fallback, not the judge.")] if shortfall else []  # fmt: skip
    return [
        Heading("judge-eval report", level=1),
        *notice,
        Paragraph(
            f"Data: {run.data}. Rows scored: {summary.rows}; labelled ({run.label_field}): {summary.labelled}; "
            f"skipped as malformed: {len(run.problems)}; no rule reward: {summary.rule_missing}; "
            f"no judge reward: {summary.judge_missing}. Scorers: rule reward and {judge}."
        ),
    ]


def build_report(
    summary: EvalSummary,
    run: RunInfo,
    assessment: Assessment | None = None,
    group_by: str = "category",
    calibration: Sequence[str] = (),
) -> list[Block]:
    """The report's blocks, in order: what the data supports first (``calibration``: the lines
    of a ``--calibrate`` fit)."""
    plots: list[Block] = [Heading("Plots"), *(Image(path, alt) for path, alt in PLOTS)]
    problems: list[Block] = []
    if run.problems:
        problems = [
            Heading("Skipped rows"),
            Table(["line", "problem"], [[str(p.line), p.message] for p in run.problems]),
        ]
    return [
        *_overview(summary, run),
        *(_verdict_section(assessment, run) if assessment else []),
        *_calibration_section(calibration),
        *_agreement_section(summary),
        *_confusion_section(summary),
        *_answer_type_section(summary),
        *_group_section(summary, group_by),
        *_source_section(summary),
        *_speed_section(summary, run),
        *plots,
        *_disagreement_blocks(summary.disagreements),
        *problems,
    ]


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def to_markdown(blocks: Sequence[Block]) -> str:
    """The report as GitHub-flavoured markdown."""
    parts = []
    for block in blocks:
        if isinstance(block, Heading):
            parts.append(f"{'#' * block.level} {block.text}")
        elif isinstance(block, Paragraph):
            parts.append(f"**{block.lead}**: {block.text}" if block.lead else block.text)
        elif isinstance(block, Image):
            parts.append(f"![{block.alt}]({block.path})")
        else:
            lines = [
                "| " + " | ".join(_md_cell(h) for h in block.header) + " |",
                "|" + "---|" * len(block.header),
                *("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows),
            ]
            parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem}"
    "table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;"
    "text-align:left;vertical-align:top;white-space:pre-wrap}th{background:#f3f3f3}img{max-width:100%}"
)


def to_html(blocks: Sequence[Block]) -> str:
    """The report as a standalone HTML page (the PNGs are referenced next to it)."""
    e = html.escape
    body = []
    for block in blocks:
        if isinstance(block, Heading):
            body.append(f"<h{block.level}>{e(block.text)}</h{block.level}>")
        elif isinstance(block, Paragraph):
            lead = f"<strong>{e(block.lead)}</strong>: " if block.lead else ""
            body.append(f"<p>{lead}{e(block.text)}</p>")
        elif isinstance(block, Image):
            body.append(f'<p><img src="{e(block.path)}" alt="{e(block.alt)}"></p>')
        else:
            head = "".join(f"<th>{e(h)}</th>" for h in block.header)
            rows = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in block.rows)
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>judge-eval report</title>'
        f"<style>{_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def _text_cell(text: str) -> str:
    return " ".join(text.split())


def _text_table(table: Table) -> str:
    """A table as plain text: one line per row, columns padded to their widest cell and set
    two spaces apart (the first left-aligned, the others right-aligned), a rule under the header."""
    rows = [[_text_cell(c) for c in row] for row in (table.header, *table.rows)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(table.header))]

    def line(row: Sequence[str]) -> str:
        cells = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        return "  ".join(cells).rstrip()

    return "\n".join([line(rows[0]), "  ".join("-" * w for w in widths), *(line(r) for r in rows[1:])])


def to_text(blocks: Sequence[Block]) -> str:
    """Blocks as plain text: no markdown, no line wrapped, tables as aligned columns."""
    parts = []
    for block in blocks:
        if isinstance(block, Heading):
            parts.append(block.text)
        elif isinstance(block, Paragraph):
            parts.append(f"{block.lead}: {block.text}" if block.lead else block.text)
        elif isinstance(block, Image):
            parts.append(f"{block.alt}: {block.path}")
        else:
            parts.append(_text_table(block))
    return "\n\n".join(parts) + "\n"
