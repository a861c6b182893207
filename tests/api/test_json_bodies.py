"""Bodies that are not JSON get the documented 400, whatever is wrong with them (finding 7).

FastAPI answers a body it fails to read for any reason but a ``JSONDecodeError`` with its own
"There was an error parsing the body", and Python's parser accepts what JSON does not (a byte
order mark, ``NaN``, UTF-16). Every body here goes to the real app; the property test sends
any bytes at all.
"""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from testenv import examples

from citewall.api.json_body import parse_json_body

from .conftest import ApiEnv

#: The documented message (docs/api.md, "Limits and errors"): its start and its end.
NOT_JSON_START = "the request body is not valid JSON"
NOT_JSON_FIX = "send a JSON object (Content-Type: application/json)"

CHAT = b'{"message": "How long do refunds take?"}'

#: Bodies that cannot be parsed as JSON, each with what is wrong with it.
NOT_JSON_BODIES = {
    "invalid UTF-8": b'{"message": "caf\xe9"}',
    "a lone continuation byte": b'{"message": "\x80"}',
    "a 5,000-digit integer": b'{"message": "hi", "conversation_id": ' + b"9" * 5000 + b"}",
    "a gzip body": gzip.compress(CHAT),
    "truncated JSON": CHAT[:-5],
    "a byte order mark": b"\xef\xbb\xbf" + CHAT,
    "NaN": b'{"message": NaN}',
    "Infinity": b'{"message": "hi", "limit": -Infinity}',
    "UTF-16": CHAT.decode("utf-8").encode("utf-16"),
    "a trailing comma": b'{"message": "hi",}',
    "two documents": CHAT + CHAT,
    "deep nesting": b"[" * 30_000 + b"]" * 30_000,
    "a NUL byte": b'{"message": "hi"}\x00',
    "not JSON at all": b"message=hi",
}


def body_routes(env: ApiEnv) -> list[tuple[str, str]]:
    """(method, path) of every operation that takes a JSON body, path parameters filled in."""
    out = []
    for path, item in env.app.openapi()["paths"].items():
        for method, op in item.items():
            if "application/json" in op.get("requestBody", {}).get("content", {}):
                filled = path.replace("{", "").replace("}", "")  # any id: the body comes first
                out.append((method.upper(), filled))
    assert len(out) >= 5, out  # chat, stream, search, rename, feedback at least
    return out


def assert_not_json(r: Any, what: str) -> None:
    assert r.status_code == 400, (what, r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json"), what
    detail = r.json()["detail"]
    assert detail.startswith(NOT_JSON_START) and detail.endswith(NOT_JSON_FIX), (what, detail)
    assert "9999" not in detail and "message" not in detail  # the body is never echoed


@pytest.mark.parametrize("what", sorted(NOT_JSON_BODIES))
def test_a_body_that_is_not_json_gets_the_documented_400(env_sqlite: ApiEnv, what: str) -> None:
    env = env_sqlite
    body = NOT_JSON_BODIES[what]
    for method, path in body_routes(env):
        for content_type in ("application/json", "application/merge-patch+json"):
            r = env.client.request(
                method,
                path,
                content=body,
                headers={**env.auth("member"), "Content-Type": content_type},
            )
            assert_not_json(r, f"{what}: {method} {path} ({content_type})")


def test_the_reason_is_named_without_echoing_the_body(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    reasons = {
        "invalid UTF-8": "not UTF-8",
        "a 5,000-digit integer": "digits",
        "a gzip body": "gzip",
        "a byte order mark": "byte order mark",
        "NaN": "NaN",
        "truncated JSON": "character",
    }
    for what, reason in reasons.items():
        r = env.client.post(
            "/api/v1/chat",
            content=NOT_JSON_BODIES[what],
            headers={**env.auth("member"), "Content-Type": "application/json"},
        )
        assert_not_json(r, what)
        assert reason in r.json()["detail"], (what, r.json()["detail"])


def test_json_of_the_wrong_shape_stays_a_422_and_good_json_still_works(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    member = {**env.auth("member"), "Content-Type": "application/json"}
    r = env.client.post("/api/v1/chat", content=b'{"message": 5}', headers=member)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "message"], r.text
    big = b'{"message": "hi", "conversation_id": ' + b"9" * 4000 + b"}"  # within int's limit
    assert env.client.post("/api/v1/chat", content=big, headers=member).status_code == 422
    r = env.client.post(
        "/api/v1/search", content=b'{"query": "refunds", "limit": 3}', headers=member
    )
    assert r.status_code == 200 and r.json()["results"], r.text
    r = env.client.post("/api/v1/chat", content=CHAT, headers=member)
    assert r.status_code == 200 and r.json()["answer"], r.text


#: JSON texts, then broken in the ways clients break them.
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=10,
)
BODIES = st.one_of(
    st.binary(max_size=300),
    JSON_VALUES.map(lambda v: json.dumps(v).encode("utf-8")),
    JSON_VALUES.map(lambda v: gzip.compress(json.dumps(v).encode("utf-8"))),
    st.tuples(JSON_VALUES, st.binary(max_size=8), st.integers(0, 100)).map(
        lambda t: (lambda b: b[: t[2]] + t[1] + b[t[2] :])(json.dumps(t[0]).encode("utf-8"))
    ),
    st.text(max_size=50).map(lambda s: s.encode("utf-16")),
)


@hsettings(max_examples=examples(150))
@given(body=BODIES)
def test_any_bytes_as_a_body_get_a_4xx_with_the_documented_shape(
    env_sqlite: ApiEnv, body: bytes
) -> None:
    env = env_sqlite
    r = env.client.post(
        "/api/v1/chat",
        content=body,
        headers={**env.auth("member"), "Content-Type": "application/json"},
    )
    assert 400 <= r.status_code < 500, (body[:80], r.status_code, r.text[:300])
    detail = r.json()["detail"]
    if r.status_code == 400:
        assert detail.startswith(NOT_JSON_START) and detail.endswith(NOT_JSON_FIX), detail
    else:  # JSON of the wrong shape: the field problems, never the input
        assert r.status_code == 422 and isinstance(detail, list), (r.status_code, detail)
        assert all(set(problem) == {"loc", "msg", "type"} for problem in detail), detail


@hsettings(max_examples=examples(300))
@given(body=BODIES)
def test_parse_json_body_is_strict_json_or_a_decode_error(body: bytes) -> None:
    try:
        value = parse_json_body(body)
    except json.JSONDecodeError as exc:
        assert exc.msg and exc.pos >= 0, exc
        return
    # What it accepts is UTF-8 JSON as RFC 8259 has it, and means what Python's parser says.
    assert not body.startswith(b"\xef\xbb\xbf")
    text = body.decode("utf-8")
    assert value == json.loads(text)
    json.dumps(value, allow_nan=False)  # no NaN or Infinity got through
