"""Where the project's labelled data lives: the ``kb/`` folder of a source checkout.

``citewall eval`` and ``citewall bench`` are development commands: they measure citewall on the
demo KB, its labelled questions and the red-team corpus, which ship with the repository, not in
the installed package. Run from elsewhere, they stop with a ``UserError`` saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from citewall.errors import UserError

T = TypeVar("T")

REPO_ROOT = Path(__file__).resolve().parents[2]
KB_DIR = REPO_ROOT / "kb"
DEMO_CARDS = KB_DIR / "demo" / "cards.jsonl"
HOSTILE_CARDS = KB_DIR / "hostile" / "cards.jsonl"
QUESTIONS_DIR = KB_DIR / "eval"
SUPPORT_LABELS = QUESTIONS_DIR / "support_labels.jsonl"
DANGLING_LABELS = QUESTIONS_DIR / "dangling_labels.jsonl"
REDTEAM_QUESTIONS = KB_DIR / "redteam" / "questions.jsonl"
#: The committed baseline ``citewall eval`` compares with.
BASELINE = REPO_ROOT / "evals" / "baseline.json"


def split_path(split: str) -> Path:
    """The labelled questions of ``split`` (``test`` or ``dev``)."""
    if split not in {"test", "dev"}:
        raise UserError(f"unknown split {split!r}; use test or dev")
    return require(QUESTIONS_DIR / f"questions.{split}.jsonl")


def require(path: Path) -> Path:
    """``path`` if it exists, else a ``UserError`` naming it and why it may be missing."""
    if not path.exists():
        raise UserError(
            f"{path} not found: evaluation and benchmarks use the labelled data in the kb/ "
            "folder of a citewall source checkout; run them from one"
        )
    return path


def read_jsonl(path: Path, what: str, parse: Callable[[dict[str, Any]], T]) -> list[T]:
    """Each non-blank line of ``path`` (a JSON object) turned into a ``T`` by ``parse``.

    A missing file, a line that is not a JSON object, or a missing, mistyped or invalid field
    (``KeyError``, ``TypeError`` or ``ValueError`` from ``parse``) is a ``UserError`` naming the
    file, the line and ``what`` the line should be.
    """
    out: list[T] = []
    for n, line in enumerate(require(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise TypeError(f"a JSON {type(row).__name__}, not an object")
            out.append(parse(row))
        except (ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{path}:{n}: not {what} ({exc})") from None
    return out
