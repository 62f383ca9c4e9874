"""``judge-eval``: score labelled rows with the rule reward and the judge, and report how they differ.

judge-eval --data FILE --config configs/reward.yaml --out DIR [--rule-only] [--limit N]
           [--label-field label] [--map prompt=question,label=is_correct] [--strict] [--profiles a,b,c] [--strategies judge,cascade]
           [--min-judged 0.9] [--allow-fallback] [--calibrate calib.json [--calibration-method platt]]
judge-eval --data FILE --group-modes pointwise,pairwise,pairwise:anchor,listwise --out DIR
judge-eval --from-log judgments.jsonl [judgments.jsonl.1 ...] --out DIR [--top N]
           [--high-reward 0.9] [--bucket-minutes M]

Writes DIR/scores.jsonl, DIR/report.md, DIR/report.html, DIR/reward_hist.png and
DIR/agreement.png, and prints a summary table. With --profiles and/or --strategies it scores
the rows once per variant and writes DIR/compare.md (``eval.compare``) and each variant's
scores under DIR/<profile>-<strategy>/. With --from-log it reads judgment logs written in
training (``judgment_log_path``) and writes DIR/log_report.md, .html and .json
(``eval.from_log``, ``eval.log_report``). With --group-modes it scores the labelled groups
(rows sharing a prompt, with a correct and an incorrect member) once per group mode and
writes DIR/groups.md (``eval.group_eval``). Exit codes: 0 done, 2 bad input or config, 3 the
judge did not judge: it decided fewer than ``--min-judged`` of the rows sent to it (fallbacks,
errors) or none at all; the outputs are still written, and the report opens with that fact.
``--allow-fallback`` reports such a run with exit code 0. 4 the judge's scores are inverted: on
the labelled rows it decided, its AUROC's 95% interval lies wholly below 0.5 (it pays wrong
answers over right ones); the outputs are still written.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from adapter import RewardConfig, RuleRewardSystem, create_judge_reward
from adapter.config import with_judge_url
from eval.cached import CACHED
from eval.calibration_fit import CalibrationError, CalibrationFit, fit_calibration
from eval.compare import VariantStats, compare_blocks, rule_only_stats, variant_config, variant_stats
from eval.coverage import DEFAULT_MIN_JUDGED, JudgeCoverage, judge_coverage
from eval.data_files import FORMATS
from eval.dataset import DEFAULT_GROUP_BY, LoadedRows, MalformedInputError, load_rows, parse_column_map
from eval.from_log import read_logs
from eval.group_eval import evaluate_group_modes, group_modes_blocks, labelled_groups, parse_group_mode
from eval.log_report import LOG_REPORT_MD, write_log_report
from eval.metrics import EvalSummary, summarize
from eval.plots import (
    AGREEMENT_PNG,
    RELIABILITY_PNG,
    REWARD_HIST_PNG,
    plot_agreement,
    plot_reliability,
    plot_reward_hist,
)
from eval.report import Block, Paragraph, RunInfo, Table, build_report, fmt, to_html, to_markdown
from eval.scoring import DEFAULT_CHUNK_SIZE, JudgeRun, ScoredRow, merge_scores, score_judge, score_rules
from eval.terminal import print_blocks
from eval.verdict import Assessment, assess
from judge_vllm.cli import HelpFormatter, add_judge_url_flag
from judge_vllm.errors import JudgeError, JudgeStartupError

__all__ = ["build_parser", "main", "write_outputs"]

SCORES_JSONL = "scores.jsonl"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
SHOWN_PROBLEMS = 20


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="judge-eval",
        formatter_class=HelpFormatter,
        description="Compare the rule reward and the judge on labelled rows, or (--from-log) report on judgment logs.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--data", type=Path, help=f"labelled rows: prompt, completion, answer, label ({FORMATS})"
    )
    source.add_argument(
        "--from-log", type=Path, nargs="+", metavar="LOG", help="report on judgment logs (judgment_log_path)"
    )
    parser.add_argument("--config", type=Path, help="reward YAML (default: built-in defaults)")
    add_judge_url_flag(parser, help="the judge server (default: $JUDGE_MODEL_URL, else the config's judge_url)")
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    parser.add_argument("--rule-only", action="store_true", help="score with the rule reward only")
    parser.add_argument("--limit", type=_positive_int, help="score the first N valid rows")
    parser.add_argument("--label-field", default="label", help="field holding the label (1/0 or a score)")
    parser.add_argument(
        "--map",
        type=_column_map,
        default={},
        metavar="FIELD=COLUMN,...",
        help="where each field lives, e.g. prompt=question,completion=response,answer=gold,label=is_correct"
        " (default: each under its own name)",
    )
    parser.add_argument("--strict", action="store_true", help="stop at the first malformed row")
    parser.add_argument(
        "--group-by", default=DEFAULT_GROUP_BY, metavar="COLUMN", help="per-group table by this column"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap intervals and baselines")
    parser.add_argument(
        "--chunk-size", type=_positive_int, default=DEFAULT_CHUNK_SIZE, help="rows per reward_batch"
    )
    parser.add_argument(
        "--top", type=_positive_int, default=10, help="disagreements (--from-log: watched completions) shown"
    )
    parser.add_argument(
        "--high-reward", type=_unit_float, default=0.9, help="--from-log: the watch list's reward threshold"
    )
    parser.add_argument(
        "--bucket-minutes", type=_positive_int, help="--from-log: time bucket (default: automatic)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--profiles", type=_names, help="compare judge profiles, e.g. rubric,binary,compassverifier"
    )
    parser.add_argument("--strategies", type=_names, help="compare strategies: judge,cascade")
    parser.add_argument(
        "--group-modes",
        type=_names,
        help="compare group modes on labelled groups: pointwise,pairwise,pairwise:round_robin,listwise",
    )
    parser.add_argument(
        "--min-judged",
        type=_unit_float,
        default=DEFAULT_MIN_JUDGED,
        help="exit 3 when the judge decided less than this share of the rows sent to it (default 0.9)",
    )
    parser.add_argument(
        "--allow-fallback", action="store_true", help="report a run whose judge did not judge, exit 0"
    )
    parser.add_argument(
        "--calibrate",
        type=Path,
        metavar="FILE",
        help="fit a calibration on the judged labelled rows and write it (the reward's calibration_file)",
    )
    parser.add_argument(
        "--calibration-method", choices=("isotonic", "platt"), default="isotonic", help="--calibrate's curve"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return parser


def _unit_float(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {value}")
    return value


def _column_map(text: str) -> dict[str, str]:
    try:
        return parse_column_map(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give at least one name")
    return names


@contextmanager
def _progress(console: Console, enabled: bool) -> Iterator[Progress]:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, disable=not enabled, transient=False) as progress:
        yield progress


def _score(
    args: argparse.Namespace, config: RewardConfig, loaded: LoadedRows, err: Console
) -> tuple[list[ScoredRow], JudgeRun | None]:
    rows = loaded.rows
    with _progress(err, not args.no_progress) as progress:
        rule_task = progress.add_task("rule ", total=len(rows))
        rule_scores = score_rules(
            rows, RuleRewardSystem(config.rules), lambda n: progress.advance(rule_task, n)
        )
        judge_run = None
        if not args.rule_only:
            judge_task = progress.add_task("judge", total=len(rows))
            with create_judge_reward(config) as judge:
                judge_run = score_judge(
                    rows, judge, args.chunk_size, lambda n: progress.advance(judge_task, n)
                )
    return merge_scores(rows, rule_scores, judge_run.results if judge_run else None), judge_run


def write_outputs(
    out: Path,
    scored: Sequence[ScoredRow],
    summary: EvalSummary,
    run: RunInfo,
    assessment: Assessment | None = None,
    group_by: str = DEFAULT_GROUP_BY,
    calibration: Sequence[str] = (),
) -> None:
    """Write scores.jsonl, the plots, report.md and report.html into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / SCORES_JSONL).open("w", encoding="utf-8") as handle:
        for row in scored:
            handle.write(row.model_dump_json() + "\n")
    plot_reward_hist(scored, out / REWARD_HIST_PNG)
    plot_agreement(summary, scored, out / AGREEMENT_PNG)
    plot_reliability(scored, out / RELIABILITY_PNG)
    blocks = build_report(summary, run, assessment, group_by, calibration)
    (out / REPORT_MD).write_text(to_markdown(blocks), encoding="utf-8")
    (out / REPORT_HTML).write_text(to_html(blocks), encoding="utf-8")


