"""The citation model (the stored source is ``storage.sources.StoredSource``).

JSON shape of a citation (the three enrichment fields are omitted when absent)::

    {"card_id": "billing-refunds", "span": "Refunds take 5 days [1].",
     "source_url": "https://help.example/refunds", "source_license": "CC-BY-4.0",
     "retrieved_score": 87.0}

``Citation(card_id="x")`` alone is valid and serialises as ``{"card_id": "x"}``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_serializer


class Citation(BaseModel):
    """A card-level citation reconciled from the model's ``[n]`` markers.

    ``source_url``, ``source_license`` and ``retrieved_score`` are set only by server-side
    enrichment from verified KB metadata (never from model text). ``retrieved_score`` is
    ``round(100 * sigmoid(rerank_logit))`` and present only on the ``full`` hybrid path.
    ``attributed`` marks citations added by post-hoc attribution (the model wrote no markers).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    card_id: str = Field(min_length=1)
    span: str | None = None
    source_url: str | None = None
    source_license: str | None = None
    retrieved_score: float | None = Field(default=None, ge=0.0, le=100.0)
    attributed: bool = False

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("span", "source_url", "source_license", "retrieved_score"):
            if data.get(key) is None:
                data.pop(key, None)
        if not data.get("attributed"):
            data.pop("attributed", None)
        return data
