"""The whole path: a folder with an internal PDF is ingested into a real citewall (SQLite,
embedded Chroma, the packaged embedder, the extractive generator); a member's question the PDF
answers gets the PDF's knowledge in prose only, and the admin sees the internal citation."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from reliability.rig import build_rig, ingest_kb, make_settings, write_small_kb

from ingest.documents.files import pdf_bytes, write

#: The PDF's title and path are internal: neither may reach a member.
TITLE = "CWLEAKT-DOCPDF1 Freight desk manual"
FACT = (
    "Freight pallets bound for Iceland must be shrink-wrapped and tagged with the Reykjavik "
    "depot code RKV-22 before the carrier collects them."
)
QUESTION = "How must freight pallets bound for Iceland be prepared before collection?"
STAFF = "Freight pallets for Iceland are logged in Helm under queue FRT-7 by the desk lead."


def test_an_internal_pdf_answers_in_prose_and_is_never_a_member_source(
    tmp_path: Path, embedder: Any
) -> None:
    kb = tmp_path / "kb"
    write_small_kb(write(kb / "help" / "cards.jsonl", ""))
    # Staff notes, then what the member may be told: only the latter reaches prose.
    pages = [
        f"Freight desk. {STAFF} Oversized parcels go through the freight desk.",
        "Tell the member",
        f"{FACT} Pallets over 500 kg need a tail-lift truck.",
    ]
    write(kb / "playbooks" / "freight.pdf", pdf_bytes(pages, title=TITLE))
    data_dir = tmp_path / "data"
    report = ingest_kb(make_settings(data_dir), embedder, kb)
    assert report.refused == 0 and report.added == 15, report.summary()

    rig = build_rig(data_dir, embedder, ingest=False)
    try:
        r = rig.chat(QUESTION)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["answer_status"] == "answered"
        assert "RKV-22" in body["answer"] and "shrink-wrapped" in body["answer"]
        assert "Helm" not in body["answer"] and "FRT-7" not in body["answer"]
        assert not re.search(r"\[\d+\]", body["answer"])
        assert all(s["card_id"] != "playbooks.freight-pdf" for s in body["sources"])
        assert all(s["url"] for s in body["sources"])
        served = json.dumps(body)
        assert "CWLEAKT-DOCPDF1" not in served and "freight.pdf" not in served

        admin = rig.client.get(
            f"/api/v1/admin/conversations/{body['conversation_id']}", headers=rig.auth("admin")
        )
        assert admin.status_code == 200, admin.text
        cited = {s["card_id"]: s for s in admin.json()["messages"][1]["sources"]}
        pdf = cited["playbooks.freight-pdf"]
        assert pdf["source_url"] is None and pdf["title"] == TITLE
        assert pdf["metadata"]["path"] == "playbooks/freight.pdf"
    finally:
        rig.close()
