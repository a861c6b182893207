"""Loaders: JSONL and Markdown cards; every error names file, line and field; batch continues."""

from __future__ import annotations

import json
from pathlib import Path

from citewall.ingest.loaders import load_cards
from ingest.kbfixtures import CARDS, write_jsonl


def test_jsonl_good_and_bad_lines_each_error_names_file_line_field(tmp_path: Path) -> None:
    lines = [
        json.dumps(CARDS[0]),
        "{not json",
        json.dumps({"id": "no-title", "body": "x"}),
        json.dumps({**CARDS[1], "url": "javascript:alert(1)"}),
        "",
        json.dumps({**CARDS[2], "colour": "red"}),
        json.dumps({"id": "Bad Id!", "title": "t", "body": "b"}),
        json.dumps(CARDS[3]),
    ]
    f = tmp_path / "cards.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = load_cards([f])
    assert [c.id for c in result.cards] == [CARDS[0]["id"], CARDS[3]["id"]]
    where = [(e.path, e.line, e.field) for e in result.errors]
    assert where == [
        (str(f), 2, ""),
        (str(f), 3, "title"),
        (str(f), 4, "url"),
        (str(f), 6, "colour"),
        (str(f), 7, "id"),
    ]
    messages = [str(e) for e in result.errors]
    assert messages[0].startswith(f"{f}:2: invalid JSON")
    assert "javascript:alert(1)" in messages[2] and "not http or https" in messages[2]
    assert "'Bad Id!'" in messages[4]
    # Refused cards with a readable id are remembered (pruning must keep their old version).
    assert result.refused_ids == {"no-title", CARDS[1]["id"], CARDS[2]["id"], "Bad Id!"}
    assert result.unidentified == 1


def test_unsafe_urls_are_refused_with_reason(tmp_path: Path) -> None:
    bad = [
        "ftp://example.com/a",
        "https://user:pw@example.com/",
        "https://exa mple.com/",
        "https:\\\\example.com",
        "http:///nohost",
        "https://example.com/\u200bzero-width",
    ]
    cards = [{**CARDS[0], "id": f"c{i}", "url": u} for i, u in enumerate(bad)]
    result = load_cards([write_jsonl(tmp_path / "u.jsonl", [*cards, CARDS[1]])])
    assert [c.id for c in result.cards] == [CARDS[1]["id"]]
    assert len(result.errors) == len(bad)
    assert all(e.field == "url" and "unsafe url" in str(e) for e in result.errors)


def test_markdown_folder_with_front_matter(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    (kb / "sub").mkdir(parents=True)
    (kb / "good.md").write_text(
        "---\nid: md-good\ntitle: A markdown card\nurl: https://help.example.com/md\n"
        "license: CC0\nmetadata:\n  team: docs\n---\n\nFirst paragraph.\n\nSecond one.\n",
        encoding="utf-8",
    )
    (kb / "sub" / "badurl.md").write_text(
        '---\nid: md-bad\ntitle: Bad\nurl: "https://x.example.com/a b"\n---\nBody\n',
        encoding="utf-8",
    )
    (kb / "sub" / "nofront.md").write_text("# Just a heading\n", encoding="utf-8")
    (kb / "sub" / "badyaml.md").write_text(
        "---\nid: x\ntitle: [unclosed\n---\nB\n", encoding="utf-8"
    )
    (kb / "sub" / "notitle.md").write_text("---\nid: md-nt\n---\nBody\n", encoding="utf-8")
    (kb / "notes.txt").write_text("ignored", encoding="utf-8")
    result = load_cards([kb])
    assert [c.id for c in result.cards] == ["md-good"]
    good = result.cards[0]
    assert good.body == "First paragraph.\n\nSecond one."
    assert good.metadata == {"team": "docs"} and good.url == "https://help.example.com/md"
    errs = {Path(e.path).name: e for e in result.errors}
    assert set(errs) == {"badurl.md", "nofront.md", "badyaml.md", "notitle.md"}
    assert (errs["badurl.md"].line, errs["badurl.md"].field) == (4, "url")
    # Without front matter a Markdown file is a document (tests/ingest/documents): this one is
    # only a heading, so it has no text to ingest.
    assert "no text to ingest" in str(errs["nofront.md"])
    assert errs["badyaml.md"].line == 3 and "YAML" in str(errs["badyaml.md"])
    assert errs["notitle.md"].field == "title"


def test_missing_path_and_duplicate_ids(tmp_path: Path) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", [CARDS[0]])
    b = write_jsonl(tmp_path / "b.jsonl", [{**CARDS[0], "title": "other"}, CARDS[1]])
    result = load_cards([a, b, tmp_path / "missing.jsonl"])
    assert [c.id for c in result.cards] == [CARDS[0]["id"], CARDS[1]["id"]]
    assert result.cards[0].title == CARDS[0]["title"]  # first occurrence wins
    msgs = [str(e) for e in result.errors]
    assert any("duplicate card id" in m and str(a) in m for m in msgs)
    assert any("missing.jsonl" in m and "no such file" in m for m in msgs)


def test_text_no_database_can_hold_is_refused_naming_file_line_and_field(tmp_path: Path) -> None:
    # json.loads turns "\ud800" and "\u0000" escapes in a card file into such strings.
    lines = [
        json.dumps({**CARDS[0], "body": "Refunds\u0000 take 5 days."}),
        json.dumps({**CARDS[1], "metadata": {"team": ["billing", "ops\ud800"]}}),
        json.dumps({**CARDS[2], "metadata": {"owner\udfff": "ann"}}),
        json.dumps({**CARDS[3], "license": "CC-BY\u0007"}),
        json.dumps(CARDS[4]),
    ]
    f = tmp_path / "cards.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = load_cards([f])
    assert [c.id for c in result.cards] == [CARDS[4]["id"]]
    assert [(e.line, e.field) for e in result.errors] == [
        (1, "body"),
        (2, "metadata"),
        (3, "metadata"),
        (4, "license"),
    ]
    messages = [str(e) for e in result.errors]
    assert "NUL character (U+0000) at character 8" in messages[0]
    assert "metadata.team[1] contains a lone surrogate (U+D800)" in messages[1]
    assert "a key in metadata contains a lone surrogate (U+DFFF)" in messages[2]
    assert "control character (U+0007)" in messages[3]
    for message in messages:
        message.encode("utf-8")  # the error itself can be printed
