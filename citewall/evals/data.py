"""Where the project's labelled data lives: the ``kb/`` folder of a source checkout.

``citewall eval`` and ``citewall bench`` are development commands: they measure citewall on the
demo KB, its labelled questions and the red-team corpus, which ship with the repository, not in
the installed package. Run from elsewhere, they stop with a ``UserError`` saying so.
"""

from __future__ import annotations

from pathlib import Path

from citewall.errors import UserError

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
