"""Card ids for documents: the relative path, plus the section's anchor when headings split it.

``guides/Refund Playbook.pdf`` becomes ``guides.refund-playbook-pdf``; its section "Duplicate
charges" becomes ``guides.refund-playbook-pdf--duplicate-charges``. Each path part is slugged
(ASCII lower case, every run of other characters one ``-``), parts are joined with ``.`` and the
anchor follows ``--``; a slug never holds ``.``, ``--`` or ``_`` itself, so distinct slugs give
distinct ids. Slugging is lossy (``Guide.pdf`` and ``guide.pdf``), and an id may be too long:
every id of such a group, or too long, gets ``_`` plus a hash of the exact (path, anchor), which
no plain id can end with. Ids depend only on the set of sections loaded together, never on order.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

#: ``citewall.kb.card.Card.id``'s limit.
MAX_ID_LENGTH = 200
#: Hex characters of the hash suffix: 40 bits, so two keys of one folder never share one.
HASH_CHARS = 10
#: Longest anchor slug: enough to tell headings apart, short enough to leave room for the path.
MAX_ANCHOR_LENGTH = 60
#: Anchor of the text before a split document's first heading.
LEAD_ANCHOR = "top"

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True, slots=True, order=True)
class SectionKey:
    """What identifies one card of a document: its path relative to the folder ingested
    (POSIX form) and the section's anchor (None when the document is one card)."""

    path: str
    anchor: str | None


def slug(text: str) -> str:
    """ASCII lower case with every run of other characters turned into one ``-``.

    >>> slug("Refund Playbook (v2).PDF")
    'refund-playbook-v2-pdf'
    >>> slug("Überblick")
    'uberblick'
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return _NOT_SLUG.sub("-", ascii_text.lower()).strip("-")


def path_slug(path: str) -> str:
    """The id part for a relative path: its parts slugged and joined with ``.``.

    >>> path_slug("Guides/Refund Playbook.pdf")
    'guides.refund-playbook-pdf'
    """
    return ".".join(slug(part) or "x" for part in PurePosixPath(path).parts) or "x"


def anchors(headings: Sequence[str | None]) -> list[str]:
    """One anchor per section, in order, unique within the document.

    ``None`` (the text before the first heading) is ``top``; a heading repeated is numbered.

    >>> anchors([None, "Overview", "Steps", "Overview", ""])
    ['top', 'overview', 'steps', 'overview-2', 'section']
    """
    seen: set[str] = set()
    out: list[str] = []
    for heading in headings:
        base = LEAD_ANCHOR if heading is None else slug(heading)[:MAX_ANCHOR_LENGTH].strip("-")
        base = base or "section"
        anchor, n = base, 1
        while anchor in seen:
            n += 1
            anchor = f"{base}-{n}"
        seen.add(anchor)
        out.append(anchor)
    return out


def plain_id(key: SectionKey) -> str:
    """The id before collisions and length are handled.

    >>> plain_id(SectionKey("a/Guide.md", "steps"))
    'a.guide-md--steps'
    """
    base = path_slug(key.path)
    return base if key.anchor is None else f"{base}--{key.anchor}"


def _hashed(key: SectionKey, plain: str) -> str:
    digest = hashlib.sha256(f"{key.path}\0{key.anchor or ''}".encode()).hexdigest()
    return f"{plain[: MAX_ID_LENGTH - HASH_CHARS - 1]}_{digest[:HASH_CHARS]}"


def assign_ids(keys: Iterable[SectionKey]) -> dict[SectionKey, str]:
    """A valid, distinct card id for each key (see the module docstring).

    >>> ids = assign_ids([SectionKey("Guide.pdf", None), SectionKey("guide.pdf", None)])
    >>> sorted(ids.values())
    ['guide-pdf_d26394476e', 'guide-pdf_f8621a38f4']
    """
    groups: dict[str, list[SectionKey]] = defaultdict(list)
    for key in set(keys):
        groups[plain_id(key)].append(key)
    out: dict[SectionKey, str] = {}
    for plain, members in groups.items():
        for key in members:
            ok = len(members) == 1 and len(plain) <= MAX_ID_LENGTH
            out[key] = plain if ok else _hashed(key, plain)
    return out
