"""Ingest stores every sentence unit's vector once; a turn reads them instead of the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from citewall.citations.units import card_units
from citewall.generation.extractive import ExtractiveGenerator
from citewall.ingest.pipeline import ingest_paths
from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.factory import build_retriever, kb_embedder, open_vector_index
from citewall.retrieval.sentence_store import load_sentence_vectors
from ingest.kbfixtures import CARDS, write_jsonl


class _Counting:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.dimension = inner.dimension
        self.texts: list[str] = []

    def embed_query(self, text: str) -> Any:
        self.texts.append(text)
        return self.inner.embed_query(text)

    def embed_documents(self, texts: Any) -> Any:
        self.texts.extend(texts)
        return self.inner.embed_documents(texts)


def test_ingest_stores_every_unit_and_reembeds_only_new_sentences(
    tmp_path: Path, settings: Any, embedder: Any
) -> None:
    kb = write_jsonl(tmp_path / "kb.jsonl", CARDS[:6])
    first = ingest_paths([kb], settings, embedder=embedder, progress=False)
    records, _ = open_vector_index(settings).all_chunks()
    units = {u for r in records for u in card_units(r.text)}
    store = load_sentence_vectors(settings.sentences_dir)
    assert first.sentences_embedded == len(units) == len(store)
    vectors, found = store.lookup(sorted(units))
    assert found.all()
    fresh = embedder.embed_documents(sorted(units))
    assert float(np.min(np.sum(vectors * fresh, axis=1))) > 0.9999

    changed = {**CARDS[0], "body": "Annual plans are refundable for 14 days only."}
    write_jsonl(kb, [changed, *CARDS[1:6]])
    counting = _Counting(embedder)
    second = ingest_paths([kb], settings, embedder=counting, progress=False)
    new_units = set(card_units(changed["body"])) - units
    assert second.sentences_embedded == len(new_units) >= 1
    assert new_units <= set(counting.texts)
    assert not units & set(counting.texts)  # sentences already stored are not embedded again


def test_an_extractive_turn_embeds_only_the_question(
    tmp_path: Path, settings: Any, embedder: Any
) -> None:
    ingest_paths(
        [write_jsonl(tmp_path / "kb.jsonl", CARDS)], settings, embedder=embedder, progress=False
    )
    counting = _Counting(embedder)
    served = kb_embedder(settings, counting)
    retriever = build_retriever(settings, embedder=served, reranker=None)
    stored = ExtractiveGenerator(served)
    bare = ExtractiveGenerator(embedder)
    for question in ("how many days can I get a refund", "how do I reset my password"):
        counting.texts.clear()
        context = retriever.retrieve(question, cards=EVERY_CARD).chunks
        answer = stored.compose(question, context)
        assert counting.texts == [question]  # retrieval's query vector, reused by the generator
        assert answer == bare.compose(question, context)  # same answer as embedding on the spot
    assert served.embedded == 0 and served.stored > 0


def test_a_playbooks_reply_is_indexed_stored_and_quoted_with_only_the_question_embedded(
    tmp_path: Path, settings: Any, embedder: Any
) -> None:
    playbook = {
        "id": "pb-late-credit",
        "title": "Late parcel credits",
        "body": "Log the credit in Helm with reason code GW-LATE. Over 20 EUR needs a team lead.",
        "reply": "When a parcel arrives late, we add a goodwill credit to your next invoice.",
    }
    ingest_paths(
        [write_jsonl(tmp_path / "kb.jsonl", [*CARDS, playbook])],
        settings,
        embedder=embedder,
        progress=False,
    )
    store = load_sentence_vectors(settings.sentences_dir)
    assert store.lookup(card_units(playbook["reply"]))[1].all()  # stored at ingest
    counting = _Counting(embedder)
    served = kb_embedder(settings, counting)
    retriever = build_retriever(settings, embedder=served, reranker=None)
    question = "my parcel came late, do I get a goodwill credit on my invoice?"
    context = retriever.retrieve(question, cards=EVERY_CARD).chunks
    assert context[0].id == "pb-late-credit" and context[0].reply == playbook["reply"]
    answer = ExtractiveGenerator(served).compose(question, context[:1])
    assert (
        answer == "When a parcel arrives late, we add a goodwill credit to your next invoice [1]."
    )
    assert counting.texts == [question]  # retrieval's query vector, reused by the generator
