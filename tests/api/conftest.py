"""API test fixtures: a real Runtime (SQLite or PostgreSQL, embedded Chroma, the packaged
embedder, the extractive generator) over a small KB with canaried internal cards, built once
per test module, plus users and a TestClient.

The KB (``tests/api/kb/cards.jsonl``) is a snapshot of two topics of the demo KB: external
help pages and internal playbooks carrying ``CWLEAKT-``/``CWLEAKM-``/``CWLEAKB-`` canaries.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from jwks_host import JwksHost, SigningKey
from pgdb import temporary_database
from testenv import PG_ADMIN_URL

KB_FILE = Path(__file__).parent / "kb" / "cards.jsonl"
CANARY = re.compile(r"CWLEAK([TMB])-[A-Z0-9]+")

#: Questions the fixture KB answers from internal playbooks (so internal cards get cited).
INTERNAL_QUESTIONS = (
    "My voided label refund still has not arrived after 15 business days, what now?",
    "A merchant was charged twice for the same label, how do we handle duplicate charges?",
    "Can a merchant get a refund on an annual plan?",
)
EXTERNAL_QUESTION = "How long do refunds take?"


@dataclass(frozen=True)
class KbFacts:
    """What the leak checks look for, read from the KB file itself."""

    internal_ids: frozenset[str]
    internal_titles: frozenset[str]
    external_ids: frozenset[str]
    title_canaries: frozenset[str]
    metadata_canaries: frozenset[str]
    body_canaries: frozenset[str]


def read_kb_facts(path: Path = KB_FILE) -> KbFacts:
    ids, titles, ext, t, m, b = set(), set(), set(), set(), set(), set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        card = json.loads(line)
        if card.get("url"):
            ext.add(card["id"])
            continue
        ids.add(card["id"])
        titles.add(card["title"])
        t.update(x.group(0) for x in CANARY.finditer(card["title"]))
        m.update(x.group(0) for x in CANARY.finditer(json.dumps(card.get("metadata", {}))))
        b.update(x.group(0) for x in CANARY.finditer(card["body"]))
    assert ids and t and m and b, "the fixture KB must have canaried internal cards"
    return KbFacts(*(frozenset(s) for s in (ids, titles, ext, t, m, b)))


@dataclass
class ApiEnv:
    """A running app over a real runtime, with three users' tokens."""

    runtime: Any
    app: Any
    client: TestClient
    tokens: dict[str, str]
    user_ids: dict[str, Any]
    backend: str
    extra: dict[str, Any] = field(default_factory=dict)

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def chat(self, who: str, message: str, conversation_id: str | None = None) -> Any:
        return self.client.post(
            "/api/v1/chat",
            json={"message": message, "conversation_id": conversation_id},
            headers=self.auth(who),
        )


def build_env(
    data_dir: Path,
    database_url: str | None,
    embedder: Any,
    kb_files: tuple[Path, ...] = (KB_FILE,),
    **overrides: Any,
) -> ApiEnv:
    """Ingest the fixture KB (or ``kb_files``), build the Runtime and the app, create
    member/other/admin users."""
    from citewall.api.app import create_app
    from citewall.config import load_settings
    from citewall.ingest.pipeline import ingest_paths
    from citewall.runtime import Runtime
    from citewall.storage import db, schema, users

    settings = load_settings(
        data_dir=data_dir,
        database_url=database_url,
        chroma_url=None,
        reranker_enabled=False,
        rate_limit_per_minute=0,
        **overrides,
    )
    schema.migrate(settings.sqlalchemy_url)
    engine = db.make_engine(settings.sqlalchemy_url)
    report = ingest_paths(
        list(kb_files),
        settings,
        embedder=embedder,
        session_factory=db.make_session_factory(engine),
        progress=False,
    )
    engine.dispose()
    assert report.refused == 0, report.summary()
    runtime = Runtime.from_settings(settings, embedder=embedder)
    app = create_app(runtime)
    tokens, ids = {}, {}
    with runtime.session_factory() as session:
        for who, role in (("member", "member"), ("other", "member"), ("admin", "admin")):
            user, token = users.create_user(session, f"{who}-{uuid.uuid4().hex[:6]}", role)
            tokens[who], ids[who] = token, user.id
    backend = "postgres" if database_url else "sqlite"
    return ApiEnv(runtime, app, TestClient(app), tokens, ids, backend)


