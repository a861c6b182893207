"""Post-hoc attribution for replies that cite nothing (small models rarely write ``[n]``).

Each answer sentence is matched to the context card holding its most similar sentence unit
(cosine similarity of the packaged MiniLM embeddings; the units' vectors are the ones ingest
stored, ``KBEmbedder.embed_sentences``). A match at or above
``ATTRIBUTION_THRESHOLD`` cites that card. Citations made this way are flagged
``attributed=True``.

Choice (documented in docs/citations.md): the ``[n]`` markers are inserted into the STORED
content, exactly as if the model had written them. Cited-detection for the retrieval-event
log and the entry-performance rollup reads markers from stored content, so attributed answers
are measured like any other; the ``attributed`` flag on each citation keeps them apart.
Members never see markers (prose-only), so the insertion changes nothing they see.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from citewall.citations.sentences import sentence_spans
from citewall.citations.units import card_units
from citewall.retrieval.kb_embedder import sentence_embedder
from citewall.retrieval.protocols import Embedder
from citewall.retrieval.types import ContextChunk

#: Cosine similarity (all-MiniLM-L6-v2, unit vectors) an answer sentence needs with a context
#: sentence to be attributed to its card. Measured on a demo card
#: (tests/generation/measure_attribution.py): paraphrases 0.70-0.90 (median 0.79), same-topic
#: sentences making another claim 0.34-0.54 (median 0.47), unrelated text <= 0.12. 0.6 sits in
#: the gap: a sentence is cited only when it says what a context sentence says.
ATTRIBUTION_THRESHOLD = 0.6
#: Answer sentences shorter than this (in words) are not attributed ("Sure!", "Hope it helps.").
MIN_WORDS = 4


def attribute(text: str, context: Sequence[ContextChunk], embedder: Embedder) -> str:
    """``text`` with a ``[n]`` marker inserted after each sentence that matches a card.

    Returns ``text`` unchanged when nothing matches (or there is no context).
    """
    spans = [
        (s, e) for s, e in sentence_spans(text) if len(re.findall(r"\w+", text[s:e])) >= MIN_WORDS
    ]
    if not spans or not context:
        return text
    owners: list[int] = []
    passages: list[str] = []
    for i, chunk in enumerate(context):
        # Staff notes too: a sentence taken from them belongs to its internal card.
        for unit in card_units(chunk.all_text):
            owners.append(i)
            passages.append(unit)
    if not passages:
        return text
    encoder = sentence_embedder(embedder)
    answer_vecs = np.asarray(encoder.embed_documents([text[s:e] for s, e in spans]))
    passage_vecs = np.asarray(encoder.embed_sentences(passages))
    sims = answer_vecs @ passage_vecs.T
    inserts: list[tuple[int, int]] = []  # (offset, context number)
    for row, (_, end) in zip(sims, spans, strict=True):
        best = int(np.argmax(row))
        if float(row[best]) >= ATTRIBUTION_THRESHOLD:
            inserts.append((_marker_offset(text, end), owners[best] + 1))
    out = text
    for offset, n in sorted(inserts, reverse=True):
        out = f"{out[:offset]} [{n}]{out[offset:]}"
    return out


def _marker_offset(text: str, end: int) -> int:
    """Where a marker goes in the sentence ending at ``end``: before its final punctuation."""
    m = re.search(r"[.!?。！？]+[\"'”’)]*$", text[:end])
    return m.start() if m else end
