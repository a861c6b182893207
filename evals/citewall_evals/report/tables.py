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


def kb_figures(kb: dict[str, Any]) -> Table:
    """A knowledge base's answer figures, each beside its negative control (``KbResult``)."""
    served = (kb.get("retrieval") or {}).get("served") or {}
    control = (kb.get("retrieval") or {}).get("control") or {}
    extractive = ((kb.get("answers") or {}).get("generators") or {}).get("extractive") or {}
    nuggets_control = extractive.get("control") or {}
    answering = kb.get("answering") or {}
    abst = answering.get("abstention") or {}
    abst_control = answering.get("abstention_control") or {}
    follow = answering.get("followups") or {}
    citations = kb.get("citations") or {}
    rows: list[list[Any]] = [
        [
            "retrieval recall@10 (served)",
            served.get("recall@10"),
            control.get("recall@10"),
            "mismatched gold",
        ],
        [
            "retrieval nDCG@10 (served)",
            served.get("ndcg@10"),
            control.get("ndcg@10"),
            "mismatched gold",
        ],
        [
            "nugget recall",
            extractive.get("nugget_recall"),
            nuggets_control.get("nugget_recall"),
            "another question's nuggets",
        ],
        [
            "off-topic sentence rate",
            extractive.get("off_topic_rate"),
            nuggets_control.get("off_topic_rate"),
            "another question's gold cards",
        ],
        [
            "not_found recall (unanswerable)",
            abst.get("not_found_recall"),
            abst_control.get("not_found_recall"),
            "abstention off",
        ],
        ["answered rate (answerable)", abst.get("answered_rate"), None, ""],
        [
            "follow-up nDCG@10, with the conversation",
            follow.get("context_ndcg"),
            follow.get("control_ndcg"),
            "another conversation",
        ],
        ["follow-up nDCG@10, alone", follow.get("alone_ndcg"), None, ""],
        ["citation recall", citations.get("citation_recall"), None, ""],
        ["citation precision", citations.get("citation_precision"), None, ""],
    ]
    return ["figure", "value", "control", "control is"], rows
