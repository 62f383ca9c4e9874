"""Conformance of our rule reward with math-verify's own test cases.

Downloads math-verify's source distribution from PyPI (cached), collects every literal
``(gold, pred, expected)`` case from the ``pytest.mark.parametrize`` tables in its tests,
grades each pred against its gold with ``adapter.rules.grade`` (answer_type inferred, as a
user without types would call it), and reports agreement with the expected verdicts.

    python -m eval.math_verify_conformance [--write docs/rules.md]
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import tarfile
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from adapter.rules import grade

__all__ = ["Case", "ConformanceReport", "load_cases", "run"]

CACHE = Path("~/.cache/judge-vllm/math-verify-sdist").expanduser()
CASE_ARGS = ("gold", "pred", "expected")


class Case(BaseModel):
    """One expected verdict from math-verify's tests."""

    source: str
    gold: str
    pred: str
    expected: bool


class ConformanceReport(BaseModel):
    """Agreement overall, per test file, and the disagreements."""

    version: str
    total: int
    agree: int
    per_file: dict[str, tuple[int, int]]
    disagreements: list[tuple[Case, float, str]]

    @property
    def rate(self) -> float:
        """Share of cases where our verdict matches math-verify's expected one."""
        return self.agree / self.total if self.total else 0.0


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


def _literal_cases(tree: ast.AST, source: str) -> list[Case]:
    cases = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", "") == "parametrize"
            and len(node.args) >= 2
        ):
            continue
        try:
            names = ast.literal_eval(node.args[0])
        except ValueError:
            continue
        names = [n.strip() for n in (names.split(",") if isinstance(names, str) else names)]
        if not all(arg in names for arg in CASE_ARGS) or not isinstance(node.args[1], ast.List):
            continue
        index = [names.index(arg) for arg in CASE_ARGS]
        for element in node.args[1].elts:
            try:
                row = ast.literal_eval(element)
            except ValueError:
                continue
            gold, pred, expected = (row[i] for i in index)
            if isinstance(gold, str) and isinstance(pred, str):
                cases.append(Case(source=source, gold=gold, pred=pred, expected=bool(expected)))
    return cases


def load_cases() -> tuple[str, list[Case]]:
    """(math-verify version, every literal case in its tests)."""
    archive = _sdist()
    cases: list[Case] = []
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if "/tests/" in member.name and member.name.endswith(".py"):
                handle = tar.extractfile(member)
                if handle is not None:
                    cases += _literal_cases(ast.parse(handle.read()), Path(member.name).name)
    return archive.name.removeprefix("math_verify-").removesuffix(".tar.gz"), cases


def run() -> ConformanceReport:
    """Grade every case and compare with math-verify's expected verdict."""
    version, cases = load_cases()
    per_file: Counter[str] = Counter()
    agree_file: Counter[str] = Counter()
    disagreements = []
    for case in cases:
        verdict = grade("", case.pred, case.gold, None)
        per_file[case.source] += 1
        if (verdict.reward >= 0.5) == case.expected:
            agree_file[case.source] += 1
        else:
            disagreements.append((case, verdict.reward, verdict.explanation))
    return ConformanceReport(
        version=version,
        total=len(cases),
        agree=sum(agree_file.values()),
        per_file={f: (agree_file[f], n) for f, n in sorted(per_file.items())},
        disagreements=disagreements,
    )


def to_markdown(report: ConformanceReport) -> str:
    """The conformance section for docs/rules.md."""
    lines = [
        "## math-verify conformance",
        "",
        f"Command: `python -m eval.math_verify_conformance` (math-verify {report.version} test cases).",
        f"Agreement: **{report.agree}/{report.total} = {report.rate:.1%}**.",
        "",
        "| test file | agree / cases |",
        "|---|---|",
        *(f"| {f} | {a} / {n} |" for f, (a, n) in report.per_file.items()),
        "",
        "Disagreements (expected verdict, our reward, our explanation):",
        "",
        "| file | gold | pred | expected | ours | why |",
        "|---|---|---|---|---|---|",
    ]
    for case, reward, why in report.disagreements:
        cells = [
            case.source,
            case.gold[:60],
            case.pred[:80],
            str(int(case.expected)),
            f"{reward:g}",
            why[:80],
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    """Print the agreement; with --write, replace the conformance section of a markdown file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="markdown file whose conformance section is rewritten")
    args = parser.parse_args()
    report = run()
    print(f"math-verify {report.version}: {report.agree}/{report.total} agree ({report.rate:.1%})")
    if args.write:
        text = args.write.read_text() if args.write.exists() else ""
        head = text.split("## math-verify conformance")[0].rstrip()
        args.write.write_text((head + "\n\n" if head else "") + to_markdown(report))


if __name__ == "__main__":
    main()
