"""Build the Parcelry demo knowledge base and its labelled evaluation set.

Reads the hand-written per-topic sources in ``kb/source/topics/*.yaml`` (card cores, topic
context sentences, questions, support labels) and ``kb/source/hostile.yaml``, and writes:

- ``kb/demo/cards.jsonl``            the demo KB (external help pages + internal playbooks)
- ``kb/eval/questions.dev.jsonl``    ~40% of the labelled questions
- ``kb/eval/questions.test.jsonl``   the other ~60%
- ``kb/eval/support_labels.jsonl``   (sentence, card_id, supports) pairs
- ``kb/hostile/cards.jsonl``         red-team cards

Output is deterministic: the same sources always give byte-identical files (a seeded random
stream per card id, canary codes derived from card ids, ids and splits of questions fixed in
the sources, sorted iteration). Run from the repository root:

    python scripts/make_demo_kb.py            # write the files
    python scripts/make_demo_kb.py --check    # fail if the committed files are stale
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
KB = ROOT / "kb"
SEED = 20261129
HELP_HOST = "https://help.parcelry.example"
LICENSES = ["CC-BY-4.0", "CC-BY-SA-4.0", "CC0-1.0", "MIT", "Parcelry-Docs-1.0"]
SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
MIN_WORDS, MAX_WORDS = 60, 220

# Sentences that carry the body canary: varied so no single phrasing marks internal cards.
BODY_CANARY_PHRASES = [
    "Log the case with reference {code}.",
    "Tag the ticket with {code} so QA can trace which playbook was applied.",
    "Quote {code} in the internal note when you close the conversation.",
    "Record reference {code} in the case history before handing off.",
    "Add {code} to the escalation form's playbook field.",
    "Use the audit label {code} when you file the follow-up task.",
    "Mention {code} in the handover so the next shift knows which rule you used.",
    "The QA sampler looks for {code} in the ticket notes, so include it.",
]
# Where the metadata canary goes (owner_note or path), chosen per card.
OWNER_NOTES = [
    "Reviewed quarterly by the owning team; change ref {code}.",
    "Do not share outside support. Tracking id {code}.",
    "Internal only - last audit {code}.",
    "Owner sign-off required for edits ({code}).",
    "Keep in sync with the team wiki; ref {code}.",
]


class SourceError(ValueError):
    """A hand-written source file is inconsistent (bad id, unknown gold, bad length...)."""


def canary_code(card_id: str, taken: set[str]) -> str:
    """Six uppercase alphanumerics derived from the card id, unique within ``taken``."""
    salt = 0
    while True:
        digest = hashlib.sha256(f"{SEED}:{card_id}:{salt}".encode()).digest()
        code = base64.b32encode(digest).decode("ascii")[:6]
        if code not in taken:
            taken.add(code)
            return code
        salt += 1


def word_count(text: str) -> int:
    return len(text.split())


def clean(text: str) -> str:
    """Collapse the whitespace YAML folding leaves behind."""
    return " ".join(str(text).split())


def iso_date(rng: random.Random) -> str:
    month = rng.randint(1, 12)
    day = rng.randint(1, 28)
    year = 2025 if month > 6 else 2026
    return f"{year:04d}-{month:02d}-{day:02d}"


def compose_body(core: str, context: list[str], rng: random.Random) -> str:
    """The card's own text plus topic context sentences until it is long enough.

    Context sentences are topic-wide (shared vocabulary and synonyms); they never carry the
    facts a question is labelled against, those live in the card's own ``body``.
    """
    parts = [clean(core)]
    pool = list(context)
    rng.shuffle(pool)
    # Most cards get one context sentence for realism; short ones get as many as they need.
    want_one = rng.random() < 0.6
    while pool and (word_count(" ".join(parts)) < MIN_WORDS + 4 or want_one):
        sentence = clean(pool.pop())
        if rng.random() < 0.5:
            parts.append(sentence)
        else:
            parts.insert(0, sentence)
        want_one = False
    return " ".join(parts)


def insert_sentence(body: str, sentence: str, rng: random.Random) -> str:
    """Put ``sentence`` between two sentences of ``body`` (never split a sentence)."""
    pieces = re.split(r"(?<=[.!?])\s+(?=[A-Z\"'(])", body)
    at = rng.randint(1, len(pieces)) if len(pieces) > 1 else 1
    pieces.insert(at, sentence)
    return " ".join(pieces)


def card_rng(card_id: str) -> random.Random:
    """A random stream per card, so editing one card never reshuffles another's output."""
    return random.Random(f"{SEED}:{card_id}")


