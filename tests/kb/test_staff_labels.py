"""Data tests for the hand labels of internal playbook sentences (staff-only or member-safe).

``kb/eval/staff_labels.jsonl`` was written before the staff-only detector: each row is one
sentence of a ``pb-*`` card body, split with ``split_sentences`` and labelled by reading it. The
file is pinned by hash (the test split must not move once the detector is tuned), every card
sits in exactly one split, and the splits are the deterministic halves of the labelled cards
ordered by the sha256 of their id.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LABELS = ROOT / "kb" / "eval" / "staff_labels.jsonl"
SHA256 = "045b6d07067215d1f2c113fc1a59023f2ceee71fb38fb85103c72aece5479243"
KEYS = {"card_id", "sentence", "label", "split"}
MIN_ROWS = 300


def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line]


def test_the_labels_are_pinned() -> None:
    assert hashlib.sha256(LABELS.read_bytes()).hexdigest() == SHA256


def test_row_shape() -> None:
    labelled = rows()
    assert len(labelled) >= MIN_ROWS
    for row in labelled:
        assert set(row) == KEYS, row
        assert row["card_id"].startswith("pb-"), row
        assert row["label"] in {"staff_only", "member_safe"}, row
        assert row["split"] in {"dev", "test"}, row
        assert row["sentence"].strip() == row["sentence"] and row["sentence"], row
    pairs = Counter((r["card_id"], r["sentence"]) for r in labelled)
    assert max(pairs.values()) == 1


def test_splits_are_by_card_and_halve_the_cards() -> None:
    split_of: dict[str, set[str]] = {}
    for row in rows():
        split_of.setdefault(row["card_id"], set()).add(row["split"])
    assert all(len(s) == 1 for s in split_of.values())
    ordered = sorted(split_of, key=lambda c: hashlib.sha256(c.encode()).hexdigest())
    half = len(ordered) // 2
    assert {c for c in ordered[:half]} == {c for c, s in split_of.items() if s == {"dev"}}


def test_both_labels_in_both_splits() -> None:
    counts = Counter((r["split"], r["label"]) for r in rows())
    assert (
        min(counts[(s, lab)] for s in ("dev", "test") for lab in ("staff_only", "member_safe"))
        >= 60
    )
