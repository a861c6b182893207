"""The route crawl with audiences: every OpenAPI route, as members in no group, in one group
and in several, over the fixture KB plus the audience gate's restricted cards (an external card
for ``enterprise``, an internal one for ``partners``, an external one for ``beta`` and
``enterprise``), each carrying canaries in its title, metadata, body and reply.

The calls are test_leak.py's (its world, its ``operation_calls``), asked the questions the
restricted cards answer. No canary of a card outside a member's groups may appear in any of
their responses (headers included), and neither may an internal card's title or metadata
canary; a member inside an audience must meet their restricted external cards' canaries
somewhere, so the crawl can fail both ways. On the build that filters only the served sources
(``filtering_only_served_sources``) the crawl must fail.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from citewall.storage import users
from citewall_evals.redteam.audiences import (
    AUDIENCE_CARDS,
    AUDIENCE_QUESTIONS,
    CANARY,
    GATE_MEMBERS,
    canaries_of,
    filtering_only_served_sources,
    forbidden_for,
)

from . import test_leak
from .conftest import KB_FILE, ApiEnv, build_env
from .test_leak import World, _check, _send, operation_calls

#: test_leak.py's world fixture, built here over this module's ``env_sqlite``.
world = test_leak.world

#: The title and metadata canaries of restricted internal cards: no member ever receives them.
NEVER = frozenset(
    c
    for card in AUDIENCE_CARDS
    if not card.get("url")
    for c in CANARY.findall(card["title"] + json.dumps(card.get("metadata", {})))
)


@pytest.fixture(scope="module")
def env_sqlite(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[ApiEnv]:
    """test_leak.py's world over the fixture KB and the restricted cards, with one member per
    group combination of the gate besides its member/other/admin."""
    data = tmp_path_factory.mktemp("api-leak-audiences")
    kb = data / "restricted.jsonl"
    kb.write_text("".join(json.dumps(c) + "\n" for c in AUDIENCE_CARDS), encoding="utf-8")
    env = build_env(data / "d", None, embedder, kb_files=(KB_FILE, kb))
    with env.runtime.session_factory() as session:
        for who, groups in GATE_MEMBERS.items():
            user, token = users.create_user(
                session, f"{who}-{uuid.uuid4().hex[:6]}", "member", groups
            )
            env.tokens[who], env.user_ids[who] = token, user.id
    yield env
    env.runtime.close()


@dataclass
class MemberWorld(World):
    """The crawl's world for one member of the gate: their own conversation and answer stand
    where test_leak.py's member's do, and they ask what the restricted cards answer."""

    who: str = "member"

    def path_values(self, name: str, method: str = "get") -> list[str]:
        if name == "conversation_id":
            own = [] if method == "delete" else [self.conversations[self.who]]
            theirs = [self.conversations[w] for w in ("member", "admin")]
            return [*own, *theirs, str(uuid.uuid4()), "not-a-uuid"]
        return super().path_values(name, method)

    def body_values(self, name: str, schema: dict[str, Any]) -> list[Any]:
        if name in ("message", "query"):
            return [question for question, _ in AUDIENCE_QUESTIONS]
        return super().body_values(name, schema)


def member_world(base: World, who: str) -> MemberWorld:
    """``base`` as seen by ``who``, after they asked one restricted card's question."""
    r = base.env.chat(who, AUDIENCE_QUESTIONS[0][0])
    assert r.status_code == 200, r.text
    body = r.json()
    return MemberWorld(
        base.env,
        base.facts,
        {**base.conversations, who: body["conversation_id"]},
        {**base.messages, who: body["message_id"]},
        base.disposable,
        who=who,
    )


@dataclass
class Crawl:
    #: Forbidden canaries found: "CANARY in METHOD path params".
    leaks: list[str]
    #: Every audience canary the member received anywhere.
    seen: set[str]
    calls: int


def crawl(base: World, who: str, groups: Sequence[str]) -> Crawl:
    """Every documented operation as ``who`` (a member of ``groups``)."""
    mine = member_world(base, who)
    spec = base.env.app.openapi()
    forbidden = forbidden_for(groups, AUDIENCE_CARDS) | NEVER
    out = Crawl([], set(), 0)
    for path, ops in spec["paths"].items():
        for method in ops:
            for call in operation_calls(mine, spec, path, method):
                r = _send(mine, call, who)
                out.calls += 1
                where = f"{call.method} {call.path} {call.params} as {who}"
                assert r.status_code < 500, f"{where}: {r.status_code} {r.text}"
                _check(mine, where, r)
                text = "\n".join(f"{k}: {v}" for k, v in r.headers.items()) + "\n" + r.text
                found = set(CANARY.findall(text))
                out.seen |= found
                out.leaks += [f"{c} in {where}" for c in sorted(found & forbidden)]
    return out


def must_meet(groups: Sequence[str]) -> frozenset[str]:
    """What a member of ``groups`` must be served of the restricted cards of their groups: an
    external card's title canary (its source), an internal card's reply canary (the prose)."""
    return frozenset(
        c
        for card in AUDIENCE_CARDS
        if not set(groups).isdisjoint(card["audiences"])
        for c in canaries_of(card)
        if c.startswith("CWAUDT-" if card.get("url") else "CWAUDR-")
    )


@pytest.mark.parametrize("who", list(GATE_MEMBERS))
def test_no_member_response_on_any_route_carries_a_card_outside_their_groups(
    world: World, who: str
) -> None:
    groups = GATE_MEMBERS[who]
    result = crawl(world, who, groups)
    assert result.leaks == []
    assert must_meet(groups) <= result.seen, f"{who} was never served their restricted cards"
    assert bool(must_meet(groups)) == bool(groups)
    assert result.calls > 100


def test_the_crawl_fails_on_a_build_that_filters_only_served_sources(world: World) -> None:
    with filtering_only_served_sources(world.env.runtime):
        result = crawl(world, "no-group", GATE_MEMBERS["no-group"])
    # The restricted cards' text reaches the prose of a member in no group, on the chat routes.
    assert result.leaks, "the negative control leaked nothing: the crawl proves nothing"
    routes = {leak.split(" in ", 1)[1].split(" {")[0] for leak in result.leaks}
    assert {"POST /api/v1/chat", "POST /api/v1/chat/stream"} <= routes, result.leaks
