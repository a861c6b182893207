"""Prose-only answers for members: the stored content keeps its ``[n]`` markers, members don't
see them (ADR external-only: inline anchors would number internal sources too)."""

from __future__ import annotations

from citewall.citations.markers import strip_markers


def prose_only(text: str) -> str:
    """The answer as a member sees it: every citation marker removed.

    >>> prose_only("Refunds take 5 days [1]. Ask billing [2][3].")
    'Refunds take 5 days. Ask billing.'
    """
    if not isinstance(text, str):
        return ""
    return strip_markers(text)
