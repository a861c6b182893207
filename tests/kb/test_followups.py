"""Data tests for the labelled two-turn conversations in kb/eval/followups.{dev,test}.jsonl.

Plain json only (no models, no citewall imports), so they run in well under a second and fail
with the offending conversation id.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
KB = ROOT / "kb"
SPLITS = ("dev", "test")
FIELDS = {"id", "first", "first_gold", "followup", "gold", "kind"}
KINDS = {"followup", "switch"}
ID = re.compile(r"^f\d{3,}$")
TITLE_CANARY = re.compile(r"\s*\(CWLEAKT-[A-Z0-9]+\)")
MIN_FOLLOWUPS = 50
MIN_SWITCHES = 12


def load(rel: str) -> list[dict[str, Any]]:
    path = KB / rel
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def by_id() -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in load("demo/cards.jsonl")}


@pytest.fixture(scope="module")
def titles(by_id: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {cid: TITLE_CANARY.sub("", c["title"]).strip().lower() for cid, c in by_id.items()}


@pytest.fixture(scope="module")
def convs() -> dict[str, list[dict[str, Any]]]:
    return {split: load(f"eval/followups.{split}.jsonl") for split in SPLITS}


def texts(row: dict[str, Any]) -> tuple[str, str]:
    return row["first"], row["followup"]


def test_shape(convs: dict[str, list[dict[str, Any]]]) -> None:
    for split, rows in convs.items():
        assert rows, split
        for row in rows:
            assert set(row) == FIELDS, (split, row.get("id"))
            assert ID.match(row["id"]), row["id"]
            assert row["kind"] in KINDS, row["id"]
            for key in ("first", "followup"):
                assert isinstance(row[key], str) and row[key].strip(), (row["id"], key)
            for key in ("first_gold", "gold"):
                ids = row[key]
                assert isinstance(ids, list) and ids, (row["id"], key)
                assert all(isinstance(g, str) for g in ids), (row["id"], key)
                assert len(ids) == len(set(ids)), (row["id"], key)


def test_ids_unique_and_disjoint(convs: dict[str, list[dict[str, Any]]]) -> None:
    seen: dict[str, str] = {}
    for split, rows in convs.items():
        for row in rows:
            assert row["id"] not in seen, (row["id"], seen.get(row["id"]), split)
            seen[row["id"]] = split


def test_counts_per_split(convs: dict[str, list[dict[str, Any]]]) -> None:
    for split, rows in convs.items():
        followups = [r for r in rows if r["kind"] == "followup"]
        switches = [r for r in rows if r["kind"] == "switch"]
        assert len(followups) >= MIN_FOLLOWUPS, (split, len(followups))
        assert len(switches) >= MIN_SWITCHES, (split, len(switches))


def test_half_of_followups_move_to_other_cards(convs: dict[str, list[dict[str, Any]]]) -> None:
    """At least half the follow-ups are answered by other cards than the first question."""
    for split, rows in convs.items():
        followups = [r for r in rows if r["kind"] == "followup"]
        moved = [r for r in followups if set(r["gold"]) != set(r["first_gold"])]
        assert 2 * len(moved) >= len(followups), (split, len(moved), len(followups))


def test_gold_cards_exist(
    convs: dict[str, list[dict[str, Any]]], by_id: dict[str, dict[str, Any]]
) -> None:
    for rows in convs.values():
        for row in rows:
            missing = [g for g in row["first_gold"] + row["gold"] if g not in by_id]
            assert not missing, (row["id"], missing)


def test_switches_leave_the_first_topic(convs: dict[str, list[dict[str, Any]]]) -> None:
    """A topic switch is answered by cards of another topic than the first question's."""

    def topic(card_id: str) -> str:
        return card_id.split("-")[1]

    for rows in convs.values():
        for row in rows:
            if row["kind"] == "switch":
                first = {topic(g) for g in row["first_gold"]}
                assert not first & {topic(g) for g in row["gold"]}, row["id"]


def test_questions_are_not_card_titles(
    convs: dict[str, list[dict[str, Any]]], titles: dict[str, str]
) -> None:
    all_titles = set(titles.values())
    for rows in convs.values():
        for row in rows:
            for text in texts(row):
                assert text.strip().lower() not in all_titles, (row["id"], text)
            for text, gold in ((row["first"], row["first_gold"]), (row["followup"], row["gold"])):
                for g in gold:
                    assert titles[g] not in text.lower(), (row["id"], g)


def test_questions_are_new(convs: dict[str, list[dict[str, Any]]]) -> None:
    """No question is copied from the single-question sets, and none repeats across both files."""
    existing = {
        q["question"].strip().lower()
        for split in SPLITS
        for q in load(f"eval/questions.{split}.jsonl")
    }
    seen: set[str] = set()
    for rows in convs.values():
        for row in rows:
            for text in texts(row):
                key = text.strip().lower()
                assert key not in existing, (row["id"], text)
                assert key not in seen, (row["id"], text)
                seen.add(key)


def test_clean_text(convs: dict[str, list[dict[str, Any]]]) -> None:
    for rows in convs.values():
        for row in rows:
            for text in texts(row):
                assert text == text.strip(), row["id"]
                assert "  " not in text, row["id"]
                bad = [ch for ch in text if unicodedata.category(ch) in {"Cc", "Cf", "Co", "Cs"}]
                assert not bad, (row["id"], bad)
