"""The HTML report: one self-contained file (inline CSS and SVG, no script, no external asset).

Every value is HTML-escaped: reasons quote what a model wrote, and the report must be as inert
as the UI. A restrictive Content-Security-Policy meta tag makes a mistake here harmless too.
"""

from __future__ import annotations

from html import escape
from typing import Any

from citewall_evals.report import staff_only as staff_report
from citewall_evals.report import tables as report_tables
from citewall_evals.report.svg import confusion_matrix, grouped_bars

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1100px;
color:#222;line-height:1.4;padding:0 1rem}
h1 .pass{color:#2e7d32}h1 .fail{color:#c62828}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.9rem}
th,td{border:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.fail td{background:#fdecea}tr.regressed td,tr.missing td{background:#fdecea}
.charts{display:flex;flex-wrap:wrap;gap:1.5rem}.note{color:#555;font-size:.9rem}
"""


def _fmt(value: Any) -> str:
    return escape(report_tables.shown(value))


def _table(headers: list[str], rows: list[list[Any]], row_class: list[str] | None = None) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{escape(row_class[i])}"' if row_class and row_class[i] else ""
        cells = "".join(
            f'<td class="num">{_fmt(v)}</td>'
            if isinstance(v, int | float) and not isinstance(v, bool)
            else f"<td>{_fmt(v)}</td>"
            for v in row
        )
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_html(report: dict[str, Any]) -> str:
    """The whole report as one HTML document."""
    passed = report["passed"]
    verdict = '<span class="pass">PASS</span>' if passed else '<span class="fail">FAIL</span>'
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; img-src data:\">",
        f"<title>citewall evaluation: {'PASS' if passed else 'FAIL'}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>citewall evaluation: {verdict}</h1>",
        f"<p>Profile <code>{escape(report['profile'])}</code>, started "
        f"{escape(report['started_at'])}, "
        f"{sum(report.get('timings_s', {}).values()):.1f} s in total. Red-team gate: "
        f"<b>{report['gate_failures']} failing case(s)</b>; regressions beyond tolerance: "
        f"<b>{len(report['regressions'])}</b>.</p>",
        "<h2>Environment</h2>",
        _table(["item", "value"], [[k, v] for k, v in report.get("environment", {}).items()]),
        "<h2>Timings (s)</h2>",
        _table(["stage", "seconds"], [[k, v] for k, v in report.get("timings_s", {}).items()]),
    ]
    parts += _judge(report.get("judge") or {})
    parts += _charts(report)
    parts += _citations(report.get("citations") or {})
    by_gen = report.get("citations_by_generator") or {}
    if len(by_gen) > 1:
        parts.append(
            grouped_bars(
                "Citation quality per generator",
                [
                    (
                        g,
                        {
                            "recall": c.get("citation_recall", 0.0),
                            "precision": c.get("citation_precision", 0.0),
                        },
                    )
                    for g, c in by_gen.items()
                ],
                ["recall", "precision"],
            )
        )
    parts += _dangling(report)
    if staff := report.get("staff_only"):
        parts += ["<h2>Staff-only text</h2>", f"<p>{escape(staff_report.summary(staff))}</p>"]
        parts += [
            _table(*staff_report.detector_table(staff)),
            _table(*staff_report.prose_table(staff)),
        ]
    parts += _redteam(report)
    for name, kb in (report.get("knowledge_bases") or {}).items():
        parts += [
            f"<h2>Knowledge base: {escape(name)}</h2>",
            _table(["item", "value"], [[k, v] for k, v in (kb.get("environment") or {}).items()]),
            _table(*report_tables.kb_figures(kb)),
        ]
    parts += _baseline(report)
    parts.append("</body></html>")
    return "".join(parts)


def _judge(judge: dict[str, Any]) -> list[str]:
    if not judge:
        return []
    t = judge.get("thresholds", {})
    loo, fitted = judge.get("leave_one_out", {}), judge.get("fitted", {})
    return [
        "<h2>Support judge calibration</h2>",
        f"<p>{judge.get('labels', 0)} hand-labelled pairs; weight {_fmt(t.get('weight'))}, "
        f"threshold {_fmt(t.get('threshold'))}, min key-term share {_fmt(t.get('min_key'))}. "
        f"Accuracy {_fmt(fitted.get('accuracy'))} fitted, {_fmt(loo.get('accuracy'))} "
        "leave-one-out.</p><div class='charts'>",
        confusion_matrix(
            "fitted",
            fitted.get("tp", 0),
            fitted.get("fp", 0),
            fitted.get("fn", 0),
            fitted.get("tn", 0),
        ),
        confusion_matrix(
            "leave-one-out", loo.get("tp", 0), loo.get("fp", 0), loo.get("fn", 0), loo.get("tn", 0)
        ),
        "</div>",
    ]


def _charts(report: dict[str, Any]) -> list[str]:
    out: list[str] = []
    retrieval = report.get("retrieval") or {}
    if retrieval:
        rows = [
            [
                p,
                s.get("label"),
                s.get("ndcg@10"),
                s.get("recall@10"),
                s.get("mrr"),
                s.get("questions"),
            ]
            for p, s in retrieval.items()
        ]
        out += [
            "<h2>Retrieval (per path)</h2>",
            grouped_bars(
                "Retrieval on the test split",
                [
                    (p, {k: s.get(k, 0.0) for k in ("ndcg@10", "recall@10", "mrr")})
                    for p, s in retrieval.items()
                ],
                ["ndcg@10", "recall@10", "mrr"],
            ),
            _table(["path", "ran as", "nDCG@10", "recall@10", "MRR", "questions"], rows),
        ]
    return out


def _citations(c: dict[str, Any]) -> list[str]:
    if not c:
        return []
    return [
        "<h2>Citation quality (ALCE-style)</h2>",
        grouped_bars(
            "Citation quality of stored answers",
            [
                (
                    "stored answers",
                    {
                        "recall": c.get("citation_recall", 0.0),
                        "precision": c.get("citation_precision", 0.0),
                    },
                )
            ],
            ["recall", "precision"],
        ),
        _table(["metric", "value"], [[k, v] for k, v in c.items()]),
    ]


def _dangling(report: dict[str, Any]) -> list[str]:
    d = report.get("dangling") or {}
    if not d:
        return []
    generators = d.get("generators") or {}
    detector = d.get("detector") or {}
    out = [
        "<h2>Dangling references in member prose</h2>",
        "<p class='note'>Share of member answers with text that points at a source the member "
        f"cannot see. Threshold {_fmt(d.get('threshold'))}: a shipped generator above it "
        "fails; the attacker must be above it; a real model is reported.</p>",
        grouped_bars(
            "Dangling-reference rate per generator",
            [(g, {"rate": v.get("rate", 0.0)}) for g, v in generators.items()],
            ["rate"],
        ),
        _table(
            *report_tables.dangling_generators(report),
            ["fail" if v.get("verdict") == "fail" else "" for v in generators.values()],
        ),
        f"<p>Detector against {_fmt(detector.get('labels'))} hand-labelled answers "
        "(kb/eval/dangling_labels.jsonl; dev read before the detector was written, holdout "
        "labelled after and never used to change it).</p><div class='charts'>",
        confusion_matrix(
            "detector, all labels",
            detector.get("tp", 0),
            detector.get("fp", 0),
            detector.get("fn", 0),
            detector.get("tn", 0),
        ),
        "</div>",
        _table(*report_tables.dangling_detector(report)),
    ]
    examples = report_tables.dangling_examples(report)
    if examples[1]:
        out.append(_table(*examples))
    return out


def _redteam(report: dict[str, Any]) -> list[str]:
    rows = report.get("redteam") or []
    if not rows:
        return []
    by_gen: dict[str, dict[str, float]] = {}
    for r in rows:
        g = by_gen.setdefault(r["generator"], {"pass": 0.0, "n": 0.0})
        g["n"] += 1
        g["pass"] += r["verdict"] == "pass"
    return [
        "<h2>Red-team gate</h2>",
        grouped_bars(
            "Pass rate per generator",
            [(g, {"pass rate": v["pass"] / v["n"]}) for g, v in by_gen.items()],
            ["pass rate"],
        ),
        _table(
            *report_tables.redteam(report),
            ["fail" if r["verdict"] != "pass" else "" for r in rows],
        ),
    ]


def _baseline(report: dict[str, Any]) -> list[str]:
    comps = report.get("comparisons") or []
    out = ["<h2>Baseline comparison</h2>"]
    if report.get("baseline_note"):
        out.append(f"<p class='note'>{escape(report['baseline_note'])}</p>")
    if comps:
        out.append(_table(*report_tables.baseline(report), [c["status"] for c in comps]))
    return out
