"""A simulated honest workload: does the exposure budget ever stop a member doing their job?

**The members** (``focused``). Each of ``members`` simulated members works in one product area
(60%) or two (40%): labels, returns, refunds, billing and so on, the area of a card being the
second part of its id (``pb-refunds-...``, ``help-refunds-...``). Every simulated day, for
``days`` days in a row (weekends too), a member asks 3 to 8 items during working hours
(09:00-17:00 UTC), each a labelled question (``kb/eval/questions.*.jsonl``) or a labelled
follow-up conversation (``kb/eval/followups.*.jsonl``: two questions in one conversation, the
second a minute after the first). Each pick re-asks one of the member's earlier items with
probability ``REASK``; otherwise it is an item of the member's own areas (by its gold cards'
areas) with probability ``HOME``, and any item otherwise. The **stress** variant
(``uniform``) drops the areas and the re-asking: every pick is uniform over all items, as if
every member worked on everything.

**The replay.** Answering every turn through the app would take hours of wall time, so each
distinct item is answered once through the real app (a member token, the default cap, no
budget) and its exposure rows are read back; each member's turns are then replayed in
simulated time with the server's budget rule (``budget.replay_budget``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from citewall_evals.extraction.budget import ReplayTurn
from citewall_evals.questions import labelled_split
from citewall_evals.retrieval.followups import load_followups

Model = Literal["focused", "uniform"]
#: Probability that a pick re-asks one of the member's earlier items.
REASK = 0.15
#: Probability that a new pick comes from the member's own areas.
HOME = 0.85
#: Share of members who work in two areas rather than one.
TWO_AREAS = 0.4
#: Items (a question, or a follow-up conversation) a member asks per day.
PER_DAY = (3, 8)
WORK_START_H, WORK_END_H = 9, 17
#: Gap between a follow-up conversation's two questions.
FOLLOWUP_GAP = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class HonestItem:
    """What a member asks in one go: one question, or a question and its follow-up (asked in
    one conversation)."""

    id: str
    turns: tuple[str, ...]
    areas: frozenset[str]


def area(card_id: str) -> str:
    """The product area of a card: the second part of its id.

    >>> area("pb-refunds-goodwill-credits"), area("help-labels-void-label")
    ('refunds', 'labels')
    """
    parts = card_id.split("-")
    return parts[1] if len(parts) > 1 else parts[0]


def honest_items(splits: Sequence[str]) -> list[HonestItem]:
    """Every labelled question (with gold cards) and follow-up conversation of ``splits``."""
    items: list[HonestItem] = []
    for split in splits:
        for q in labelled_split(split):
            items.append(HonestItem(f"{split}:{q.id}", (q.question,), _areas(q.gold)))
        for f in load_followups(split):
            turns = (f.first, f.followup)
            items.append(HonestItem(f"{split}:{f.id}", turns, _areas((*f.first_gold, *f.gold))))
    return items


def _areas(card_ids: Sequence[str]) -> frozenset[str]:
    return frozenset(area(c) for c in card_ids)


@dataclass(slots=True)
class MemberPlan:
    """One simulated member: their areas and their asks, in time order."""

    name: str
    areas: frozenset[str]
    #: (when, item id) per item asked; a follow-up item's second turn is ``FOLLOWUP_GAP`` later.
    asks: list[tuple[datetime, str]] = field(default_factory=list)


def plan_members(
    items: Sequence[HonestItem],
    *,
    members: int,
    days: int,
    start: datetime,
    model: Model,
    seed: int = 0,
) -> list[MemberPlan]:
    """The workload: ``members`` plans over ``days`` days from ``start`` (a day's first
    moment is ``start``'s date at 00:00 of the same timezone)."""
    all_areas = sorted({a for item in items for a in item.areas})
    day0 = start.replace(hour=0, minute=0, second=0, microsecond=0)
    plans: list[MemberPlan] = []
    for m in range(members):
        rng = random.Random(f"honest:{model}:{seed}:{m}")
        k = 2 if rng.random() < TWO_AREAS else 1
        areas = frozenset(rng.sample(all_areas, k)) if model == "focused" else frozenset()
        home = [item for item in items if item.areas & areas]
        plan = MemberPlan(f"member-{m + 1:02d}", areas)
        asked: list[str] = []
        for d in range(days):
            picks = [_pick(rng, model, items, home, asked) for _ in range(rng.randint(*PER_DAY))]
            asked.extend(picks)
            minutes = sorted(
                rng.randrange(WORK_START_H * 60, WORK_END_H * 60) for _ in range(len(picks))
            )
            for minute, item_id in zip(minutes, picks, strict=True):
                plan.asks.append((day0 + timedelta(days=d, minutes=minute), item_id))
        plans.append(plan)
    return plans


def _pick(
    rng: random.Random,
    model: Model,
    items: Sequence[HonestItem],
    home: Sequence[HonestItem],
    asked: Sequence[str],
) -> str:
    if model == "uniform":
        return rng.choice(items).id
    if asked and rng.random() < REASK:
        return rng.choice(asked)
    pool = home if home and rng.random() < HOME else items
    return rng.choice(pool).id


def member_turns(
    plan: MemberPlan, exposures: Mapping[str, Sequence[frozenset[str]]]
) -> list[ReplayTurn]:
    """A member's turns for the replay: each ask's turns, with the exposures its answers had
    (``exposures``: item id -> per turn, the internal cards exposed)."""
    out: list[ReplayTurn] = []
    for at, item_id in plan.asks:
        for n, cards in enumerate(exposures[item_id]):
            out.append(ReplayTurn(at + n * FOLLOWUP_GAP, cards))
    return out
