"""The report of ``citewall eval kb``: ``eval-kb.md``, ``eval-kb.html`` and ``eval-kb.json``,
beside (not over) the demo evaluation's ``eval.*``, with the tables and escaping of its
report (``report.markdown``, ``report.html``)."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from citewall_evals.report import tables as report_tables
from citewall_evals.report.html import _CSS, _table
from citewall_evals.report.markdown import table

Table = tuple[list[str], list[list[Any]]]


def sections(report: dict[str, Any]) -> list[tuple[str, Table]]:
    """The report's tables, in order, each with its heading."""
    out: list[tuple[str, Table]] = [
        ("Environment", (["item", "value"], [[k, v] for k, v in report["environment"].items()])),
        ("Figures", (["figure", "value"], [[k, v] for k, v in report["metrics"].items()])),
    ]
    retrieval = report.get("retrieval") or {}
    if retrieval:
        headers = ["path", "ran as", "hit@1", "hit@5", "MRR", "nDCG@10", "recall@10", "questions"]
        rows = [
            [
                p,
                s["label"],
                s["hit@1"],
                s["hit@5"],
                s["mrr"],
                s["ndcg@10"],
                s["recall@10"],
                s["questions"],
            ]
            for p, s in retrieval.items()
        ]
        out.append(("Retrieval (per path)", (headers, rows)))
    for title, key in (("Answering", "abstention"), ("Citation quality", "citations")):
        if report.get(key):
            rows = [[k, v] for k, v in report[key].items() if not isinstance(v, dict)]
            out.append((title, (["metric", "value"], rows)))
    answers = report.get("answers") or {}
    if answers:
        keys = ("answers", "nuggets", "nugget_recall", "sentences", "off_topic_rate")
        out.append(
            ("Facts (nugget recall)", (["metric", "value"], [[k, answers.get(k)] for k in keys]))
        )
    dangling = report.get("dangling") or {}
    if dangling:
        shown = ("answers", "dangling", "rate", "references", "verdict", "reason")
        out.append(
            ("Dangling references", (["metric", "value"], [[k, dangling.get(k)] for k in shown]))
        )
    if report.get("comparisons"):
        out.append(("Baseline comparison", report_tables.baseline(report)))
    rows = [list(r.values()) for r in report.get("per_question") or []]
    if rows:
        out.append(("Questions", (list((report["per_question"][0]).keys()), rows)))
    return out


def _failures(report: dict[str, Any]) -> list[str]:
    return [*report["threshold_failures"], *(f"regressed: {m}" for m in report["regressions"])]


def render_markdown(report: dict[str, Any]) -> str:
    verdict = "PASS" if report["passed"] else "FAIL"
    out = [
        f"# citewall eval kb: {verdict}",
        "",
        f"`{report['questions_file']}`, started {report['started_at']}.",
        "",
        f"Asked and retrieved as {report['asked_as']}.",
        "",
    ]
    out += [f"- {line}" for line in _failures(report)]
    out += [f"- warning: {line}" for line in report["warnings"]]
    if report.get("baseline_note"):
        out += ["", report["baseline_note"]]
    for title, (headers, rows) in sections(report):
        out += ["", f"## {title}", "", *table(headers, rows)]
    return "\n".join(out) + "\n"


def render_html(report: dict[str, Any]) -> str:
    verdict = "PASS" if report["passed"] else "FAIL"
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; img-src data:\">",
        f"<title>citewall eval kb: {verdict}</title><style>{_CSS}</style></head><body>",
        f"<h1>citewall eval kb: <span class='{verdict.lower()}'>{verdict}</span></h1>",
        f"<p><code>{escape(report['questions_file'])}</code>, started "
        f"{escape(report['started_at'])}.</p>",
        f"<p>Asked and retrieved as {escape(report['asked_as'])}.</p>",
    ]
    if failures := _failures(report):
        parts.append("<ul>" + "".join(f"<li>{escape(f)}</li>" for f in failures) + "</ul>")
    if warnings := report["warnings"]:
        parts.append("<ul>" + "".join(f"<li>warning: {escape(w)}</li>" for w in warnings) + "</ul>")
    if report.get("baseline_note"):
        parts.append(f"<p class='note'>{escape(report['baseline_note'])}</p>")
    for title, (headers, rows) in sections(report):
        parts += [f"<h2>{escape(title)}</h2>", _table(headers, rows)]
    parts.append("</body></html>")
    return "".join(parts)


def write_kb_reports(report: dict[str, Any], out: Path) -> dict[str, Path]:
    """``eval-kb.md``, ``eval-kb.html`` and ``eval-kb.json`` in ``out`` (created if needed)."""
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "markdown": out / "eval-kb.md",
        "html": out / "eval-kb.html",
        "json": out / "eval-kb.json",
    }
    files["markdown"].write_text(render_markdown(report), encoding="utf-8")
    files["html"].write_text(render_html(report), encoding="utf-8")
    files["json"].write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    return files
