"""The Markdown report: every metric, the red-team table, the baseline comparison.

Reads the plain dict of ``EvalResult.as_dict()``. Cell text is escaped so a model-written
reason cannot break the table or inject Markdown links into the report.
"""

from __future__ import annotations

from typing import Any

from citewall_evals.report import staff_only as staff_report
from citewall_evals.report import tables as report_tables


def cell(value: Any) -> str:
    """A table cell: numbers to 3 decimals, pipes/newlines/brackets made inert."""
    text = report_tables.shown(value)
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    return text.replace("[", "\\[").replace("]", "\\]").replace("<", "&lt;").replace(">", "&gt;")


def table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines


def render_markdown(report: dict[str, Any]) -> str:
    """The whole report as Markdown."""
    verdict = "PASS" if report["passed"] else "FAIL"
    env = report.get("environment", {})
    out = [
        f"# citewall evaluation: {verdict}",
        "",
        f"Profile `{report['profile']}`, started {report['started_at']}, "
        f"{sum(report.get('timings_s', {}).values()):.1f} s in total.",
        "",
        f"- red-team gate: **{report['gate_failures']} failing case(s)**",
        f"- regressions beyond tolerance: **{len(report['regressions'])}**"
        + (f" ({', '.join(report['regressions'])})" if report["regressions"] else ""),
        f"- dangling references: **{len(report.get('dangling_failures') or [])} failing "
        f"generator(s)**"
        + (
            f" ({', '.join(report['dangling_failures'])})"
            if report.get("dangling_failures")
            else ""
        ),
        f"- replay failures: **{len(report.get('replay_failures') or [])}**",
        f"- other knowledge bases: **{len(report.get('knowledge_bases') or {})}** measured, "
        f"**{len(report.get('kb_failures') or [])}** failure(s)"
        + (f" ({', '.join(report['kb_failures'])})" if report.get("kb_failures") else ""),
        f"- answer metrics whose negative control did not fail: "
        f"**{len(report.get('control_failures') or [])}**"
        + (f" ({', '.join(report['control_failures'])})" if report.get("control_failures") else ""),
        "",
        "## Environment",
        "",
        *table(["item", "value"], [[k, v] for k, v in env.items()]),
        "",
        "## Timings (s)",
        "",
        *table(["stage", "seconds"], [[k, v] for k, v in report.get("timings_s", {}).items()]),
        "",
    ]
    out += _judge(report.get("judge", {}))
    out += _retrieval(report.get("retrieval", {}))
    out += _citations(report.get("citations", {}))
    out += _citations_by_generator(report.get("citations_by_generator") or {})
    out += _answers(report.get("answers") or {})
    out += _answering(report.get("answering") or {})
    out += _protection(report.get("protection") or {})
    if staff := report.get("staff_only"):
        detector, prose = staff_report.detector_table(staff), staff_report.prose_table(staff)
        out += ["## Staff-only text", "", staff_report.summary(staff), "", *table(*detector), ""]
        out += [*table(*prose), ""]
    out += _dangling(report)
    out += _redteam(report)
    for name, kb in (report.get("knowledge_bases") or {}).items():
        out += knowledge_base(name, kb)
    out += _baseline(report)
    return "\n".join(out) + "\n"


def knowledge_base(name: str, kb: dict[str, Any]) -> list[str]:
    """A section for one other knowledge base: its figures beside their controls, then the
    demo's detailed sections for it, one heading level down."""
    failures = [*(kb.get("replay_failures") or []), *(kb.get("control_failures") or [])]
    out = [
        f"## Knowledge base: {name}",
        "",
        "The extractive generator on this corpus alone (no red-team gate or baseline: those are "
        "the demo's). The support judge's thresholds are calibrated on the demo's hand labels.",
        "",
        *table(["item", "value"], [[k, v] for k, v in (kb.get("environment") or {}).items()]),
        "",
        *table(["stage", "seconds"], [[k, v] for k, v in (kb.get("timings_s") or {}).items()]),
        "",
        *table(*report_tables.kb_figures(kb)),
        "",
        f"Replay failures and failed controls: **{len(failures)}**"
        + (f" ({', '.join(failures)})" if failures else ""),
        "",
    ]
    details = [
        *_retrieval(kb.get("retrieval") or {}),
        *_citations(kb.get("citations") or {}),
        *_answers(kb.get("answers") or {}),
        *_answering(kb.get("answering") or {}),
    ]
    return out + [f"#{line}" if line.startswith("## ") else line for line in details]


