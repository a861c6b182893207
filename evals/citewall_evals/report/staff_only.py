"""The report's staff-only tables: the detector beside its random control, and staff-only
sentences in member prose beside the check-off and passthrough controls (as
``report.tables`` tables, for any renderer)."""

from __future__ import annotations

from typing import Any

from citewall_evals.report.tables import Table


def detector_table(staff: dict[str, Any]) -> Table:
    """Precision and recall of the detector and of the random control."""
    d, control = staff["detector"], staff["detector"]["control"]
    return (
        ["detector", "flagged", "precision", "recall"],
        [
            ["staff-only detector", d["flagged"], d["precision"], d["recall"]],
            [
                "random, same rate (control)",
                control["flagged"],
                control["precision"],
                control["recall"],
            ],
        ],
    )


def prose_table(staff: dict[str, Any]) -> Table:
    """Member-prose sentences repeating a labelled staff-only sentence, per replay and for the
    labelled sentences served through the check on and off."""
    through = staff["passthrough"]
    rows = [[name, r["answers"], r["sentences"], r["leaked"]] for name, r in staff["prose"].items()]
    for label, key in (
        ("labelled sentences, check on", "check_on"),
        ("labelled sentences, check off (control)", "check_off"),
    ):
        r = through[key]
        rows.append([label, r["answers"], r["sentences"], r["leaked"]])
    return ["member prose", "answers", "sentences", "staff-only sentences"], rows


def summary(staff: dict[str, Any]) -> str:
    d = staff["detector"]
    return (
        f"The detector on the `{d['split']}` split of `kb/eval/staff_labels.jsonl` "
        f"({d['labelled']} sentences, {d['staff_only']} staff-only); public card sentences "
        f"flagged: {d['public_flagged']} of {d['public_sentences']}; internal-only vocabulary: "
        f"{len(staff['vocabulary'])} names and codes."
    )
