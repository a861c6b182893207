"""Where the project's labelled data lives: the ``kb/`` and ``evals/`` folders of a checkout.

``citewall eval`` and ``citewall bench`` are development commands: they measure citewall on the
demo KB, its labelled questions and the red-team corpus, which ship with the repository, not in
the installed package. Run from elsewhere, they stop with a ``UserError`` saying so.

Each knowledge base ``citewall eval --kb`` measures is a ``Dataset``: its corpus and the folder of
its labelled files (``questions``, ``nuggets``, ``unanswerable``, ``followups``, one file per
split). The demo's labels sit in ``kb/eval/``; the Zulip help center's and the FastAPI docs' in
``kb/eval/zulip/`` and ``kb/eval/fastapi/``, in the same shapes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from citewall.errors import UserError

T = TypeVar("T")

#: The source checkout: this package lives in its ``evals/`` folder (``evals/citewall_evals/``,
#: beside the baseline and the other knowledge bases' corpora), installed editable from there.
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

LabelFile = Literal["questions", "nuggets", "unanswerable", "followups"]


@dataclass(frozen=True, slots=True)
class Dataset:
    """A knowledge base to measure: the cards ingested and where its labelled files live.

    ``redteam``: the demo only; its workspace also ingests the hostile cards, and its run adds
    the red-team gate, the dangling-reference check, the corpus-protection cost and the
    baseline comparison, whose labels and cases are written for the demo's cards.

    >>> ZULIP.label_file("questions", "test").relative_to(REPO_ROOT).as_posix()
    'kb/eval/zulip/questions.test.jsonl'
    """

    name: str
    corpus: Path
    labels: Path
    redteam: bool = False

    def label_file(self, kind: LabelFile, split: str) -> Path:
        """The ``kind`` file of ``split`` (``test`` or ``dev``); ``UserError`` if missing."""
        if split not in {"test", "dev"}:
            raise UserError(f"unknown split {split!r}; use test or dev")
        return require(self.labels / f"{kind}.{split}.jsonl")


DEMO = Dataset("demo", DEMO_CARDS, QUESTIONS_DIR, redteam=True)
ZULIP = Dataset("zulip", REPO_ROOT / "evals" / "zulip-help.jsonl", QUESTIONS_DIR / "zulip")
FASTAPI = Dataset("fastapi", REPO_ROOT / "evals" / "fastapi-docs.jsonl", QUESTIONS_DIR / "fastapi")
#: Every knowledge base ``citewall eval --kb`` knows, by name (``all`` runs them in this order).
DATASETS = {d.name: d for d in (DEMO, ZULIP, FASTAPI)}


def split_path(split: str, dataset: Dataset = DEMO) -> Path:
    """The labelled questions of ``split`` (``test`` or ``dev``)."""
    return dataset.label_file("questions", split)


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