def _judge(judge: dict[str, Any]) -> list[str]:
    if not judge:
        return []
    t = judge.get("thresholds", {})
    fitted, loo = judge.get("fitted", {}), judge.get("leave_one_out", {})
    out = [
        "## Support judge calibration",
        "",
        f"{judge.get('labels', 0)} hand-labelled pairs. Chosen: weight {cell(t.get('weight'))} "
        f"(cosine vs lexical), threshold {cell(t.get('threshold'))}, min key-term share "
        f"{cell(t.get('min_key'))}.",
        "",
        *table(
            ["", "accuracy", "balanced acc.", "kappa", "TP", "FP", "TN", "FN"],
            [
                [
                    name,
                    d.get("accuracy"),
                    d.get("balanced_accuracy"),
                    d.get("kappa"),
                    d.get("tp"),
                    d.get("fp"),
                    d.get("tn"),
                    d.get("fn"),
                ]
                for name, d in (("fitted", fitted), ("leave-one-out", loo))
            ],
        ),
        "",
    ]
    grid = judge.get("grid_balanced_accuracy_by_weight") or {}
    if grid:
        out += [
            "Best balanced accuracy by cosine weight (0 = lexical only, 1 = embedding only):",
            "",
            *table(["weight", *grid.keys()], [["balanced acc.", *grid.values()]]),
            "",
        ]
    errors = judge.get("disagreements") or []
    if errors:
        out += ["Disagreements (fitted):", ""]
        out += table(
            ["sentence", "card", "label"],
            [[e["sentence"], e["card_id"], e["label"]] for e in errors[:15]],
        )
        out.append("")
    return out


def _retrieval(retrieval: dict[str, Any]) -> list[str]:
    if not retrieval:
        return []
    rows = [
        [
            path,
            s.get("label"),
            s.get("ndcg@10"),
            s.get("recall@10"),
            s.get("mrr"),
            s.get("questions"),
        ]
        for path, s in retrieval.items()
    ]
    return [
        "## Retrieval (per path)",
        "",
        *table(["path", "ran as", "nDCG@10", "recall@10", "MRR", "questions"], rows),
        "",
    ]


def _citations(c: dict[str, Any]) -> list[str]:
    if not c:
        return []
    keys = [
        "citation_recall",
        "citation_precision",
        "sentences",
        "supported_sentences",
        "citations",
        "relevant_citations",
        "uncited_sentences",
        "unresolved_markers",
    ]
    return [
        "## Citation quality (ALCE-style, stored answers)",
        "",
        *table(["metric", "value"], [[k, c.get(k)] for k in keys]),
        "",
    ]


def _citations_by_generator(by_gen: dict[str, Any]) -> list[str]:
    if len(by_gen) < 2:
        return []
    return [
        "Same scorer per generator (the adversary replays a small stratified sample):",
        "",
        *table(
            ["generator", "citation recall", "citation precision", "claims", "unresolved markers"],
            [
                [
                    g,
                    c.get("citation_recall"),
                    c.get("citation_precision"),
                    c.get("sentences"),
                    c.get("unresolved_markers"),
                ]
                for g, c in by_gen.items()
            ],
        ),
        "",
    ]


