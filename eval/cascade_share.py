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
from dataclasses import dataclass
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

__all__ = ["Decided", "decisions", "main", "share"]

Decision = str  # "pre-checks", "rule", "judge"


@dataclass(frozen=True)
class Decided:
    """One row: its id, its --by group, who decides it without the judge, whether a wrong answer is
    paid and whether a right one is refused."""

    id: str
    group: str
    decision: Decision
    wrong_paid: bool
    right_refused: bool


def _decided(row: EvalRow, shown_chars: int) -> tuple[Decision, bool, bool]:
    """Who decides the row without the judge, whether a wrong answer is paid and a right one refused."""
    try:
        graded = answer_part(row.completion)
    except UnclosedReasoning:
        return "pre-checks", False, row.label == 1  # no final answer: reward 0
    steps = row.trajectory
    if precheck(graded, row.answer, row.answer_type) is not None or (
        steps is not None and trace_precheck(fit_trajectory(steps, shown_chars)) is not None
    ):
        return "pre-checks", False, row.label == 1
    request = JudgeRequest(
        prompt=row.prompt, completion=row.completion, answer=row.answer, answer_type=row.answer_type
    )
    decision = rule_first(request, RuleSettings())
    if not decision.decided:
        return "judge", False, False
    paid = decision.verdict.reward == 1.0
    return "rule", paid and row.label == 0, not paid and row.label == 1


def _line(name: str, rows: list[Decided]) -> str:
    total = len(rows)
    prechecked = sum(r.decision == "pre-checks" for r in rows)
    ruled = sum(r.decision == "rule" for r in rows)
    wrong_paid = [r.id for r in rows if r.wrong_paid]
    right_refused = [r.id for r in rows if r.right_refused]
    decided = prechecked + ruled
    return (
        f"{name}: {total} rows; decided without the judge {decided} ({decided / max(total, 1):.1%}: "
        f"pre-checks {prechecked}, rule {ruled}); judge {total - decided}; "
        + "; ".join(f"{what}: {len(ids)} {ids or ''}".rstrip()
                    for what, ids in (("right answers refused", right_refused), ("wrong answers paid", wrong_paid)))
    )  # fmt: skip


def decisions(path: Path, by: str | None = None) -> list[Decided]:
    """Each row of ``path``: who decides it without the judge, and whether a wrong answer is paid."""
    parsed = [
        parse_record(k, record, group_by=by or DEFAULT_GROUP_BY)
        for k, record in read_records(path)
        if isinstance(record, dict)
    ]
    rows = [row for row in parsed if isinstance(row, EvalRow)]
    shown_chars = JudgeClientConfig.model_fields["max_completion_chars"].default
    return [Decided(row.id, row.group or "-", *_decided(row, shown_chars)) for row in rows]


def share(path: Path, by: str | None = None) -> list[str]:
    """One line for the file, then (with ``by``) one per value of that column."""
    rows = decisions(path, by)
    lines = [_line(str(path), rows)]
    if by is not None:
        groups: dict[str, list[Decided]] = defaultdict(list)
        for row in rows:
            groups[row.group].append(row)
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
