"""README.md and docs/*.md point only at files the repository holds.

Every markdown link that is not a URL resolves from its page (and its ``#anchor``, when it has
one, names a heading of the target page), and every path that starts at one of the
repository's source folders (``eval/data/sample.jsonl``, ``adapter/{rubrics,groups}/judge.py``,
``tests/e2e/test_*.py``) exists. A path a page says the reader makes (``# configs/x.yaml: ...``)
(on any page) is the reader's; the few others are listed in ``READERS_FILES`` with the reason.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
ROOTS = ("adapter", "judge_vllm", "judge_prompts", "eval", "tests", "configs", "docs", "scripts", ".ci")
# Paths under a source folder that the reader makes, with where the page says so.
READERS_FILES = {
    "configs/second-judge.yaml": "docs/eval.md: escalate_to names the reader's second judge config",
}

FENCE = re.compile(r"^\s*```.*?^\s*```", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
PATH = re.compile(r"(?<![\w./~$-])((?:" + "|".join(re.escape(r) for r in ROOTS) + r")/[\w./*{},-]*[\w*}/])")
MADE_BY_THE_READER = re.compile(r"#\s*((?:" + "|".join(ROOTS) + r")/[\w./-]+):")
BRACES = re.compile(r"\{([^{}]*)\}")


def _prose(text: str) -> str:
    """The page without its code blocks and code spans (where ``](`` is code, not a link)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def _anchors(text: str) -> set[str]:
    """The GitHub anchors of a page's headings: lower case, punctuation dropped, spaces -> '-'."""
    headings = re.findall(r"^#+\s+(.*?)\s*$", FENCE.sub("", text), re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def _expanded(path: str) -> list[str]:
    """``a/{b,c}/d`` -> ``a/b/d``, ``a/c/d``."""
    found = BRACES.search(path)
    if found is None:
        return [path]
    choices = found.group(1).split(",")
    return list(itertools.chain.from_iterable(
        _expanded(path[: found.start()] + choice + path[found.end() :]) for choice in choices
    ))  # fmt: skip


def _exists(path: str) -> bool:
    return any(REPO.glob(path)) if "*" in path else (REPO / path).exists()


def _resolves(target: str, text: str, folder: Path) -> bool:
    file, _, anchor = target.partition("#")
    resolved = (folder / file).resolve()
    if file and (not resolved.is_relative_to(REPO) or not resolved.exists()):
        return False
    return not anchor or anchor in _anchors(resolved.read_text() if file else text)


def broken_links(text: str, folder: Path) -> list[str]:
    """The relative links of a page's ``text`` (in ``folder``) whose file, or whose anchor in
    that file, does not exist; an anchor alone (``#x``) is looked up in ``text``."""
    links = LINK.findall(_prose(text))
    return [t for t in links if not re.match(r"[a-z]+:", t) and not _resolves(t, text, folder)]


def readers_files() -> set[str]:
    """The files some page says the reader makes (``# configs/x.yaml: ...``), and the listed ones."""
    return {f for page in PAGES for f in MADE_BY_THE_READER.findall(page.read_text())} | set(READERS_FILES)


def missing_paths(text: str, readers: set[str]) -> list[str]:
    """The paths under a source folder in a page's ``text`` (but ``readers``) that do not exist."""
    named = {p.rstrip(".,") for p in PATH.findall(text)}
    return sorted(p for p in named if any(q not in readers and not _exists(q) for q in _expanded(p)))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page):
    assert broken_links(page.read_text(), page.parent) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_repository_path_exists(page):
    assert missing_paths(page.read_text(), readers_files()) == []


def test_the_checks_bite():
    """A page that names a missing file, a missing anchor and a missing path fails each check;
    a link in code and the paths that exist pass."""
    text = (
        "# A title\n\nSee [gone](no-such-page.md), [bad anchor](eval.md#no-such-heading), "
        "[good anchor](eval.md#the-judgment-log), [here](#a-title), [there](#elsewhere), "
        "`eval/data/no_such.jsonl`, adapter/{rubrics,nowhere}/judge.py, tests/e2e/test_*.py and "
        "`eval/data/sample.jsonl`.\n\n```\n[code](not-a-link.md) eval/data/in_code.jsonl\n```\n"
    )
    assert broken_links(text, REPO / "docs") == ["no-such-page.md", "eval.md#no-such-heading", "#elsewhere"]
    assert missing_paths(text, readers_files()) == [
        "adapter/{rubrics,nowhere}/judge.py",
        "eval/data/in_code.jsonl",
        "eval/data/no_such.jsonl",
    ]


def test_readers_files_are_not_in_the_repository():
    """A listed reader's file that the repository now holds is a stale entry."""
    assert [p for p in READERS_FILES if (REPO / p).exists()] == []
