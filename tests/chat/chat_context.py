"""A fixed retrieved context for the pipeline tests (cards shaped like the demo KB's)."""

from __future__ import annotations

from citewall.kb.audiences import CardFilter
from citewall.retrieval.types import ContextChunk, RetrievedContext

CANARY_T = "CWLEAKT-P1PE"
CANARY_M = "CWLEAKM-P1PE"
KB_URL = "https://help.parcelry.example/labels/void-label"


class FixedRetriever:
    """Answers every question with the same context (unit tests of the later stages)."""

    def __init__(self, context: RetrievedContext) -> None:
        self.context = context
        self.questions: list[str] = []
        #: The filter each retrieval was asked with (the pipeline passes the viewer's).
        self.filters: list[CardFilter] = []

    def retrieve(self, question: str, *, cards: CardFilter) -> RetrievedContext:
        self.questions.append(question)
        self.filters.append(cards)
        return self.context


def make_context(path: str | None = "full") -> RetrievedContext:
    external = ContextChunk(
        id="help-void",
        title="Voiding an unused label",
        text="You can void a label you did not use. The refund goes back to your Parcelry "
        "balance within 5 to 10 business days. A scanned label cannot be voided.",
        source=KB_URL,
        metadata={
            "url": KB_URL,
            "license": "CC-BY-SA-4.0",
            "title": "Voiding an unused label",
            "section": "labels",
            "content_hash": "h1",
            "author": "docs-team",
        },
        chunk_id="help-void#0",
        rank=1,
        dense_rank=1,
        dense_score=0.8,
        bm25_rank=2,
        bm25_score=7.5,
        rrf_rank=1,
        rrf_score=0.032,
        rerank_rank=1,
        rerank_logit=2.0,
    )
    internal = ContextChunk(
        id="pb-void-overdue",
        title=f"Void refunds that have not arrived ({CANARY_T})",
        text="If the carrier status is still Pending after 15 business days, open a carrier "
        "dispute from the Disputes tab. Do not credit the merchant manually before that.",
        source=None,
        metadata={
            "title": f"Void refunds that have not arrived ({CANARY_T})",
            "author": "Aiko Brandt",
            "path": "playbooks/x.md",
            "owner_note": CANARY_M,
            "content_hash": "h2",
        },
        chunk_id="pb-void-overdue#0",
        rank=2,
        dense_rank=2,
        dense_score=0.7,
        bm25_rank=1,
        bm25_score=9.1,
        rrf_rank=2,
        rrf_score=0.031,
        rerank_rank=2,
        rerank_logit=-0.5,
    )
    unrelated = ContextChunk(
        id="help-pickup",
        title="Pickups",
        text="Pickups must be booked before 2 pm.",
        source="https://help.parcelry.example/pickups",
        metadata={"license": "MIT"},
        chunk_id="help-pickup#0",
        rank=3,
        dense_rank=5,
        dense_score=0.2,
        rrf_rank=3,
        rrf_score=0.015,
        rerank_rank=3,
        rerank_logit=-4.0,
    )
    return RetrievedContext(
        chunks=[external, internal, unrelated],
        hybrid_path=path,  # type: ignore[arg-type]
        timings_ms={"dense": 1.0},
    )
