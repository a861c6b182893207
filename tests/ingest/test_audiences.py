"""Audiences from every place a card comes from: JSONL, front matter, a document's sidecar, a
folder's ``_audiences.yaml``; a bad name is refused with its file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

from citewall.ingest.loaders import FOLDER_AUDIENCES_FILE, load_cards


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_jsonl_front_matter_and_sidecar_set_audiences(tmp_path: Path) -> None:
    _write(
        tmp_path / "cards.jsonl",
        json.dumps({"id": "j", "title": "J", "body": "b", "audiences": ["enterprise"]}) + "\n",
    )
    _write(tmp_path / "m.md", "---\nid: m\ntitle: M\naudiences: [partners, beta]\n---\nBody.\n")
    _write(tmp_path / "guide.html", "<h1>Guide</h1><p>Some text here.</p>")
    _write(tmp_path / "guide.html.yaml", "audiences: enterprise\n")
    result = load_cards([tmp_path])
    assert result.errors == []
    got = {c.id: c.audiences for c in result.cards}
    assert got["j"] == ("enterprise",) and got["m"] == ("beta", "partners")
    assert [a for cid, a in got.items() if cid not in {"j", "m"}] == [("enterprise",)]


def test_a_folder_file_restricts_the_cards_below_it(tmp_path: Path) -> None:
    _write(tmp_path / "open.jsonl", json.dumps({"id": "open", "title": "O", "body": "b"}) + "\n")
    _write(tmp_path / "ent" / FOLDER_AUDIENCES_FILE, "audiences: [enterprise]\n")
    _write(
        tmp_path / "ent" / "deep" / "c.jsonl",
        json.dumps({"id": "deep", "title": "D", "body": "b"})
        + "\n"
        + json.dumps({"id": "own", "title": "O", "body": "b", "audiences": ["beta"]})
        + "\n",
    )
    _write(tmp_path / "ent" / "doc.md", "# Doc\n\nA document without front matter.\n")
    result = load_cards([tmp_path])
    assert result.errors == []
    got = {c.id: c.audiences for c in result.cards}
    assert got["open"] == () and got["deep"] == ("enterprise",) and got["own"] == ("beta",)
    assert sum(a == ("enterprise",) for a in got.values()) == 2  # the document too


def test_a_bad_folder_file_refuses_its_cards(tmp_path: Path) -> None:
    folder_file = _write(tmp_path / "ent" / FOLDER_AUDIENCES_FILE, "audiences: [Enterprise Plan]\n")
    _write(tmp_path / "ent" / "c.jsonl", json.dumps({"id": "c", "title": "C", "body": "b"}) + "\n")
    result = load_cards([tmp_path])
    assert result.cards == [] and result.refused_ids == {"c"}
    assert [str(e) for e in result.errors] == [
        f"{folder_file}:1: 'Enterprise Plan' is not a group name: use lower-case letters, "
        "digits, '-' and '_' (at most 64, starting with a letter or digit) (field 'audiences')"
    ]


def test_a_bad_name_names_file_line_and_field(tmp_path: Path) -> None:
    jsonl = _write(
        tmp_path / "a.jsonl",
        "\n" + json.dumps({"id": "x", "title": "X", "body": "b", "audiences": ["ok", "Not OK"]}),
    )
    md = _write(tmp_path / "m.md", '---\nid: m\ntitle: M\n\naudiences: ["a b"]\n---\nBody.\n')
    _write(tmp_path / "g.html", "<h1>G</h1><p>Text.</p>")
    side = _write(tmp_path / "g.html.yaml", "title: G\naudiences: [UPPER]\n")
    errors = {e.path: e for e in load_cards([tmp_path]).errors}
    assert (errors[str(jsonl)].line, errors[str(jsonl)].field) == (2, "audiences")
    assert "'Not OK' is not a group name" in str(errors[str(jsonl)])
    assert (errors[str(md)].line, errors[str(md)].field) == (5, "audiences")
    assert (errors[str(side)].line, errors[str(side)].field) == (2, "audiences")
