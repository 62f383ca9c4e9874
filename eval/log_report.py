"""The ``judge-eval --from-log`` report: ``log_report.md``, ``.html`` and ``.json``.

The JSON is the ``LogSummary`` itself; the markdown and HTML render the same blocks with
``eval.report``'s renderers. Every number in them comes from the JSON.
"""

from __future__ import annotations

from pathlib import Path

from eval.from_log import HIST_BINS, KEPT_PROBLEMS, AuditGroup, LogSummary
from eval.report import Block, Heading, Paragraph, Table, fmt, to_html, to_markdown

__all__ = ["LOG_REPORT_HTML", "LOG_REPORT_JSON", "LOG_REPORT_MD", "build_log_report", "write_log_report"]

LOG_REPORT_MD = "log_report.md"
LOG_REPORT_HTML = "log_report.html"
LOG_REPORT_JSON = "log_report.json"
MAX_COMPLETION_CHARS = 300


def _when(summary: LogSummary) -> str:
    if summary.first is None or summary.last is None:
        return "no judgments"
    return f"{summary.first:%Y-%m-%d %H:%M:%S} to {summary.last:%Y-%m-%d %H:%M:%S} UTC"


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items()) or "-"


def _clip(text: str) -> str:
    return text if len(text) <= MAX_COMPLETION_CHARS else text[:MAX_COMPLETION_CHARS] + " [...]"


def _overview(summary: LogSummary) -> list[Block]:
    return [
        Heading("judge-eval --from-log report", level=1),
        Paragraph(
            f"Files: {', '.join(summary.files)}. Lines: {summary.lines}; judgments: {summary.judgments}; "
            f"skipped lines: {summary.bad_lines}. Time: {_when(summary)}. "
            f"Models: {_counts(summary.models)}."
        ),
        Heading("Sources"),
        Table(
            ["source", "n", "share"],
            [[name, str(n), fmt(n / summary.judgments)] for name, n in summary.sources.items()],
        ),
    ]


def _histogram_section(summary: LogSummary) -> list[Block]:
    edges = [f"{i / HIST_BINS:.1f}" for i in range(HIST_BINS)]
    rows = [
        [h.source, h.answer_type, str(h.n), fmt(h.mean), *map(str, h.counts), str(h.no_reward)]
        for h in summary.histograms
    ]
    return [
        Heading("Reward histograms per source and answer_type"),
        Paragraph(
            f"Rewards counted in {HIST_BINS} bins of width {1 / HIST_BINS:g} on [0, 1], each column "
            "named by its lower edge (1.0 is in the last); 'none' counts rewards that were None "
            "(source error); 'all' sums a source's answer types."
        ),
        Table(["source", "answer_type", "n", "mean", *edges, "none"], rows),
    ]


def _fallback_section(summary: LogSummary) -> list[Block]:
    rows = [
        [f"{b.start:%Y-%m-%d %H:%M}", str(b.n), str(b.fallbacks), fmt(b.fallbacks / b.n), _counts(b.reasons)]
        for b in summary.fallback_buckets
    ]
    return [
        Heading(f"Fallbacks over time ({summary.bucket_minutes}-minute buckets, UTC)"),
        Paragraph(
            "Judgments per bucket, those answered by the rule fallback or with no reward (sources "
            "rule_fallback and error), and the fallbacks' reasons. Buckets without judgments are left out."
        ),
        Table(["bucket start", "judgments", "fallbacks", "rate", "reasons"], rows),
    ]


def _watch_section(summary: LogSummary) -> list[Block]:
    title = f"Watch list: repeated completions with reward >= {summary.high_reward:g}"
    if not summary.watch_list:
        return [Heading(title), Paragraph("No completion earned a high reward more than once.")]
    rows = [
        [
            str(i),
            str(w.count),
            str(w.distinct_prompts),
            fmt(w.mean_reward),
            _counts(w.sources),
            _clip(w.completion),
        ]
        for i, w in enumerate(summary.watch_list, start=1)
    ]
    return [
        Heading(title),
        Paragraph(
            "High-reward completions grouped after normalisation (case-folded, whitespace collapsed), "
            "the most distinct prompts first: one text rewarded highly for many different prompts is "
            "what a reward hack looks like. The texts are as logged (long ones cut in the log)."
        ),
        Table(["#", "count", "distinct prompts", "mean reward", "sources", "completion"], rows),
    ]


def _label_section(summary: LogSummary) -> list[Block]:
    if not summary.labels:
        return [Heading("Judge labels"), Paragraph("No judgment carried a label.")]
    rows = [[c.profile, c.mode, c.label, str(c.n), fmt(c.share), fmt(c.mean_reward)] for c in summary.labels]
    return [
        Heading("Judge labels"),
        Paragraph(
            "The labels the judge gave (sources judge and cache), shares within each profile and mode."
        ),
        Table(["profile", "mode", "label", "n", "share", "mean reward"], rows),
    ]


def _audit_rows(groups: list[AuditGroup]) -> list[list[str]]:
    return [
        [
            g.name, str(g.audited), str(g.rule_paid), str(g.rule_paid_judge_rejected), fmt(g.paid_rejected_rate),
            str(g.rule_rejected_judge_paid), _clip(g.example) if g.example else "-",
        ]
        for g in groups
    ]  # fmt: skip


def _audit_section(summary: LogSummary) -> list[Block]:
    title = "Shadow audit: the rule's decisions judged again"
    if not summary.audit_lines:
        return [
            Heading(title),
            Paragraph("No shadow audit lines (strategy cascade with audit.shadow_rate above 0 writes them)."),
        ]
    columns = [
        "audited",
        "rule paid",
        "rule paid, judge rejected",
        "rate",
        "rule refused, judge paid",
        "example",
    ]
    return [
        Heading(title),
        Paragraph(
            f"{summary.audit_lines} rows the cascade's rule decided were also judged. 'rate' is the share "
            "of the rows the rule paid that the judge rejected: a high one is a shape the rule's grammar "
            "pays and the judge does not (a reward hack, or a judge that is wrong: read the examples). "
            "Worst first."
        ),
        Heading("By grammar form", level=3),
        Table(["form", *columns], _audit_rows(summary.audit_forms)),
        Heading("By answer_type", level=3),
        Table(["answer_type", *columns], _audit_rows(summary.audit_answer_types)),
    ]


def _problem_section(summary: LogSummary) -> list[Block]:
    if not summary.bad_lines:
        return []
    more = f" The first {KEPT_PROBLEMS} are listed." if summary.bad_lines > len(summary.problems) else ""
    return [
        Heading("Skipped lines"),
        Paragraph(f"{summary.bad_lines} lines were not logged judgments.{more}"),
        Table(["file", "line", "problem"], [[p.file, str(p.line), p.message] for p in summary.problems]),
    ]


def build_log_report(summary: LogSummary) -> list[Block]:
    """The report's blocks, in order."""
    return [
        *_overview(summary),
        *_histogram_section(summary),
        *_fallback_section(summary),
        *_watch_section(summary),
        *_label_section(summary),
        *_audit_section(summary),
        *_problem_section(summary),
    ]


def write_log_report(out: Path, summary: LogSummary) -> None:
    """Write log_report.json, log_report.md and log_report.html into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / LOG_REPORT_JSON).write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    blocks = build_log_report(summary)
    (out / LOG_REPORT_MD).write_text(to_markdown(blocks), encoding="utf-8")
    (out / LOG_REPORT_HTML).write_text(to_html(blocks), encoding="utf-8")
