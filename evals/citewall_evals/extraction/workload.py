"""The honest workload measured: capture each item's exposures once, replay every member.

``capture_exposures`` asks every distinct item once through the real app as one member (the
defences as configured but no budget, so nothing is restricted while capturing) and reads back
the exposure rows the server wrote for each turn. ``honest_outcomes`` then replays each
member's plan (``honest.plan_members``) with the server's budget rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from fastapi.testclient import TestClient

from citewall.api.app import create_app
from citewall.chat.corpus_protection import Budget
from citewall_evals.extraction.attack import Defences, new_member, protected_runtime
from citewall_evals.extraction.budget import replay_budget
from citewall_evals.extraction.clock import FakeClock
from citewall_evals.extraction.honest import HonestItem, MemberPlan, member_turns
from citewall_evals.extraction.stored import stored_answers
from citewall_evals.workspace import EvalWorkspace

#: Simulated seconds between two captured items (the capture member has no budget; the gap
#: only keeps timestamps apart).
CAPTURE_GAP_S = 60.0
#: A budget no member reaches: the replay without a budget.
UNLIMITED = 10**9


@dataclass(slots=True)
class Captured:
    """Item id -> per turn, the internal cards its answer exposed; and the capture's cards."""

    exposures: dict[str, list[frozenset[str]]] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)

    @property
    def cards(self) -> frozenset[str]:
        return frozenset(c for turns in self.exposures.values() for cards in turns for c in cards)


def capture_exposures(
    ws: EvalWorkspace, items: Sequence[HonestItem], defences: Defences, name: str
) -> Captured:
    """Ask each item once (its turns in one conversation) as a new member with ``defences``
    but no budget; the exposure rows of each turn's answer."""
    no_budget = dataclasses.replace(defences, exposure_budget_cards=0, rate_limit_per_minute=0)
    user_id, token = new_member(ws, name)
    clock = FakeClock()
    headers = {"Authorization": f"Bearer {token}"}
    messages: dict[str, list[str]] = {}
    out = Captured()
    app = create_app(protected_runtime(ws, no_budget, clock))
    with TestClient(app, raise_server_exceptions=False) as client:
        for item in items:
            conversation: str | None = None
            ids: list[str] = []
            for question in item.turns:
                body = {"message": question}
                if conversation is not None:
                    body["conversation_id"] = conversation
                resp = client.post("/api/v1/chat", json=body, headers=headers)
                if resp.status_code != 200:
                    out.failed.append(f"{item.id}: HTTP {resp.status_code}")
                    ids.append("")
                    continue
                data = resp.json()
                conversation = str(data["conversation_id"])
                ids.append(str(data["message_id"]))
            messages[item.id] = ids
            clock.advance(CAPTURE_GAP_S)
    stored = stored_answers(ws.runtime.session_factory, user_id)
    for item_id, ids in messages.items():
        out.exposures[item_id] = [stored[m].exposed if m in stored else frozenset() for m in ids]
    return out


def honest_outcomes(
    plans: Sequence[MemberPlan], captured: Captured, budget: Budget
) -> dict[str, Any]:
    """Each member replayed with ``budget``: restricted turns, and the peak number of distinct
    internal cards within one window, with the budget and without one (the demand: what the
    member's work draws on when nothing stops it)."""
    members: list[dict[str, Any]] = []
    unlimited = Budget(cards=UNLIMITED, window=budget.window)
    for plan in plans:
        turns = member_turns(plan, captured.exposures)
        outcome = replay_budget(turns, budget)
        members.append(
            {
                "member": plan.name,
                "areas": sorted(plan.areas),
                "turns": len(outcome.restricted),
                "distinct_items": len({item for _, item in plan.asks}),
                "peak_cards_in_window": outcome.peak,
                "demand_peak": replay_budget(turns, unlimited).peak,
                "restricted_turns": sum(outcome.restricted),
                "first_restricted_turn": outcome.first_restricted,
            }
        )
    peaks = [m["peak_cards_in_window"] for m in members]
    demand = [m["demand_peak"] for m in members]
    return {
        "members": len(members),
        "turns": sum(m["turns"] for m in members),
        "members_restricted": sum(1 for m in members if m["restricted_turns"]),
        "restricted_turns": sum(m["restricted_turns"] for m in members),
        "peak_max": max(peaks, default=0),
        "peak_median": median(peaks) if peaks else 0,
        "demand_peak_max": max(demand, default=0),
        "demand_peak_median": median(demand) if demand else 0,
        "per_member": members,
    }
