"""The staff-only figures of ``citewall eval``: the detector on its held-out labels, and the
staff-only sentences in the replayed member answers, each with its control
(``quality.staff_only``).

The check-off control answers the replayed questions again through the real app with
``CITEWALL_STAFF_ONLY_CHECK=false`` (``unchecked_app``); everything else reads the replays the
run already made.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient

from citewall.api.app import create_app
from citewall.citations.sentences import split_sentences
from citewall_evals.data import DEMO_CARDS
from citewall_evals.member_answers import MemberAnswer, ask_as_member
from citewall_evals.quality.replay import ReplayResult
from citewall_evals.quality.staff_only import (
    count_leaks,
    load_staff_labels,
    passthrough,
    score_detector,
)
from citewall_evals.questions import Asked
from citewall_evals.redteam.catalogue import load_cards
from citewall_evals.workspace import EvalWorkspace

#: The replay of the control app, beside ``extractive``.
UNCHECKED = "extractive-unchecked"


def unchecked_app(ws: EvalWorkspace) -> FastAPI:
    """The real app over ``ws`` with the staff-only check off."""
    settings = ws.settings.model_copy(update={"staff_only_check": False})
    return create_app(dataclasses.replace(ws.runtime, settings=settings))


def _prose(answers: Sequence[MemberAnswer]) -> list[str]:
    return [a.answer for a in answers if a.ok and a.answer_status == "answered"]


def staff_only_figures(
    ws: EvalWorkspace,
    replays: Mapping[str, ReplayResult],
    replay_set: Sequence[Asked],
    say: Callable[[str], None],
) -> dict[str, Any]:
    """The detector's precision and recall with its random control, and the staff-only
    sentences in each replay's member prose, with the check-off and passthrough controls."""
    labels = load_staff_labels()
    vocabulary = ws.runtime.staff_vocabulary()
    cards = load_cards([DEMO_CARDS])
    public = [s for card in cards if card.is_external for s in split_sentences(card.body)]
    replies = {card.id: card.reply for card in cards if card.reply}
    staff = [lab for lab in labels if lab.staff_only]
    say(f"staff-only check: {len(replay_set)} questions again with the check off (control)")
    with TestClient(unchecked_app(ws), raise_server_exceptions=False) as client:
        unchecked = ask_as_member(client, replay_set, ws.tokens.member, UNCHECKED, ws.asked)
    prose = {name: count_leaks(_prose(r.answers), staff, replies) for name, r in replays.items()}
    prose[UNCHECKED] = count_leaks(_prose(unchecked), staff, replies)
    return {
        "detector": score_detector(labels, vocabulary, public),
        "vocabulary": sorted(vocabulary.internal),
        "prose": {name: count.as_dict() for name, count in prose.items()},
        "passthrough": {
            "check_on": passthrough(labels, vocabulary).as_dict(),
            "check_off": passthrough(labels, None).as_dict(),
        },
    }
