"""The repository points only at what it contains.

Every relative path to a ``.md``, ``.py`` or ``.txt`` file that README.md and docs/**/*.md
mention (Markdown links, and paths in code spans or blocks: from a top-level folder of the
repository, from ``./``/``../``, or within a package of citewall) exists, and so does every
repository path a module or test names. Decisions are cited by the records in
``docs/decisions/``: no file under citewall/, evals/, tests/, docs/ or README.md names the design
document the project started from, or a decision record by a number that has no file in
``docs/decisions/``.

This module is not scanned for the forbidden names itself: its negative controls spell them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DECISIONS = ROOT / "docs" / "decisions"
SUFFIXES = r"(?:md|py|txt)"

#: ``[text](target)``: the target up to an optional ``#anchor`` or title.
_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>#]+)")
#: A path in code (a span, a block, a module's text): at least one folder, one of the suffixes.
_PATH = re.compile(rf"(?<![\w./@-])((?:\.\.?/)*[\w.-]+(?:/[\w.-]+)+\.{SUFFIXES})(?![\w/-])")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"`([^`\n]+)`")
#: The design document the project started from, and its records' own numbering.
_FOREIGN = re.compile(r"DESIGN\.md|ADR-0")
#: "ADR" or "decision"/"decision record" with what follows it, to check the number.
_ADR = re.compile(r"\bADR\b[\s-]*(\d+)?")
_DECISION_NUMBER = re.compile(r"\bdecisions?(?:\s+records?)?\s+(\d{4})\b")
_UNNAMED_RECORD = re.compile(r"\bthe\s+decision\s+record\b(?!\s+\d{4})", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Problem:
    """One reference a reader cannot follow: where it is, and what it points at."""

    where: str
    target: str

    def __str__(self) -> str:
        return f"{self.where}: {self.target}"


def _top_level(root: Path) -> frozenset[str]:
    return frozenset(p.name for p in root.iterdir())


def _code_paths(text: str) -> Iterator[str]:
    """Paths inside fenced blocks and inline code spans."""
    for block in _FENCE.finditer(text):
        yield from _PATH.findall(block.group(0))
    for span in _SPAN.finditer(_FENCE.sub("", text)):
        yield from _PATH.findall(span.group(1))


def _exists(root: Path, base: Path, target: str) -> bool | None:
    """Whether a path in code exists; ``None`` when it does not look like a repository path.

    ``./`` and ``../`` resolve from ``base``; a path whose first folder is a top-level folder of
    the repository (``citewall/``, ``tests/``, ``docs/``...) from the root; one whose first folder
    is a package of citewall or of its evaluations (``citations/markers.py``,
    ``quality/answers.py``: a module named within its package) from that package.
    """
    if target.startswith(("./", "../")):
        return (base / target).exists()
    first = target.split("/", 1)[0]
    if first in _top_level(root):
        return (root / target).exists()
    evals = root / "evals" / "citewall_evals"
    packages = [p for p in (root / "citewall", evals) if (p / first).is_dir()]
    return any((p / target).exists() for p in packages) if packages else None


def broken_doc_paths(root: Path, page: Path, text: str) -> list[Problem]:
    """Relative paths a Markdown page mentions that do not exist under ``root``.

    Links resolve from the page's folder (as a Markdown renderer does); paths in code as
    ``_exists`` says. A bare file name (``reconcile.py``) is not checked: it names a module the
    sentence has already placed.
    """
    where = page.relative_to(root).as_posix()
    problems = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or not re.search(rf"\.{SUFFIXES}$", target):
            continue  # a URL (http:, mailto:), or not a file kind this check covers
        if not (page.parent / target).exists():
            problems.append(Problem(where, target))
    for target in _code_paths(text):
        if _exists(root, page.parent, target) is False:
            problems.append(Problem(where, target))
    return problems


def broken_source_paths(root: Path, name: str, text: str) -> list[Problem]:
    """Repository paths a module or test names (docstrings, comments) that do not exist."""
    return [
        Problem(name, target)
        for target in _PATH.findall(text)
        if target.split("/", 1)[0] in _top_level(root) and not (root / target).exists()
    ]


def _numbers(decisions: Path) -> frozenset[int]:
    return frozenset(
        int(p.name[:4]) for p in decisions.glob("[0-9][0-9][0-9][0-9]-*.md") if p.is_file()
    )


def unresolved_decisions(root: Path, name: str, text: str) -> list[Problem]:
    """References in ``text`` to decisions the repository does not hold.

    The founding design document by name, the founding records' own ``ADR-0...`` numbers, an
    ``ADR`` or "the decision record" without a number, and a decision number with no record in
    ``docs/decisions/``.
    """
    numbers = _numbers(root / "docs" / "decisions")
    problems = [Problem(name, m.group(0)) for m in _FOREIGN.finditer(text)]
    for m in _ADR.finditer(text):
        if m.group(1) is None or int(m.group(1)) not in numbers:
            problems.append(Problem(name, m.group(0).strip()))
    for m in _DECISION_NUMBER.finditer(text):
        if int(m.group(1)) not in numbers:
            problems.append(Problem(name, m.group(0)))
    problems += [Problem(name, m.group(0)) for m in _UNNAMED_RECORD.finditer(text)]
    return problems


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _sources() -> list[Path]:
    here = Path(__file__).resolve()
    return [
        p
        for folder in ("citewall", "evals", "tests")
        for p in sorted((ROOT / folder).rglob("*.py"))
        if p != here
    ]


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_every_path_the_docs_mention_exists() -> None:
    problems = []
    for page in _pages():
        problems += broken_doc_paths(ROOT, page, page.read_text(encoding="utf-8"))
    assert [str(p) for p in problems] == []


def test_every_path_the_code_mentions_exists() -> None:
    problems = []
    for path in _sources():
        problems += broken_source_paths(ROOT, _name(path), path.read_text(encoding="utf-8"))
    assert [str(p) for p in problems] == []


def test_decisions_are_cited_by_records_the_repository_holds() -> None:
    problems = []
    for path in [*_pages(), *_sources()]:
        problems += unresolved_decisions(ROOT, _name(path), path.read_text(encoding="utf-8"))
    assert [str(p) for p in problems] == []


def test_every_decision_record_is_listed_on_the_index_page() -> None:
    index = (ROOT / "docs" / "decisions.md").read_text(encoding="utf-8")
    records = sorted(p.name for p in DECISIONS.glob("[0-9][0-9][0-9][0-9]-*.md"))
    assert records, "docs/decisions/ holds no record"
    assert [r for r in records if f"decisions/{r}" not in index] == []


def _fake_repo(tmp_path: Path) -> Path:
    for folder in ("docs/decisions", "citewall/citations", "evals/citewall_evals/quality", "tests"):
        (tmp_path / folder).mkdir(parents=True)
    for file in (
        "docs/decisions/0002-external-only-citations.md",
        "docs/api.md",
        "citewall/real.py",
        "citewall/citations/markers.py",
        "evals/citewall_evals/quality/answers.py",
    ):
        (tmp_path / file).write_text("")
    return tmp_path


def test_the_path_checks_catch_a_missing_file(tmp_path: Path) -> None:
    # Negative control: a page and a module pointing at files the fake repository lacks.
    root = _fake_repo(tmp_path)
    page = root / "docs" / "api.md"
    text = (
        "See [the record](decisions/0002-external-only-citations.md) and [gone](gone.md),\n"
        "`citewall/real.py`, `citewall/missing.py`, `../README.md`, `markers.py` (a name),\n"
        "`citations/markers.py`, `quality/answers.py`, `citations/gone.py`, `DIR/out.md`,\n"
        "[the site](https://example.com/x.md).\n"
        "```\npython -m pytest tests/nowhere.py\n```\n"
    )
    found = [p.target for p in broken_doc_paths(root, page, text)]
    assert found == [
        "gone.md",
        "tests/nowhere.py",
        "citewall/missing.py",
        "../README.md",
        "citations/gone.py",
    ]
    module = '"""Checked by tests/nowhere.py; see docs/api.md and docs/missing.md."""\n'
    found = [p.target for p in broken_source_paths(root, "m.py", module)]
    assert found == ["tests/nowhere.py", "docs/missing.md"]


def test_the_decision_check_catches_foreign_and_unknown_references(tmp_path: Path) -> None:
    # Negative control: each kind of reference a reader of the repository cannot open.
    root = _fake_repo(tmp_path)
    text = (
        "per DESIGN.md; see ADR-0033; the ADR's choices; the decision record's open surface;\n"
        "decision 0002 (fine), ADR 0002 (fine), decision\n0007 (no record, across a line).\n"
    )
    found = [p.target for p in unresolved_decisions(root, "m.py", text)]
    assert found == [
        "DESIGN.md",
        "ADR-0",
        "ADR-0033",
        "ADR",
        "decision\n0007",
        "the decision record",
    ]
