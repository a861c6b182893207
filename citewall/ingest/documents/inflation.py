"""How far a document may inflate past its size on disk: the rule for zip and PDF bombs.

A document (a DOCX's zip members, a PDF's page content) may inflate to at most
``CITEWALL_DOCUMENT_MAX_BYTES`` in all, and anything above ``RATIO_FLOOR_BYTES`` inflated to at
most a format's ratio times what it packs into (``docx_package.DOCX_MAX_RATIO``,
``pdf_limits.PDF_MAX_RATIO``): a bomb (deflate reaches about 1000:1) is refused before it costs
more than that ratio times its own size to read.
"""

from __future__ import annotations

#: Below this inflated size the ratio is not checked: small parts (styles, settings, a short
#: page) pack far past any ratio and cannot hurt.
RATIO_FLOOR_BYTES = 1024 * 1024


def packed_too_tightly(inflated: int, packed: int, max_ratio: int) -> bool:
    """Whether ``inflated`` bytes packed into ``packed`` is past ``max_ratio`` to 1.

    >>> packed_too_tightly(2_000_000, 10_000, 100), packed_too_tightly(2_000_000, 40_000, 100)
    (True, False)
    >>> packed_too_tightly(RATIO_FLOOR_BYTES, 1, 100)
    False
    """
    return inflated > RATIO_FLOOR_BYTES and inflated > max_ratio * packed
