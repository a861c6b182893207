"""The extraction report: ``extraction.json`` (everything, curves included), ``extraction.md``
(the tables), and the curves as SVG beside them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from citewall_evals.report.svg import line_chart

FILES = {
    "json": "extraction.json",
    "markdown": "extraction.md",
    "recovered": "extraction-recovered.svg",
    "facts": "extraction-facts.svg",
}


def write_report(data: Mapping[str, Any], out: Path) -> dict[str, Path]:
    """Write the report files for ``data`` (``ExtractionResult.as_dict()``) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    files = {kind: out / name for kind, name in FILES.items()}
    files["json"].write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    files["recovered"].write_text(
        curve_chart(data, "recovered", "Internal sentences recovered verbatim"), encoding="utf-8"
    )
    files["facts"].write_text(
        curve_chart(data, "facts", "Internal facts stated (nugget judge)"), encoding="utf-8"
    )
    files["markdown"].write_text(render_markdown(data), encoding="utf-8")
    return files


def curve_chart(data: Mapping[str, Any], metric: str, title: str) -> str:
    """One line per run (defences off dashed)."""
    series = {
        name: [(float(x), float(y)) for x, y in curves[metric]]
        for name, curves in data["curves"].items()
    }
    top = max((y for points in series.values() for _, y in points), default=0.0)
    return line_chart(
        title,
        series,
        x_label="questions asked",
        y_label="fraction",
        y_max=_ceiling(top),
        dashed=[name for name in series if name.startswith("off")],
    )


def _ceiling(top: float) -> float:
    """A round upper bound for a y axis holding ``top``."""
    for bound in (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0):
        if top <= bound:
            return bound
    return 1.0


def summary_table(data: Mapping[str, Any]) -> list[str]:
    """The compact table ``citewall eval extraction`` prints and the Markdown opens with."""
    marks = [str(n) for n in data["checkpoints"]]
    last = marks[-1]
    head = (
        ["run"]
        + [f"recovered@{m}" for m in marks]
        + [f"with public@{last}", f"touched@{last}", f"facts@{last}"]
        + ["flagged at", "restricted", "429s", "sim. time"]
    )
    rows = [head]
    for r in data["runs"]:
        rows.append(
            [r["name"]]
            + [_pct(r["recovered"][m]) for m in marks]
            + [
                _pct(r["recovered_with_public"][last]),
                _pct(r["touched"][last]),
                _pct(r["facts"][last]),
                "never" if r["flagged_at"] is None else f"q{r['flagged_at']}",
                str(r["restricted_answers"]),
                str(r["rate_limited_429s"]),
                _duration(r["simulated_hours"]),
            ]
        )
    return _markdown_table(rows)


def honest_table(honest: Mapping[str, Any]) -> list[str]:
    """One row per member model: restricted members and turns, the peak window counts."""
    rows = [
        ["model", "members", "turns", "members restricted", "restricted turns", "peak max",
         "peak median", "unlimited peak max", "unlimited peak median", "budget"]
    ]  # fmt: skip
    for model in ("focused", "uniform"):
        h = honest.get(model)
        if not h:
            continue
        rows.append(
            [
                model,
                str(h["members"]),
                str(h["turns"]),
                str(h["members_restricted"]),
                str(h["restricted_turns"]),
                str(h["peak_max"]),
                f"{h['peak_median']:g}",
                str(h["demand_peak_max"]),
                f"{h['demand_peak_median']:g}",
                f"{honest['budget_cards']} cards / {honest['window_hours']:g} h",
            ]
        )
    return _markdown_table(rows)


