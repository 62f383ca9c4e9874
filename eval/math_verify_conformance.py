"""Conformance of our rule reward with math-verify's own test cases.

Downloads math-verify's source distribution from PyPI (cached under ``~/.cache/judge-vllm/``),
collects every literal case from the ``pytest.mark.parametrize`` tables in its tests, and checks
our rule reward against the expected verdicts:

- ``(gold, pred, expected)`` rows (``result`` in some files): ``grade(prompt="", pred, gold,
  "MATH_EXPRESSIONS")``, reward >= 0.5 read as "equivalent". The same rows are also graded with
  the answer type inferred from the gold, as a caller without types gets them. A rule pays only
  what its canonical grammar proves: most of math-verify's cases (text, sets, intervals, several
  boxes) are left to the judge, so what must hold is that no verdict the rule calls proven is
  wrong (``wrong_proofs``), with the share it proves reported beside it.
- ``(pred, expected, config)`` rows of its string (choice letter) extraction tests:
  ``extract_final_answer(pred, "MULTIPLE_CHOICE")`` against the expected letter.

Rows whose extra parameters select a non-default math-verify option (``strict=False``,
``allow_set_relation_comp=True``, a ``precision`` other than 6) test behaviour our grader does not
offer; they are reported apart and not counted in the agreement rate.

    python -m eval.math_verify_conformance [--write docs/rules.md]
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import tarfile
import time
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from adapter.rules import extract_final_answer, grade

__all__ = ["Case", "ConformanceReport", "Outcome", "load_cases", "main", "run", "to_markdown"]

CACHE = Path("~/.cache/judge-vllm/math-verify-sdist").expanduser()
MATH_TYPE = "MATH_EXPRESSIONS"
DEFAULT_OPTIONS = {"precision": 6, "strict": True, "allow_set_relation_comp": False}
SECTION = "## math-verify conformance"


class Case(BaseModel):
    """One expected verdict (or extraction) from math-verify's tests."""

    model_config = ConfigDict(frozen=True)

    source: str
    test: str
    kind: str  # "verdict" or "extraction"
    gold: str
    pred: str
    expected: bool
    options: dict[str, bool | int | float | str] = {}

    @property
    def default_options(self) -> bool:
        """True unless the row selects a math-verify option our grader does not offer."""
        return all(DEFAULT_OPTIONS.get(name, value) == value for name, value in self.options.items())


class Outcome(BaseModel):
    """Our result on one case."""

    model_config = ConfigDict(frozen=True)

    case: Case
    agree: bool
    agree_inferred: bool
    proven: bool = False
    proven_inferred: bool = False
    ours: str
    explanation: str


class ConformanceReport(BaseModel):
    """Agreement overall, per test file, and the disagreements."""

    version: str
    skipped_rows: int
    seconds: float
    outcomes: list[Outcome]

    @property
    def counted(self) -> list[Outcome]:
        """Outcomes on cases that use math-verify's default options."""
        return [o for o in self.outcomes if o.case.default_options]

    @property
    def total(self) -> int:
        """Number of counted cases."""
        return len(self.counted)

    @property
    def agree(self) -> int:
        """Counted cases where we agree with math-verify's expected verdict."""
        return sum(o.agree for o in self.counted)

    @property
    def rate(self) -> float:
        """Share of counted cases where our verdict matches math-verify's expected one."""
        return self.agree / self.total if self.total else 0.0

    @property
    def proven(self) -> int:
        """Counted verdict cases the rule decides by proof (the rest go to the judge)."""
        return sum(o.proven for o in self.counted)

    @property
    def wrong_proofs(self) -> int:
        """Counted cases the rule decides by proof against math-verify's expected verdict, with the
        answer type given or inferred."""
        return sum((o.proven and not o.agree) or (o.proven_inferred and not o.agree_inferred) for o in self.counted)

    @property
    def rate_inferred(self) -> float:
        """The same share when the answer type is inferred from the gold answer."""
        return sum(o.agree_inferred for o in self.counted) / self.total if self.total else 0.0


def _sdist() -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    archives = sorted(CACHE.glob("math_verify-*.tar.gz"))
    if not archives:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:", "--no-deps",
             "math-verify", "-d", str(CACHE)],
            check=True,
        )  # fmt: skip
        archives = sorted(CACHE.glob("math_verify-*.tar.gz"))
    return archives[-1]


def _row(names: list[str], element: ast.expr, source: str, test: str) -> Case | None:
    """A case from one parametrize row, or None if the row is not a literal we can read."""
    if names[:3] == ["pred", "expected", "config"] and isinstance(element, ast.Tuple):
        config = element.elts[2]
        if (
            isinstance(config, ast.Call)
            and config.keywords
            and any(k.arg == "strings" for k in config.keywords)
        ):
            return None  # custom option strings ("U"): not option letters A-J
        pred, expected = (ast.literal_eval(e) for e in element.elts[:2])
        letter = expected[1] if expected else ""
        return Case(
            source=source, test=test, kind="extraction", gold=letter, pred=pred, expected=bool(expected)
        )
    values = dict(zip(names, ast.literal_eval(element), strict=True))
    verdict = values.pop("expected", values.pop("result", None))
    gold, pred = values.pop("gold", None), values.pop("pred", None)
    if not (isinstance(gold, str) and isinstance(pred, str) and verdict is not None):
        return None
    return Case(
        source=source, test=test, kind="verdict", gold=gold, pred=pred, expected=bool(verdict), options=values
    )


