"""The demo's example questions (``kb/demo/examples.json``, served by ``GET /api/v1/examples``
under ``citewall demo``): valid settings, and about the demo's public help pages only, never an
internal playbook. Each question's best lexical match among all demo cards must be external."""

from __future__ import annotations

import json
from pathlib import Path

from citewall.config import check_example_questions
from citewall.kb.audiences import EVERY_CARD
from citewall.retrieval.lexical_index import BM25Index, build_bm25

DEMO = Path(__file__).resolve().parents[2] / "kb" / "demo"


def test_demo_examples_are_valid_and_about_external_cards() -> None:
    questions = json.loads((DEMO / "examples.json").read_text(encoding="utf-8"))
    assert isinstance(questions, list) and questions
    assert check_example_questions(questions) == questions
    cards = [
        json.loads(line)
        for line in (DEMO / "cards.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    external = {c["id"] for c in cards if c.get("url")}
    internal_titles = [c["title"].split(" (CWLEAK")[0].lower() for c in cards if not c.get("url")]
    index = BM25Index(
        build_bm25([f"{c['title']}. {c['body']}" for c in cards]),
        [c["id"] for c in cards],
        version="examples",
    )
    for question in questions:
        best = index.query(question, 1, cards=EVERY_CARD)[0]
        assert best.chunk_id in external, (question, best.chunk_id)
        assert "CWLEAK" not in question
        assert not any(title in question.lower() for title in internal_titles), question
