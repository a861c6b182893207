"""The audience gate on the real build (pass) and on a build that filters only the served
sources (fail): members of no group, one group and several, every member path."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from citewall.api.app import create_app
from citewall.config import load_settings
from citewall.ingest.pipeline import ingest_paths
from citewall.runtime import Runtime
from citewall.storage import db, schema, users
from citewall_evals.redteam.audiences import (
    AUDIENCE_CARDS,
    GATE_MEMBERS,
    filtering_only_served_sources,
    gate_failures,
    run_audience_gate,
)

API_KB = Path(__file__).resolve().parents[1] / "api" / "kb" / "cards.jsonl"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[dict[str, Any]]:
    data = tmp_path_factory.mktemp("audiences")
    kb = data / "restricted.jsonl"
    kb.write_text("".join(json.dumps(c) + "\n" for c in AUDIENCE_CARDS), encoding="utf-8")
    settings = load_settings(
        data_dir=data,
        database_url=None,
        chroma_url=None,
        reranker_enabled=False,
        rate_limit_per_minute=0,
        calibration=False,
    )
    schema.migrate(settings.sqlalchemy_url)
    engine = db.make_engine(settings.sqlalchemy_url)
    report = ingest_paths(
        [API_KB, kb],
        settings,
        embedder=embedder,
        session_factory=db.make_session_factory(engine),
        progress=False,
    )
    engine.dispose()
    assert report.refused == 0, report.summary()
    runtime = Runtime.from_settings(settings, embedder=embedder)
    tokens: dict[str, str] = {}
    with runtime.session_factory() as session:
        for member, groups in GATE_MEMBERS.items():
            _, tokens[member] = users.create_user(
                session, f"{member}-{uuid.uuid4().hex[:6]}", "member", groups
            )
        _, admin = users.create_user(session, f"admin-{uuid.uuid4().hex[:6]}", "admin")
    yield {"runtime": runtime, "tokens": tokens, "admin": admin}


def test_the_real_build_passes_the_audience_gate(world: dict[str, Any]) -> None:
    client = TestClient(create_app(world["runtime"]))
    results = run_audience_gate(client, world["tokens"], admin_token=world["admin"])
    assert gate_failures(results) == []
    served = {(r.member, r.target) for r in results if r.target_served}
    # Members inside an audience are answered from its cards (so the gate means something).
    assert ("enterprise", "aud-ent-sso") in served and ("several", "aud-beta-api") in served
    assert not any(member == "no-group" for member, _ in served)


def test_a_build_that_filters_only_served_sources_fails_the_gate(world: dict[str, Any]) -> None:
    runtime = world["runtime"]
    with filtering_only_served_sources(runtime):
        client = TestClient(create_app(runtime))
        results = run_audience_gate(client, world["tokens"], admin_token=world["admin"])
    failures = gate_failures(results)
    assert any("no-group" in f and "CWAUD" in f for f in failures), failures
    # Every member outside an audience is caught, in the prose of the chat answer and of the
    # admin preview of their groups alike.
    leaked = {(r.member, where) for r in results for _, where in r.leaks}
    assert ("no-group", "POST /api/v1/chat") in leaked
    assert ("no-group", "POST /api/v1/admin/preview") in leaked
    # Each case, a member asking what a card outside their groups answers, fails on it.
    outside = [r for r in results if not r.target_allowed]
    missed = [(r.member, r.target) for r in outside if not r.leaks]
    assert outside and not missed, missed
