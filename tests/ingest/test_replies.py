"""An internal card's member-facing reply, in every form: JSONL ``reply``, a Markdown card's
``## Tell the member`` section (or ``reply:`` in its front matter), a document's ``Tell the
member`` section; refused with file, line and field where it cannot be one."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

from citewall.ingest.chunking import chunk_card
from citewall.ingest.loaders import load_cards
from citewall.kb.card import Card
from citewall.retrieval.records import index_text
from ingest.documents.files import docx_bytes, pdf_bytes, words, write
from ingest.kbfixtures import write_jsonl

STAFF = "Log the credit in Helm with reason code GW-LATE and tell the team lead."
REPLY = "A late parcel gets a goodwill credit on your next invoice."
PLAYBOOK = {"id": "pb-late", "title": "Late parcels", "body": STAFF, "reply": REPLY}
PUBLIC = {"id": "help-late", "title": "Late parcels", "body": REPLY, "url": "https://h.test/a"}


def test_a_jsonl_card_carries_its_reply_and_its_hash_covers_it(tmp_path: Path) -> None:
    [card] = load_cards([write_jsonl(tmp_path / "c.jsonl", [PLAYBOOK])]).cards
    assert card.body == STAFF and card.reply == REPLY
    without = Card.model_validate({k: v for k, v in PLAYBOOK.items() if k != "reply"})
    assert card.content_hash() != without.content_hash()
    # A card without a reply hashes as before replies existed: re-ingest leaves it alone.
    before = {"url": None, "license": None, "metadata": {}} | {
        k: v for k, v in PLAYBOOK.items() if k != "reply"
    }
    payload = json.dumps(before, sort_keys=True, ensure_ascii=False, default=str)
    assert without.content_hash() == hashlib.sha256(payload.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        ("See https://help.example.com/late for details.", "link or HTML"),
        ("Read [the guide](/late) first.", "link or HTML"),
        ("Visit www.example.com today.", "link or HTML"),
        ("You get a <b>credit</b>.", "link or HTML"),
        ("   ", "is empty"),
        ("Bell\x07 here.", "control character"),
    ],
)
def test_a_bad_reply_is_refused_naming_file_line_and_field(
    tmp_path: Path, reply: str, says: str
) -> None:
    f = write_jsonl(tmp_path / "c.jsonl", [PUBLIC, {**PLAYBOOK, "reply": reply}])
    result = load_cards([f])
    assert [c.id for c in result.cards] == ["help-late"]
    [err] = result.errors
    assert (err.path, err.line, err.field) == (str(f), 2, "reply")
    assert says in str(err) and str(err).startswith(f"{f}:2: ")
    assert result.refused_ids == {"pb-late"}


def test_an_external_card_may_not_have_a_reply(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "c.jsonl", [PLAYBOOK, {**PUBLIC, "reply": REPLY}])
    result = load_cards([f])
    [err] = result.errors
    assert (err.path, err.line, err.field) == (str(f), 2, "reply")
    assert "only an internal card has a reply" in str(err)


def test_a_markdown_card_takes_its_tell_the_member_section_out_of_the_body(
    tmp_path: Path,
) -> None:
    f = write(
        tmp_path / "late.md",
        "---\nid: pb-late\ntitle: Late parcels\n---\n\n"
        f"{STAFF}\n\n## Tell the member\n\n{REPLY}\n\n### Amounts\n\nUp to 20 EUR.\n\n"
        "## Escalation\n\nTier 2 owns lost parcels.\n",
    )
    result = load_cards([f])
    assert result.errors == []
    [card] = result.cards
    assert card.reply == f"{REPLY}\n\n### Amounts\n\nUp to 20 EUR."
    assert "Tell the member" not in card.body and REPLY not in card.body
    assert STAFF in card.body and "Tier 2 owns lost parcels." in card.body


def test_a_markdown_reply_with_a_link_names_its_own_line(tmp_path: Path) -> None:
    f = write(
        tmp_path / "late.md",
        f"---\nid: pb-late\ntitle: Late parcels\n---\n\n{STAFF}\n\n"
        "## Tell the member:\n\nSee https://x.test/late.\n",
    )
    [err] = load_cards([f]).errors
    assert (err.path, err.line, err.field) == (str(f), 8, "reply")


def test_an_empty_tell_the_member_section_is_refused(tmp_path: Path) -> None:
    f = write(tmp_path / "e.md", f"---\nid: pb-e\ntitle: E\n---\n{STAFF}\n\n## Tell the member\n")
    [err] = load_cards([f]).errors
    assert (err.line, err.field) == (7, "reply") and "is empty" in str(err)


def test_a_markdown_card_gives_its_reply_once(tmp_path: Path) -> None:
    f = write(
        tmp_path / "late.md",
        f"---\nid: pb-late\ntitle: Late parcels\nreply: {REPLY}\n---\n{STAFF}\n\n"
        f"## Tell the member\n\n{REPLY}\n",
    )
    result = load_cards([f])
    assert result.cards == []
    [err] = result.errors
    assert (err.line, err.field) == (8, "reply") and "given twice" in str(err)
    front = write(
        tmp_path / "front.md", f"---\nid: pb-front\ntitle: Front\nreply: {REPLY}\n---\n{STAFF}\n"
    )
    [card] = load_cards([front]).cards
    assert card.reply == REPLY


def test_an_external_markdown_card_with_a_reply_section_is_refused(tmp_path: Path) -> None:
    f = write(
        tmp_path / "late.md",
        f"---\nid: help-late\ntitle: Late\nurl: https://h.test/late\n---\n{REPLY}\n\n"
        f"## Tell the member\n\n{REPLY}\n",
    )
    [err] = load_cards([f]).errors
    assert (err.line, err.field) == (8, "reply") and "only an internal card" in str(err)


def test_a_short_document_gives_its_one_card_the_reply(tmp_path: Path) -> None:
    write(
        tmp_path / "late.md",
        f"# Late parcels\n\n{STAFF}\n\n## Tell the member\n\n{REPLY}\n",
    )
    write(
        tmp_path / "late.docx",
        docx_bytes([(1, "Late parcels"), (0, STAFF), (2, "Tell the member"), (0, REPLY)]),
    )
    result = load_cards([tmp_path])
    assert result.errors == []
    assert len(result.cards) == 2
    for card in result.cards:
        assert card.reply == REPLY and REPLY not in card.body and STAFF in card.body


def test_a_long_document_gives_each_reply_to_the_section_above_it(tmp_path: Path) -> None:
    html = (
        f"<title>Playbook</title><h2>Late</h2><p>{words('late', 300)}</p>"
        f"<h3>Tell the member</h3><p>{REPLY}</p>"
        f"<h2>Lost</h2><p>{words('lost', 400)}</p>"
    )
    write(tmp_path / "playbook.html", html)
    result = load_cards([tmp_path])
    assert result.errors == []
    by_section = {c.metadata["section"]: c for c in result.cards}
    assert by_section["Late"].reply == REPLY and by_section["Lost"].reply is None
    assert all("Tell the member" not in c.body for c in result.cards)


def test_a_bad_reply_in_a_markdown_document_names_its_heading_line(tmp_path: Path) -> None:
    doc = write(
        tmp_path / "late.md",
        f"# Late parcels\n\n{STAFF}\n\n## Tell the member\n\nSee <a href=x>this</a>.\n",
    )
    result = load_cards([tmp_path])
    assert result.cards == []
    [err] = result.errors
    assert (err.path, err.line, err.field) == (str(doc), 5, "reply")
    assert "link or HTML" in str(err)


def test_a_pdf_line_tell_the_member_starts_the_reply(tmp_path: Path) -> None:
    write(tmp_path / "late.pdf", pdf_bytes([STAFF, "Tell the member:", REPLY]))
    [card] = load_cards([tmp_path]).cards
    assert card.reply == REPLY and card.body == STAFF


def test_a_document_made_external_by_its_sidecar_refuses_a_reply(tmp_path: Path) -> None:
    write(tmp_path / "late.md", f"# Late\n\n{REPLY}\n\n## Tell the member\n\n{REPLY}\n")
    side = write(tmp_path / "late.md.yaml", "license: CC0-1.0\nurl: https://h.test/late\n")
    result = load_cards([tmp_path])
    assert result.cards == []
    [err] = result.errors
    assert (err.path, err.line, err.field) == (str(side), 2, "reply")


def test_every_chunk_carries_the_reply_and_indexes_it_after_the_staff_notes() -> None:
    card = Card.model_validate({**PLAYBOOK, "body": f"{STAFF}\n\n{words('staff', 60)}"})
    chunks = chunk_card(card, max_words=40)
    assert len(chunks) > 1
    assert all(c.reply == REPLY for c in chunks)
    first = index_text(chunks[0])
    assert first.startswith("Late parcels\n" + STAFF) and first.endswith(REPLY)


def test_the_demo_source_passes_replies_through_and_refuses_one_on_a_help_page() -> None:
    spec = importlib.util.spec_from_file_location(
        "make_demo_kb", Path(__file__).resolve().parents[2] / "scripts" / "make_demo_kb.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    body = " ".join(["Staff notes about the case."] * 16)
    topic = {
        "topic": "t",
        "section": "labels",
        "product": "P",
        "team": "ops",
        "authors": ["A"],
        "cards": [{"id": "pb-labels-x", "title": "X", "body": body, "reply": f"  {REPLY}\n"}],
    }
    [card] = module.build_topic(topic, set())
    assert card["reply"] == REPLY and Card.model_validate(card).reply == REPLY
    topic["cards"] = [{"id": "help-labels-x", "title": "X", "body": body, "reply": REPLY}]
    with pytest.raises(module.SourceError, match="no reply"):
        module.build_topic(topic, set())


def test_jsonl_reply_round_trips_through_json(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps(PLAYBOOK) + "\n", encoding="utf-8")
    [card] = load_cards([f]).cards
    assert json.loads(card.model_dump_json())["reply"] == REPLY
