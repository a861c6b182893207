"""Data tests for the demo knowledge base, its labelled questions and the hostile fixtures.

Plain json only (no models, no citewall imports beyond the URL check), so they run in well
under a second and fail with the offending card id.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from citewall.kb.urls import url_problem

ROOT = Path(__file__).resolve().parents[2]
KB = ROOT / "kb"
SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
CANARY = re.compile(r"CWLEAK([TMB])-([A-Z0-9]+)")
INTERNAL_META_KEYS = {"author", "path", "team", "owner_note"}
EXTERNAL_META_KEYS = {"section", "product", "updated"}
HOSTILE_META_KEYS = EXTERNAL_META_KEYS | {"attack"}
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def load(rel: str) -> list[dict[str, Any]]:
    path = KB / rel
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def cards() -> list[dict[str, Any]]:
    return load("demo/cards.jsonl")


@pytest.fixture(scope="module")
def hostile() -> list[dict[str, Any]]:
    return load("hostile/cards.jsonl")


@pytest.fixture(scope="module")
def by_id(cards: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in cards}


@pytest.fixture(scope="module")
def questions() -> dict[str, list[dict[str, Any]]]:
    return {"dev": load("eval/questions.dev.jsonl"), "test": load("eval/questions.test.jsonl")}


def canaries(text: str) -> list[tuple[str, str]]:
    return CANARY.findall(text)


def meta_text(card: dict[str, Any]) -> str:
    return " ".join(str(v) for v in card["metadata"].values())


def check_card_shape(card: dict[str, Any]) -> None:
    assert set(card) <= {"id", "title", "body", "url", "license", "reply", "metadata"}, card["id"]
    assert "reply" not in card or "url" not in card, card["id"]  # a public page has no reply
    assert SLUG.match(card["id"]), card["id"]
    assert isinstance(card["title"], str) and card["title"].strip(), card["id"]
    assert isinstance(card["body"], str) and card["body"].strip(), card["id"]
    assert isinstance(card["metadata"], dict), card["id"]


def check_external(card: dict[str, Any], meta_keys: set[str] = EXTERNAL_META_KEYS) -> None:
    url = card["url"]
    assert url_problem(url) is None, (card["id"], url)
    parts = urlsplit(url)
    assert parts.scheme == "https", (card["id"], url)
    assert parts.hostname is not None and parts.hostname.endswith(".example"), (card["id"], url)
    assert isinstance(card.get("license"), str) and card["license"], card["id"]
    assert set(card["metadata"]) <= meta_keys, card["id"]
    everything = json.dumps(card, ensure_ascii=False)
    assert "CWLEAK" not in everything, card["id"]


def check_internal(card: dict[str, Any]) -> str:
    """Exactly one canary of each kind in its place, one shared code; returns the code."""
    cid = card["id"]
    assert "url" not in card and "license" not in card, cid
    assert set(card["metadata"]) & INTERNAL_META_KEYS, cid
    in_title = canaries(card["title"])
    in_meta = canaries(meta_text(card))
    in_body = canaries(card["body"])
    assert [k for k, _ in in_title] == ["T"], (cid, in_title)
    assert [k for k, _ in in_meta] == ["M"], (cid, in_meta)
    assert [k for k, _ in in_body] == ["B"], (cid, in_body)
    codes = {code for _, code in in_title + in_meta + in_body}
    assert len(codes) == 1, (cid, codes)
    # The body canary sits inside a sentence, not as a bare token.
    assert re.search(r"[A-Za-z][^.]*CWLEAKB-[A-Z0-9]+", card["body"]), cid
    return codes.pop()


def test_card_count_and_ids(cards: list[dict[str, Any]]) -> None:
    assert len(cards) >= 300
    ids = [c["id"] for c in cards]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    for card in cards:
        check_card_shape(card)


def test_body_length(cards: list[dict[str, Any]]) -> None:
    for card in cards:
        words = len(card["body"].split())
        assert 60 <= words <= 220, (card["id"], words)


def test_external_internal_balance(cards: list[dict[str, Any]]) -> None:
    external = sum(1 for c in cards if "url" in c)
    assert 0.4 <= external / len(cards) <= 0.6, external


def test_several_licences(cards: list[dict[str, Any]]) -> None:
    licences = Counter(c["license"] for c in cards if "url" in c)
    assert len(licences) >= 4, licences


def test_external_cards(cards: list[dict[str, Any]]) -> None:
    for card in (c for c in cards if "url" in c):
        check_external(card)
        assert card["url"].startswith("https://help.parcelry.example/"), card["id"]
        assert ISO_DATE.match(card["metadata"]["updated"]), card["id"]


def test_internal_canaries(cards: list[dict[str, Any]], hostile: list[dict[str, Any]]) -> None:
    codes = [check_internal(c) for c in cards + hostile if "url" not in c]
    assert len(codes) == len(set(codes)), [c for c, n in Counter(codes).items() if n > 1]
    assert all(re.fullmatch(r"[A-Z0-9]{6}", code) for code in codes)


def test_no_stray_canaries(cards: list[dict[str, Any]]) -> None:
    """A card's text mentions only its own code: no cross-card canary contamination."""
    for card in cards:
        codes = {code for _, code in canaries(json.dumps(card, ensure_ascii=False))}
        assert len(codes) <= 1, (card["id"], codes)


