"""Measure MiniLM similarities behind ATTRIBUTION_THRESHOLD (not a test; run it by hand).

    python tests/generation/measure_attribution.py

For hand-written paraphrases, same-topic-but-different claims and unrelated sentences, prints
the best cosine similarity to any sentence of the void-label demo card, and how each group
falls against the threshold.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import numpy as np

from citewall.citations.sentences import split_sentences
from citewall.config import load_settings
from citewall.generation.attribution import ATTRIBUTION_THRESHOLD
from citewall.retrieval.embedder import load_embedder

KB = Path(__file__).resolve().parents[2] / "kb" / "demo" / "cards.jsonl"
CARD = "help-labels-void-label"

GROUPS = {
    "paraphrase": [
        "Refunds for voided labels land in your Parcelry balance, not on your card.",
        "It normally takes between 5 and 10 business days for the refund to show up.",
        "Once a label has been scanned you can no longer void it.",
        "NorthPost and Ecoroute labels may be voided for up to 28 days.",
        "SwiftFreight and BlueLine Express only give you 14 days to void a label.",
        "To void, go to Shipping activity, pick the label and choose Void.",
    ],
    "same_topic_other_claim": [
        "Labels are printed as PDF files from the order page.",
        "You should contact the carrier by phone to cancel a shipment.",
        "Refunds are paid by bank transfer within one hour.",
        "Parcelry charges a small fee for every label you buy.",
        "A waybill must be attached to the outside of the parcel.",
        "Shipping prices depend on parcel weight and destination.",
    ],
    "unrelated": [
        "The Eiffel Tower was completed in 1889.",
        "Photosynthesis turns light into chemical energy.",
        "Our team meets every Tuesday for a retrospective.",
        "Bake the bread at 220 degrees for thirty minutes.",
        "The striker scored twice in the second half.",
        "Jupiter is the largest planet in the solar system.",
    ],
}


def main() -> None:
    embedder = load_embedder(load_settings())
    card = next(json.loads(x) for x in KB.read_text().splitlines() if CARD in x)
    passages = split_sentences(card["body"])
    pv = embedder.embed_documents(passages)
    print(f"threshold {ATTRIBUTION_THRESHOLD}; card {CARD} ({len(passages)} sentences)")
    for group, sentences in GROUPS.items():
        sims = (embedder.embed_documents(sentences) @ pv.T).max(axis=1)
        above = int(np.sum(sims >= ATTRIBUTION_THRESHOLD))
        print(
            f"{group:24s} min {sims.min():.2f} median {statistics.median(sims):.2f} "
            f"max {sims.max():.2f}  attributed {above}/{len(sentences)}"
        )


if __name__ == "__main__":
    main()
