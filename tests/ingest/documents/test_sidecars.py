"""A document becomes external only through a sidecar URL that passes validation; a bad
sidecar refuses the document (sidecar file, line and field), never leaves it silently internal."""

from __future__ import annotations

from pathlib import Path

from citewall.ingest.loaders import load_cards
from ingest.documents.files import pdf_bytes, words, write

TEXT = "Void a label within 30 days of buying it to get a refund."


def test_a_sidecar_url_makes_every_card_of_the_document_external(tmp_path: Path) -> None:
    html = f"<title>Voiding</title><h2>When</h2><p>{words('when', 400)}</p>"
    html += f"<h2>How</h2><p>{words('how', 400)}</p>"
    write(tmp_path / "help" / "voiding.html", html)
    write(
        tmp_path / "help" / "voiding.html.yaml",
        "url: https://help.example.com/voiding\nlicense: CC-BY-4.0\n"
        "title: Voiding a label\nmetadata:\n  team: support\n",
    )
    result = load_cards([tmp_path])
    assert result.errors == []
    assert sorted(c.id for c in result.cards) == [
        "help.voiding-html--how",
        "help.voiding-html--when",
    ]
    for card in result.cards:
        assert card.is_external and card.url == "https://help.example.com/voiding"
        assert card.license == "CC-BY-4.0" and card.title.startswith("Voiding a label: ")
        assert card.metadata["team"] == "support" and card.metadata["path"] == "help/voiding.html"


def test_a_canonical_link_in_the_document_does_not_make_it_external(tmp_path: Path) -> None:
    write(
        tmp_path / "page.html",
        f'<head><link rel="canonical" href="https://help.example.com/a"></head><p>{TEXT}</p>',
    )
    [card] = load_cards([tmp_path]).cards
    assert card.url is None and not card.is_external


def test_a_bad_sidecar_url_refuses_the_document_naming_line_and_field(tmp_path: Path) -> None:
    write(tmp_path / "guide.pdf", pdf_bytes([TEXT]))
    write(tmp_path / "guide.pdf.yaml", "license: CC0\nurl: javascript:alert(1)\n")
    write(tmp_path / "other.pdf", pdf_bytes([TEXT]))
    result = load_cards([tmp_path])
    assert [c.id for c in result.cards] == ["other-pdf"]
    [err] = result.errors
    assert (err.path, err.line, err.field) == (str(tmp_path / "guide.pdf.yaml"), 2, "url")
    assert "unsafe url 'javascript:alert(1)'" in str(err) and "not made internal" in str(err)
    assert result.unidentified == 1


def test_sidecar_mistakes_are_named(tmp_path: Path) -> None:
    for name in ("a", "b", "c", "d"):
        write(tmp_path / f"{name}.md", f"{TEXT}\n")
    write(tmp_path / "a.md.yaml", "url: https://help.example.com/a\ncolour: red\n")
    write(tmp_path / "b.md.yaml", "metadata:\n  url: https://help.example.com/b\n")
    write(tmp_path / "c.md.yaml", "title: [unclosed\n")
    write(tmp_path / "d.md.yaml", "license: 3\n")
    write(tmp_path / "gone.pdf.yaml", "url: https://help.example.com/gone\n")
    write(tmp_path / "card.md", "---\nid: fm-card\ntitle: Card\n---\nBody.\n")
    write(tmp_path / "card.md.yaml", "url: https://help.example.com/card\n")
    write(tmp_path / "notes.yaml", "not: a sidecar\n")  # names no document: not read
    result = load_cards([tmp_path])
    assert [c.id for c in result.cards] == ["fm-card"]
    where = {Path(e.path).name: (e.line, e.field) for e in result.errors}
    assert where == {
        "a.md.yaml": (2, "colour"),
        "b.md.yaml": (1, "metadata.url"),
        "c.md.yaml": (2, ""),  # where the parser found the list unclosed
        "d.md.yaml": (1, "license"),
        "gone.pdf.yaml": (None, ""),
        "card.md.yaml": (None, ""),
    }
    why = {Path(e.path).name: str(e) for e in result.errors}
    assert "invalid YAML" in why["c.md.yaml"]
    assert "not here (gone.pdf)" in why["gone.pdf.yaml"]
    assert "has YAML front matter" in why["card.md.yaml"]
    # The front-matter card keeps its own (absent) url: the sidecar beside it is not read.
    assert result.cards[0].url is None
