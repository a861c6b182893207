"""The report's tables as (headers, rows), shared by the Markdown and HTML renderers.

Each renderer formats cells its own way; what a table holds is decided once, here.
"""

from __future__ import annotations

from typing import Any

Table = tuple[list[str], list[list[Any]]]


def shown(value: Any) -> str:
    """A value as both renderers show it (before their own escaping): booleans as yes/no,
    floats to 3 decimals, a missing value as a dash.

    >>> [shown(v) for v in (True, 0.12345, None, "x")]
    ['yes', '0.123', '-', 'x']
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    if value is None:
        return "-"
    return str(value)


def dangling_generators(report: dict[str, Any]) -> Table:
    """The dangling-reference rate per generator, with its role and verdict."""
    headers = [
        "generator",
        "role",
        "answers",
        "with a dangling reference",
        "rate",
        "references",
        "verdict",
        "reason",
    ]
    rows = [
        [
            name,
            g.get("role"),
            g.get("answers"),
            g.get("dangling"),
            g.get("rate"),
            g.get("references"),
            str(g.get("verdict", "")).upper(),
            g.get("reason"),
        ]
        for name, g in ((report.get("dangling") or {}).get("generators") or {}).items()
    ]
    return headers, rows


def dangling_detector(report: dict[str, Any]) -> Table:
    """The detector against the hand labels: overall, per label set and per generator."""
    detector = (report.get("dangling") or {}).get("detector") or {}
    headers = [
        "labels",
        "n",
        "dangling",
        "recall",
        "precision",
        "spans found",
        "TP",
        "FP",
        "TN",
        "FN",
    ]
    groups = [("all", detector), *(detector.get("groups") or {}).items()]
    rows = [
        [
            name,
            g.get("labels"),
            g.get("dangling"),
            g.get("recall"),
            g.get("precision"),
            f"{g.get('spans_found')}/{g.get('spans')}",
            g.get("tp"),
            g.get("fp"),
            g.get("tn"),
            g.get("fn"),
        ]
        for name, g in groups
        if g
    ]
    return headers, rows


def dangling_examples(report: dict[str, Any]) -> Table:
    """The first flagged answers of each generator: what the member would have read."""
    headers = ["generator", "question", "rules", "first reference"]
    rows = [
        [name, e.get("question"), e.get("rules"), e.get("first")]
        for name, g in ((report.get("dangling") or {}).get("generators") or {}).items()
        for e in g.get("examples") or []
    ]
    return headers, rows


def redteam(report: dict[str, Any]) -> Table:
    """One row per red-team case and generator."""
    headers = [
        "case",
        "kind",
        "technique",
        "generator",
        "verdict",
        "reason",
        "target retrieved",
        "defanged",
    ]
    rows = [
        [
            r["case"],
            r["kind"],
            r["technique"],
            r["generator"],
            r["verdict"].upper(),
            r["reason"],
            r.get("target_retrieved"),
            r.get("defanged", 0),
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
