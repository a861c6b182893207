"""Documents uploaded from the admin pages, through the HTTP API on SQLite and PostgreSQL: a
real PDF, DOCX, HTML and Markdown file read by the CLI's loader; what a member's answer draws on
after an upload (internal: prose only; external: a source with its url) and after its removal;
the refusals (type, base64, url, size, the loader's file:line/field); the runs and audit lines;
a dead embedder is a 503."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

from fastapi.testclient import TestClient
from ingest.documents.files import docx_bytes, encrypted, pdf_bytes
from sqlalchemy import select

from citewall.api.app import create_app
from citewall.ingest.loaders import load_cards
from citewall.ingest.sync import sync_source
from citewall.ingest.uploads import uploads_folder
from citewall.retrieval.kb_embedder import KBEmbedder
from citewall.storage import db, kb_sources
from citewall.storage.models import AuditEntry

from .conftest import ApiEnv, client_with

UP = "/api/v1/admin/uploads"
PDF_QUESTION = "How must freight pallets bound for Iceland be prepared before collection?"
PDF_FACT = (
    "Freight pallets bound for Iceland must be shrink-wrapped and tagged with the Reykjavik "
    "depot code RKV-22 before the carrier collects them."
)
STAFF = "Freight pallets for Iceland are logged in Helm under queue FRT-7 by the desk lead."
DOCX_QUESTION = "Which customs form does a parcel to Norway need?"
DOCX_FACT = (
    "Every parcel shipped to Norway needs the customs declaration CN23 with the Norwegian "
    "VOEC number printed on the outer label."
)
DOCX_URL = "https://help.parcelry.example/customs/norway"


def _b64(data: bytes | str) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return base64.b64encode(raw).decode("ascii")


def _upload(env: ApiEnv, filename: str, data: bytes | str, **fields: Any) -> Any:
    body = {"filename": filename, "content_base64": _b64(data), "visibility": "internal", **fields}
    return env.client.post(UP, json=body, headers=env.auth("admin"))


def _drawn_on(env: ApiEnv, conversation_id: str) -> set[str]:
    conv = env.client.get(
        f"/api/v1/admin/conversations/{conversation_id}", headers=env.auth("admin")
    ).json()
    return {e["card_id"] for e in conv["retrieval_events"]}


def _audit(env: ApiEnv, target: str) -> list[dict[str, Any]]:
    with env.runtime.session_factory() as session:
        rows = session.scalars(
            select(AuditEntry)
            .where(AuditEntry.action == "cards.change", AuditEntry.target == target)
            .order_by(AuditEntry.id)
        )
        return [{"actor": r.actor, "via": r.via, **r.detail} for r in rows]


def _problems(response: Any) -> dict[str, str]:
    assert response.status_code == 422, response.text
    return {p["loc"][-1]: p["msg"] for p in response.json()["detail"]}


def test_an_internal_pdf_is_woven_into_prose_until_it_is_removed(env_both: ApiEnv) -> None:
    env = env_both
    pages = [
        f"Freight desk. {STAFF} Oversized parcels go through the freight desk.",
        "Tell the member",
        f"{PDF_FACT} Pallets over 500 kg need a tail-lift truck.",
    ]
    made = _upload(env, "Freight Desk.pdf", pdf_bytes(pages, title="Freight desk manual"))
    assert made.status_code == 201, made.text
    upload = made.json()
    assert upload["name"] == "freight-desk.pdf" and upload["visibility"] == "internal"
    assert upload["card_ids"] and all(c.startswith("freight-desk-pdf") for c in upload["card_ids"])
    run = upload["run"]
    assert run["status"] == "applied" and run["added"] == len(upload["card_ids"])
    assert run["refused"] == 0 and run["duration_s"] > 0
    # The uploads folder is a document folder: the CLI's loader reads the same cards from it.
    folder = uploads_folder(env.runtime.settings)
    assert sorted(c.id for c in load_cards([folder]).cards) == upload["card_ids"]

    answer = env.chat("member", PDF_QUESTION).json()
    assert answer["answer_status"] == "answered", answer
    assert "RKV-22" in answer["answer"] and "FRT-7" not in answer["answer"]
    assert set(upload["card_ids"]) & _drawn_on(env, answer["conversation_id"])
    assert not set(upload["card_ids"]) & {s["card_id"] for s in answer["sources"]}
    assert "freight-desk" not in json.dumps(answer) and "Helm" not in json.dumps(answer)

    listed = env.client.get(UP, headers=env.auth("admin")).json()
    mine = [u for u in listed if u["id"] == upload["id"]]
    assert mine and mine[0]["card_ids"] == upload["card_ids"] and mine[0]["run"]["id"] == run["id"]
    assert mine[0]["uploaded_by"].startswith("admin")
    (line,) = _audit(env, "upload:freight-desk.pdf")
    assert line["via"] == "bearer" and line["added"] == run["added"]
    with env.runtime.session_factory() as session:
        source = kb_sources.find_source(session, "uploads", str(folder))
        assert source is not None and set(upload["card_ids"]) <= set(source.card_ids)
        assert kb_sources.source_runs(session, source.id)[0].id == run["id"]

    gone = env.client.delete(f"{UP}/{upload['id']}", headers=env.auth("admin"))
    assert gone.status_code == 200, gone.text
    assert gone.json()["run"]["removed"] == len(upload["card_ids"])
    after = env.chat("member", PDF_QUESTION).json()
    assert "RKV-22" not in after["answer"]
    assert not set(upload["card_ids"]) & _drawn_on(env, after["conversation_id"])
    for who in ("member", "admin"):
        found = env.client.post(
            "/api/v1/search", json={"query": PDF_QUESTION}, headers=env.auth(who)
        ).json()
        assert not set(upload["card_ids"]) & {r["card_id"] for r in found["results"]}
    assert not (folder / "freight-desk.pdf").exists()
    assert upload["id"] not in {
        u["id"] for u in env.client.get(UP, headers=env.auth("admin")).json()
    }
    removal = _audit(env, "upload:freight-desk.pdf")[-1]
    assert (removal["removed"], removal["deleted"]) == ("freight-desk.pdf", len(upload["card_ids"]))
    again = env.client.delete(f"{UP}/{upload['id']}", headers=env.auth("admin"))
    assert again.status_code == 404


def test_an_external_docx_is_a_source_with_its_url_and_replaced_by_name(env_both: ApiEnv) -> None:
    env = env_both
    doc = docx_bytes([(1, "Customs for Norway"), (0, DOCX_FACT)], title="Norway customs")
    made = _upload(
        env, "norway.docx", doc, visibility="external", url=DOCX_URL, license="CC-BY-4.0"
    )
    assert made.status_code == 201, made.text
    assert made.json()["visibility"] == "external" and made.json()["url"] == DOCX_URL
    answer = env.chat("member", DOCX_QUESTION).json()
    assert "CN23" in answer["answer"], answer
    cited = [s for s in answer["sources"] if s["card_id"] in made.json()["card_ids"]]
    assert cited and cited[0]["url"] == DOCX_URL

    # The same name again replaces it: the run says what changed; the old text is gone.
    newer = docx_bytes([(1, "Customs for Norway"), (0, DOCX_FACT.replace("CN23", "CN22"))])
    again = _upload(env, "norway.docx", newer, visibility="external", url=DOCX_URL)
    assert again.status_code == 201, again.text
    assert again.json()["id"] == made.json()["id"] and again.json()["run"]["updated"] >= 1
    assert "CN22" in env.chat("member", DOCX_QUESTION).json()["answer"]
    env.client.delete(f"{UP}/{made.json()['id']}", headers=env.auth("admin"))


def test_html_and_markdown_load_as_a_document_folder_does(env_both: ApiEnv) -> None:
    env = env_both
    html = (
        "<html><head><title>Pallet returns</title></head><body><h1>Pallet returns</h1>"
        "<p>Return pallets to the Rotterdam yard within 9 days.</p></body></html>"
    )
    page = _upload(env, "pallet-returns.HTM", html, audiences=["enterprise"])
    assert page.status_code == 201, page.text
    assert page.json()["format"] == "html" and page.json()["audiences"] == ["enterprise"]
    notes = "# Desk notes\n\nStaff only.\n\n## Tell the member\n\nCall us on weekdays.\n"
    md = _upload(env, "Desk notes.md", notes)
    assert md.status_code == 201 and md.json()["format"] == "markdown", md.text
    admin = env.client.get(
        f"/api/v1/admin/cards/{md.json()['card_ids'][0]}", headers=env.auth("admin")
    )
    assert admin.json()["reply"].startswith("Call us") and admin.json()["metadata"]["path"] == (
        "desk-notes.md"
    )
    # The loader's own refusal, naming the file, its line and the field.
    bad = "# Desk notes\n\nStaff only.\n\n## Tell the member\n\nSee https://intranet.example/x\n"
    refused = _problems(_upload(env, "bad-notes.md", bad))
    assert "bad-notes.md:5:" in refused["content_base64"], refused
    assert "(field 'reply')" in refused["content_base64"]
    assert not (uploads_folder(env.runtime.settings) / "bad-notes.md").exists()
    # A sync of the uploads source reads the folder and finds the same cards.
    with env.runtime.session_factory() as session:
        source = kb_sources.find_source(
            session, "uploads", str(uploads_folder(env.runtime.settings))
        )
    assert source is not None
    synced = sync_source(
        source.id,
        env.runtime.settings,
        session_factory=env.runtime.session_factory,
        embedder=env.runtime.embedder.model,
    )
    assert (synced.status, synced.removed, synced.added, synced.refused) == ("applied", 0, 0, 0)
    assert synced.unchanged == len(page.json()["card_ids"]) + len(md.json()["card_ids"])
    for made in (page, md):
        env.client.delete(f"{UP}/{made.json()['id']}", headers=env.auth("admin"))


def test_bad_uploads_are_refused_by_field_and_leave_nothing(env_both: ApiEnv) -> None:
    env = env_both
    before = {u["id"] for u in env.client.get(UP, headers=env.auth("admin")).json()}
    assert "not a document" in _problems(_upload(env, "tool.exe", "MZ"))["filename"]
    bad64 = {"filename": "a.md", "content_base64": "@@not base64", "visibility": "internal"}
    assert (
        "base64"
        in _problems(env.client.post(UP, json=bad64, headers=env.auth("admin")))["content_base64"]
    )
    assert (
        "needs the url" in _problems(_upload(env, "a.md", "# A\n\nx", visibility="external"))["url"]
    )
    internal_url = _upload(env, "a.md", "# A\n\nx", url="https://help.example.com/a")
    assert "no url" in _problems(internal_url)["url"]
    for url in ("javascript:alert(1)", "https://user:pw@help.example.com/a", "ftp://x.example/a"):
        unsafe = _problems(_upload(env, "a.md", "# A\n\nText.", visibility="external", url=url))
        assert "unsafe url" in unsafe["url"], unsafe
    bad_group = _problems(_upload(env, "a.md", "# A\n\nText.", audiences=["Enterprise Plan"]))
    assert "audiences" in bad_group
    locked = encrypted(pdf_bytes(["Secret freight text."]), "pw")
    why = _problems(_upload(env, "locked.pdf", locked))["content_base64"]
    assert why.startswith("locked.pdf: ") and "encrypted" in why
    # A refused document is a failed run of the uploads source, with its refusal.
    with env.runtime.session_factory() as session:
        source = kb_sources.find_source(
            session, "uploads", str(uploads_folder(env.runtime.settings))
        )
        assert source is not None
        last = kb_sources.source_runs(session, source.id)[0]
    assert last.status == "failed" and last.refused == 1 and "locked.pdf" in last.refusals[0].where

    # Over CITEWALL_UPLOAD_MAX_BYTES: by the route (413, naming the setting) and, far over, by
    # the body limit before anything parses the body.
    _, small = client_with(env, upload_max_bytes=1000)
    over = small.post(
        UP,
        json={"filename": "big.md", "content_base64": _b64("x" * 1001), "visibility": "internal"},
        headers=env.auth("admin"),
    )
    assert over.status_code == 413 and "CITEWALL_UPLOAD_MAX_BYTES" in over.json()["detail"]
    far = small.post(
        UP,
        json={"filename": "big.md", "content_base64": _b64("x" * 40_000), "visibility": "internal"},
        headers=env.auth("admin"),
    )
    assert far.status_code == 413 and "CITEWALL_UPLOAD_MAX_BYTES" in far.json()["detail"]
    # The default limit lets a document far over a chat message's body limit through.
    assert _upload(env, "long.md", "# Long\n\n" + "Pallet words. " * 8000).status_code == 201
    names = {u["name"] for u in env.client.get(UP, headers=env.auth("admin")).json()}
    assert names - {"long.md"} == {
        u["name"] for u in env.client.get(UP, headers=env.auth("admin")).json() if u["id"] in before
    }
    assert set(p.name for p in uploads_folder(env.runtime.settings).iterdir()) <= names


def test_a_card_id_of_another_source_is_a_conflict(env_both: ApiEnv) -> None:
    env = env_both
    pb = {"id": "desk-rules-md", "title": "Desk rules", "body": "Staff notes.", "audiences": []}
    made = env.client.post("/api/v1/admin/playbooks", json=pb, headers=env.auth("admin"))
    assert made.status_code == 201, made.text
    clash = _upload(env, "desk-rules.md", "Desk rules for the freight desk.")
    assert clash.status_code == 409 and "another source" in clash.json()["detail"]


def test_members_may_not_upload_list_or_remove(env_both: ApiEnv) -> None:
    env = env_both
    member = env.auth("member")
    body = {"filename": "a.md", "content_base64": _b64("# A\n\nx"), "visibility": "internal"}
    assert env.client.post(UP, json=body, headers=member).status_code == 403
    assert env.client.get(UP, headers=member).status_code == 403
    assert env.client.delete(f"{UP}/1", headers=member).status_code == 403


class _DeadEmbedder:
    """An embedder whose model process died."""

    dimension = 384

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise RuntimeError("the embedding model is gone")

    def embed_query(self, text: str) -> list[float]:
        raise RuntimeError("the embedding model is gone")


def test_a_dead_embedder_is_a_503_and_stores_nothing(env_both: ApiEnv) -> None:
    env = env_both
    runtime = replace(env.runtime, embedder=KBEmbedder(_DeadEmbedder()))  # type: ignore[arg-type]
    client = TestClient(create_app(runtime))
    r = client.post(
        UP,
        json={
            "filename": "dead.md",
            "content_base64": _b64("# Dead\n\nNothing gets stored."),
            "visibility": "internal",
        },
        headers=env.auth("admin"),
    )
    assert r.status_code == 503, r.text
    assert "unavailable" in r.json()["detail"]
    assert "dead.md" not in {
        u["name"] for u in env.client.get(UP, headers=env.auth("admin")).json()
    }
    assert not (uploads_folder(env.runtime.settings) / "dead.md").exists()


def test_a_dead_database_is_a_503_not_a_500(env_both: ApiEnv) -> None:
    """The caller is signed in, then every later read or write finds the database gone."""
    env = env_both
    real = env.runtime.session_factory
    dead = db.make_session_factory(db.make_engine("postgresql://citewall@127.0.0.1:1/gone"))
    calls = 0

    def failing_after_sign_in() -> Any:
        nonlocal calls
        calls += 1
        return real() if calls == 1 else dead()

    runtime = replace(env.runtime, session_factory=failing_after_sign_in)
    client = TestClient(create_app(runtime))
    body = {"filename": "gone.md", "content_base64": _b64("# Gone\n\nx"), "visibility": "internal"}
    for method, path in (("POST", UP), ("DELETE", f"{UP}/1")):
        calls = 0
        r = client.request(
            method, path, json=body if method == "POST" else None, headers=env.auth("admin")
        )
        assert r.status_code == 503, (method, r.text)
        assert "database is unavailable" in r.json()["detail"]
        assert calls >= 2  # signed in: the route itself found the database gone
