"""Fit the KB's abstention calibration at ingest: probes through the real retriever, then the fit.

Runs after the lexical index is rebuilt, whenever the KB changed or its stored calibration was
fitted on another KB version (``calibration_stale``). The probes (``retrieval.probes``) are
embedded in one batch and retrieved one by one through ``HybridRetriever.retrieve`` over the
new lexical index and an exact in-memory copy of the chunk vectors ingest holds
(``retrieval.exact_index``: no Chroma round trip per probe; dense + BM25 fused; no reranker:
the signals do not use it). The cost is bounded by ``CITEWALL_CALIBRATION_MAX_CARDS``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import partial

import numpy as np
import numpy.typing as npt

from citewall.config import Settings
from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.answerability import COVERAGE_CARDS, Signals, measure
from citewall.retrieval.calibrated import (
    CalibrationError,
    ProbeVectors,
    load_calibration,
    load_probe_vectors,
    probe_key,
    save_calibration,
)
from citewall.retrieval.calibration import (
    MAX_KEY_COVERAGE,
    SMALL_KB_CARDS,
    WORDING_GAP,
    Calibration,
    fit,
    guard_small_kb,
    signal_aucs,
)
from citewall.retrieval.exact_index import ExactIndex
from citewall.retrieval.factory import fusion_settings
from citewall.retrieval.lexical_index import load_bm25
from citewall.retrieval.probes import (
    CardText,
    document_frequencies,
    probes_for,
    sample_cards,
    vocabulary,
)
from citewall.retrieval.protocols import Embedder, LexicalIndex
from citewall.retrieval.records import ChunkRecord
from citewall.retrieval.reloading import ReloadingArtifact
from citewall.retrieval.retriever import HybridRetriever
from citewall.retrieval.versioned_dir import current_version

log = logging.getLogger(__name__)


def card_texts(records: Sequence[ChunkRecord]) -> list[CardText]:
    """Each card's title and body, its chunks joined in order."""
    chunks: dict[str, list[ChunkRecord]] = defaultdict(list)
    for record in records:
        chunks[record.parent_id].append(record)
    out: list[CardText] = []
    for card_id, parts in sorted(chunks.items()):
        parts.sort(key=lambda r: int(r.metadata.get("n") or 0))
        title = str(parts[0].metadata.get("title") or "")
        out.append(CardText(card_id, title, "\n\n".join(r.text for r in parts)))
    return out


def probe_embeddings(settings: Settings, embedder: Embedder, texts: Sequence[str]) -> ProbeVectors:
    """The probes' vectors: the stored calibration's for probes it had (same configured
    model, same text), the model in one batch for the rest."""
    model = f"{settings.embedding_model or 'packaged'} ({settings.model_runtime})"
    keys = [probe_key(model, t) for t in texts]
    previous = load_probe_vectors(settings.calibration_dir)
    if previous is None or previous.dimension != embedder.dimension:
        return ProbeVectors(keys, embedder.embed_documents(texts))
    vectors, found = previous.lookup_keys(keys)
    missing = [i for i, ok in enumerate(found) if not ok]
    if missing:
        vectors[missing] = embedder.embed_documents([texts[i] for i in missing])
    log.info("calibration probes: %d vectors reused, %d embedded", found.sum(), len(missing))
    return ProbeVectors(keys, vectors)


def calibration_stale(settings: Settings) -> bool:
    """Whether the stored calibration is missing or was fitted on another KB version."""
    try:
        stored = load_calibration(settings.calibration_dir)
    except CalibrationError:
        return True
    return stored.kb_version != current_version(settings.bm25_dir)


def calibrate(
    settings: Settings,
    embedder: Embedder,
    records: Sequence[ChunkRecord],
    vectors: npt.NDArray[np.float32],
) -> Calibration | None:
    """Fit and publish the calibration of the KB whose chunks are ``records``, with their
    stored ``vectors`` (row i for ``records[i]``; None when the KB is empty)."""
    cards = card_texts(records)
    if not cards:
        return None
    df, n_cards = document_frequencies(cards)
    used = vocabulary(df, n_cards)
    sampled = sample_cards(cards, settings.calibration_max_cards)
    probes = probes_for(sampled, used, frozenset(df))
    lexical: ReloadingArtifact[LexicalIndex] = ReloadingArtifact(
        partial(load_bm25, settings.bm25_dir)
    )
    retriever = HybridRetriever(
        fusion_settings(settings),
        embedder=embedder,
        vector_index=ExactIndex(records, vectors),
        lexical=lexical,
        reranker=None,
    )
    probe_vectors = probe_embeddings(settings, embedder, [p.question for p in probes])
    by_kind: dict[str, list[Signals]] = defaultdict(list)
    for probe, vector in zip(probes, probe_vectors.vectors, strict=True):
        context = retriever.retrieve(
            probe.question, COVERAGE_CARDS, vector=vector, cards=EVERY_CARD
        )
        if probe.card_id is not None and probe.card_id not in {c.id for c in context.chunks}:
            # Retrieval does not find the card it was made from: no evidence of what an
            # answerable question scores, so it does not constrain the fit.
            by_kind["unretrieved"].append(measure(probe.question, context, used))
            continue
        by_kind[probe.kind].append(measure(probe.question, context, used))
    answerable = by_kind["answerable"]
    unanswerable = by_kind["off_domain"] + by_kind["near_miss"]
    fitted = fit(
        answerable, unanswerable, wording_gap=WORDING_GAP, max_key_coverage=MAX_KEY_COVERAGE
    )
    thresholds, guard = fitted.thresholds, None
    if len(sampled) < SMALL_KB_CARDS:
        thresholds = guard_small_kb(fitted, answerable)
        if thresholds != fitted.thresholds:
            guard = (
                f"small KB ({len(sampled)} cards): dense threshold capped below its own "
                f"pseudo-questions ({fitted.thresholds.min_dense:.3f} -> "
                f"{thresholds.min_dense:.3f})"
            )
    refused = {
        kind: sum(not thresholds.answerable(s) for s in by_kind[kind]) / len(by_kind[kind])
        for kind in ("off_domain", "near_miss")
        if by_kind[kind]
    }
    calibration = Calibration(
        thresholds=thresholds,
        vocabulary=used,
        fitted_at=datetime.now(UTC).isoformat(timespec="seconds"),
        kb_version=current_version(settings.bm25_dir),
        kb_cards=n_cards,
        sampled_cards=len(sampled),
        probes={kind: len(signals) for kind, signals in sorted(by_kind.items())},
        answered_rate=round(sum(thresholds.answerable(s) for s in answerable) / len(answerable), 4)
        if answerable
        else 1.0,
        refusal_rate=round(
            sum(not thresholds.answerable(s) for s in unanswerable) / len(unanswerable), 4
        ),
        refusal_by_kind={k: round(v, 4) for k, v in refused.items()},
        signal_auc=signal_aucs(answerable, unanswerable),
        guard=guard,
    )
    save_calibration(settings.calibration_dir, calibration, probe_vectors)
    log.info("abstention calibrated: %s", calibration.thresholds)
    return calibration
