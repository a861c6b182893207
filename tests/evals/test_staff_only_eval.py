"""The staff-only figures of ``citewall eval`` without the app: the detector against the
held-out labels with the demo KB's vocabulary (as the runtime derives it from the catalogue),
its random control, the leak count and its passthrough control."""

from __future__ import annotations

import json

import pytest

from citewall.boundary.staff_only import judge, staff_vocabulary
from citewall.citations.sentences import split_sentences
from citewall_evals.data import DEMO_CARDS, REPO_ROOT
from citewall_evals.quality.staff_only import (
    StaffLabel,
    count_leaks,
    load_staff_labels,
    passthrough,
    random_flags,
    score_detector,
)
from citewall_evals.redteam.catalogue import load_cards
from citewall_evals.report.results import control_failures

EVALS = REPO_ROOT / "evals"
CARDS = load_cards([DEMO_CARDS])
VOCABULARY = staff_vocabulary(
    [f"{c.title}\n{c.body}" for c in CARDS if not c.is_external],
    [f"{c.title}\n{c.body}" for c in CARDS if c.is_external],
)
PUBLIC = [s for c in CARDS if c.is_external for s in split_sentences(c.body)]


def test_the_detector_beats_its_random_control_on_the_test_split() -> None:
    figures = score_detector(load_staff_labels(), VOCABULARY, PUBLIC)
    assert figures["labelled"] >= 150
    assert figures["precision"] >= 0.9 and figures["recall"] >= 0.75
    control = figures["control"]
    assert control["flagged"] == figures["flagged"]
    assert control["precision"] < figures["precision"] - 0.2
    assert figures["public_flagged"] <= len(PUBLIC) // 100


def test_random_flags_flag_exactly_that_many() -> None:
    assert sum(random_flags(100, 37)) == 37
    assert random_flags(10, 3) == random_flags(10, 3)


def staff_label(card_id: str, sentence: str) -> StaffLabel:
    return StaffLabel(card_id, sentence, staff_only=True, split="test")


def test_leaks_count_whole_and_near_copies_only() -> None:
    staff = [
        staff_label("pb", "Escalate to Tier 2 with the order number and the time of the attempt.")
    ]
    counted = count_leaks(
        [
            "Refunds take 5 days. Escalate to Tier 2 with the order number and the time.",
            "Refunds take 5 days.",
        ],
        staff,
    )
    assert (counted.answers, counted.sentences, counted.leaked) == (2, 3, 1)


def test_a_sentence_of_the_playbooks_reply_is_no_leak_even_when_close_to_its_staff_note() -> None:
    """The demo's label-purchase playbook: its reply says, for the member, what its staff note
    says for staff, in close words."""
    card = next(c for c in CARDS if c.id == "pb-labels-label-purchase-stuck")
    assert card.reply is not None
    said = next(s for s in split_sentences(card.reply) if "order number" in s)
    staff = [
        lab
        for lab in load_staff_labels()
        if lab.card_id == card.id and lab.staff_only and "Tier 2" in lab.sentence
    ]
    assert count_leaks([said], staff).leaked == 1  # close to the staff note
    assert count_leaks([said], staff, {card.id: card.reply}).leaked == 0
    # Only word for word, and only that playbook's reply: a paraphrase still counts, and so
    # does the same sentence near another playbook's staff note.
    assert (
        count_leaks([said.replace("send us", "give us")], staff, {card.id: card.reply}).leaked == 1
    )
    elsewhere = [staff_label("pb-other", lab.sentence) for lab in staff]
    assert count_leaks([said], elsewhere, {card.id: card.reply}).leaked == 1


def test_the_passthrough_control_fails_without_the_check() -> None:
    labels = load_staff_labels()
    off, on = passthrough(labels, None), passthrough(labels, VOCABULARY)
    assert off.leaked == off.sentences == sum(lab.staff_only for lab in labels)
    assert on.leaked < off.leaked * 0.2
    staff = {
        "detector": score_detector(labels, VOCABULARY, PUBLIC),
        "passthrough": {"check_on": on.as_dict(), "check_off": off.as_dict()},
    }
    assert control_failures({}, {}, staff) == []
    # A control that scores like the real thing is a failure of the run.
    broken = {**staff, "detector": {**staff["detector"], "control": staff["detector"]}}
    assert control_failures({}, {}, broken) == ["staff_only.detector.precision control"]


@pytest.mark.parametrize("corpus", ["zulip-help.jsonl", "fastapi-docs.jsonl"])
def test_real_help_centers_are_almost_never_flagged(corpus: str) -> None:
    """Two real help centers nobody on the project wrote: every card is public, so every
    sentence is member-safe; the detector (with the vocabulary such a KB gets) flags at most
    one in a thousand."""
    cards = [json.loads(line) for line in (EVALS / corpus).read_text().splitlines() if line]
    vocabulary = staff_vocabulary([], [f"{c.get('title', '')}\n{c['body']}" for c in cards])
    sentences = [s for c in cards for s in split_sentences(c["body"])]
    flagged = [s for s in sentences if judge(s, vocabulary).staff_only]
    assert len(sentences) > 5000
    assert len(flagged) <= len(sentences) // 1000, flagged