def _cases_in(tree: ast.AST, source: str) -> tuple[list[Case], int]:
    cases, skipped = [], 0
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        for node in function.decorator_list:
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "parametrize"):
                continue
            if len(node.args) < 2 or not isinstance(node.args[1], ast.List):
                continue
            names = ast.literal_eval(node.args[0])
            names = [n.strip() for n in (names.split(",") if isinstance(names, str) else names)]
            if "pred" not in names:
                continue
            for element in node.args[1].elts:
                try:
                    case = _row(names, element, source, function.name)
                except (ValueError, TypeError, SyntaxError):
                    case = None  # an f-string or a call: not a literal
                if case is None:
                    skipped += 1
                else:
                    cases.append(case)
    return cases, skipped


def load_cases() -> tuple[str, list[Case], int]:
    """(math-verify version, every literal case in its tests, number of rows skipped)."""
    archive = _sdist()
    cases: list[Case] = []
    skipped = 0
    with tarfile.open(archive) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if "/tests/" in member.name and member.name.endswith(".py"):
                handle = tar.extractfile(member)
                if handle is not None:
                    found, missed = _cases_in(ast.parse(handle.read()), Path(member.name).name)
                    cases += found
                    skipped += missed
    version = archive.name.removeprefix("math_verify-").removesuffix(".tar.gz")
    return version, cases, skipped


def _agrees(case: Case, answer_type: str | None) -> tuple[bool, bool, str, str]:
    """(we agree with the expected result, the rule called it proven, what we extracted or
    rewarded, why)."""
    if case.kind == "extraction":
        letters = extract_final_answer(case.pred, "MULTIPLE_CHOICE")
        agree = letters == case.gold.upper() if case.expected else letters is None
        return agree, False, letters or "none", "choice letter extraction"
    verdict = grade("", case.pred, case.gold, answer_type)
    agree = (verdict.reward >= 0.5) == case.expected
    return agree, verdict.proven, f"{verdict.reward:g}", f"{verdict.reason}: {verdict.explanation}"


def run() -> ConformanceReport:
    """Grade every case and compare with math-verify's expected verdict."""
    started = time.monotonic()
    version, cases, skipped = load_cases()
    outcomes = []
    for case in cases:
        agree, proven, shown, why = _agrees(case, MATH_TYPE)
        agree_inferred, proven_inferred, _, _ = _agrees(case, None)
        outcomes.append(
            Outcome(
                case=case, agree=agree, agree_inferred=agree_inferred, proven=proven,
                proven_inferred=proven_inferred, ours=shown, explanation=why,
            )
        )  # fmt: skip
    return ConformanceReport(
        version=version, skipped_rows=skipped, seconds=time.monotonic() - started, outcomes=outcomes
    )


def _cell(text: str, limit: int) -> str:
    text = text.replace("\n", " ").replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def to_markdown(report: ConformanceReport) -> str:
    """The conformance section for docs/rules.md."""
    per_file: Counter[str] = Counter(o.case.source for o in report.counted)
    agree_file: Counter[str] = Counter(o.case.source for o in report.counted if o.agree)
    apart = [o for o in report.outcomes if not o.case.default_options]
    disagreements = [o for o in report.counted if not o.agree]
    lines = [
        SECTION,
        "",
        f"Command: `python -m eval.math_verify_conformance --write docs/rules.md` (math-verify "
        f"{report.version}, every literal row of the `parametrize` tables in its `tests/`; "
        f"{report.skipped_rows} non-literal rows skipped; {report.seconds:.0f} s).",
        "",
        f"- Decided by proof: {report.proven}/{report.total}; **wrong proofs: {report.wrong_proofs}** (the rest"
        " is the judge's: outside the canonical grammar, or not proven).",
        f"- Agreement with answer_type `{MATH_TYPE}`: {report.agree}/{report.total} = {report.rate:.1%}.",
        f"- Agreement with the answer type inferred from the gold: {report.rate_inferred:.1%}.",
        f"- Rows that select a non-default math-verify option (not counted): "
        f"{sum(o.agree for o in apart)}/{len(apart)} agree.",
        "",
        "| test file | agree / cases |",
        "|---|---|",
        *(f"| {f} | {agree_file[f]} / {n} |" for f, n in sorted(per_file.items())),
        "",
        "Disagreements: counted cases first, then rows with a non-default option (expected verdict, ours, why):",
        "",
        "| file | test | gold | pred | expected | ours | why |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in disagreements + apart:
        if o.agree and not o.case.default_options:
            continue
        c = o.case
        options = "" if c.default_options else f" ({', '.join(f'{k}={v}' for k, v in c.options.items())})"
        lines.append(
            f"| {c.source} | {c.test}{options} | `{_cell(c.gold, 50)}` | `{_cell(c.pred, 70)}` | "
            f"{int(c.expected)} | {o.ours} | {_cell(o.explanation, 70)} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Print the agreement; with --write, replace the conformance section of a markdown file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="markdown file whose conformance section is rewritten")
    args = parser.parse_args()
    report = run()
    print(
        f"math-verify {report.version}: {report.agree}/{report.total} agree ({report.rate:.1%}) "
        f"as {MATH_TYPE}; {report.rate_inferred:.1%} with the type inferred; "
        f"{report.proven} decided by proof, {report.wrong_proofs} wrong proofs"
    )
    for outcome in report.counted:
        if not outcome.agree:
            print(
                f"  disagree: {outcome.case.source} {outcome.case.gold[:40]!r} vs {outcome.case.pred[:60]!r}"
            )
    if args.write:
        text = args.write.read_text() if args.write.exists() else ""
        head, _, rest = text.partition(SECTION)
        tail = rest.split("\n## ", 1)[1] if "\n## " in rest else ""
        parts = [head.rstrip(), to_markdown(report).rstrip()] + (["## " + tail.rstrip()] if tail else [])
        args.write.write_text("\n\n".join(p for p in parts if p) + "\n")


if __name__ == "__main__":
    main()
