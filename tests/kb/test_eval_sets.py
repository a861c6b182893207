"""Data tests for the labelled sets of the two real corpora nobody on the project wrote.

``kb/eval/zulip/`` labels ``evals/zulip-help.jsonl`` (the Zulip help center) and
``kb/eval/fastapi/`` labels ``evals/fastapi-docs.jsonl`` (the FastAPI docs), in the shapes of the
demo's files (questions, nuggets, unanswerable, followups; dev and test). ``problems`` is the
validator: every row parses with exactly its fields, ids are unique within the KB and follow its
prefix, every gold / near / first_gold card exists in the corpus, no asked text is a card title
(nor contains its own gold card's title), nugget ids match question ids, counts meet the
minimums, and dev and test are disjoint. It is shown refusing deliberately broken rows, the
harness's own loaders read every file, and the test splits are pinned by hash: they were
committed before any tuning and must not change.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from citewall_evals.data import DATASETS
from citewall_evals.quality import abstention, answers
from citewall_evals.questions import labelled_split, load_questions
from citewall_evals.retrieval import followups

ROOT = Path(__file__).resolve().parents[2]
SPLITS = ("dev", "test")
FILES = ("questions", "nuggets", "unanswerable", "followups")
FIELDS = {
    "questions": {"id", "question", "gold", "kind"},
    "nuggets": {"id", "nuggets"},
    "unanswerable": {"id", "question", "kind", "near", "missing"},
    "followups": {"id", "first", "first_gold", "followup", "gold", "kind"},
}
ID_LETTER = {"questions": "q", "nuggets": "q", "unanswerable": "u", "followups": "f"}
MAX_NUGGET_WORDS = 25
# Minimums per KB: (dev, test, all).
MIN_QUESTIONS = (20, 36, 60)
MIN_UNANSWERABLE = (8, 12, 20)
MIN_FOLLOWUPS = (6, 9, 15)
MIN_TWO_GOLD = 5
MIN_PER_UNANSWERABLE_KIND = 10
#: sha256 of each KB's four test files re-serialised with sorted keys, one row per line.
TEST_SPLIT_SHA256 = {
    "zulip": "9b9ddb549c16b1f36573827449bb5a7bf7b90a098bb5e6a0172c05900ecb7829",
    "fastapi": "f77974abf8064f0fc9faba0ede3c22fe0b49aa5aa23eab4b17d04329345ab882",
}

Rows = list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class LabelledKb:
    """One corpus and its labelled files: ``rows[split][file]``."""

    name: str
    prefix: str
    corpus: Path
    rows: dict[str, dict[str, Rows]]

    @property
    def folder(self) -> Path:
        return ROOT / "kb" / "eval" / self.name


KBS = {"zulip": ("z", "zulip-help.jsonl"), "fastapi": ("f", "fastapi-docs.jsonl")}


def read(path: Path) -> Rows:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    assert all(isinstance(r, dict) for r in rows), path
    return rows


def labelled(name: str) -> LabelledKb:
    prefix, corpus = KBS[name]
    folder = ROOT / "kb" / "eval" / name
    rows = {s: {f: read(folder / f"{f}.{s}.jsonl") for f in FILES} for s in SPLITS}
    return LabelledKb(name, prefix, ROOT / "evals" / corpus, rows)


@pytest.fixture(scope="module", params=sorted(KBS))
def kb(request: pytest.FixtureRequest) -> LabelledKb:
    return labelled(str(request.param))


@pytest.fixture(scope="module")
def cards(kb: LabelledKb) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in read(kb.corpus)}


def problems(kb: LabelledKb, cards: dict[str, dict[str, Any]]) -> list[str]:
    """Everything wrong with ``kb``'s labelled files, one message per problem (empty: valid)."""
    out: list[str] = []
    titles = {c["title"].strip().lower() for c in cards.values()}

    def card_ids(row_id: str, field: str, ids: object, allow_empty: bool = False) -> list[str]:
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            out.append(f"{row_id}: {field} is not a list of card ids")
            return []
        if not ids and not allow_empty:
            out.append(f"{row_id}: {field} is empty")
        if len(ids) != len(set(ids)):
            out.append(f"{row_id}: {field} repeats a card")
        out.extend(
            f"{row_id}: {field} card {i!r} is not in {kb.corpus.name}"
            for i in ids
            if i not in cards
        )
        return [i for i in ids if i in cards]

    def asked(row_id: str, text: object, gold: list[str]) -> None:
        if not isinstance(text, str) or not text.strip() or text != text.strip():
            out.append(f"{row_id}: asked text is empty or padded")
            return
        lower = text.lower()
        if lower in titles:
            out.append(f"{row_id}: {text!r} is a card title")
        out.extend(
            f"{row_id}: contains the title of its gold card {g}"
            for g in gold
            if cards[g]["title"].strip().lower() in lower
        )

    seen: dict[str, str] = {}
    texts: Counter[str] = Counter()
    for split in SPLITS:
        for file in FILES:
            for row in kb.rows[split][file]:
                row_id = str(row.get("id"))
                if set(row) != FIELDS[file]:
                    out.append(
                        f"{split} {file} {row_id}: fields {sorted(row)}, not {sorted(FIELDS[file])}"
                    )
                    continue
                if not (row_id.startswith(kb.prefix + ID_LETTER[file]) and row_id[2:].isdigit()):
                    out.append(f"{row_id}: not a {kb.prefix}{ID_LETTER[file]}NNN id")
                if file != "nuggets":
                    if row_id in seen:
                        out.append(f"{row_id}: id used twice ({seen[row_id]} and {split} {file})")
                    seen[row_id] = f"{split} {file}"
                if file == "questions":
                    gold = card_ids(row_id, "gold", row["gold"])
                    asked(row_id, row["question"], gold)
                    texts[str(row["question"]).lower()] += 1
                    if row["kind"] != "external" or not all("url" in cards[g] for g in gold):
                        out.append(
                            f"{row_id}: kind {row['kind']!r}, but every gold card is external"
                        )
                elif file == "nuggets":
                    nuggets = row["nuggets"]
                    if not isinstance(nuggets, list) or not 1 <= len(nuggets) <= 3:
                        out.append(f"{row_id}: needs 1-3 nuggets")
                    elif any(
                        not isinstance(n, str) or not n.strip() or len(n.split()) > MAX_NUGGET_WORDS
                        for n in nuggets
                    ):
                        out.append(f"{row_id}: a nugget is empty or over {MAX_NUGGET_WORDS} words")
                elif file == "unanswerable":
                    near = card_ids(row_id, "near", row["near"], allow_empty=True)
                    asked(row_id, row["question"], near)
                    texts[str(row["question"]).lower()] += 1
                    if row["kind"] == "near_miss" and not 1 <= len(row["near"]) <= 3:
                        out.append(f"{row_id}: a near_miss lists 1-3 near cards")
                    elif row["kind"] == "uncovered" and row["near"]:
                        out.append(f"{row_id}: an uncovered question has no near cards")
                    elif row["kind"] not in {"near_miss", "uncovered"}:
                        out.append(f"{row_id}: kind {row['kind']!r} is not near_miss or uncovered")
                    if not isinstance(row["missing"], str) or not row["missing"].strip():
                        out.append(f"{row_id}: missing must say what the KB lacks")
                else:
                    first = card_ids(row_id, "first_gold", row["first_gold"])
                    gold = card_ids(row_id, "gold", row["gold"])
                    asked(row_id, row["first"], first)
                    asked(row_id, row["followup"], gold)
                    texts[str(row["first"]).lower()] += 1
                    texts[str(row["followup"]).lower()] += 1
                    if row["kind"] not in {"followup", "switch"}:
                        out.append(f"{row_id}: kind {row['kind']!r} is not followup or switch")
        questions = {str(r.get("id")) for r in kb.rows[split]["questions"]}
        nugget_ids = [str(r.get("id")) for r in kb.rows[split]["nuggets"]]
        if sorted(nugget_ids) != sorted(questions):
            out.append(
                f"{split}: nugget ids {sorted(set(nugget_ids) ^ questions)} "
                "do not match question ids"
            )
    out.extend(f"asked twice: {t!r}" for t, n in texts.items() if n > 1)

    def count(file: str, minimums: tuple[int, int, int]) -> None:
        dev, test = (len(kb.rows[s][file]) for s in SPLITS)
        if dev < minimums[0] or test < minimums[1] or dev + test < minimums[2]:
            out.append(f"{file}: {dev} dev + {test} test, below {minimums}")

    count("questions", MIN_QUESTIONS)
    count("unanswerable", MIN_UNANSWERABLE)
    count("followups", MIN_FOLLOWUPS)
    rows = [r for s in SPLITS for r in kb.rows[s]["questions"]]
    if sum(len(r.get("gold") or ()) == 2 for r in rows) < MIN_TWO_GOLD:
        out.append(f"questions: fewer than {MIN_TWO_GOLD} with two gold cards")
    kinds = Counter(r.get("kind") for s in SPLITS for r in kb.rows[s]["unanswerable"])
    if min(kinds["near_miss"], kinds["uncovered"]) < MIN_PER_UNANSWERABLE_KIND:
        out.append(f"unanswerable: {dict(kinds)}, needs {MIN_PER_UNANSWERABLE_KIND} of each kind")
    for split in SPLITS:
        if not any(r.get("kind") == "switch" for r in kb.rows[split]["followups"]):
            out.append(f"followups {split}: no topic switch")
    return out


