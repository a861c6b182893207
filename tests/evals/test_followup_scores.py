"""Follow-up retrieval scores over a retriever that ranks the cards a query names: the product's
rule merges a follow-up with its own conversation (recall@5 up), the control with another one
(down), and a topic switch is left alone."""

from __future__ import annotations

from typing import Any

from citewall.generation.followup import RuleCondenser
from citewall.kb.audiences import CardFilter
from citewall.retrieval.types import ContextChunk, RetrievedContext
from citewall_evals.retrieval.followups import FollowUp, score_followups


class NamingRetriever:
    """Ranks, in order, the words of the query that are card ids."""

    def retrieve(
        self, question: str, k: int | None = None, *, cards: CardFilter
    ) -> RetrievedContext:
        ids = [w.strip("?,.") for w in question.split() if w.startswith("card-")]
        return RetrievedContext(chunks=[ContextChunk(id=i, text=i) for i in dict.fromkeys(ids)])

    def status(self) -> dict[str, Any]:
        return {}


ITEMS = [
    FollowUp(
        "f1", "how do I use card-a", ("card-a",), "does it cost anything?", ("card-a",), "followup"
    ),
    FollowUp("f2", "what is card-b for", ("card-b",), "and for teams?", ("card-b",), "followup"),
    FollowUp(
        "f3",
        "tell me about card-c",
        ("card-c",),
        "unrelated, where is card-d",
        ("card-d",),
        "switch",
    ),
]


def test_the_rule_recovers_the_conversation_and_the_control_does_not() -> None:
    scores = score_followups(NamingRetriever(), RuleCondenser(), ITEMS).as_dict()
    assert (scores["followups"], scores["switches"]) == (2, 1)
    assert scores["alone_recall5"] == 0.0 and scores["context_recall5"] == 1.0
    assert scores["control_recall5"] == 0.0
    assert scores["switch_alone_recall5"] == scores["switch_context_recall5"] == 1.0
    assert scores["condense_methods"] == {"rule": 2, "standalone": 1}