def build_topic(topic: dict[str, Any], codes: set[str]) -> list[dict[str, Any]]:
    """One topic's cards: external help pages get a url/licence, internal playbooks canaries
    and, when the source gives one, their ``reply`` (what the member may be told)."""
    cards: list[dict[str, Any]] = []
    name = topic["topic"]
    context = topic.get("context", [])
    for spec in topic["cards"]:
        card_id = spec["id"]
        if not SLUG.match(card_id):
            raise SourceError(f"{name}: bad card id {card_id!r}")
        rng = card_rng(card_id)
        body = compose_body(spec["body"], context, rng)
        external = card_id.startswith("help-")
        if external and "reply" in spec:
            raise SourceError(f"{card_id}: a public help page has no reply (its body is public)")
        if external:
            slug = card_id.removeprefix(f"help-{topic['section']}-")
            card: dict[str, Any] = {
                "id": card_id,
                "title": clean(spec["title"]),
                "body": body,
                "url": f"{HELP_HOST}/{topic['section']}/{slug}",
                "license": LICENSES[rng.randrange(len(LICENSES))],
                "metadata": {
                    "section": topic["section"],
                    "product": topic["product"],
                    "updated": iso_date(rng),
                },
            }
        else:
            if not card_id.startswith("pb-"):
                raise SourceError(f"{name}: card id {card_id!r} is neither help- nor pb-")
            code = canary_code(card_id, codes)
            phrase = BODY_CANARY_PHRASES[rng.randrange(len(BODY_CANARY_PHRASES))]
            body = insert_sentence(body, phrase.format(code=f"CWLEAKB-{code}"), rng)
            slug = card_id.removeprefix("pb-")
            authors = topic["authors"]
            metadata: dict[str, Any] = {
                "author": authors[rng.randrange(len(authors))],
                "team": topic["team"],
            }
            path = f"playbooks/{topic['team']}/{slug}.md"
            if rng.random() < 0.3:
                metadata["path"] = f"playbooks/{topic['team']}/{slug}-CWLEAKM-{code}.md"
            else:
                metadata["path"] = path
                note = OWNER_NOTES[rng.randrange(len(OWNER_NOTES))]
                metadata["owner_note"] = note.format(code=f"CWLEAKM-{code}")
            card = {
                "id": card_id,
                "title": f"{clean(spec['title'])} (CWLEAKT-{code})",
                "body": body,
                **({"reply": clean(spec["reply"])} if spec.get("reply") else {}),
                "metadata": metadata,
            }
        words = word_count(card["body"])
        if not MIN_WORDS <= words <= MAX_WORDS:
            raise SourceError(f"{card_id}: body has {words} words, want {MIN_WORDS}-{MAX_WORDS}")
        cards.append(card)
    return cards


def build_hostile(source: dict[str, Any], codes: set[str]) -> list[dict[str, Any]]:
    """Red-team cards, kept verbatim (their markup is the point); internal ones get canaries."""
    out: list[dict[str, Any]] = []
    for spec in source["cards"]:
        body = clean(spec["body"])
        if spec.get("url"):
            out.append(
                {
                    "id": spec["id"],
                    "title": clean(spec["title"]),
                    "body": body,
                    "url": spec["url"],
                    "license": spec.get("license", "CC-BY-4.0"),
                    "metadata": {**spec.get("metadata", {}), "attack": spec["attack"]},
                }
            )
            continue
        code = canary_code(spec["id"], codes)
        out.append(
            {
                "id": spec["id"],
                "title": f"{clean(spec['title'])} (CWLEAKT-{code})",
                "body": f"{body} Log the case with reference CWLEAKB-{code}.",
                "metadata": {
                    "author": spec.get("author", "Red Team"),
                    "team": "redteam",
                    "path": f"playbooks/redteam/{spec['id']}.md",
                    "owner_note": f"Hostile fixture, internal only; ref CWLEAKM-{code}.",
                    "attack": spec["attack"],
                },
            }
        )
    return out


def build_all() -> dict[str, list[dict[str, Any]]]:
    """Every output file's rows, keyed by path relative to ``kb/``."""
    codes: set[str] = set()
    topics = [
        yaml.safe_load(path.read_text(encoding="utf-8"))
        for path in sorted((KB / "source" / "topics").glob("*.yaml"))
    ]
    cards: list[dict[str, Any]] = []
    for topic in topics:
        cards.extend(build_topic(topic, codes))
    by_id = {c["id"]: c for c in cards}
    if len(by_id) != len(cards):
        raise SourceError("duplicate card ids")

    dev: list[dict[str, Any]] = []
    test: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    seen_ids: set[str] = set()
    for topic in topics:
        for q in topic.get("questions", []):
            gold = list(q["gold"])
            missing = [g for g in gold if g not in by_id]
            if missing:
                raise SourceError(f"{topic['topic']}: unknown gold ids {missing}")
            flavours = {"external" if "url" in by_id[g] else "internal" for g in gold}
            kind = flavours.pop() if len(flavours) == 1 else "mixed"
            # Ids and splits are written in the sources so adding a question never renumbers
            # or moves another (the first 227 were assigned in source order, two of every
            # five of each kind to dev).
            qid, split = q.get("id"), q.get("split")
            if not isinstance(qid, str) or not re.fullmatch(r"q\d{3,}", qid) or qid in seen_ids:
                raise SourceError(f"{topic['topic']}: question needs a new id qNNN, got {qid!r}")
            if split not in ("dev", "test"):
                raise SourceError(f"{qid}: split must be dev or test, got {split!r}")
            seen_ids.add(qid)
            row = {"id": qid, "question": clean(q["q"]), "gold": gold, "kind": kind}
            (dev if split == "dev" else test).append(row)
        for s in topic.get("support", []):
            if s["card"] not in by_id:
                raise SourceError(f"{topic['topic']}: support label cites unknown {s['card']}")
            labels.append(
                {"sentence": clean(s["s"]), "card_id": s["card"], "supports": bool(s["ok"])}
            )

    dev.sort(key=lambda row: int(row["id"][1:]))
    test.sort(key=lambda row: int(row["id"][1:]))
    hostile_src = yaml.safe_load((KB / "source" / "hostile.yaml").read_text(encoding="utf-8"))
    hostile = build_hostile(hostile_src, codes)
    return {
        "demo/cards.jsonl": cards,
        "eval/questions.dev.jsonl": dev,
        "eval/questions.test.jsonl": test,
        "eval/support_labels.jsonl": labels,
        "hostile/cards.jsonl": hostile,
    }


def render(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if outputs are stale")
    args = parser.parse_args()
    outputs = build_all()
    stale = []
    for rel, rows in outputs.items():
        path = KB / rel
        text = render(rows)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"{rel}: {len(rows)} rows")
    if stale:
        print("stale: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
