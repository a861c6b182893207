"""What corpus protection costs honest members (docs/distillation.md).

The labelled split is replayed twice through the real app: as configured (the verbatim cap on
internal text on), and with the protection off (``unprotected_app``: no cap, no budget). The
same scorers read both replays; the report compares nugget recall, the off-topic rate, citation
recall and precision and the answered rate. The exposure budget is not in this comparison: one
member asking every question of the split is not an honest workload (``citewall eval
extraction`` simulates one).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI

from citewall.api.app import create_app
from citewall.generation.factory import build_condenser, build_generator
from citewall_evals.member_answers import MemberAnswer
from citewall_evals.quality.citations import CitationCounts
from citewall_evals.workspace import EvalWorkspace

#: The replay of the control app, beside ``extractive``.
UNPROTECTED = "extractive-unprotected"
#: The largest change of a quality figure the protection may cause (the issue's target).
MAX_COST = 0.02


def unprotected_app(ws: EvalWorkspace) -> FastAPI:
    """The real app over ``ws`` with the verbatim cap and the exposure budget off."""
    settings = ws.settings.model_copy(
        update={"max_internal_sentences": 0, "exposure_budget_cards": 0}
    )
    generator = build_generator(settings, ws.embedder)
    runtime = dataclasses.replace(
        ws.runtime,
        settings=settings,
        generator=generator,
        condenser=build_condenser(settings, generator),
    )
    return create_app(runtime)


def answered_rate(answers: Sequence[MemberAnswer]) -> float:
    served = [a for a in answers if a.ok]
    return sum(a.answer_status == "answered" for a in served) / len(served) if served else 0.0


def _figures(
    quality: Mapping[str, Any], citations: CitationCounts, answered: float
) -> dict[str, float]:
    return {
        "nugget_recall": float(quality.get("nugget_recall", 0.0)),
        "off_topic_rate": float(quality.get("off_topic_rate", 0.0)),
        "citation_recall": citations.recall,
        "citation_precision": citations.precision,
        "answered_rate": round(answered, 4),
    }


def protection_cost(
    quality: Mapping[str, Mapping[str, Any]],
    citations: Mapping[str, CitationCounts],
    answered: Mapping[str, float],
    protected: str = "extractive",
) -> dict[str, Any]:
    """Protected and unprotected figures, their differences, and whether each difference is
    within ``MAX_COST``."""
    on = _figures(quality[protected], citations[protected], answered[protected])
    off = _figures(quality[UNPROTECTED], citations[UNPROTECTED], answered[UNPROTECTED])
    delta = {k: round(on[k] - off[k], 4) for k in on}
    # Worse is lower for every figure but the off-topic rate.
    cost = {k: (d if k == "off_topic_rate" else -d) for k, d in delta.items()}
    return {
        "protected": on,
        "unprotected": off,
        "delta": delta,
        "max_cost": MAX_COST,
        "within": {k: c <= MAX_COST for k, c in cost.items()},
    }
