"""One process serving a synthetic KB of N chunks: its memory and the KB's bytes on disk
(``citewall bench capacity``'s KB-growth runs).

The chunks are made distinct sentence by sentence (so the sentence vectors grow with the KB as
a real one's do) and ingested with seeded random unit vectors of the embedder's dimension:
memory and disk depend on count and dimension, not meaning, and embedding 100k chunks for real
would take an hour on two cores.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
import numpy.typing as npt

from citewall.config import Settings
from citewall.ingest.pipeline import ingest_cards
from citewall.kb.card import Card
from citewall.retrieval.records import Vector
from citewall.storage.schema import open_database
from citewall_evals.bench.corpus import synthetic_cards
from citewall_evals.bench.server import add_user, ask_ms, bench_env, read_rss_kb, serving, warm_up


@dataclass(frozen=True, slots=True)
class KBPoint:
    """One process serving an N-chunk KB: its memory and the KB's bytes on disk."""

    chunks: int
    sentence_units: int
    build_s: float
    rss_kb: int
    #: The private part of ``rss_kb`` (RssAnon: heap, Chroma's HNSW graph); the rest is mapped
    #: files (the sentence vectors, libraries), shared between workers through the page cache.
    anon_rss_kb: int
    peak_rss_kb: int
    disk_bytes: dict[str, int]


class SeededEmbedder:
    """Unit vectors of ``dimension`` drawn from a seed per text: stands in for the embedder
    when only the size of what is stored matters (the same text always gets the same vector,
    as the sentence store expects)."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension

    def embed_query(self, text: str) -> Vector:
        vector: Vector = self.embed_documents([text])[0]
        return vector

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
            v = np.random.default_rng(seed).standard_normal(self.dimension)
            vectors[i] = v / np.linalg.norm(v)
        return vectors


def distinct_cards(demo: Sequence[Card], n: int) -> list[Card]:
    """``n`` synthetic one-chunk cards whose every sentence is unique (a case number is put in
    front): the demo's sentences recombined repeat, and a real KB's do not."""
    return [
        Card(
            id=card.id,
            title=card.title,
            body=" ".join(
                f"Case {i}-{j}: {s}" for j, s in enumerate(re.split(r"(?<=[.!?])\s+", card.body))
            ),
        )
        for i, card in enumerate(synthetic_cards(demo, n))
    ]


def directory_bytes(path: Path) -> int:
    """Bytes of every file under ``path`` (0 when it does not exist)."""
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def kb_point(
    settings: Settings,
    demo: Sequence[Card],
    size: int,
    dimension: int,
    questions: Sequence[str],
    work_dir: Path,
    models: Path,
) -> KBPoint:
    """Ingest a ``size``-chunk synthetic KB into ``work_dir`` and serve it with one process
    (ONNX exports from ``models``): its RSS after a warm-up, and the KB's bytes on disk by
    part."""
    data = work_dir / f"kb-{size}"
    s = settings.model_copy(update={"data_dir": data, "database_url": None, "chroma_url": None})
    data.mkdir(parents=True)
    db = open_database(s.sqlalchemy_url)
    t0 = time.perf_counter()
    try:
        report = ingest_cards(
            distinct_cards(demo, size),
            s,
            embedder=SeededEmbedder(dimension),
            session_factory=db.sessions,
            progress=False,
        )
    finally:
        db.dispose()
    build_s = time.perf_counter() - t0
    env = bench_env(data, model_cache_dir=str(models), reranker_enabled="false")
    token = add_user(env, "bench-member")
    with serving(env) as served, httpx.Client(timeout=120) as client:
        warm_up(served, token, list(questions[:3]))
        for question in questions[3:23]:
            ask_ms(client, served, token, "search", question)
            ask_ms(client, served, token, "chat", question)
        pid = served.process.pid
        rss, anon, peak = (read_rss_kb(pid, f) for f in ("VmRSS", "RssAnon", "VmHWM"))
    return KBPoint(
        chunks=report.chunks_embedded,
        sentence_units=report.sentences_embedded,
        build_s=round(build_s, 1),
        rss_kb=rss or 0,
        anon_rss_kb=anon or 0,
        peak_rss_kb=peak or 0,
        disk_bytes={
            "chroma": directory_bytes(s.chroma_dir),
            "bm25": directory_bytes(s.bm25_dir),
            "sentences": directory_bytes(s.sentences_dir),
            "database": directory_bytes(data / "citewall.db"),
        },
    )
