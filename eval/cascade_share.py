"""How much of a data file the rule-first cascade decides without the judge (no judge needed).

    python -m eval.cascade_share eval/data/sample.jsonl [more.jsonl ...] [--by style]

Per file (and with ``--by COLUMN``, per value of that column): rows the pre-checks decide, rows
the rules decide by proof, rows left to the judge, and any row decided 1.0 whose label is 0 (a
wrong answer paid without the judge). As in the reward pipeline, the pre-checks read the
completion after its reasoning block.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from adapter.pipeline.cascade import rule_first
from adapter.pipeline.prechecks import precheck, trace_precheck
from adapter.rules import RuleSettings
from eval.data_files import read_records
from eval.dataset import DEFAULT_GROUP_BY, EvalRow, parse_record
from judge_vllm.reasoning import UnclosedReasoning, answer_part
from judge_vllm.schemas import JudgeRequest
from judge_vllm.settings import JudgeClientConfig
from judge_vllm.trajectory import fit_trajectory

__all__ = ["main", "share"]

Decision = str  # "pre-checks", "rule", "judge"


def _decided(row: EvalRow, shown_chars: int) -> tuple[Decision, bool]:
    """Who decides the row without the judge, and whether a wrong answer is paid."""
    try:
        graded = answer_part(row.completion)
    except UnclosedReasoning:
        return "pre-checks", False  # no final answer: reward 0
    steps = row.trajectory
    if precheck(graded, row.answer, row.answer_type) is not None or (
        steps is not None and trace_precheck(fit_trajectory(steps, shown_chars)) is not None
    ):
        return "pre-checks", False
    request = JudgeRequest(
        prompt=row.prompt, completion=row.completion, answer=row.answer, answer_type=row.answer_type
    )
    decision = rule_first(request, RuleSettings())
    if not decision.decided:
        return "judge", False
    return "rule", decision.verdict.reward == 1.0 and row.label == 0


def _line(name: str, decisions: list[tuple[str, Decision, bool]]) -> str:
    total = len(decisions)
    prechecked = sum(d == "pre-checks" for _, d, _ in decisions)
    ruled = sum(d == "rule" for _, d, _ in decisions)
    wrong_paid = [row_id for row_id, _, wrong in decisions if wrong]
    decided = prechecked + ruled
    return (
        f"{name}: {total} rows; decided without the judge {decided} ({decided / max(total, 1):.1%}: "
        f"pre-checks {prechecked}, rule {ruled}); judge {total - decided}; wrong answers paid: "
        f"{len(wrong_paid)} {wrong_paid or ''}"
    ).rstrip()


def share(path: Path, by: str | None = None) -> list[str]:
    """One line for the file, then (with ``by``) one per value of that column."""
    parsed = [
        parse_record(k, record, group_by=by or DEFAULT_GROUP_BY)
        for k, record in read_records(path)
        if isinstance(record, dict)
    ]
    rows = [row for row in parsed if isinstance(row, EvalRow)]
    shown_chars = JudgeClientConfig.model_fields["max_completion_chars"].default
    decisions = [(row.id, *_decided(row, shown_chars)) for row in rows]
    lines = [_line(str(path), decisions)]
    if by is not None:
        groups: dict[str, list[tuple[str, Decision, bool]]] = defaultdict(list)
        for row, decision in zip(rows, decisions, strict=True):
            groups[row.group or "-"].append(decision)
        lines += [_line(f"  {by}={name}", groups[name]) for name in sorted(groups)]
    return lines


def main() -> None:
    """Print the share for each file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--by", help="also one line per value of this column (e.g. style, category)")
    args = parser.parse_args()
    for path in args.files:
        print("\n".join(share(path, args.by)))


if __name__ == "__main__":
    main()