@contextmanager
def env_on(backend: str, data_dir: Path, embedder: Any, **overrides: Any) -> Iterator[ApiEnv]:
    """An ApiEnv on SQLite, or on a PostgreSQL database of its own (ingest state must not be
    shared with other modules); closed afterwards."""
    if backend == "sqlite":
        env = build_env(data_dir, None, embedder, **overrides)
        try:
            yield env
        finally:
            env.runtime.close()
        return
    with temporary_database(PG_ADMIN_URL, "citewall_api") as url:
        env = build_env(data_dir, url, embedder, **overrides)
        try:
            yield env
        finally:
            env.runtime.close()


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def env_both(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, embedder: Any
) -> Iterator[ApiEnv]:
    """One ApiEnv per module on SQLite, then one on PostgreSQL."""
    data_dir = tmp_path_factory.mktemp(f"api-{request.param}")
    with env_on(request.param, data_dir, embedder) as env:
        yield env


# -- sign-in: a host site's member tokens and an identity-aware proxy's assertions -------------

MEMBER_ISSUER, MEMBER_AUDIENCE = "https://host.test", "citewall-members"
PROXY_ISSUER, PROXY_AUDIENCE = "https://team.access.test", "proxy-aud-tag"
PROXY_HEADER = "Cf-Access-Jwt-Assertion"
ADMIN_DOMAIN, ADMIN_GROUP = "admins.test", "citewall-admins"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def env_sign_in(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    embedder: Any,
    jwks_host: JwksHost,
    signing_keys: dict[str, SigningKey],
) -> Iterator[ApiEnv]:
    """An ApiEnv (SQLite, then PostgreSQL) whose members sign in with host tokens under a JWKS
    (RSA and EC keys) and whose admins come through the proxy (its own JWKS); the JWKS paths
    are the module's own, so a test may rotate them."""
    tag = f"{request.module.__name__.rsplit('.', 1)[-1]}-{request.param}"
    jwks_host.jwks[f"member-{tag}"] = [signing_keys["rsa"], signing_keys["ec"]]
    jwks_host.jwks[f"proxy-{tag}"] = [signing_keys["proxy"]]
    data_dir = tmp_path_factory.mktemp(f"api-sign-in-{request.param}")
    with env_on(
        request.param,
        data_dir,
        embedder,
        member_jwks_url=jwks_host.url(f"member-{tag}"),
        member_jwt_issuer=MEMBER_ISSUER,
        member_jwt_audience=MEMBER_AUDIENCE,
        admin_proxy_jwks_url=jwks_host.url(f"proxy-{tag}"),
        admin_proxy_issuer=PROXY_ISSUER,
        admin_proxy_audience=PROXY_AUDIENCE,
        admin_proxy_email_domains=[ADMIN_DOMAIN],
        admin_proxy_groups=[ADMIN_GROUP],
    ) as env:
        env.extra["jwks_tag"] = tag
        yield env


def client_with(env: ApiEnv, **overrides: Any) -> tuple[Any, TestClient]:
    """A second app over ``env``'s database and models with some settings changed (its own
    runtime object, so its clock and sign-in are its own)."""
    from citewall.api.app import create_app

    runtime = replace(env.runtime, settings=env.runtime.settings.model_copy(update=overrides))
    return runtime, TestClient(create_app(runtime))


def sign_in_count(env: ApiEnv, kind: str, outcome: str) -> float:
    """``citewall_sign_ins_total{kind, outcome}`` of ``env``'s app."""
    value = env.app.state.metrics.registry.get_sample_value(
        "citewall_sign_ins_total", {"kind": kind, "outcome": outcome}
    )
    return value or 0.0


@pytest.fixture(scope="module")
def env_sqlite(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[ApiEnv]:
    """One ApiEnv per module on SQLite."""
    env = build_env(tmp_path_factory.mktemp("api-sqlite"), None, embedder)
    yield env
    env.runtime.close()


@pytest.fixture(scope="session")
def kb_facts() -> KbFacts:
    return read_kb_facts()
