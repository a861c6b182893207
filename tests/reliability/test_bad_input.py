"""Hostile input the fuzzer finds only by luck, pinned down: each gets a clear 4xx naming the
problem, never a 5xx, and nothing is stored. (Limits, blank messages and oversized bodies are
in tests/api/test_limits.py; this covers encoding-level input.)"""

from __future__ import annotations

import pytest

from .rig import Rig, table_counts

CHAT_ROUTES = ("/api/v1/chat", "/api/v1/chat/stream")


def _post_raw(rig: Rig, path: str, raw: str) -> object:
    headers = {**rig.auth("member"), "Content-Type": "application/json"}
    return rig.client.post(path, content=raw.encode(), headers=headers)


@pytest.mark.parametrize("path", CHAT_ROUTES)
@pytest.mark.parametrize(
    "raw, field",
    [
        ('{"message": "void \\ud800 label"}', "message"),  # a lone surrogate
        ('{"message": "void", "conversation_id": "\\udfff"}', "conversation_id"),
        ('{"message": "void", "extra": 1}', "extra"),
    ],
)
def test_undecodable_or_unknown_fields_are_422(
    shared_rig: Rig, path: str, raw: str, field: str
) -> None:
    before = table_counts(shared_rig.runtime.engine)
    r = _post_raw(shared_rig, path, raw)
    assert r.status_code == 422, r.text  # type: ignore[attr-defined]
    assert field in r.text and "\\ud800" not in r.text  # type: ignore[attr-defined]
    assert table_counts(shared_rig.runtime.engine) == before


@pytest.mark.parametrize("path", CHAT_ROUTES)
def test_deeply_nested_json_is_a_4xx(shared_rig: Rig, path: str) -> None:
    r = _post_raw(shared_rig, path, "[" * 5000 + "]" * 5000)
    assert 400 <= r.status_code < 500, r.text  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", CHAT_ROUTES)
def test_nul_in_a_chat_message_is_422_not_503(shared_rig: Rig, path: str) -> None:
    before = table_counts(shared_rig.runtime.engine)
    r = _post_raw(shared_rig, path, '{"message": "How do I void\\u0000 a label?"}')
    assert table_counts(shared_rig.runtime.engine) == before
    assert r.status_code == 422, (r.status_code, r.text)  # type: ignore[attr-defined]
    assert "message" in r.text  # type: ignore[attr-defined]


def test_422_body_matches_the_documented_validation_error_schema(shared_rig: Rig) -> None:
    r = shared_rig.client.post(
        "/api/v1/chat", json={"message": "   "}, headers=shared_rig.auth("member")
    )
    assert r.status_code == 422
    schema = shared_rig.app.openapi()["components"]["schemas"]["ValidationError"]
    for item in r.json()["detail"]:
        missing = set(schema["required"]) - set(item)
        assert not missing, (missing, item)
