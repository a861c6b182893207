"""The key a host token is remembered by (``auth.replay``), as properties: with a jti only the
issuer and jti count; without one only the signed part (header and payload) counts, so another
spelling of the signature is the same token; the two kinds of key never meet."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from testenv import examples

from citewall.auth.replay import replay_key

SEGMENT = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
ISSUER = st.sampled_from(["https://host.test", "https://other.test"])
JTI = st.text(min_size=1, max_size=80)


def token(head: str, body: str, signature: str) -> str:
    return f"{head}.{body}.{signature}"


@settings(max_examples=examples(200))
@given(ISSUER, JTI, SEGMENT, SEGMENT, SEGMENT, SEGMENT)
def test_with_a_jti_only_the_issuer_and_jti_count(
    issuer: str, jti: str, head: str, body: str, signature: str, other: str
) -> None:
    key = replay_key(issuer, jti, token(head, body, signature))
    assert key == replay_key(issuer, jti, token(other, body + other, other))
    assert key != replay_key(issuer, jti + "x", token(head, body, signature))
    other_issuer = "https://b.test" if issuer != "https://b.test" else "https://c.test"
    assert key != replay_key(other_issuer, jti, token(head, body, signature))


@settings(max_examples=examples(200))
@given(ISSUER, SEGMENT, SEGMENT, SEGMENT, SEGMENT)
def test_without_a_jti_only_the_signed_part_counts(
    issuer: str, head: str, body: str, signature: str, twin: str
) -> None:
    key = replay_key(issuer, None, token(head, body, signature))
    assert key == replay_key(issuer, None, token(head, body, twin))
    assert key != replay_key(issuer, None, token(head, body + "A", signature))
    assert key != replay_key(issuer, None, token(head + "A", body, signature))


@settings(max_examples=examples(200))
@given(ISSUER, JTI, SEGMENT, SEGMENT, SEGMENT)
def test_a_jti_key_is_never_a_signed_part_key(
    issuer: str, jti: str, head: str, body: str, signature: str
) -> None:
    text = token(head, body, signature)
    assert replay_key(issuer, jti, text) != replay_key(issuer, None, text)
    assert len(replay_key(issuer, jti, text)) == 64