def _dangling(report: dict[str, Any]) -> list[str]:
    d = report.get("dangling") or {}
    if not d:
        return []
    detector = d.get("detector") or {}
    out = [
        "## Dangling references in member prose",
        "",
        "Share of member answers (`answer` of `POST /api/v1/chat`) with text that points at a "
        f"source the member cannot see. Threshold {cell(d.get('threshold'))}: a shipped "
        "generator above it fails; the attacker must be above it; a real model is reported.",
        "",
        *table(*report_tables.dangling_generators(report)),
        "",
        f"Detector against {detector.get('labels')} hand-labelled answers "
        "(`kb/eval/dangling_labels.jsonl`; `dev` read before the detector was written, "
        "`holdout` labelled after and never used to change it):",
        "",
        *table(*report_tables.dangling_detector(report)),
        "",
    ]
    errors = detector.get("errors") or []
    if errors:
        out += table(
            ["set", "generator", "question", "error", "detail"],
            [[e["set"], e["generator"], e["question"], e["error"], e["detail"]] for e in errors],
        )
        out.append("")
    examples = report_tables.dangling_examples(report)
    if examples[1]:
        out += ["Flagged answers (up to five per generator):", "", *table(*examples), ""]
    return out


def _redteam(report: dict[str, Any]) -> list[str]:
    rows = report.get("redteam") or []
    if not rows:
        return []
    cases = report.get("redteam_cases") or {}
    out = [
        "## Red-team gate",
        "",
        f"{sum(cases.values())} cases ({cases.get('direct', 0)} direct, "
        f"{cases.get('indirect', 0)} indirect) per generator, plus the access probes. "
        "Links and markup a model wrote reach members as plain text (`defanged` counts them).",
        "",
        *table(*report_tables.redteam(report)),
        "",
    ]
    return out


def _baseline(report: dict[str, Any]) -> list[str]:
    comps = report.get("comparisons") or []
    out = ["## Baseline comparison", ""]
    if report.get("baseline_note"):
        out += [report["baseline_note"], ""]
    if comps:
        out += table(*report_tables.baseline(report))
        out.append("")
    return out


def _answers(answers: dict[str, Any]) -> list[str]:
    if not answers:
        return []
    judge = answers.get("nugget_judge") or {}
    loo = judge.get("leave_one_out") or {}
    out = [
        "## Answer quality",
        "",
        "Nugget recall: the share of the questions' gold facts the member's answer states (an "
        "abstained answer states none). Off-topic rate: the share of answer sentences no gold "
        "card supports. Control: each answer scored against another question (must score "
        "badly). First sentence: of the answers whose top-ranked card is a gold card, the share "
        "whose first sentence cites a gold card (control: the first sentence taken from the "
        "lowest-ranked card). Recall counts the nuggets a member may be told; a staff-only "
        "nugget (stated only in a playbook's staff notes) that an answer states is a leak.",
        "",
        f"Nugget judge vs {judge.get('labels', 0)} hand labels: leave-one-out accuracy "
        f"{loo.get('accuracy', 0):.3f}, kappa {loo.get('kappa', 0):.3f} "
        f"(thresholds {judge.get('thresholds')}).",
        "",
    ]
    rows = []
    for name, r in (answers.get("generators") or {}).items():
        c = r.get("control") or {}
        opening = r.get("first_sentence") or {}
        opening_control = r.get("first_sentence_control") or {}
        rows.append(
            [
                name,
                r["answers"],
                f"{r['nugget_recall']:.3f}",
                f"{c.get('nugget_recall', 0):.3f}",
                f"{r['off_topic_rate']:.3f}",
                f"{c.get('off_topic_rate', 0):.3f}",
                r["sentences"],
                f"{opening.get('rate', 0):.3f} of {opening.get('eligible', 0)}",
                f"{opening_control.get('rate', 0):.3f}",
                f"{r.get('staff_nuggets_leaked', 0)} of {r.get('staff_nuggets', 0)}",
            ]
        )
    out += table(
        [
            "generator",
            "answers",
            "nugget recall",
            "control",
            "off-topic rate",
            "control",
            "sentences",
            "first sentence from gold",
            "control",
            "staff-only nuggets stated",
        ],
        rows,
    )
    return [*out, ""]


