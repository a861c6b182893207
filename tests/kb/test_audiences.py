"""The audience rule: group names, and what a viewer may retrieve (property-tested)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citewall.kb.audiences import (
    EVERY_CARD,
    CardFilter,
    Viewer,
    audience_names,
    audience_problem,
    retrievable_for,
)
from citewall.kb.card import Card

names = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,10}", fullmatch=True)
groups = st.frozensets(names, max_size=4)


@given(viewer_groups=groups, card=groups)
def test_a_member_may_retrieve_an_open_card_or_one_sharing_a_group(
    viewer_groups: frozenset[str], card: frozenset[str]
) -> None:
    allowed = retrievable_for(Viewer.member(viewer_groups)).allows(card)
    assert allowed == (not card or bool(card & viewer_groups))


@given(card=groups)
def test_staff_retrieve_every_card(card: frozenset[str]) -> None:
    assert retrievable_for(Viewer.staff()).allows(card) and EVERY_CARD.allows(card)


@given(card=groups.filter(bool))
def test_a_member_in_no_group_never_retrieves_a_restricted_card(card: frozenset[str]) -> None:
    assert not retrievable_for(Viewer()).allows(card)


@given(st.lists(names, max_size=6))
def test_names_come_back_sorted_and_unique(raw: list[str]) -> None:
    assert audience_names(raw) == tuple(sorted(set(raw)))


@pytest.mark.parametrize("bad", ["", "Enterprise", "has space", "-x", "a" * 65, 3, None, "é"])
def test_a_bad_group_name_is_named(bad: object) -> None:
    problem = audience_problem(bad)
    assert problem is not None and repr(bad) in problem


def test_a_card_keeps_its_audiences_apart_from_its_visibility() -> None:
    open_card = Card(id="a", title="A", body="b")
    restricted = Card(id="a", title="A", body="b", audiences=["partners", "enterprise"])
    assert restricted.audiences == ("enterprise", "partners") and not restricted.is_external
    assert restricted.full_metadata()["audiences"] == ["enterprise", "partners"]
    # A card without audiences hashes as before they existed; with them, differently.
    assert "audiences" not in open_card.full_metadata()
    assert open_card.content_hash() != restricted.content_hash()
    with pytest.raises(ValueError, match="not a group name"):
        Card(id="a", title="A", body="b", audiences=["Bad Name"])
    with pytest.raises(ValueError, match="reserved"):
        Card(id="a", title="A", body="b", metadata={"audiences": ["x"]})


def test_filter_of_several_groups() -> None:
    f = CardFilter(frozenset({"a", "b"}))
    assert f.allows(["b", "z"]) and not f.allows(["z"]) and f.allows([])