def _summary_table(summary: EvalSummary) -> list[Block]:
    rows = [
        [name, str(pair.n), fmt(pair.agreement), fmt(pair.kappa), fmt(pair.pearson), fmt(pair.spearman), fmt(pair.f1)]
        for name, pair in (("rule vs judge", summary.rule_vs_judge), ("rule vs label", summary.rule_vs_label),
                           ("judge vs label", summary.judge_vs_label))
        if pair is not None
    ]  # fmt: skip
    header = ["pair", "n", "agreement", "kappa", "Pearson", "Spearman", "F1"]
    return [Paragraph("rule vs judge vs labels (binarised at 0.5)"), Table(header, rows)]


def _print_summary(console: Console, summary: EvalSummary, run: RunInfo, out: Path) -> None:
    print_blocks(console, _summary_table(summary))
    if summary.sources:
        console.print("judge sources: " + ", ".join(f"{s.source} {s.n}" for s in summary.sources))
    cached = run.coverage.by_source.get("cache", 0) if run.coverage else 0
    if summary.latency is not None and run.judge_seconds:
        console.print(
            f"judge: {summary.rows / run.judge_seconds:.2f} rows/s over {run.judge_seconds:.1f} s; "
            f"latency p50 {summary.latency.p50:.0f} ms, p95 {summary.latency.p95:.0f} ms, "
            f"p99 {summary.latency.p99:.0f} ms"
            + (f" ({CACHED}: {cached} of {summary.rows} rows came from the cache, not the judge)" if cached else ""),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if run.problems:
        console.print(f"skipped {len(run.problems)} malformed row(s): see the report")
    console.print(f"report: {out / REPORT_MD} and {out / REPORT_HTML}")


COMPARE_MD = "compare.md"


def _compare(
    args: argparse.Namespace, base: RewardConfig, loaded: LoadedRows, out: Console, err: Console
) -> int:
    """Score the rows once per (profile, strategy) variant and write DIR/compare.md."""
    rows = loaded.rows
    try:
        variants = [
            (f"{p}-{s}", variant_config(base, p, s))
            for p in (args.profiles or [base.profile])
            for s in (args.strategies or [base.strategy])
        ]
    except (JudgeError, ValueError) as error:
        err.print(f"error: {error}", markup=False, highlight=False)
        return 2
    rule_scores = score_rules(rows, RuleRewardSystem(base.rules))
    stats: list[VariantStats] = [rule_only_stats(merge_scores(rows, rule_scores, None))]
    model = None
    coverages: dict[str, JudgeCoverage] = {}
    verdicts: dict[str, list[str]] = {}
    inverted: dict[str, str | None] = {}
    for name, config in variants:
        with _progress(err, not args.no_progress) as progress:
            task = progress.add_task(name, total=len(rows))
            with create_judge_reward(config) as judge:
                run = score_judge(rows, judge, args.chunk_size, partial(progress.advance, task))
        scored = merge_scores(rows, rule_scores, run.results)
        folder = args.out / name
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / SCORES_JSONL).open("w", encoding="utf-8") as handle:
            handle.writelines(row.model_dump_json() + "\n" for row in scored)
        stats.append(variant_stats(name, scored, run.metrics, run.seconds))
        coverages[name] = judge_coverage([r.judge_source for r in scored], [r.judge_error or r.judge_reason for r in scored])
        calls = run.metrics.get("judge_calls")
        assessment = assess(scored, coverages[name], calls, run.seconds, args.seed)
        verdicts[name], inverted[name] = assessment.lines, assessment.inverted
        model = model or run.metrics.get("model")
    blocks = compare_blocks(stats, str(args.data), model, coverages, verdicts)
    (args.out / COMPARE_MD).write_text(to_markdown(blocks), encoding="utf-8")
    print_blocks(out, blocks)
    judged, not_inverted = _judged_enough(args, coverages, err), _not_inverted(inverted, err)
    return judged or not_inverted


