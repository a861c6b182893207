"""Data tests for the unanswerable questions (kb/eval/unanswerable.{dev,test}.jsonl).

These questions calibrate and measure abstention: the demo knowledge base must not answer them.
A ``near_miss`` asks for a fact the KB does not state about a topic it does cover, and lists in
``near`` the one to three cards a retriever will most likely return; an ``uncovered`` question is
about a topic the KB never covers and has no ``near`` cards.

Plain json only (no models, no citewall imports), like ``test_demo_kb.py``.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
KB = ROOT / "kb"
SPLITS = ("dev", "test")
KINDS = {"near_miss", "uncovered"}
FIELDS = {"id", "question", "kind", "near", "missing"}
ID = re.compile(r"^u\d{3}$")
CANARY = re.compile(r"\s*\(?CWLEAK[TMB]-[A-Z0-9]+\)?")
MIN_ROWS = 36
MIN_NEAR_MISSES = 20
MIN_UNCOVERED = 10

# The test split was written and committed before any abstention tuning and must never change:
# sha256 of its rows re-serialised with sorted keys, one per line.
TEST_SPLIT_SHA256 = "5185c5e38665f45cc159503ee0bced708b9b61bf8f61ab2704773dfa22e5cd66"


def load(rel: str) -> list[dict[str, Any]]:
    path = KB / rel
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def canonical(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows)


@pytest.fixture(scope="module")
def unanswerable() -> dict[str, list[dict[str, Any]]]:
    return {split: load(f"eval/unanswerable.{split}.jsonl") for split in SPLITS}


@pytest.fixture(scope="module")
def cards() -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in load("demo/cards.jsonl")}


def all_rows(unanswerable: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [row for split in SPLITS for row in unanswerable[split]]


def test_row_shape(unanswerable: dict[str, list[dict[str, Any]]]) -> None:
    for row in all_rows(unanswerable):
        assert set(row) == FIELDS, row.get("id")
        assert ID.match(row["id"]), row["id"]
        assert row["kind"] in KINDS, (row["id"], row["kind"])
        assert isinstance(row["near"], list), row["id"]
        assert isinstance(row["missing"], str) and row["missing"].strip(), row["id"]


def test_ids_unique_and_disjoint(unanswerable: dict[str, list[dict[str, Any]]]) -> None:
    ids = [row["id"] for row in all_rows(unanswerable)]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    dev = {row["id"] for row in unanswerable["dev"]}
    test = {row["id"] for row in unanswerable["test"]}
    assert not dev & test, sorted(dev & test)


def test_split_sizes(unanswerable: dict[str, list[dict[str, Any]]]) -> None:
    for split in SPLITS:
        rows = unanswerable[split]
        kinds = Counter(row["kind"] for row in rows)
        assert len(rows) >= MIN_ROWS, (split, len(rows))
        assert kinds["near_miss"] >= MIN_NEAR_MISSES, (split, kinds)
        assert kinds["uncovered"] >= MIN_UNCOVERED, (split, kinds)


def test_near_cards(
    unanswerable: dict[str, list[dict[str, Any]]], cards: dict[str, dict[str, Any]]
) -> None:
    for row in all_rows(unanswerable):
        near = row["near"]
        if row["kind"] == "uncovered":
            assert near == [], row["id"]
            continue
        assert 1 <= len(near) <= 3, (row["id"], near)
        assert len(near) == len(set(near)), (row["id"], near)
        missing = [card_id for card_id in near if card_id not in cards]
        assert not missing, (row["id"], missing)


def test_questions_are_new(
    unanswerable: dict[str, list[dict[str, Any]]], cards: dict[str, dict[str, Any]]
) -> None:
    """Contains no card title, is not a labelled answerable question, is not asked twice."""
    titles = {CANARY.sub("", c["title"]).strip().lower() for c in cards.values()}
    answerable = {
        q["question"].strip().lower()
        for split in SPLITS
        for q in load(f"eval/questions.{split}.jsonl")
    }
    seen: set[str] = set()
    for row in all_rows(unanswerable):
        text = row["question"].strip().lower()
        copied = [title for title in titles if title in text]
        assert not copied, (row["id"], copied)
        assert text not in answerable, row["id"]
        assert text not in seen, row["id"]
        seen.add(text)


def test_questions_are_clean_text(unanswerable: dict[str, list[dict[str, Any]]]) -> None:
    for row in all_rows(unanswerable):
        for field in ("question", "missing"):
            text = row[field]
            assert isinstance(text, str) and text.strip(), (row["id"], field)
            assert text == text.strip(), (row["id"], field)
            bad = [ch for ch in text if unicodedata.category(ch) in {"Cc", "Cf", "Co", "Cs"}]
            assert not bad, (row["id"], field, [hex(ord(ch)) for ch in bad])


def test_test_split_is_frozen(unanswerable: dict[str, list[dict[str, Any]]]) -> None:
    digest = hashlib.sha256(canonical(unanswerable["test"]).encode("utf-8")).hexdigest()
    assert digest == TEST_SPLIT_SHA256, "kb/eval/unanswerable.test.jsonl changed; it is frozen"
