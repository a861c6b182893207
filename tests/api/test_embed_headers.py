"""The embeddable chat's headers: only `/embed` may be framed, and only by the embedding origins;
CORS on the API for those origins only, without credentials and never with the CSRF header."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from citewall.api.headers import STRICT_CSP, embed_csp

from .conftest import ApiEnv, build_env

HOST = "https://help.example.com"
OTHER_HOST = "https://shop.example.com"
ORIGINS = [HOST, "http://localhost:8123"]


@pytest.fixture(scope="module")
def env_embed(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[ApiEnv]:
    """An app whose chat two origins may embed."""
    env = build_env(tmp_path_factory.mktemp("api-embed"), None, embedder, embed_origins=ORIGINS)
    yield env
    env.runtime.close()


def preflight(env: ApiEnv, origin: str, headers: str = "authorization,content-type") -> Any:
    return env.client.options(
        "/api/v1/chat",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": headers,
        },
    )


def test_only_the_embed_document_may_be_framed_and_only_by_the_embedding_origins(
    env_embed: ApiEnv,
) -> None:
    c = env_embed.client
    for path in ("/embed", "/embed/", "/embed/c/abc"):
        r = c.get(path)
        assert r.headers["content-security-policy"] == embed_csp(ORIGINS), path
        assert "x-frame-options" not in r.headers, path
        assert r.headers["x-content-type-options"] == "nosniff"
    for path in ("/", "/c/abc", "/embed.js", "/embedded", "/admin", "/api/v1/me", "/healthz"):
        r = c.get(path)
        assert r.headers["content-security-policy"] == STRICT_CSP, path
        assert r.headers["x-frame-options"] == "DENY", path


def test_the_embed_csp_names_self_and_each_origin() -> None:
    assert "frame-ancestors 'self' https://a.example http://b.example:81;" in embed_csp(
        ["https://a.example", "http://b.example:81"]
    )
    assert "frame-ancestors 'none';" in STRICT_CSP


def test_a_preflight_from_an_embedding_origin_is_allowed_without_credentials(
    env_embed: ApiEnv,
) -> None:
    r = preflight(env_embed, HOST)
    assert r.status_code == 200, r.text
    assert r.headers["access-control-allow-origin"] == HOST
    assert set(r.headers["access-control-allow-methods"].split(", ")) == {
        "GET",
        "POST",
        "PUT",
        "PATCH",
        "DELETE",
    }
    assert "access-control-allow-credentials" not in r.headers
    # The actual request answers with the origin too (a 401 here: no token), never credentials.
    r = env_embed.client.get("/api/v1/me", headers={"Origin": HOST})
    assert r.status_code == 401
    assert r.headers["access-control-allow-origin"] == HOST
    assert "access-control-allow-credentials" not in r.headers
    ok = env_embed.client.get("/api/v1/me", headers={"Origin": HOST, **env_embed.auth("member")})
    assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == HOST


def test_a_preflight_from_another_origin_is_refused(env_embed: ApiEnv) -> None:
    r = preflight(env_embed, OTHER_HOST)
    assert r.status_code == 400
    assert "access-control-allow-origin" not in r.headers
    r = env_embed.client.get(
        "/api/v1/me", headers={"Origin": OTHER_HOST, **env_embed.auth("member")}
    )
    assert "access-control-allow-origin" not in r.headers


def test_cors_never_allows_the_csrf_header(env_embed: ApiEnv) -> None:
    r = preflight(env_embed, HOST, "authorization,content-type,x-citewall-csrf")
    assert r.status_code == 400
    assert "x-citewall-csrf" not in r.headers.get("access-control-allow-headers", "").lower()


def test_cors_is_for_the_api_only(env_embed: ApiEnv) -> None:
    for path in ("/healthz", "/metrics", "/openapi.json", "/embed"):
        r = env_embed.client.get(path, headers={"Origin": HOST})
        assert "access-control-allow-origin" not in r.headers, path


def test_no_embedding_origins_means_no_cors_and_no_framing(env_sqlite: ApiEnv) -> None:
    r = preflight(env_sqlite, HOST)
    assert not any(k.startswith("access-control-") for k in r.headers), dict(r.headers)
    r = env_sqlite.client.get("/api/v1/me", headers={"Origin": HOST, **env_sqlite.auth("member")})
    assert r.status_code == 200
    assert not any(k.startswith("access-control-") for k in r.headers)
    embed = env_sqlite.client.get("/embed")
    assert embed.headers["content-security-policy"] == embed_csp([])
    assert "frame-ancestors 'self';" in embed.headers["content-security-policy"]
    assert "x-frame-options" not in embed.headers
