"""The report's tables as (headers, rows), shared by the Markdown and HTML renderers.

Each renderer formats cells its own way; what a table holds is decided once, here.
"""

from __future__ import annotations

from typing import Any

Table = tuple[list[str], list[list[Any]]]


def hidden_by_kind(hidden: dict[str, Any]) -> Table:
    """Answer quality with citations hidden, per question kind (member view vs stored)."""
    headers = [
        "question kind",
        "n",
        "member support",
        "member coverage",
        "full coverage",
        "member sources/answer",
        "stored sources/answer",
    ]
    rows = [
        [
            kind,
            v.get("questions"),
            v.get("member_support"),
            v.get("member_coverage"),
            v.get("full_coverage"),
            v.get("member_sources_per_answer"),
            v.get("stored_sources_per_answer"),
        ]
        for kind, v in (hidden.get("by_kind") or {}).items()
    ]
    return headers, rows


def redteam(report: dict[str, Any]) -> Table:
    """One row per red-team case and generator."""
    headers = ["case", "kind", "technique", "generator", "verdict", "reason", "target retrieved"]
    rows = [
        [
            r["case"],
            r["kind"],
            r["technique"],
            r["generator"],
            r["verdict"].upper(),
            r["reason"],
            r.get("target_retrieved"),
        ]
        for r in report.get("redteam") or []
    ]
    return headers, rows


def baseline(report: dict[str, Any]) -> Table:
    """Each compared metric against the committed baseline."""
    headers = ["metric", "baseline", "current", "delta", "tolerance", "status"]
    rows = [
        [c["metric"], c["baseline"], c["current"], c["delta"], c["tolerance"], c["status"]]
        for c in report.get("comparisons") or []
    ]
    return headers, rows