def _answering(answering: dict[str, Any]) -> list[str]:
    if not answering:
        return []
    out = ["## Abstention and follow-ups", ""]
    a, c = answering.get("abstention") or {}, answering.get("abstention_control") or {}
    tuned = answering.get("tuned_on_dev") or {}
    if a:
        out += table(
            ["server", "not_found recall (unanswerable)", "by kind", "answered rate (answerable)"],
            [
                [
                    "configured",
                    f"{a['not_found_recall']:.3f} of {a['unanswerable']}",
                    a["not_found_recall_by_kind"],
                    f"{a['answered_rate']:.3f} of {a['answerable']}",
                ],
                [
                    "control: abstention off",
                    f"{c.get('not_found_recall', 0):.3f}",
                    c.get("not_found_recall_by_kind"),
                    "",
                ],
            ],
        )
        decisions = answering.get("abstention_decision") or {}
        if decisions:
            out += [
                "",
                "The answerability decision alone, before (the settings' fixed thresholds) and "
                "after (the calibration fitted on the KB at ingest), on the same contexts:",
                "",
            ]
            out += table(
                ["decision", "not_found recall", "by kind", "answered rate"],
                [
                    [
                        name,
                        f"{d['not_found_recall']:.3f} of {d['unanswerable']}",
                        d["not_found_recall_by_kind"],
                        f"{d['answered_rate']:.3f} of {d['answerable']}",
                    ]
                    for name, d in decisions.items()
                ],
            )
        in_use = tuned.get("in_use") or {}
        out += [
            "",
            f"Decision in use: {in_use.get('source')}, thresholds {in_use.get('thresholds')}.",
            f"Tuned on dev: min_dense {tuned.get('min_dense')}, min_coverage "
            f"{tuned.get('min_coverage')} (dev not_found recall {tuned.get('dev_not_found_recall')}"
            f" at answered rate {tuned.get('dev_answered_rate')}); configured "
            f"{tuned.get('configured')}; signal AUC on dev {tuned.get('dev_signal_auc')}.",
            "",
        ]
    small = answering.get("small_talk") or {}
    if small:
        out += [
            f"Small talk: {small['small_talk_without_sources']} of {small['messages']} messages "
            "got a small_talk reply without sources.",
            "",
        ]
    f = answering.get("followups") or {}
    if f:
        rows = [
            ("first question, alone", "first"),
            ("follow-up, alone", "alone"),
            ("follow-up, with the conversation", "context"),
            ("control: with another conversation", "control"),
            ("topic switch, alone", "switch_alone"),
            ("topic switch, with the conversation", "switch_context"),
        ]
        out += table(
            ["follow-up retrieval", "nDCG@10", "recall@5"],
            [
                [label, f"{f[f'{key}_ndcg']:.3f}", f"{f.get(f'{key}_recall5', float('nan')):.3f}"]
                for label, key in rows
            ],
        )
        out += [
            "",
            f"{f['followups']} follow-ups, {f['switches']} switches; with context / first "
            f"question: {f['context_vs_first']}; with context - alone: "
            f"{f['context_minus_alone']}; condensation: {f['condense_methods']}.",
            "",
        ]
    return out


def _protection(protection: dict[str, Any]) -> list[str]:
    if not protection:
        return []
    on, off = protection["protected"], protection["unprotected"]
    delta, within = protection["delta"], protection["within"]
    rows = [
        [name, f"{on[name]:.3f}", f"{off[name]:.3f}", f"{delta[name]:+.3f}", "yes" if ok else "NO"]
        for name, ok in within.items()
    ]
    return [
        "## What corpus protection costs",
        "",
        "The split replayed with the verbatim cap on internal text (as configured) and off.",
        "",
        *table(
            [
                "figure",
                "protected",
                "unprotected",
                "difference",
                f"within {protection['max_cost']}",
            ],
            rows,
        ),
        "",
    ]
