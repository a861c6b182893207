"""The admin exposure report over HTTP: members ranked, one member's drill-down, the budget in
force, admin only, 404 for an unknown user."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from builders import add_exposed_turn
from sqlalchemy import select

from citewall.storage.models import Exposure
from citewall.storage.users import create_user

from .conftest import INTERNAL_QUESTIONS, ApiEnv, KbFacts

#: A window of its own (the module's database is shared by its tests).
DAY = datetime(2031, 1, 6, 9, tzinfo=UTC)
WINDOW = {"since": DAY.isoformat(), "until": (DAY + timedelta(days=2)).isoformat()}
RANKING = "/api/v1/admin/analytics/exposure"


def get(env: ApiEnv, path: str, who: str = "admin", **params: Any) -> Any:
    r = env.client.get(path, params=params, headers=env.auth(who))
    assert r.status_code == 200, r.text
    return r.json()


@pytest.fixture(scope="module")
def exposed(env_both: ApiEnv, kb_facts: KbFacts) -> dict[str, Any]:
    """In the window: the member exposed to three internal cards over two days, then restricted;
    "other" to one card. Rows are written as a turn writes them."""
    cards = sorted(kb_facts.internal_ids)[:3]
    member, other = env_both.user_ids["member"], env_both.user_ids["other"]
    with env_both.runtime.session_factory() as session:
        first = add_exposed_turn(
            session,
            member,
            DAY,
            {cards[0]: (["a1", "a2"], 14), cards[1]: ([], 6)},
            question="how do we handle duplicate charges?",
        )
        second = add_exposed_turn(
            session, member, DAY + timedelta(days=1), {cards[2]: (["c1"], 11)}, question="and?"
        )
        restricted = add_exposed_turn(
            session,
            member,
            DAY + timedelta(days=1, hours=1),
            {},
            question="one more?",
            restricted="exposure_budget",
        )
        add_exposed_turn(session, other, DAY, {cards[0]: (["a1"], 9)})
    return {"cards": cards, "turns": [restricted, second, first]}


def test_members_ranked_with_the_budget_in_force(
    env_both: ApiEnv, kb_facts: KbFacts, exposed: dict[str, Any]
) -> None:
    report = get(env_both, RANKING, **WINDOW)
    settings = env_both.runtime.settings
    assert report["budget"] == {
        "cards": settings.exposure_budget_cards,
        "window_hours": settings.exposure_window_hours,
    }
    assert report["internal_cards"] == len(kb_facts.internal_ids)
    assert report["members_total"] == 2
    top, second = report["members"]
    assert top["user_id"] == str(env_both.user_ids["member"])
    assert second["user_id"] == str(env_both.user_ids["other"])
    assert (top["cards"], top["verbatim_sentences"], top["turns"], top["longest_span"]) == (
        3,
        3,
        2,
        14,
    )
    assert top["corpus_share"] == round(3 / len(kb_facts.internal_ids), 4)
    assert top["restricted_turns"] == 1
    assert datetime.fromisoformat(top["first_restricted"]) == DAY + timedelta(days=1, hours=1)
    assert datetime.fromisoformat(top["first_exposed"]) == DAY
    assert top["role"] == "member" and top["name"].startswith("member-")
    assert second["restricted_turns"] == 0 and second["first_restricted"] is None
    assert [m["user_id"] for m in get(env_both, RANKING, limit=1, **WINDOW)["members"]] == [
        top["user_id"]
    ]
    later = DAY + timedelta(days=3)
    empty = get(
        env_both, RANKING, since=later.isoformat(), until=(later + timedelta(1)).isoformat()
    )
    assert (empty["members"], empty["members_total"]) == ([], 0)


def test_member_drill_down_per_day_and_turns(env_both: ApiEnv, exposed: dict[str, Any]) -> None:
    member = env_both.user_ids["member"]
    report = get(env_both, f"{RANKING}/{member}", **WINDOW)
    assert report["member"]["cards"] == 3 and report["budget"]["cards"] >= 0
    assert report["days"] == [
        {
            "day": "2031-01-06",
            "cards": 2,
            "verbatim_sentences": 2,
            "turns": 1,
            "restricted_turns": 0,
        },
        {
            "day": "2031-01-07",
            "cards": 1,
            "verbatim_sentences": 1,
            "turns": 1,
            "restricted_turns": 1,
        },
    ]
    assert report["turns_total"] == 3
    turns = report["turns"]
    assert [t["message_id"] for t in turns] == exposed["turns"]
    assert [t["question"] for t in turns] == [
        "one more?",
        "and?",
        "how do we handle duplicate charges?",
    ]
    assert [t["restricted"] for t in turns] == ["exposure_budget", None, None]
    cards = exposed["cards"]
    assert [
        (c["card_id"], c["verbatim_sentences"], c["longest_span"]) for c in turns[2]["cards"]
    ] == [
        (cards[0], 2, 14),
        (cards[1], 0, 6),
    ]
    assert all(c["title"] for c in turns[2]["cards"])  # internal titles: admins see them
    page = get(env_both, f"{RANKING}/{member}", offset=1, limit=1, **WINDOW)
    assert [t["message_id"] for t in page["turns"]] == exposed["turns"][1:2]
    assert (page["offset"], page["limit"], page["turns_total"]) == (1, 1, 3)


def test_real_chat_turns_show_up_as_their_stored_exposure(env_both: ApiEnv) -> None:
    """What a turn writes is what the report shows: same answer, question and cards."""
    with env_both.runtime.session_factory() as session:
        user, token = create_user(session, "asks-internal", "member")
    question = INTERNAL_QUESTIONS[1]
    r = env_both.client.post(
        "/api/v1/chat",
        json={"message": question, "conversation_id": None},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert r.status_code == 200, r.text
    answer = r.json()
    with env_both.runtime.session_factory() as session:
        rows = list(session.scalars(select(Exposure).where(Exposure.user_id == user.id)))
    assert rows, "an answer from internal playbooks must record exposure"
    report = get(env_both, f"{RANKING}/{user.id}")
    (turn,) = report["turns"]
    assert (turn["message_id"], turn["conversation_id"]) == (
        answer["message_id"],
        answer["conversation_id"],
    )
    assert turn["question"] == question and turn["restricted"] is None
    assert sorted(c["card_id"] for c in turn["cards"]) == sorted(e.card_id for e in rows)
    assert report["member"]["cards"] == len({e.card_id for e in rows})
    assert report["member"]["verbatim_sentences"] == len(
        {(e.card_id, k) for e in rows for k in e.sentences}
    )
    ranked = {m["user_id"]: m for m in get(env_both, RANKING)["members"]}
    assert ranked[str(user.id)]["cards"] == report["member"]["cards"]


def test_a_user_with_no_exposure_has_an_empty_drill_down(env_both: ApiEnv) -> None:
    with env_both.runtime.session_factory() as session:
        quiet = create_user(session, "quiet-reader", "member")[0].id
    report = get(env_both, f"{RANKING}/{quiet}")
    assert report["member"]["name"] == "quiet-reader"
    assert (report["member"]["cards"], report["days"], report["turns"]) == (0, [], [])


@pytest.mark.parametrize("user_id", ["999999", str(10**12), "0", "-3"])
def test_an_unknown_user_is_404(env_both: ApiEnv, user_id: str) -> None:
    r = env_both.client.get(f"{RANKING}/{user_id}", headers=env_both.auth("admin"))
    assert r.status_code == 404, r.text
    assert "not found" in r.json()["detail"]


def test_bad_parameters_are_422(env_both: ApiEnv) -> None:
    for path in (f"{RANKING}/abc", f"{RANKING}?limit=0", f"{RANKING}?since=yesterday"):
        r = env_both.client.get(path, headers=env_both.auth("admin"))
        assert r.status_code == 422, (path, r.text)
    member = env_both.user_ids["member"]
    r = env_both.client.get(f"{RANKING}/{member}?offset=-1", headers=env_both.auth("admin"))
    assert r.status_code == 422


def test_admins_only(env_both: ApiEnv) -> None:
    member = env_both.user_ids["member"]
    for path in (RANKING, f"{RANKING}/{member}"):
        assert env_both.client.get(path, headers=env_both.auth("member")).status_code == 403
        assert env_both.client.get(path).status_code == 401
