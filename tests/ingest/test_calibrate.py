"""The abstention calibration fitted at ingest, on real Chroma, bm25s and the packaged embedder:
a small site answers its own content, the fit is stored with the KB version and refitted when
the KB changes, and an operator's thresholds still win."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest

from citewall.chat.pipeline import answer_question
from citewall.config import load_settings
from citewall.generation.extractive import ExtractiveGenerator
from citewall.ingest.calibrate import card_texts
from citewall.ingest.pipeline import ingest_paths
from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.answerability import COVERAGE_CARDS, Thresholds, measure
from citewall.retrieval.calibrated import CalibratedDecider, load_calibration
from citewall.retrieval.exact_index import ExactIndex
from citewall.retrieval.factory import (
    build_decider,
    build_retriever,
    fusion_settings,
    open_vector_index,
)
from citewall.retrieval.lexical_index import load_bm25
from citewall.retrieval.probes import (
    CardText,
    document_frequencies,
    off_domain_questions,
    probes_for,
    pseudo_questions,
    vocabulary,
)
from citewall.retrieval.reloading import ReloadingArtifact
from citewall.retrieval.retriever import HybridRetriever
from citewall.retrieval.versioned_dir import current_version
from citewall.runtime import AnswerPolicy
from ingest.kbfixtures import write_jsonl

SHIPPING = "Do you ship to the United States and Canada?"
#: A small help site: four pages, one of which says exactly what the question asks.
SITE = [
    {
        "id": "site-about",
        "title": "About us",
        "body": "We are a family business that has knitted wool jumpers since 1982, using yarn "
        "spun in the Scottish Borders. Every piece is made by hand by one of our six knitters, "
        "and we name the knitter on the label. We ship to the United States and Canada. Our "
        "studio is powered by renewable energy and our packaging is plastic-free.",
        "url": "https://shop.example.com/about",
    },
    {
        "id": "site-returns",
        "title": "Returns and exchanges",
        "body": "Unworn items can be returned within 30 days. Start a return from the link in "
        "your order confirmation email; refunds go back to the original payment method.",
        "url": "https://shop.example.com/returns",
    },
    {
        "id": "site-sizing",
        "title": "Size guide",
        "body": "Our jumpers run large: if you are between two sizes, pick the smaller one. "
        "Measurements for each size are listed on the product page.",
        "url": "https://shop.example.com/sizing",
    },
    {
        "id": "site-care",
        "title": "Caring for wool",
        "body": "Hand wash in cold water with a wool detergent and dry flat. Never tumble dry "
        "or wring the garment.",
        "url": "https://shop.example.com/care",
    },
]


def ingest(settings: Any, embedder: Any, cards: list[dict[str, Any]], tmp_path: Path) -> Any:
    kb = write_jsonl(tmp_path / "site.jsonl", cards)
    return ingest_paths([kb], settings, embedder=embedder, progress=False)


def ask(settings: Any, embedder: Any, question: str, decider: Any) -> Any:
    retriever = build_retriever(settings, embedder=embedder, reranker=None)
    return answer_question(
        question,
        retriever=retriever,
        generator=ExtractiveGenerator(embedder),
        embedder=embedder,
        policy=AnswerPolicy(thresholds=decider),
    )


def test_a_small_site_answers_what_its_page_says_exactly(
    tmp_path: Path, settings: Any, embedder: Any
) -> None:
    report = ingest(settings, embedder, SITE, tmp_path)
    assert report.calibration, report.summary()
    decider = build_decider(settings)
    assert isinstance(decider, CalibratedDecider) and decider.in_use().source == "calibrated"

    answer = ask(settings, embedder, SHIPPING, decider)
    assert answer.answer_status == "answered", answer.signals
    assert any(c.card_id == "site-about" for c in answer.citations)
    # The fixed threshold tuned on the demo refused it.
    fixed = ask(settings, embedder, SHIPPING, Thresholds(min_dense=0.43, min_coverage=0.0))
    assert fixed.answer_status == "not_found"
    assert fixed.signals is not None and fixed.signals.dense < 0.43


def test_the_small_site_still_refuses_what_it_does_not_cover(
    tmp_path: Path, settings: Any, embedder: Any
) -> None:
    ingest(settings, embedder, SITE, tmp_path)
    decider = build_decider(settings)
    for question in ("What's the weather in Paris tomorrow?", "How do I reset my iPhone?"):
        assert ask(settings, embedder, question, decider).answer_status == "not_found", question


def test_the_calibration_is_stored_with_the_kb_version_and_refitted_when_it_changes(
    tmp_path: Path, settings: Any, embedder: Any
) -> None:
    ingest(settings, embedder, SITE, tmp_path)
    first = load_calibration(settings.calibration_dir)
    assert first.kb_version == current_version(settings.bm25_dir)
    assert first.kb_cards == 4 and first.probes["off_domain"] >= 90
    assert first.probes["answerable"] >= 4 and first.probes["near_miss"] >= 1

    unchanged = ingest(settings, embedder, SITE, tmp_path)
    assert unchanged.calibration is None  # nothing changed: the stored fit stands
    assert load_calibration(settings.calibration_dir) == first

    extra = {"id": "site-gift", "title": "Gift cards", "body": "Gift cards never expire."}
    changed = ingest(settings, embedder, [*SITE, extra], tmp_path)
    assert changed.calibration
    second = load_calibration(settings.calibration_dir)
    assert second.kb_version == current_version(settings.bm25_dir) != first.kb_version
    assert second.kb_cards == 5


def test_a_running_decider_picks_up_the_new_calibration(
    tmp_path: Path, settings: Any, embedder: Any
) -> None:
    ingest(settings, embedder, SITE, tmp_path)
    decider = build_decider(settings)
    assert isinstance(decider, CalibratedDecider)
    before = decider.in_use().calibration
    extra = {"id": "site-gift", "title": "Gift cards", "body": "Gift cards never expire."}
    ingest(settings, embedder, [*SITE, extra], tmp_path)
    after = decider.in_use().calibration
    assert before is not None and after is not None and after.kb_cards == 5


def test_an_operator_s_thresholds_win_over_the_calibration(
    tmp_path: Path, data_dir: Path, embedder: Any
) -> None:
    pinned = load_settings(
        data_dir=data_dir, database_url=None, chroma_url=None, abstain_min_dense=0.95
    )
    ingest(pinned, embedder, SITE, tmp_path)
    decider = build_decider(pinned)
    assert isinstance(decider, CalibratedDecider)
    now = decider.in_use()
    assert now.source == "override" and now.thresholds.min_dense == 0.95
    assert now.calibration is not None  # still fitted, and shown, but not applied
    assert ask(pinned, embedder, SHIPPING, decider).answer_status == "not_found"


def test_without_calibration_the_settings_thresholds_apply(
    tmp_path: Path, data_dir: Path, embedder: Any
) -> None:
    off = load_settings(data_dir=data_dir, database_url=None, chroma_url=None, calibration=False)
    report = ingest(off, embedder, SITE, tmp_path)
    assert report.calibration is None
    decider = build_decider(off)
    assert isinstance(decider, CalibratedDecider)
    assert decider.in_use().source == "default"
    assert decider.in_use().thresholds == Thresholds(0.43, 0.0)


class _Counting:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.dimension = inner, inner.dimension
        self.texts: list[str] = []

    def embed_query(self, text: str) -> Any:
        self.texts.append(text)
        return self.inner.embed_query(text)

    def embed_documents(self, texts: Any) -> Any:
        self.texts.extend(texts)
        return self.inner.embed_documents(texts)


def test_a_refit_embeds_only_the_probes_it_has_not_seen(
    tmp_path: Path, settings: Any, embedder: Any
) -> None:
    first_run = _Counting(embedder)
    ingest(settings, first_run, SITE, tmp_path)
    off_domain = set(off_domain_questions())
    assert off_domain <= set(first_run.texts)  # a fresh KB embeds every probe once

    extra = {"id": "site-gift", "title": "Gift cards", "body": "Gift cards never expire."}
    refit = _Counting(embedder)
    report = ingest(settings, refit, [*SITE, extra], tmp_path)
    assert report.calibration
    assert not off_domain & set(refit.texts)  # their stored vectors are reused
    new = pseudo_questions(CardText(extra["id"], extra["title"], extra["body"]))
    assert set(new) <= set(refit.texts)  # the new card's probes are embedded
    assert len(refit.texts) <= len(new) + 3  # and little else: its chunk, sentence, near miss
    calibration = load_calibration(settings.calibration_dir)
    assert calibration.kb_cards == 5


def test_the_calibration_sees_what_the_retriever_sees(
    tmp_path: Path, settings: Any, embedder: Any
) -> None:
    """Calibration searches an exact in-memory copy of the chunk vectors: for every probe
    the signals equal those of the production retriever over Chroma."""
    ingest(settings, embedder, SITE, tmp_path)
    index = open_vector_index(settings)
    records, vectors = index.all_chunks(with_embeddings=True)
    calibration = load_calibration(settings.calibration_dir)
    exact = HybridRetriever(
        fusion_settings(settings),
        embedder=embedder,
        vector_index=ExactIndex(records, vectors),
        lexical=ReloadingArtifact(partial(load_bm25, settings.bm25_dir)),
        reranker=None,
    )
    chroma = build_retriever(settings, embedder=embedder, reranker=None)
    cards = card_texts(records)
    df, n = document_frequencies(cards)
    for probe in probes_for(cards, vocabulary(df, n), frozenset(df)):
        a, b = (
            r.retrieve(probe.question, COVERAGE_CARDS, cards=EVERY_CARD) for r in (exact, chroma)
        )
        assert [c.chunk_id for c in a.chunks] == [c.chunk_id for c in b.chunks], probe
        assert a.top_dense == pytest.approx(b.top_dense, abs=1e-5), probe
        sa, sb = (measure(probe.question, c, calibration.vocabulary) for c in (a, b))
        assert (sa.coverage, sa.key_coverage) == (sb.coverage, sb.key_coverage), probe
