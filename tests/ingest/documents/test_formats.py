"""Each format becomes internal cards: ids from the relative path and anchors, titles from the
document, bodies from a real converter, long documents split at headings (PDFs by outline or
pages), Markdown with front matter loaded exactly as before."""

from __future__ import annotations

from pathlib import Path

from citewall.ingest.loaders import load_cards
from citewall.kb.card import Card
from ingest.documents.files import docx_bytes, pdf_bytes, words, write


def _by_id(path: Path) -> dict[str, Card]:
    result = load_cards([path])
    assert result.errors == [], [str(e) for e in result.errors]
    return {c.id: c for c in result.cards}


def test_a_short_pdf_is_one_internal_card_titled_from_its_metadata(tmp_path: Path) -> None:
    write(
        tmp_path / "kb" / "Refunds" / "Late Refund.pdf",
        pdf_bytes(
            ["A voided label is refunded within 21 days.", "Escalate after that."],
            title="Late refunds",
        ),
    )
    [card] = load_cards([tmp_path / "kb"]).cards
    assert card.id == "refunds.late-refund-pdf" and card.title == "Late refunds"
    assert card.url is None and card.license is None and not card.is_external
    assert "refunded within 21 days" in card.body and "Escalate after that." in card.body
    assert card.metadata == {"path": "Refunds/Late Refund.pdf", "format": "pdf", "pages": "1-2"}


def test_a_long_pdf_splits_by_its_outline(tmp_path: Path) -> None:
    pages = [
        words("intro", 80),
        words("voiding", 450),
        words("voiding", 300),
        words("duplicates", 400),
        words("tiny", 10),
    ]
    outline = [("Voiding labels", 1), ("Duplicate charges", 3), ("Contacts", 4)]
    pdf = write(tmp_path / "guide.pdf", pdf_bytes(pages, title="Label guide", outline=outline))
    cards = _by_id(pdf)
    # Page 1 before the first bookmark is its own section; "Voiding labels" (750 words) is cut
    # into page groups; the 10-word "Contacts" page joins "Duplicate charges".
    assert sorted(cards) == [
        "guide-pdf--duplicate-charges",
        "guide-pdf--page-1",
        "guide-pdf--voiding-labels",
        "guide-pdf--voiding-labels-page-3",
    ]
    voiding = cards["guide-pdf--voiding-labels"]
    assert voiding.title == "Label guide: Voiding labels"
    assert voiding.metadata["pages"] == "2"
    dup = cards["guide-pdf--duplicate-charges"]
    assert dup.metadata["pages"] == "4-5" and "## Contacts" in dup.body


def test_a_long_pdf_without_outline_splits_into_page_groups(tmp_path: Path) -> None:
    pages = [words("alpha", 250), words("beta", 250), words("gamma", 250), words("delta", 250)]
    cards = _by_id(write(tmp_path / "scan.pdf", pdf_bytes(pages)))
    assert sorted(cards) == ["scan-pdf--pages-1-2", "scan-pdf--pages-3-4"]
    assert cards["scan-pdf--pages-1-2"].title == "scan: pages 1-2"


def test_docx_headings_split_it_and_its_core_title_names_it(tmp_path: Path) -> None:
    blocks = [
        (1, "Escalations"),
        (0, words("escalate", 300)),
        (2, "Duplicate charges"),
        (0, words("duplicate", 300)),
        (2, "Small print"),
        (0, "Only two lines here."),
    ]
    write(tmp_path / "ops" / "playbook.docx", docx_bytes(blocks, title="Billing playbook"))
    cards = _by_id(tmp_path)
    assert sorted(cards) == [
        "ops.playbook-docx--duplicate-charges",
        "ops.playbook-docx--escalations",
    ]
    dup = cards["ops.playbook-docx--duplicate-charges"]
    assert dup.title == "Billing playbook: Duplicate charges"
    assert dup.body.startswith("duplicate dup1 dup2")
    assert dup.body.endswith("## Small print\n\nOnly two lines here.")
    assert dup.metadata == {
        "path": "ops/playbook.docx",
        "format": "docx",
        "section": "Duplicate charges",
    }


def test_html_keeps_headings_and_drops_scripts_navigation_and_links(tmp_path: Path) -> None:
    html = (
        "<html><head><title>Carrier outages</title><script>track('x')</script></head><body>"
        "<nav>Home / Ops</nav><h1>Carrier outages</h1>"
        f"<p>{words('outage', 350)}</p>"
        "<h2>Who to call</h2><p>Call the <a href='https://wiki.internal/oncall'>on-call</a> "
        f"lead.</p><ul><li>{words('oncall', 300)}</li></ul></body></html>"
    )
    cards = _by_id(write(tmp_path / "outages.html", html))
    assert sorted(cards) == ["outages-html--top", "outages-html--who-to-call"]
    call = cards["outages-html--who-to-call"]
    assert call.title == "Carrier outages: Who to call"
    assert call.body.startswith("Call the on-call lead.\n\n- oncall onc1")
    # The H1 names the document: the text under it is the document's lead ("top").
    assert cards["outages-html--top"].title == "Carrier outages"
    text = " ".join(c.body for c in cards.values())
    assert "track(" not in text and "Home / Ops" not in text and "wiki.internal" not in text


def test_markdown_without_front_matter_is_a_document(tmp_path: Path) -> None:
    md = (
        "# Refund checklist\n\nWhat to check before a refund.\n\n"
        f"## Before\n\n{words('before', 320)}\n\n"
        "```\n# not a heading\n```\n\n"
        f"After\n-----\n\n{words('after', 320)}\n"
    )
    cards = _by_id(write(tmp_path / "notes" / "checklist.md", md))
    assert sorted(cards) == ["checklist-md--after", "checklist-md--before"]
    before = cards["checklist-md--before"]
    # The short introduction goes in front of the first section, under its heading.
    assert before.body.startswith("What to check before a refund.")
    assert "# not a heading" in before.body
    assert before.title == "Refund checklist: Before"


def test_markdown_with_front_matter_is_still_a_card_beside_documents(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    write(kb / "card.md", "---\nid: md-card\ntitle: A card\n---\nBody of the card.\n")
    write(kb / "doc.md", "Plain notes, no front matter.\n")
    cards = _by_id(kb)
    assert sorted(cards) == ["doc-md", "md-card"]
    assert cards["md-card"].metadata == {}
    assert cards["doc-md"].title == "doc"


def test_a_file_given_directly_is_named_from_its_own_folder(tmp_path: Path) -> None:
    doc = write(tmp_path / "a" / "b" / "Guide.md", "Some guide text.\n")
    assert list(_by_id(doc)) == ["guide-md"]