GROUPS_MD = "groups.md"


def _group_modes(
    args: argparse.Namespace, base: RewardConfig, loaded: LoadedRows, out: Console, err: Console
) -> int:
    """Score the labelled groups once per group mode and write DIR/groups.md."""
    try:
        modes = [parse_group_mode(name, base.group) for name in args.group_modes]
    except ValueError as error:
        err.print(f"error: --group-modes: {error}", markup=False, highlight=False)
        return 2
    groups = labelled_groups(loaded.rows)
    if not groups:
        err.print("error: no labelled groups: no prompt has both a correct and an incorrect row")
        return 2
    with _progress(err, not args.no_progress) as progress:
        tasks = {name: progress.add_task(name, total=len(groups)) for name, _ in modes}
        stats = evaluate_group_modes(
            groups, base, modes, args.seed, lambda name, n: progress.advance(tasks[name], n)
        )
    blocks = group_modes_blocks(stats, str(args.data), args.min_judged)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / GROUPS_MD).write_text(to_markdown(blocks), encoding="utf-8")
    print_blocks(out, blocks)
    short = [s for s in stats if s.judged_share < args.min_judged]
    for s in short:
        label = "warning" if args.allow_fallback else "error"
        err.print(
            f"{label}: {s.mode}: "
            + ((s.coverage and s.coverage.shortfall()) or f"the judge decided {s.judged_share:.0%} of the members"),
            markup=False,
            emoji=False,
        )
    return 3 if short and not args.allow_fallback else 0