def test_labelled_sets_are_valid(kb: LabelledKb, cards: dict[str, dict[str, Any]]) -> None:
    assert problems(kb, cards) == []


def test_every_corpus_card_is_external(kb: LabelledKb, cards: dict[str, dict[str, Any]]) -> None:
    assert len(cards) == sum(1 for _ in kb.corpus.read_text(encoding="utf-8").splitlines())
    assert all(c["url"].startswith("https://") and c["license"] for c in cards.values())


Cards = dict[str, dict[str, Any]]


def _first(kb: LabelledKb, file: str, split: str = "dev") -> dict[str, Any]:
    return kb.rows[split][file][0]


def _uncovered(kb: LabelledKb) -> dict[str, Any]:
    return next(r for r in kb.rows["dev"]["unanswerable"] if r["kind"] == "uncovered")


def _gold_title(kb: LabelledKb, cards: Cards) -> str:
    return str(cards[_first(kb, "followups")["gold"][0]]["title"])


#: name -> (how to break a copy of the labelled files, a part of the message it must produce).
BREAKAGES: dict[str, tuple[Callable[[LabelledKb, Cards], None], str]] = {
    "unknown gold card": (
        lambda kb, _: _first(kb, "questions").update(gold=["no-such-card"]),
        "card 'no-such-card' is not in",
    ),
    "question is a card title": (
        lambda kb, cards: _first(kb, "questions", "test").update(
            question=next(iter(cards.values()))["title"].upper()
        ),
        "is a card title",
    ),
    "contains its gold card's title": (
        lambda kb, cards: _first(kb, "followups").update(
            followup=f"and what about {_gold_title(kb, cards).lower()}?"
        ),
        "contains the title of its gold card",
    ),
    "id in dev and test": (
        lambda kb, _: _first(kb, "unanswerable").update(
            id=_first(kb, "unanswerable", "test")["id"]
        ),
        "id used twice",
    ),
    "nugget for no question": (
        lambda kb, _: _first(kb, "nuggets").update(id=kb.prefix + "q999"),
        "do not match question ids",
    ),
    "extra field": (lambda kb, _: _first(kb, "questions").update(split="dev"), "fields"),
    "uncovered with near cards": (
        lambda kb, _: _uncovered(kb).update(near=[_first(kb, "questions")["gold"][0]]),
        "an uncovered question has no near cards",
    ),
    "too few questions": (lambda kb, _: kb.rows["test"]["questions"].clear(), "+ 0 test, below"),
    "unknown follow-up kind": (
        lambda kb, _: _first(kb, "followups").update(kind="topic"),
        "is not followup or switch",
    ),
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_validator_refuses_a_broken_row(
    kb: LabelledKb, cards: dict[str, dict[str, Any]], breakage: str
) -> None:
    broken = LabelledKb(kb.name, kb.prefix, kb.corpus, copy.deepcopy(kb.rows))
    damage, expected = BREAKAGES[breakage]
    damage(broken, cards)
    found = problems(broken, cards)
    assert found, breakage
    assert any(expected in p for p in found), found


def test_harness_loaders_read_every_file(kb: LabelledKb) -> None:
    """The harness's loaders read the KB's files through its ``Dataset`` (``--kb``)."""
    dataset = DATASETS[kb.name]
    assert (dataset.corpus, dataset.labels) == (kb.corpus, kb.folder)
    for split in SPLITS:
        questions = load_questions(kb.folder / f"questions.{split}.jsonl")
        assert [q.id for q in questions] == [r["id"] for r in kb.rows[split]["questions"]]
        assert [q.id for q in labelled_split(split, dataset)] == [q.id for q in questions]
        assert set(answers.load_nuggets(split, dataset)) == {q.id for q in questions}
        unanswerable = abstention.load_unanswerable(split, dataset)
        assert len(unanswerable) == len(kb.rows[split]["unanswerable"])
        assert len(followups.load_followups(split, dataset)) == len(kb.rows[split]["followups"])


def test_test_split_is_frozen(kb: LabelledKb) -> None:
    canonical = "".join(
        json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n"
        for file in FILES
        for r in kb.rows["test"][file]
    )
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert digest == TEST_SPLIT_SHA256[kb.name], (
        f"kb/eval/{kb.name}/*.test.jsonl changed; they are frozen"
    )
