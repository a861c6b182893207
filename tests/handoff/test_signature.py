"""The delivery signature: what citewall signs, a receiver accepts; a changed body, timestamp
or secret, or a timestamp outside the window, it refuses."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from citewall.handoff.signature import signature, verify_signature

secrets = st.text(min_size=16, max_size=64)
stamps = st.integers(min_value=0, max_value=10**11)


@given(secrets, stamps, st.binary(max_size=200))
def test_a_signed_delivery_verifies(secret: str, stamp: int, body: bytes) -> None:
    header = signature(secret, stamp, body)
    assert header.startswith("sha256=") and len(header) == 7 + 64
    assert verify_signature(
        secret, timestamp=str(stamp), body=body, signature_header=header, now=stamp + 10
    )


@given(secrets, stamps, st.binary(max_size=200), st.binary(min_size=1, max_size=5))
def test_a_changed_body_or_timestamp_does_not(
    secret: str, stamp: int, body: bytes, extra: bytes
) -> None:
    header = signature(secret, stamp, body)
    assert not verify_signature(
        secret, timestamp=str(stamp), body=body + extra, signature_header=header, now=stamp
    )
    # A replay with a fresh timestamp: the old signature does not cover it.
    assert not verify_signature(
        secret, timestamp=str(stamp + 1), body=body, signature_header=header, now=stamp + 1
    )
    assert not verify_signature(
        secret + "x", timestamp=str(stamp), body=body, signature_header=header, now=stamp
    )


def test_an_old_or_malformed_timestamp_is_refused() -> None:
    header = signature("a" * 16, 1000, b"{}")
    check = {"body": b"{}", "signature_header": header}
    assert verify_signature("a" * 16, timestamp="1000", now=1300, **check)
    assert not verify_signature("a" * 16, timestamp="1000", now=1301, **check)
    assert not verify_signature("a" * 16, timestamp="1000", now=699, **check)
    for bad in ("", "-1000", "1e3", " 1000", "1000.0"):
        assert not verify_signature("a" * 16, timestamp=bad, now=1000, **check)
