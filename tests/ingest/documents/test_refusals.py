"""Bad documents are refused with the file and the reason; the rest of the folder still loads
and a refused document gives no card at all (never half of one)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from reliability.rig import ingest_kb, make_settings

from citewall.config import DEFAULT_DOCUMENT_MAX_BYTES
from citewall.ingest.loaders import load_cards
from ingest.documents.files import docx_bytes, encrypted, pdf_bytes, words, write

GOOD_TEXT = "Carriers refund a voided label within 21 days."


def _refusals(folder: Path, **kwargs: int) -> tuple[list[str], dict[str, str]]:
    result = load_cards([folder], **kwargs)
    reasons = {Path(e.path).name: str(e) for e in result.errors}
    assert len(reasons) == len(result.errors), "one error per refused file"
    return sorted(c.id for c in result.cards), reasons


def test_each_bad_document_is_refused_and_the_rest_go_in(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    good_pdf = pdf_bytes([GOOD_TEXT], title="Good")
    write(kb / "good.pdf", good_pdf)
    write(kb / "good.docx", docx_bytes([(1, "Good"), (0, GOOD_TEXT)]))
    write(kb / "corrupt.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\ngarbage")
    write(kb / "truncated.pdf", good_pdf[: len(good_pdf) // 3])
    write(kb / "locked.pdf", encrypted(good_pdf, "secret"))
    write(kb / "not-a-zip.docx", b"PK\x03\x04 this is not a zip archive")
    write(kb / "latin1.md", "Caf\xe9 refunds".encode("latin-1"))
    write(kb / "latin1.html", b"<p>Caf\xe9</p>")
    write(kb / "empty.md", "")
    write(kb / "only-headings.html", "<h1>Title</h1><h2>Nothing below</h2>")
    write(kb / "scanned.pdf", pdf_bytes(["", ""]))
    with (kb / "huge.pdf").open("wb") as f:
        f.truncate(200 * 1024 * 1024)  # sparse: 200 MB on paper, nothing on disk

    ids, why = _refusals(kb)
    assert ids == ["good-docx", "good-pdf"]
    assert set(why) == {
        "corrupt.pdf",
        "truncated.pdf",
        "locked.pdf",
        "not-a-zip.docx",
        "latin1.md",
        "latin1.html",
        "empty.md",
        "only-headings.html",
        "scanned.pdf",
        "huge.pdf",
    }
    assert why["corrupt.pdf"].startswith(f"{kb / 'corrupt.pdf'}: unreadable PDF")
    assert "unreadable PDF" in why["truncated.pdf"]
    assert "encrypted PDF that needs a password" in why["locked.pdf"]
    assert "unreadable DOCX (BadZipFile" in why["not-a-zip.docx"]
    assert (
        "not valid UTF-8 (byte 3" in why["latin1.md"]
        and "save the file as UTF-8" in why["latin1.md"]
    )
    assert "not valid UTF-8" in why["latin1.html"]
    for name in ("empty.md", "only-headings.html", "scanned.pdf"):
        assert "no text to ingest" in why[name], why[name]
    assert (
        f"209,715,200 bytes, over the {DEFAULT_DOCUMENT_MAX_BYTES:,} byte limit" in why["huge.pdf"]
    )
    assert "CITEWALL_DOCUMENT_MAX_BYTES" in why["huge.pdf"]
    # No card id could be read from a refused document: pruning must not guess.
    assert load_cards([kb]).unidentified == len(why)


def test_the_size_cap_is_checked_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = write(tmp_path / "big.pdf", b"")
    os.truncate(big, 10_001)
    opened: list[Path] = []
    real_open = Path.open

    def watched_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        opened.append(self)
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", watched_open)
    _, why = _refusals(tmp_path, document_max_bytes=10_000)
    assert "over the 10,000 byte limit" in why["big.pdf"]
    assert big not in opened


def test_a_pdf_encrypted_without_a_user_password_is_read(tmp_path: Path) -> None:
    # Owner-password-only PDFs (printing or copying restricted) open without asking.
    write(tmp_path / "restricted.pdf", encrypted(pdf_bytes([GOOD_TEXT]), ""))
    [card] = load_cards([tmp_path]).cards
    assert GOOD_TEXT in " ".join(card.body.split())


def test_a_document_whose_card_does_not_validate_gives_no_card(tmp_path: Path) -> None:
    # Sidecar metadata that no database can hold refuses every section of the document.
    write(tmp_path / "long.md", f"## A\n\n{words('alpha', 400)}\n\n## B\n\n{words('beta', 400)}\n")
    write(tmp_path / "long.md.yaml", 'metadata:\n  team: "ops\\0"\n')
    result = load_cards([tmp_path])
    assert result.cards == []
    [err] = result.errors
    assert (err.path, err.line, err.field) == (str(tmp_path / "long.md.yaml"), 1, "metadata")
    assert "NUL character" in str(err)


def test_ingest_takes_the_cap_from_citewall_document_max_bytes(
    tmp_path: Path, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEWALL_DOCUMENT_MAX_BYTES", "1000")
    write(tmp_path / "kb" / "small.md", GOOD_TEXT)
    write(tmp_path / "kb" / "large.md", words("large", 300))
    report = ingest_kb(make_settings(tmp_path / "data"), embedder, tmp_path / "kb")
    assert (report.added, report.refused) == (1, 1), report.summary()
    assert "over the 1,000 byte limit" in str(report.errors[0])
