"""Data test for kb/eval/multilingual.dev.jsonl: each row is a demo dev question, unchanged in
``en``, with its gold cards, and a Spanish and a French translation."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def rows(rel: str) -> list[dict[str, object]]:
    text = (ROOT / "kb" / rel).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line]


def test_every_row_is_a_dev_question_with_its_translations() -> None:
    dev = {r["id"]: r for r in rows("eval/questions.dev.jsonl")}
    translated = rows("eval/multilingual.dev.jsonl")
    assert len(translated) >= 20
    assert len({r["id"] for r in translated}) == len(translated)
    for r in translated:
        assert set(r) == {"id", "source", "gold", "en", "es", "fr"}, r["id"]
        source = dev[str(r["source"])]
        assert (r["en"], r["gold"]) == (source["question"], source["gold"]), r["id"]
        assert all(isinstance(r[k], str) and r[k] and r[k] != r["en"] for k in ("es", "fr"))
