"""How much of a data file the rule-first cascade decides without the judge (no judge needed).

    python -m eval.cascade_share eval/data/sample.jsonl [more.jsonl ...]

Per file: rows the pre-checks decide, rows the rules decide by proof, rows left to the judge, and
any row decided 1.0 whose label is 0 (a wrong answer paid without the judge: must be none).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from adapter.pipeline.cascade import rule_first
from adapter.pipeline.prechecks import precheck, trace_precheck
from adapter.rules import RuleSettings
from eval.data_files import read_records
from eval.dataset import EvalRow, parse_record
from judge_vllm.schemas import JudgeRequest
from judge_vllm.settings import JudgeClientConfig
from judge_vllm.trajectory import fit_trajectory

__all__ = ["main", "share"]


def share(path: Path) -> str:
    """One line: the file's rows decided by pre-checks, by rule, left to the judge, wrong paid."""
    parsed = [parse_record(k, record) for k, record in read_records(path) if isinstance(record, dict)]
    rows = [row for row in parsed if isinstance(row, EvalRow)]
    shown_chars = JudgeClientConfig.model_fields["max_completion_chars"].default
    prechecked = ruled = 0
    wrong_paid: list[str] = []
    for row in rows:
        steps = row.trajectory
        if precheck(row.completion, row.answer, row.answer_type) is not None or (
            steps is not None and trace_precheck(fit_trajectory(steps, shown_chars)) is not None
        ):
            prechecked += 1
            continue
        request = JudgeRequest(prompt=row.prompt, completion=row.completion, answer=row.answer, answer_type=row.answer_type)
        decision = rule_first(request, RuleSettings())
        ruled += decision.decided
        if decision.decided and decision.verdict.reward == 1.0 and row.label == 0:
            wrong_paid.append(row.id)
    total = len(rows)
    decided = prechecked + ruled
    return (
        f"{path}: {total} rows; decided without the judge {decided} ({decided / max(total, 1):.1%}: "
        f"pre-checks {prechecked}, rule {ruled}); judge {total - decided}; wrong answers paid: "
        f"{len(wrong_paid)} {wrong_paid or ''}"
    ).rstrip()


def main() -> None:
    """Print the share for each file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    for path in parser.parse_args().files:
        print(share(path))


if __name__ == "__main__":
    main()