def test_questions(
    questions: dict[str, list[dict[str, Any]]], by_id: dict[str, dict[str, Any]]
) -> None:
    dev, test = questions["dev"], questions["test"]
    assert len(dev) + len(test) >= 150
    assert 0.3 <= len(dev) / (len(dev) + len(test)) <= 0.5
    ids_dev = {q["id"] for q in dev}
    ids_test = {q["id"] for q in test}
    assert len(ids_dev) == len(dev) and len(ids_test) == len(test)
    assert not ids_dev & ids_test
    assert not {q["question"] for q in dev} & {q["question"] for q in test}
    kinds: Counter[str] = Counter()
    for q in dev + test:
        assert set(q) == {"id", "question", "gold", "kind"}, q["id"]
        assert q["gold"] and len(q["gold"]) == len(set(q["gold"])), q["id"]
        missing = [g for g in q["gold"] if g not in by_id]
        assert not missing, (q["id"], missing)
        flavours = {"external" if "url" in by_id[g] else "internal" for g in q["gold"]}
        expected = flavours.pop() if len(flavours) == 1 else "mixed"
        assert q["kind"] == expected, (q["id"], q["kind"], expected)
        kinds[q["kind"]] += 1
    assert all(kinds[k] >= 10 for k in ("external", "internal", "mixed")), kinds


def test_questions_do_not_copy_titles(
    questions: dict[str, list[dict[str, Any]]], by_id: dict[str, dict[str, Any]]
) -> None:
    for q in questions["dev"] + questions["test"]:
        for g in q["gold"]:
            title = CANARY.sub("", by_id[g]["title"]).strip(" ()").lower()
            assert title not in q["question"].lower(), (q["id"], g)


def test_support_labels(by_id: dict[str, dict[str, Any]]) -> None:
    labels = load("eval/support_labels.jsonl")
    assert len(labels) >= 50
    for row in labels:
        assert set(row) == {"sentence", "card_id", "supports"}, row
        assert row["card_id"] in by_id, row
        assert isinstance(row["supports"], bool)
    share = sum(r["supports"] for r in labels) / len(labels)
    assert 0.35 <= share <= 0.65, share


def test_hostile_cards(hostile: list[dict[str, Any]]) -> None:
    assert len(hostile) >= 15
    ids = [c["id"] for c in hostile]
    assert len(ids) == len(set(ids))
    external = [c for c in hostile if "url" in c]
    assert external and len(external) < len(hostile)
    for card in hostile:
        check_card_shape(card)
        assert isinstance(card["metadata"].get("attack"), str), card["id"]
        if "url" in card:
            check_external(card, HOSTILE_META_KEYS)
    text = json.dumps(hostile, ensure_ascii=False)
    for probe in (
        "Ignore previous instructions",
        "https://evil.example/x",
        "![x](https://evil",
        "cite [99]",
        "<script>window.__pwned=1</script>",
        "onerror=",
        "javascript:",
    ):
        assert probe in text, probe


def test_hostile_ids_do_not_clash(
    hostile: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]
) -> None:
    assert not {c["id"] for c in hostile} & set(by_id)


def test_generator_output_is_committed() -> None:
    """The committed files are exactly what scripts/make_demo_kb.py produces."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_demo_kb.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
