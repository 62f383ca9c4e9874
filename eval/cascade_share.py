"""How much of a data file the rule-first cascade decides without the judge (no judge needed).

    python -m eval.cascade_share eval/data/sample.jsonl [more.jsonl ...]

Per file: rows the pre-checks decide, rows the rules decide by proof, rows left to the judge, and
any row decided 1.0 whose label is 0 (a wrong answer paid without the judge: must be none).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from adapter.pipeline.cascade import rule_first
from adapter.pipeline.prechecks import precheck
from adapter.rules import RuleSettings
from eval.data_files import read_records
from judge_vllm.schemas import JudgeRequest

__all__ = ["main", "share"]


def share(path: Path) -> str:
    """One line: the file's rows decided by pre-checks, by rule, left to the judge, wrong paid."""
    rows = [record for _, record in read_records(path) if isinstance(record, dict)]
    prechecked = ruled = 0
    wrong_paid: list[str] = []
    for row in rows:
        completion, answer = str(row.get("completion", "")), str(row.get("answer") or "")
        answer_type = row.get("answer_type")
        kind = answer_type if isinstance(answer_type, str) else None
        if precheck(completion, answer, kind) is not None:
            prechecked += 1
            continue
        prompt = str(row.get("prompt", ""))
        request = JudgeRequest(prompt=prompt, completion=completion, answer=answer, answer_type=kind)
        decision = rule_first(request, RuleSettings())
        ruled += decision.decided
        if decision.decided and decision.verdict.reward == 1.0 and row.get("label") == 0:
            wrong_paid.append(str(row.get("id", "?")))
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
