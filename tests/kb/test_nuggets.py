"""Data tests for the answer nuggets of the labelled questions and their hand labels.

Plain json only (no models, no citewall imports), so they run in well under a second and fail
with the offending question id.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
EVAL = ROOT / "kb" / "eval"
MAX_WORDS = 25
LABEL_KEYS = {"question_id", "nugget", "answer", "stated", "source", "note"}
SOURCES = {"extractive", "mismatched"}


def load(name: str) -> list[dict[str, Any]]:
    path = EVAL / name
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def nuggets_by_id(split: str) -> dict[str, list[str]]:
    rows = load(f"nuggets.{split}.jsonl")
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    return {r["id"]: r["nuggets"] for r in rows}


@pytest.mark.parametrize("split", ["dev", "test"])
def test_nuggets_cover_the_questions(split: str) -> None:
    questions = {q["id"] for q in load(f"questions.{split}.jsonl")}
    nuggets = nuggets_by_id(split)
    assert set(nuggets) == questions, sorted(set(nuggets) ^ questions)


@pytest.mark.parametrize("split", ["dev", "test"])
def test_nugget_shape(split: str) -> None:
    for row in load(f"nuggets.{split}.jsonl"):
        assert set(row) in ({"id", "nuggets"}, {"id", "nuggets", "audience"}), row
        nuggets = row["nuggets"]
        assert isinstance(nuggets, list) and 1 <= len(nuggets) <= 3, row["id"]
        assert len(nuggets) == len(set(nuggets)), row["id"]
        for nugget in nuggets:
            assert isinstance(nugget, str) and nugget.strip(), row["id"]
            assert len(nugget.split()) <= MAX_WORDS, (row["id"], nugget)
            assert "CWLEAK" not in nugget, row["id"]


@pytest.mark.parametrize("split", ["dev", "test"])
def test_nuggets_of_playbook_questions_say_who_may_be_told(split: str) -> None:
    """A question with a playbook among its gold cards labels each nugget member-facing (its
    reply or a public gold card states it) or staff-only (only the staff notes state it); a
    question answered by public cards alone has no staff-only nugget."""
    cards = {c["id"]: c for c in load_cards()}
    gold = {q["id"]: q["gold"] for q in load(f"questions.{split}.jsonl")}
    for row in load(f"nuggets.{split}.jsonl"):
        internal = any(not cards[g].get("url") for g in gold[row["id"]])
        audience = row.get("audience")
        if internal:
            assert isinstance(audience, list), row["id"]
            assert len(audience) == len(row["nuggets"]), row["id"]
            assert set(audience) <= {"member", "staff"}, row["id"]
        else:
            assert audience in (None, ["member"] * len(row["nuggets"])), row["id"]


def load_cards() -> list[dict[str, Any]]:
    path = ROOT / "kb" / "demo" / "cards.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_labels_reference_dev_nuggets() -> None:
    nuggets = nuggets_by_id("dev")
    seen: set[tuple[str, str, str]] = set()
    for row in load("nugget_labels.jsonl"):
        assert set(row) == LABEL_KEYS, row
        qid = row["question_id"]
        assert qid in nuggets, qid
        assert row["nugget"] in nuggets[qid], (qid, row["nugget"])
        assert isinstance(row["stated"], bool), qid
        assert row["source"] in SOURCES, (qid, row["source"])
        assert isinstance(row["answer"], str) and row["answer"].strip(), qid
        assert isinstance(row["note"], str), qid
        key = (qid, row["nugget"], row["answer"])
        assert key not in seen, key[:2]
        seen.add(key)


def test_label_counts_and_balance() -> None:
    labels = load("nugget_labels.jsonl")
    assert len(labels) >= 120
    assert len({r["question_id"] for r in labels}) >= 60
    stated = Counter(r["stated"] for r in labels)
    assert stated[True] >= 35 and stated[False] >= 35, stated
