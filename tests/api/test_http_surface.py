"""Security headers on every response, the SPA with its fallback, health, readiness, metrics."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse
from fastapi.testclient import TestClient
from sqlalchemy.exc import InterfaceError, OperationalError

from citewall.api.docs import VENDOR_ASSETS
from citewall.api.headers import STRICT_CSP
from citewall.api.spa import install_spa, spa_response

from .conftest import INTERNAL_QUESTIONS, ApiEnv
from .test_flows import sse_events

DB_DOWN = "the database is unavailable; nothing was saved, please retry"

EXPECTED = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
}


def assert_secure(headers: dict[str, str], csp: str = STRICT_CSP) -> None:
    for k, v in EXPECTED.items():
        assert headers.get(k) == v, (k, headers.get(k))
    assert headers["content-security-policy"] == csp
    assert "camera=()" in headers["permissions-policy"]


def test_security_headers_on_every_kind_of_response(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    c = env.client
    member = env.auth("member")
    responses = [
        c.get("/healthz"),
        c.get("/readyz"),
        c.get("/metrics"),
        c.get("/openapi.json"),
        c.get("/"),
        c.get("/api/v1/nope"),
        c.get("/api/v1/me"),  # 401
        c.get("/api/v1/admin/cards", headers=member),  # 403
        c.post("/api/v1/chat", json={}, headers=member),  # 422
        c.post("/api/v1/chat/stream", json={"message": INTERNAL_QUESTIONS[0]}, headers=member),
        c.get("/api/v1/conversations", headers=member),
    ]
    for r in responses:
        assert_secure(dict(r.headers))
    r = c.get("/docs")
    assert r.status_code == 200
    assert_secure(dict(r.headers))  # the API docs live under the strict CSP too


def test_api_docs_are_served_from_packaged_assets(env_sqlite: ApiEnv) -> None:
    c = env_sqlite.client
    page = c.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "http" not in page.text and "<script>" not in page.text  # no CDN, no inline script
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sources and all(s.startswith("/docs/assets/") for s in sources), sources
    for name in [*VENDOR_ASSETS, "swagger-init.js"]:
        r = c.get(f"/docs/assets/{name}")
        assert r.status_code == 200 and len(r.content) > 100, name
        assert_secure(dict(r.headers))
    assert "SwaggerUIBundle" in c.get("/docs/assets/swagger-init.js").text
    for missing in ("redoc.standalone.js", "..%2F..%2Fcore.py", "nope.js"):
        assert c.get(f"/docs/assets/{missing}").status_code == 404, missing
    assert "redoc" not in c.get("/redoc").text.lower()  # ReDoc is not served


def test_unexpected_errors_are_a_generic_logged_500_with_headers(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    retriever = env.runtime.retriever
    original = retriever.retrieve

    def broken(*args: object, **kwargs: object) -> object:
        raise ZeroDivisionError("secret internal detail")

    retriever.retrieve = broken
    try:
        r = env.client.post("/api/v1/search", json={"query": "labels"}, headers=env.auth("member"))
    finally:
        retriever.retrieve = original
    assert r.status_code == 500
    assert r.json() == {"detail": "internal error; it has been logged"}
    assert "secret" not in r.text
    assert_secure(dict(r.headers))


def test_a_lost_database_connection_anywhere_is_the_honest_503(env_sqlite: ApiEnv) -> None:
    # e.g. the rollback a session runs on close after PostgreSQL went away: no code wraps it.
    env = env_sqlite
    retriever = env.runtime.retriever
    original = retriever.retrieve
    for cls in (OperationalError, InterfaceError):

        def lost(*args: object, _cls: type = cls, **kwargs: object) -> object:
            raise _cls("ROLLBACK -- secret", {}, Exception("terminating connection"))

        retriever.retrieve = lost
        try:
            r = env.client.post(
                "/api/v1/search", json={"query": "labels"}, headers=env.auth("member")
            )
        finally:
            retriever.retrieve = original
        assert r.status_code == 503, (cls, r.text)
        assert r.json() == {"detail": DB_DOWN}
        assert "secret" not in r.text
        assert_secure(dict(r.headers))
        # The same loss inside a stream is its error event, with the same words.
        retriever.retrieve = lost
        try:
            s = env.client.post(
                "/api/v1/chat/stream",
                json={"message": INTERNAL_QUESTIONS[0]},
                headers=env.auth("member"),
            )
        finally:
            retriever.retrieve = original
        events = sse_events(s.text)
        assert events[-1] == ("error", {"detail": DB_DOWN}), (cls, events)


def test_api_paths_never_fall_back_to_the_spa(env_sqlite: ApiEnv) -> None:
    r = env_sqlite.client.get("/api/v1/brain/sources/anything")
    assert r.status_code == 404 and r.headers["content-type"].startswith("application/json")


def test_spa_serves_files_and_falls_back_to_index(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<!doctype html><div id=root></div>")
    (dist / "assets" / "app.js").write_text("console.log(1)")
    (tmp_path / "secret.txt").write_text("outside")
    app = FastAPI()
    install_spa(app, dist)
    c = TestClient(app)
    assert c.get("/").text.startswith("<!doctype html>")
    assert c.get("/chat/123").text.startswith("<!doctype html>")  # client route
    assert c.get("/assets/app.js").text == "console.log(1)"
    assert c.get("/assets/missing.js").status_code == 404  # a missing asset is not index.html
    for escape in ("/..%2Fsecret.txt", "/assets/..%2F..%2Fsecret.txt", "/%2E%2E/secret.txt"):
        r = c.get(escape)  # a file outside the build is never served, nor index.html instead
        assert (r.status_code, r.json()) == (404, {"detail": "not found"}), escape
    assert c.get("/api/v1/x").status_code == 404


#: Card ids as ingest makes them: a crawled page's (``ingest/crawl/ids.py``), a document
#: section's in a folder (``ingest/documents/ids.py``), and ids that end like a file name.
DOTTED_CARD_IDS = (
    "site-help-example-com-00613d60.guides-void-a-label-c45af82c299f",
    "guides.refund-playbook-pdf--duplicate-charges",
    "help.example.com.shipping",
    "playbook.pdf",
    "notes.index.html",
)


def test_client_routes_with_a_dot_get_index_and_missing_assets_404(tmp_path: Path) -> None:
    """Finding 6: a card page whose id holds a dot answered the missing-file 404 on reload."""
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<!doctype html><div id=root></div>")
    (dist / "assets" / "app.js").write_text("console.log(1)")
    (dist / "embed.js").write_text("embed()")
    for card_id in DOTTED_CARD_IDS:
        for path in (f"admin/cards/{card_id}", f"c/{card_id}", f"admin/exposure/{card_id}"):
            r = spa_response(dist, path, "GET")
            assert isinstance(r, FileResponse) and Path(r.path) == dist / "index.html", path
    assert Path(spa_response(dist, "assets/app.js", "GET").path) == dist / "assets" / "app.js"
    assert Path(spa_response(dist, "embed.js", "HEAD").path) == dist / "embed.js"
    for missing in ("assets/missing.js", "assets/sub/x.css", "assets", "favicon.png", "robots.txt"):
        with pytest.raises(HTTPException) as err:
            spa_response(dist, missing, "GET")
        assert (err.value.status_code, err.value.detail) == (404, "not found"), missing
    with pytest.raises(HTTPException) as err:
        spa_response(dist, "admin/../../secret.txt", "GET")  # never a client route
    assert err.value.status_code == 404


def test_without_a_build_root_explains_how_to_build(tmp_path: Path) -> None:
    app = FastAPI()
    install_spa(app, tmp_path / "none")
    r = TestClient(app).get("/")
    assert r.status_code == 200 and "npm run build" in r.text
    assert TestClient(app).get("/chat/1").status_code == 404


def test_health_readiness_and_metrics(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    assert env.client.get("/healthz").json() == {"status": "ok"}
    ready = env.client.get("/readyz", headers=env.auth("admin"))
    assert ready.status_code == 200, ready.text
    checks = ready.json()["checks"]
    assert checks["database"]["ok"] is True
    assert checks["retrieval"]["vector_store"]["count"] > 0
    assert checks["retrieval"]["lexical_index"]["ok"] is True
    assert checks["retrieval"]["reranker"]["loaded"] is False  # disabled in these tests
    assert checks["retrieval"]["reranker"]["status"]  # ...and it says why
    assert checks["retrieval"]["embedder"]["runtime"] in {"onnx", "torch"}
    sentences = checks["retrieval"]["sentence_vectors"]
    assert sentences["ok"] is True and sentences["count"] > 0  # ingest stored them

    assert env.chat("member", INTERNAL_QUESTIONS[0]).status_code == 200
    m = env.client.get("/metrics")
    assert m.headers["content-type"].startswith("text/plain")
    text = m.text
    assert 'citewall_answers_total{hybrid_path="rrf_only"}' in text
    assert 'route="/api/v1/chat"' in text
    assert "citewall_rerank_over_budget_total" in text
    assert "citewall_dropped_markers_total" in text
    # Route templates, never raw ids.
    cid = env.chat("member", INTERNAL_QUESTIONS[1]).json()["conversation_id"]
    env.client.get(f"/api/v1/conversations/{cid}", headers=env.auth("member"))
    text = env.client.get("/metrics").text
    assert 'route="/api/v1/conversations/{conversation_id}"' in text and cid not in text


def test_readiness_is_503_when_the_database_is_down(env_sqlite: ApiEnv) -> None:
    from citewall.storage import db

    env = env_sqlite
    real = env.runtime.engine
    env.runtime.engine = db.make_engine("postgresql+psycopg://nobody@127.0.0.1:1/none")
    try:
        r = env.client.get("/readyz")
    finally:
        env.runtime.engine.dispose()
        env.runtime.engine = real
    assert r.status_code == 503
    assert r.json() == {"status": "unavailable"}  # an anonymous probe gets the status alone


def test_every_authenticated_response_is_no_store(env_sqlite: ApiEnv) -> None:
    """Walk every operation of the OpenAPI schema: anonymous, member and admin calls, success
    and error answers alike, are never kept by a cache when the route needs a token."""
    env = env_sqlite
    c = env.client
    cid = env.chat("member", INTERNAL_QUESTIONS[0]).json()["conversation_id"]
    schema = env.app.openapi()
    secured = 0
    statuses: set[int] = set()
    for path, operations in schema["paths"].items():
        for method, op in operations.items():
            url = re.sub(r"\{[^}]+\}", cid, path)
            needs_token = bool(op.get("security"))
            secured += needs_token
            for who in (None, "member", "admin"):
                headers = env.auth(who) if who else {}
                body: dict[str, str] | None = None
                if method == "post":  # search succeeds; chat's empty body is a 422
                    body = {"query": "labels"} if path.endswith("/search") else {}
                r = c.request(method.upper(), url, headers=headers, json=body)
                statuses.add(r.status_code)
                if needs_token or who:
                    assert r.headers.get("cache-control") == "no-store", (method, url, who, r)
    assert secured >= 10 and {200, 401, 403, 422} <= statuses, (secured, statuses)
    # Also what no route answers: an unknown API path, and a stream.
    assert c.get("/api/v1/nope").headers["cache-control"] == "no-store"
    stream = c.post("/api/v1/chat/stream", json={"message": "Hi"}, headers=env.auth("member"))
    assert stream.headers["cache-control"] == "no-store"
    # Public pages stay cacheable as before.
    assert "no-store" not in c.get("/healthz").headers.get("cache-control", "")


def test_readiness_details_need_an_admin_token(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    reranker_path = "/srv/models/secret-cross-encoder"
    retriever = env.runtime.retriever
    saved = retriever.reranker_status
    retriever.reranker_status = f"could not load {reranker_path}: no such directory"
    try:
        for headers in ({}, env.auth("member"), {"Authorization": "Bearer not-a-token"}):
            r = env.client.get("/readyz", headers=headers)
            assert r.status_code == 200 and r.json() == {"status": "ready"}, r.text
            assert reranker_path not in r.text
        admin = env.client.get("/readyz", headers=env.auth("admin"))
        assert admin.status_code == 200
        assert reranker_path in admin.json()["checks"]["retrieval"]["reranker"]["status"]
    finally:
        retriever.reranker_status = saved


def test_a_known_path_with_the_wrong_method_is_405_with_allow(env_sqlite: ApiEnv) -> None:
    c = env_sqlite.client
    member = env_sqlite.auth("member")
    for method, path, allow in [
        ("GET", "/api/v1/chat", "POST"),
        ("GET", "/api/v1/chat/stream", "POST"),
        ("GET", "/api/v1/search", "POST"),
        ("DELETE", "/api/v1/conversations", "GET"),
        ("POST", "/healthz", "GET"),
    ]:
        r = c.request(method, path, headers=member)
        assert r.status_code == 405, (method, path, r.status_code, r.text[:80])
        assert r.headers["allow"] == allow and r.json()["detail"], (method, path)
        assert r.headers["content-type"].startswith("application/json")
    # An unknown API path is a 404 whatever the method.
    assert c.post("/api/v1/nope", json={}).status_code == 404
    assert c.get("/api/v1/nope").status_code == 404


def test_operational_paths_with_a_trailing_slash_never_reach_the_spa(env_sqlite: ApiEnv) -> None:
    c = env_sqlite.client
    for path in ("/healthz/", "/readyz/", "/metrics/", "/docs/", "/openapi.json/"):
        r = c.get(path, follow_redirects=False)
        assert r.status_code in {307, 308}, (path, r.status_code)
        assert r.headers["location"].endswith(path.rstrip("/")), (path, r.headers["location"])
        assert c.get(path).status_code == 200, path
    assert c.get("/healthz/").json() == {"status": "ok"}
    assert c.get("/metrics/").headers["content-type"].startswith("text/plain")


def test_malformed_json_is_a_400_as_documented(env_sqlite: ApiEnv) -> None:
    c = env_sqlite.client
    member = env_sqlite.auth("member")
    schema = env_sqlite.app.openapi()
    for path in ("/api/v1/chat", "/api/v1/chat/stream", "/api/v1/search"):
        assert "400" in schema["paths"][path]["post"]["responses"], path
        for body in (b'{"message": "hi"', b"not json", b'{"message": "hi",}', b"\xff\xfe"):
            r = c.post(path, content=body, headers={**member, "Content-Type": "application/json"})
            assert r.status_code == 400, (path, body, r.status_code, r.text)
            assert isinstance(r.json()["detail"], str) and "JSON" in r.json()["detail"]
    # Well-formed JSON of the wrong shape stays a 422 naming the field.
    r = c.post("/api/v1/chat", json={"message": 5}, headers=member)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "message"]
