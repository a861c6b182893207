"""A host token signs in once: the key it is remembered by (``storage.used_tokens``).

A token with a ``jti`` is keyed by its issuer and jti (the host promises a jti is never reused).
A token without one is keyed by its signed part, the header and payload before the last ``.``,
not by its whole text: an ES256 signature (r, s) has a twin (r, n - s) that verifies as well,
so one token has two spellings, while its signed part cannot change without breaking the
signature. Two tokens of one member with the same claims signed in the same second are then
one token, hence docs/sign-in.md's advice to send a jti.
"""

from __future__ import annotations

import hashlib


def replay_key(issuer: str, token_id: str | None, token: str) -> str:
    """The sha256 hex digest a verified host ``token`` is remembered by: of ``issuer`` and
    ``token_id`` (its jti) when it has one, else of its signed part.

    >>> iss = "https://host.test"
    >>> replay_key(iss, None, "head.body.sig1") == replay_key(iss, None, "head.body.sig2")
    True
    >>> replay_key(iss, "j1", "a.b.c") == replay_key(iss, "j1", "x.y.z")
    True
    """
    if token_id is not None:
        material = f"jti\0{issuer}\0{token_id}"
    else:
        material = "signed\0" + token.rpartition(".")[0]
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()
