"""A card cannot smuggle a url (or licence/title/hash) through free metadata.

If it could, an internal card would look external at the serve boundary, which keeps any
source whose allowlisted metadata carries a url.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from citewall.boundary.external import external_sources_only
from citewall.ingest.loaders import load_cards
from citewall.kb.card import RESERVED_METADATA_KEYS, Card
from citewall.storage.sources import readable_sources


@pytest.mark.parametrize("key", sorted(RESERVED_METADATA_KEYS))
def test_reserved_metadata_key_is_refused(key: str) -> None:
    with pytest.raises(ValidationError, match="reserved"):
        Card(
            id="pb-x", title="Playbook", body="Internal text.", metadata={key: "https://a.example/"}
        )


def test_loader_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "cards.jsonl"
    good = {"id": "ok", "title": "Fine", "body": "Body."}
    bad = {"id": "pb-x", "title": "T", "body": "B", "metadata": {"url": "https://a.example/"}}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    result = load_cards([path])
    assert [c.id for c in result.cards] == ["ok"]
    assert len(result.errors) == 1
    message = str(result.errors[0])
    assert f"{path}:2" in message and "'metadata'" in message and "reserved" in message


def test_internal_card_full_metadata_never_makes_it_external() -> None:
    card = Card(id="pb-y", title="Playbook", body="Internal text.", metadata={"team": "ops"})
    stored = {
        "n": 1,
        "card_id": card.id,
        "title": card.title,
        "text": card.body,
        "metadata": card.full_metadata(),
    }
    assert "url" not in card.full_metadata()
    (source,) = readable_sources([stored])  # the row as the member's view reads it
    assert external_sources_only([source], hybrid_path="full") == []