def _from_log(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Read judgment logs and write DIR/log_report.{md,html,json}."""
    try:
        summary = read_logs(args.from_log, args.top, args.high_reward, args.bucket_minutes)
    except OSError as error:
        err.print(f"error: cannot read {error.filename}: {error.strerror}", markup=False, highlight=False)
        return 2
    for problem in summary.problems[:SHOWN_PROBLEMS]:
        err.print(
            f"skipping {problem.file} line {problem.line}: {problem.message}", markup=False, highlight=False
        )
    if summary.bad_lines > SHOWN_PROBLEMS:
        err.print(f"... and {summary.bad_lines - SHOWN_PROBLEMS} more bad lines")
    if not summary.judgments:
        err.print("error: no judgments in " + ", ".join(summary.files), markup=False, highlight=False)
        return 2
    write_log_report(args.out, summary)
    audit = ""
    if summary.audit_lines:
        worst = summary.audit_forms[0]
        audit = (
            f"; shadow audit: {summary.audit_lines} rows, worst form {worst.name} (rule paid, judge rejected "
            f"{worst.rule_paid_judge_rejected} of {worst.rule_paid})"
        )
    out.print(
        f"{summary.judgments} judgments ({summary.bad_lines} lines skipped), sources: "
        + ", ".join(f"{name} {n}" for name, n in summary.sources.items())
        + f"; {len(summary.watch_list)} repeated high-reward completions{audit}; report: {args.out / LOG_REPORT_MD}",
        markup=False,
        highlight=False,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``judge-eval`` command."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    out, err = Console(), Console(stderr=True)
    if args.from_log:
        return _from_log(args, out, err)
    try:
        config = with_judge_url(args.config, args.judge_url)
        loaded = load_rows(args.data, args.label_field, args.limit, args.strict, args.map, args.group_by)
    except (JudgeError, MalformedInputError) as error:
        err.print(f"error: {error}", markup=False, highlight=False)
        return 2
    for problem in loaded.problems[:SHOWN_PROBLEMS]:
        err.print(f"skipping line {problem.line}: {problem.message}", markup=False, highlight=False)
    if len(loaded.problems) > SHOWN_PROBLEMS:
        err.print(f"... and {len(loaded.problems) - SHOWN_PROBLEMS} more malformed rows")
    if not loaded.rows:
        err.print(f"error: no valid rows in {args.data}")
        return 2
    if args.calibrate and (args.rule_only or args.profiles or args.strategies):
        err.print("error: --calibrate fits one judge: drop --rule-only, --profiles and --strategies")
        return 2
    try:
        if args.group_modes:
            return _group_modes(args, config, loaded, out, err)
        if args.profiles or args.strategies:
            args.out.mkdir(parents=True, exist_ok=True)
            return _compare(args, config, loaded, out, err)
    except JudgeStartupError as error:  # a judge that is down, or does not serve the model: one line
        err.print(f"error: {error}", markup=False, highlight=False, soft_wrap=True)
        return 2
    try:
        scored, judge_run = _score(args, config, loaded, err)
    except JudgeError as error:  # a calibration_file fitted for another judge, a judge down at start
        err.print(f"error: {error}", markup=False, highlight=False, soft_wrap=True)
        return 2
    summary = summarize(scored, args.top)
    metrics = judge_run.metrics if judge_run else None
    run = RunInfo(
        data=str(args.data),
        label_field=args.label_field,
        rule_only=args.rule_only,
        judge_url=None if args.rule_only else config.judge_url,
        model=metrics["model"] if metrics else None,
        mode=None if args.rule_only else config.mode,
        judge_seconds=judge_run.seconds if judge_run else None,
        judge_calls=metrics["judge_calls"] if metrics else None,
        problems=loaded.problems,
        coverage=(
            judge_coverage(
                [r.judge_source for r in scored], [r.judge_error or r.judge_reason for r in scored]
            )
            if judge_run
            else None
        ),
    )
    assessment = assess(scored, run.coverage, run.judge_calls, run.judge_seconds, args.seed)
    fit = _calibrated(args, config, scored, run.model, err) if args.calibrate else None
    fitted = fit.lines() if isinstance(fit, CalibrationFit) else []
    write_outputs(args.out, scored, summary, run, assessment, args.group_by, fitted)
    for line in [*assessment.lines, *fitted]:
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    _print_summary(out, summary, run, args.out)
    judged = _judged_enough(args, {"judge": run.coverage} if run.coverage else {}, err)
    inverted = _not_inverted({"judge": assessment.inverted}, err)
    return judged or inverted or (2 if isinstance(fit, CalibrationError) else 0)


def _calibrated(
    args: argparse.Namespace,
    config: RewardConfig,
    scored: Sequence[ScoredRow],
    model: str | None,
    err: Console,
) -> CalibrationFit | CalibrationError:
    """Fit ``--calibrate`` and write it, or say why the rows cannot support one."""
    try:
        fit = fit_calibration(
            scored, model, config.profile, config.mode, args.calibration_method, seed=args.seed
        )
    except CalibrationError as error:
        err.print(f"error: --calibrate: {error}", markup=False, highlight=False, soft_wrap=True)
        return error
    args.calibrate.parent.mkdir(parents=True, exist_ok=True)
    args.calibrate.write_text(fit.calibration.model_dump_json(indent=2) + "\n", encoding="utf-8")
    if fit.caution:
        err.print(
            f"calibration: {args.calibrate} written, but not recommended: {fit.caution}; "
            "leave calibration_file unset, or label more rows and fit again",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    else:
        err.print(
            f"calibration: {args.calibrate} (set calibration_file: {args.calibrate} in the reward config)"
        )
    return fit


def _judged_enough(args: argparse.Namespace, coverages: dict[str, JudgeCoverage], err: Console) -> int:
    """Exit code 3, with one line per variant, when a judge did not judge (unless --allow-fallback)."""
    failures = {name: c.failure(args.min_judged) for name, c in coverages.items()}
    failed = {name: reason for name, reason in failures.items() if reason}
    for name, reason in failed.items():
        label = "error" if not args.allow_fallback else "warning"
        err.print(f"{label}: {name}: {reason}", markup=False, highlight=False, soft_wrap=True)
    return 3 if failed and not args.allow_fallback else 0


def _not_inverted(inverted: dict[str, str | None], err: Console) -> int:
    """Exit code 4, with one line per variant, when a judge's scores are inverted (its AUROC's
    interval wholly below 0.5): training on them would reward wrong answers over right ones."""
    failed = {name: line for name, line in inverted.items() if line}
    for name, line in failed.items():
        err.print(f"error: {name}: {line}", markup=False, highlight=False, soft_wrap=True)
    return 4 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
