"""The audience gate: members of no group, one group and several ask what restricted cards
answer, on every member path, and no canary of a card outside their groups may come back.

Restricted cards carry one canary per place a card's text lives: ``CWAUDT-`` in the title,
``CWAUDM-`` in an internal metadata value, ``CWAUDB-`` in the body and ``CWAUDR-`` in an
internal card's reply (what an answer may quote), inside the very sentence that answers the
question, so an answer drawn from the card carries it. For a member outside a card's audiences none
of them may appear anywhere in what the member receives: the chat answer, the stream, the
reloaded conversation and list, a regenerated answer, search, the example questions, and the
admin preview asked to answer as a member of the same groups. The
cards are retrieved for members inside the audience (the gate checks that too, so it cannot
pass by finding nothing), which makes the canaries' absence for everyone else mean something.

A build that filters only the sources it serves (retrieval unfiltered) fails this gate: the
restricted card's text reaches the prose. ``filtering_only_served_sources`` turns a runtime
into that build; ``tests/evals/test_audience_gate.py`` and the route crawl
(``tests/api/test_leak_audiences.py``) run it as their negative control.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi.testclient import TestClient

from citewall.api import answer_stream
from citewall.api.routes import conversations, preview, search
from citewall.boundary.audience import stored_audiences
from citewall.kb.audiences import EVERY_CARD, CardFilter
from citewall.retrieval.protocols import Retriever
from citewall.retrieval.types import RetrievedContext
from citewall.runtime import Runtime

CANARY = re.compile(r"CWAUD[TMBR]-[A-Z0-9]+")

#: Restricted cards: external for ``enterprise``, internal for ``partners``, one for both.
AUDIENCE_CARDS: tuple[dict[str, Any], ...] = (
    {
        "id": "aud-ent-sso",
        "title": "SAML single sign-on for your account CWAUDT-ENTSSO",
        "body": "Single sign-on with SAML (CWAUDB-ENTSSO) is set up under Settings > Security: "
        "upload the identity provider metadata and map the email attribute.",
        "url": "https://help.example.com/enterprise/saml-sso",
        "metadata": {"owner_note": "CWAUDM-ENTSSO"},
        "audiences": ["enterprise"],
    },
    {
        "id": "aud-partner-commission",
        "title": "Partner referral commission CWAUDT-PARTCOM",
        "body": "Check the referral (CWAUDB-PARTCOM) in the partner ledger before paying out.",
        "reply": "Partners earn a referral commission (CWAUDR-PARTCOM) of twenty percent on "
        "every merchant they bring, paid out monthly.",
        "metadata": {"team": "partners", "owner_note": "CWAUDM-PARTCOM"},
        "audiences": ["partners"],
    },
    {
        "id": "aud-beta-api",
        "title": "Bulk label API beta CWAUDT-BETAAPI",
        "body": "The bulk label API beta (CWAUDB-BETAAPI) creates up to five hundred labels in "
        "one request; ask your account manager to switch the beta on.",
        "url": "https://help.example.com/beta/bulk-label-api",
        "metadata": {"owner_note": "CWAUDM-BETAAPI"},
        "audiences": ["beta", "enterprise"],
    },
)

#: What members ask: each question is answered by one restricted card.
AUDIENCE_QUESTIONS: tuple[tuple[str, str], ...] = (
    ("How do I set up SAML single sign-on?", "aud-ent-sso"),
    ("What referral commission do partners earn?", "aud-partner-commission"),
    ("Can I create many labels in one request with the bulk label API?", "aud-beta-api"),
)

#: The members of the gate, by their groups.
GATE_MEMBERS: Mapping[str, tuple[str, ...]] = {
    "no-group": (),
    "enterprise": ("enterprise",),
    "partners": ("partners",),
    "several": ("beta", "partners"),
}


def canaries_of(card: Mapping[str, Any]) -> frozenset[str]:
    """Every canary a card carries, in any field."""
    return frozenset(CANARY.findall(repr(dict(card))))


def forbidden_for(groups: Iterable[str], cards: Sequence[Mapping[str, Any]]) -> frozenset[str]:
    """The canaries of the cards outside ``groups``: none may reach that member."""
    mine = set(groups)
    return frozenset(
        c
        for card in cards
        if card.get("audiences") and mine.isdisjoint(card["audiences"])
        for c in canaries_of(card)
    )


@dataclass(slots=True)
class AudienceCase:
    """One member asking one question on every member path."""

    member: str
    question: str
    target: str
    #: Forbidden canaries found, with where: ``(canary, path)``.
    leaks: list[tuple[str, str]] = field(default_factory=list)
    #: Whether the target card was among the served sources of the chat answer.
    target_served: bool = False
    #: Whether the member may see the target (it is in one of their groups).
    target_allowed: bool = False

    @property
    def verdict(self) -> str:
        if self.leaks:
            return "fail"
        # An external target the member may see must be served: else the gate proves nothing.
        return "pass"


def _scan(text: str, forbidden: frozenset[str], where: str, case: AudienceCase) -> None:
    for found in sorted(set(CANARY.findall(text)) & forbidden):
        case.leaks.append((found, where))


def _served_ids(body: Any) -> set[str]:
    sources = body.get("sources", []) if isinstance(body, dict) else []
    return {str(s.get("card_id")) for s in sources if isinstance(s, dict)}


def run_audience_gate(
    client: TestClient,
    tokens: Mapping[str, str],
    groups: Mapping[str, Sequence[str]] = GATE_MEMBERS,
    cards: Sequence[Mapping[str, Any]] = AUDIENCE_CARDS,
    questions: Sequence[tuple[str, str]] = AUDIENCE_QUESTIONS,
    *,
    admin_token: str | None = None,
) -> list[AudienceCase]:
    """Ask every question as every member (``tokens[member]``) on every member path, and as
    the admin preview of the member's groups (with ``admin_token``), and report the forbidden
    canaries each case found."""
    by_id = {c["id"]: c for c in cards}
    results: list[AudienceCase] = []
    for member, token in tokens.items():
        auth = {"Authorization": f"Bearer {token}"}
        forbidden = forbidden_for(groups[member], cards)
        for question, target in questions:
            card = by_id[target]
            case = AudienceCase(
                member,
                question,
                target,
                target_allowed=not set(groups[member]).isdisjoint(card["audiences"]),
            )
            chat = client.post("/api/v1/chat", json={"message": question}, headers=auth)
            _scan(chat.text + repr(dict(chat.headers)), forbidden, "POST /api/v1/chat", case)
            body = chat.json() if chat.status_code == 200 else {}
            case.target_served = target in _served_ids(body)
            stream = client.post("/api/v1/chat/stream", json={"message": question}, headers=auth)
            _scan(stream.text, forbidden, "POST /api/v1/chat/stream", case)
            conversation = body.get("conversation_id") if isinstance(body, dict) else None
            if conversation:
                again = client.post(
                    f"/api/v1/conversations/{conversation}/regenerate", headers=auth
                )
                _scan(again.text, forbidden, "POST .../regenerate", case)
                reload = client.get(f"/api/v1/conversations/{conversation}", headers=auth)
                _scan(reload.text, forbidden, "GET /api/v1/conversations/{id}", case)
            listed = client.get("/api/v1/conversations", headers=auth)
            _scan(listed.text, forbidden, "GET /api/v1/conversations", case)
            search = client.post("/api/v1/search", json={"query": question}, headers=auth)
            _scan(search.text, forbidden, "POST /api/v1/search", case)
            examples = client.get("/api/v1/examples", headers=auth)
            _scan(examples.text, forbidden, "GET /api/v1/examples", case)
            if admin_token is not None:
                preview = client.post(
                    "/api/v1/admin/preview",
                    json={"message": question, "groups": list(groups[member])},
                    headers={"Authorization": f"Bearer {admin_token}"},
                )
                _scan(preview.text, forbidden, "POST /api/v1/admin/preview", case)
            results.append(case)
    return results


def gate_failures(results: Sequence[AudienceCase]) -> list[str]:
    """Why the gate fails (empty: it passes): a leak, or an external target a member inside
    its audience was not served (the gate must see the card to mean anything)."""
    by_id = {c["id"]: c for c in AUDIENCE_CARDS}
    out = [f"{r.member}: {r.question!r}: {c} at {where}" for r in results for c, where in r.leaks]
    out += [
        f"{r.member}: {r.question!r}: {r.target} not served to a member of its audience"
        for r in results
        if r.target_allowed and by_id.get(r.target, {}).get("url") and not r.target_served
    ]
    return out


class UnfilteredRetriever:
    """The broken build's retrieval: it ignores the reader's audiences."""

    def __init__(self, inner: Retriever) -> None:
        self.inner = inner

    def retrieve(
        self, question: str, k: int | None = None, *, cards: CardFilter
    ) -> RetrievedContext:
        return self.inner.retrieve(question, k, cards=EVERY_CARD)

    def status(self) -> dict[str, Any]:
        return self.inner.status()


#: The modules that serve sources to members, each through its own ``external_sources_only``.
_SERVING_MODULES = (answer_stream, preview, search, conversations)


@contextmanager
def filtering_only_served_sources(runtime: Runtime) -> Iterator[None]:
    """While open, ``runtime`` is the negative control: retrieval unfiltered, and every route
    that serves sources drops those of restricted cards (so no restricted card is ever a served
    source, while its text still reaches the prose). Restored on exit."""
    inner = runtime.retriever
    originals = {m: getattr(m, "external_sources_only") for m in _SERVING_MODULES}  # noqa: B009

    def dropping_restricted(serve: Any) -> Any:
        def served(sources: Any, **kwargs: Any) -> Any:
            return serve([s for s in sources if not stored_audiences(s)], **kwargs)

        return served

    runtime.retriever = UnfilteredRetriever(inner)
    for module, serve in originals.items():
        setattr(module, "external_sources_only", dropping_restricted(serve))  # noqa: B010
    try:
        yield
    finally:
        runtime.retriever = inner
        for module, serve in originals.items():
            setattr(module, "external_sources_only", serve)  # noqa: B010