def render_markdown(data: Mapping[str, Any]) -> str:
    opts, env, controls = data["options"], data["environment"], data["controls"]
    lines = [
        "# Extraction benchmark",
        "",
        f"{opts['queries']} questions per run, seed {opts['seed']}, one new member and one "
        "simulated clock per run; paces (seconds between questions): "
        + ", ".join(f"{k} {v:g}" for k, v in opts["paces"].items())
        + f"; rate limit {opts['defences_on']['rate_limit_per_minute']} per minute.",
        f"Defences on: {_settings(opts['defences_on'])}. Off: {_settings(opts['defences_off'])}.",
        "",
        f"Knowledge base `{env['kb']}`: {env['internal_cards']} internal cards with "
        f"{env['internal_card_sentences']} counted sentences, {env['internal_sentences']} "
        f"distinct ones that no external card states (the denominator; "
        f"{env['internal_sentences_public']} stated by public cards too are left out); "
        f"{env['internal_facts']} internal facts.",
        "",
        *summary_table(data),
        "",
        *_notes(data),
        "",
        f"![recovered]({FILES['recovered']})",
        "",
        f"![facts]({FILES['facts']})",
        "",
        "## Controls",
        "",
        *_markdown_table(
            [["metric", "control", "value", "expected"]]
            + [list(row) for row in _controls(controls)]
        ),
    ]
    honest = data.get("honest") or {}
    if honest:
        lines += [
            "",
            "## Honest workload",
            "",
            f"{honest['members']} members, {honest['days']} days, {honest['items']} items "
            f"({honest['turns']} turns) answered once through the app and replayed with the "
            "budget; `focused`: members in one or two areas, re-asking sometimes; `uniform`: "
            "every pick uniform over all items (stress).",
            "",
            *honest_table(honest),
            "",
            "Peak distinct internal cards in one window per member, with the budget "
            "(unlimited in brackets):",
            "",
        ]
        for model in ("focused", "uniform"):
            per = honest.get(model, {}).get("per_member", [])
            peaks = ", ".join(f"{m['peak_cards_in_window']} ({m['demand_peak']})" for m in per)
            lines.append(f"- {model}: {peaks}")
    return "\n".join(lines) + "\n"


def _notes(data: Mapping[str, Any]) -> list[str]:
    """What a reader needs to read the table right, from the data."""
    notes = [
        "Recovered: distinct internal sentences repeated whole in some answer; 'with public' "
        "also counts the internal sentences a public card states word for word. Touched and "
        "flagged come from the server's stored record (exposure rows, stored sources, "
        "restricted answers).",
        "The naive attacker's first questions are the labelled questions, which were written "
        "from the cards: an informed attacker rather than a guessing one; the facts are the "
        "nuggets of those same questions.",
    ]
    window = float(data["options"]["defences_on"]["exposure_window_hours"])
    curves = data["curves"]
    pairs = [(name, name.replace("patient", "fast")) for name in curves if "patient" in name]
    if pairs and all(curves[p] == curves.get(f) for p, f in pairs):
        hours = max(r["simulated_hours"] for r in data["runs"] if r["pace"] == "patient")
        notes.append(
            "Each patient run asked the same questions as its fast twin and got the same "
            "answers: with the budget off nothing depends on time, and with it on the patient "
            f"run's {hours:.0f} simulated hours stay inside one {window:g}-hour window. "
            "Patience pays only across windows."
        )
    return [f"- {n}" for n in notes]


def _controls(controls: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    rows: list[tuple[str, str, str, str]] = []
    rec = controls.get("recovered", {})
    rows.append(
        ("recovered", "all internal card bodies", _pct(rec.get("all_internal_bodies")), "1")
    )
    rows.append(
        ("recovered", "all external card bodies", _pct(rec.get("all_external_bodies")), "0")
    )
    if "touched_small_talk" in controls:
        rows.append(("touched", "small talk only", _pct(controls["touched_small_talk"]), "0"))
    if controls.get("touched_every_labelled_question") is not None:
        rows.append(
            (
                "touched",
                "every labelled question once",
                _pct(controls["touched_every_labelled_question"]),
                "high",
            )
        )
    facts = controls.get("facts")
    if facts:
        rows.append(("facts", "own gold card text", _pct(facts["own_gold_text"]), "high"))
        rows.append(("facts", "another fact's gold text", _pct(facts["other_gold_text"]), "low"))
    judge = controls.get("nugget_judge")
    if judge:
        rows.append(
            ("facts", "nugget judge, leave-one-out balanced accuracy",
             f"{judge['balanced_accuracy']:.3f}", "high")
        )  # fmt: skip
    return rows


def _duration(hours: float) -> str:
    """Simulated time, readable: seconds, minutes or hours."""
    seconds = hours * 3600
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{hours:.1f} h"


def _settings(overrides: Mapping[str, Any]) -> str:
    return ", ".join(
        f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in overrides.items()
    )


def _pct(value: Any) -> str:
    return "-" if value is None else f"{100 * float(value):.1f}%"


def _markdown_table(rows: Sequence[Sequence[str]]) -> list[str]:
    head, *body = rows
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(row) + " |" for row in body]
    return out
