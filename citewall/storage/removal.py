"""Why a stored question or answer has no words any more: retention removed them, or the
member's data was erased (their rows now belong to a pseudonymous user). The admin pages name
the reason instead of showing a blank (docs/privacy.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

#: The issuer a pseudonymous user is marked with (no token names it: nobody signs in as one).
PSEUDONYM_ISSUER = "citewall:erased"

Removal = Literal["retention", "erasure"]


def removed_by(content_removed_at: datetime | None, owner_issuer: str | None) -> Removal | None:
    """Why a message's words are gone (None: they are there).

    >>> removed_by(None, None) is None
    True
    >>> removed_by(datetime(2026, 1, 1), PSEUDONYM_ISSUER)
    'erasure'
    >>> removed_by(datetime(2026, 1, 1), None)
    'retention'
    """
    if content_removed_at is None:
        return None
    return "erasure" if owner_issuer == PSEUDONYM_ISSUER else "retention"
