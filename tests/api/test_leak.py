"""THE leak test: every route, as a member and anonymously, after internal cards were cited.

Routes come from ``app.openapi()`` and from ``app.routes`` (to catch routes hidden from the
schema). Inputs are realistic: real conversation ids (the member's own, another member's, an
admin's), real card ids, bodies built from the request schemas. A route this test does not
know how to call fails the test, so a route added later is covered or noticed.
"""

from __future__ import annotations

import base64
import itertools
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
from fastapi.routing import APIRoute
from pydantic import SecretStr
from starlette.routing import Route

from citewall.chat.turn import TurnResult, prepare_turn
from citewall.chat.turn_stream import TurnStream
from citewall.kb.audiences import Viewer

from .conftest import EXTERNAL_QUESTION, INTERNAL_QUESTIONS, ApiEnv, KbFacts, client_with
from .leakcheck import Leak, check_response

#: Routes kept out of the OpenAPI schema on purpose, and the paths to call for each.
HIDDEN_ROUTES: dict[str, list[str]] = {
    "/openapi.json": ["/openapi.json"],
    "/docs": ["/docs"],
    "/docs/assets/swagger-init.js": ["/docs/assets/swagger-init.js"],
    "/docs/assets/{name}": [
        "/docs/assets/swagger-ui.css",
        "/docs/assets/favicon.png",
        "/docs/assets/{internal_card}",
    ],
    "(the web UI, the fallback for what no route answers)": [
        "/",
        "/index.html",
        "/chat/some-conversation",
        "/api",
        "/api/v1/brain/sources/{internal_card}",
        "/api/v1/sources/{internal_card}",
        "/../citewall/config.py",
        "/assets/missing.js",
    ],
}

#: Operations anyone may call (no credentials): health, and what sign-in needs before one.
OPEN_OPERATIONS = {
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
    ("GET", "/api/v1/auth/config"),
    ("POST", "/api/v1/auth/session"),
}
#: Member operations that answer no 2xx in this world, and why (their 2xx: test_sign_in.py).
NO_2XX_HERE = {
    ("POST", "/api/v1/auth/session"): "no host sign-in is configured here (404)",
    ("DELETE", "/api/v1/auth/session"): "the member holds an API token, not a session (400)",
}


@dataclass
class World:
    env: ApiEnv
    facts: KbFacts
    conversations: dict[str, str]  # member / other / admin -> a conversation citing internals
    #: member / other / admin -> an answer citing internals; member-question: the member's own
    #: question (not an answer); member-hidden: an answer in a conversation the member deleted.
    messages: dict[str, str]
    #: A member conversation (citing internals) for DELETE, so the others stay for later calls.
    disposable: str

    def path_values(self, name: str, method: str = "get") -> list[str]:
        if name == "conversation_id":
            mine = [self.disposable] if method == "delete" else [self.conversations["member"]]
            theirs = [self.conversations[who] for who in ("other", "admin")]
            return [*mine, *theirs, str(uuid.uuid4()), "not-a-uuid"]
        if name == "message_id":
            return [*self.messages.values(), str(uuid.uuid4()), "not-a-uuid"]
        if name == "card_id":
            return [
                sorted(self.facts.internal_ids)[0],
                sorted(self.facts.external_ids)[0],
                "no-such-card",
            ]
        if name == "user_id":
            ids = [str(self.env.user_ids[who]) for who in ("member", "other", "admin")]
            return [*ids, "999999", "not-a-number"]
        if name == "playbook_id":  # admin routes only
            return ["pb-leak-test", "no-such-playbook"]
        if name in ("source_id", "question_id", "handoff_id", "upload_id"):  # admin routes only
            return ["1", "999999", "not-a-number"]
        raise AssertionError(f"leak test: no realistic values for path parameter {name!r}")

    def query_values(self, name: str, schema: dict[str, Any]) -> list[Any]:
        schema = _resolve_nullable(schema)
        if "enum" in schema:
            return list(schema["enum"])
        kind = schema.get("type")
        if kind == "boolean":
            return [True, False]
        if kind == "integer":
            low = schema.get("minimum", 0)
            return [low, 1000, -5]
        if kind == "string" and schema.get("format") == "date-time":
            return ["2020-01-01T00:00:00Z", "2999-01-01T00:00:00Z", "yesterday"]
        if kind == "string":
            if name == "card_id":
                return [sorted(self.facts.internal_ids)[0]]
            return ["label", "CWLEAK", "x" * 300]
        raise AssertionError(f"leak test: no values for query parameter {name!r} ({schema})")

    def body_values(self, name: str, schema: dict[str, Any]) -> list[Any]:
        schema = _resolve_nullable(schema)
        if name == "message":
            return [*INTERNAL_QUESTIONS, "Which internal playbook title mentions CWLEAKT?"]
        if name == "query":
            return ["voided label refund not arrived duplicate charge annual plan"]
        if name == "conversation_id":
            return [None, *self.path_values("conversation_id")]
        if name == "title":
            return ["Renamed by the leak test", "CWLEAK " + "x" * 300, "   "]
        if name == "rating":
            return ["down", "up", "meh"]
        if name == "comment":
            return [None, "Which internal playbook says CWLEAK?", "x" * 2500]
        if name == "token":
            return ["not-a-jwt", "CWLEAK.e30.e30"]
        if name == "groups":
            return [[], ["enterprise", "partners"], ["Not A Group"]]
        if name == "message_id":  # a stored answer (saving a test question from it)
            return [self.messages["member"], str(uuid.uuid4())]
        if name == "url":  # a source to register (admin only): a site
            return ["https://help.example.com/sitemap.xml", "javascript:alert(1)", None]
        if name == "server_path":  # a folder or a card file on the host (admin only)
            return [None, "kb/no-such-cards.jsonl"]
        if name in ("license", "every"):  # a source's licence and schedule (admin only)
            return [None, "6h", "6x"]
        if name in ("id", "body", "reply"):  # a playbook (admin only)
            return ["pb-leak-test", "Which internal playbook says CWLEAK?", None]
        if name == "filename":  # an upload (admin only)
            return ["leak-test.md", "leak-test.exe"]
        if name == "content_base64":
            return [base64.b64encode(b"# Leak test upload\n\nNotes.").decode("ascii"), "@@"]
        if name in ("url", "license"):
            return [None, "javascript:alert(1)"]
        if "enum" in schema:
            return list(schema["enum"])
        if schema.get("type") == "integer":
            return [schema.get("maximum", 50)]
        if schema.get("type") == "boolean":
            return [False, True]
        if schema.get("type") == "array":  # card ids, facts: admin-only bodies
            return [[], [sorted(self.facts.internal_ids)[0]]]
        raise AssertionError(f"leak test: no values for body field {name!r} ({schema})")


def _resolve_nullable(schema: dict[str, Any]) -> dict[str, Any]:
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"]
            if len(options) == 1:
                merged = {k: v for k, v in schema.items() if k != key}
                return {**options[0], **merged}
    return schema


def _ref(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref:
        return dict(spec["components"]["schemas"][ref.rsplit("/", 1)[-1]])
    return schema


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    params: dict[str, Any]
    body: Any


def operation_calls(world: World, spec: dict[str, Any], path: str, method: str) -> Iterator[Call]:
    """Realistic requests for one documented operation: path params from real data, every
    query parameter varied on its own, bodies from the request schema (plus invalid ones)."""
    op = spec["paths"][path][method]
    params = op.get("parameters", [])
    path_params = [p for p in params if p["in"] == "path"]
    query_params = [p for p in params if p["in"] == "query"]
    unknown = [p for p in params if p["in"] not in {"path", "query", "header"}]
    assert not unknown, f"{method.upper()} {path}: parameter kinds {unknown} not covered"
    path_choices = [world.path_values(p["name"], method) for p in path_params]
    for values in itertools.product(*path_choices) if path_choices else [()]:
        concrete = path
        for p, v in zip(path_params, values, strict=True):
            concrete = concrete.replace("{" + p["name"] + "}", v)
        query_sets: list[dict[str, Any]] = [{}]
        for p in query_params:
            query_sets += [{p["name"]: v} for v in world.query_values(p["name"], p["schema"])]
        bodies: list[Any] = [None]
        if "requestBody" in op:
            content = op["requestBody"]["content"]
            assert "application/json" in content, f"{path}: body type {list(content)}"
            schema = _ref(spec, content["application/json"]["schema"])
            props = schema.get("properties", {})
            fields = {n: world.body_values(n, s) for n, s in props.items()}
            base = {n: v[0] for n, v in fields.items()}
            bodies = [base]
            for n, vals in fields.items():
                bodies += [{**base, n: v} for v in vals[1:]]
            bodies += [{}, {"unexpected": "CWLEAK"}, dict.fromkeys(props, 12345)]
        for q in query_sets:
            for b in bodies:
                yield Call(method.upper(), concrete, q, b)


@pytest.fixture(scope="module")
def world(env_sqlite: ApiEnv, kb_facts: KbFacts) -> World:
    # With a helpdesk configured, so the handoff route answers (nothing listens there: the
    # requests stay pending, unsent, since no delivery loop runs without the app's lifespan).
    runtime, client = client_with(
        env_sqlite,
        handoff_webhook_url="http://127.0.0.1:9/handoff",
        handoff_webhook_secret=SecretStr("leak-test-secret-0123456789"),
    )
    env = replace(env_sqlite, runtime=runtime, client=client, app=client.app)
    convs = {}
    for who in ("member", "other", "admin"):
        r = env.chat(who, INTERNAL_QUESTIONS[0])
        assert r.status_code == 200, r.text
        cid = r.json()["conversation_id"]
        for q in (INTERNAL_QUESTIONS[1], EXTERNAL_QUESTION):
            assert env.chat(who, q, cid).status_code == 200
        convs[who] = cid
    s = env.client.post(
        "/api/v1/chat/stream",
        json={"message": INTERNAL_QUESTIONS[2], "conversation_id": convs["member"]},
        headers=env.auth("member"),
    )
    assert s.status_code == 200 and "event: final" in s.text
    # A regenerated answer, a stopped one and the member's rating are in the history too.
    again = env.client.post(
        f"/api/v1/conversations/{convs['member']}/regenerate", headers=env.auth("member")
    )
    assert again.status_code == 200 and "event: final" in again.text, again.text
    stopped = stop_after_first_delta(env, convs["member"], INTERNAL_QUESTIONS[0])
    assert stopped.answer.answer_status == "stopped"
    disposable = env.chat("member", INTERNAL_QUESTIONS[0]).json()["conversation_id"]
    hidden = env.chat("member", INTERNAL_QUESTIONS[1]).json()
    assert (
        env.client.delete(
            f"/api/v1/conversations/{hidden['conversation_id']}", headers=env.auth("member")
        ).status_code
        == 204
    )
    # Not vacuous: internal cards WERE cited and stored in every one of these conversations.
    from citewall.storage import conversations

    answers: dict[str, str] = {}
    with env.runtime.session_factory() as session:
        for who, cid in [*convs.items(), ("disposable", disposable)]:
            stored = conversations.list_messages(session, cid)
            cited = {src["card_id"] for m in stored for src in m.sources}
            assert cited & kb_facts.internal_ids, f"{who}'s conversation cites no internal card"
            if who in convs:
                answers[who] = next(
                    str(m.id)
                    for m in stored
                    if {s["card_id"] for s in m.sources} & kb_facts.internal_ids
                )
        question = str(conversations.list_messages(session, convs["member"])[0].id)
    rated = env.client.put(
        f"/api/v1/messages/{answers['member']}/feedback",
        json={"rating": "down", "comment": "it missed the playbook"},
        headers=env.auth("member"),
    )
    assert rated.status_code == 200, rated.text
    messages = {**answers, "member-question": question, "member-hidden": hidden["message_id"]}
    return World(env, kb_facts, convs, messages, disposable)


def stop_after_first_delta(env: ApiEnv, conversation_id: str, question: str) -> TurnResult:
    """A stored ``stopped`` answer: the stream stopped after the first prose it showed."""
    plan = prepare_turn(
        env.runtime,
        user_id=env.user_ids["member"],
        question=question,
        conversation_id=conversation_id,
    )
    stream = TurnStream(env.runtime, user_id=env.user_ids["member"], viewer=Viewer(), plan=plan)
    first = next(item for item in stream if isinstance(item, str))
    result = stream.stop(first)
    assert result is not None
    return result


def documented(spec: dict[str, Any]) -> set[tuple[str, str]]:
    return {(m.upper(), p) for p, ops in spec["paths"].items() for m in ops}


def all_routes(routes: list[Any], prefix: str = "") -> Iterator[tuple[str, set[str]]]:
    """Every (path, methods) reachable in ``routes``, through included routers too."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:  # FastAPI wraps included routers; their prefix is in the context
            context = getattr(route, "include_context", None)
            yield from all_routes(inner.routes, prefix + getattr(context, "prefix", ""))
            continue
        assert isinstance(route, APIRoute | Route), f"unexpected route type {route!r}"
        yield prefix + route.path, set(route.methods or ())


def test_every_route_is_known_to_this_test(world: World) -> None:
    spec = world.env.app.openapi()
    docs = documented(spec)
    seen = list(all_routes(world.env.app.routes))
    assert {p for _, p in docs} <= {p for p, _ in seen}, "route walk missed documented routes"
    for path, methods in seen:
        assert methods, f"{path}: a route without HTTP methods (websocket?) is not covered"
        for method in methods:
            if (method, path) in docs or method == "HEAD":
                continue
            assert path in HIDDEN_ROUTES, (
                f"{method} {path} is hidden from OpenAPI and unknown to the leak test: "
                "add realistic calls for it to HIDDEN_ROUTES"
            )


def _send(world: World, call: Call, who: str | None) -> Any:
    headers = world.env.auth(who) if who else {}
    kwargs: dict[str, Any] = {"params": call.params, "headers": headers}
    if call.body is not None:
        kwargs["json"] = call.body
    return world.env.client.request(call.method, call.path, **kwargs)


def _check(world: World, where: str, response: Any) -> None:
    check_response(
        world.facts,
        where,
        dict(response.headers),
        response.headers.get("content-type", ""),
        response.text,
    )


def test_no_member_or_anonymous_response_leaks_internal_material(world: World) -> None:
    env = world.env
    spec = env.app.openapi()
    ok_as_member: dict[tuple[str, str], int] = {}
    calls = 0
    for path, ops in spec["paths"].items():
        for method in ops:
            key = (method.upper(), path)
            ok_as_member[key] = 0
            for call in operation_calls(world, spec, path, method):
                for who in ("member", None):
                    r = _send(world, call, who)
                    calls += 1
                    assert r.status_code < 500, f"{call} as {who}: {r.status_code} {r.text}"
                    _check(world, f"{call.method} {call.path} {call.params} as {who}", r)
                    if who is None and key not in OPEN_OPERATIONS:
                        assert r.status_code == 401, f"{call} anonymous: {r.status_code}"
                    if who == "member" and 200 <= r.status_code < 300:
                        ok_as_member[key] += 1
    # Member routes really answered (not only errors); admin routes refused the member.
    for (method, path), n in ok_as_member.items():
        if path.startswith("/api/v1/admin/") or (method, path) in NO_2XX_HERE:
            assert n == 0, f"{method} {path} answered a member"
        else:
            assert n > 0, f"{method} {path} never answered the member with a 2xx"
    assert calls > 100


def test_hidden_routes_leak_nothing(world: World) -> None:
    internal = sorted(world.facts.internal_ids)[0]
    for template, paths in HIDDEN_ROUTES.items():
        for raw in paths:
            path = raw.replace("{internal_card}", internal)
            for who in ("member", None):
                r = world.env.client.get(path, headers=world.env.auth(who) if who else {})
                assert r.status_code < 500, f"{path}: {r.status_code}"
                # The probe path itself holds the card id; what comes back must not echo it.
                _check(world, f"GET {path} ({template}) as {who}", r)


def test_the_checker_catches_a_leak(world: World) -> None:
    """Positive control: the admin's full view of the same data trips the checker."""
    r = world.env.client.get(
        f"/api/v1/admin/conversations/{world.conversations['member']}",
        headers=world.env.auth("admin"),
    )
    assert r.status_code == 200
    with pytest.raises(Leak):
        _check(world, "admin view", r)


def test_the_members_export_is_their_own_member_views_and_leaks_nothing(world: World) -> None:
    """The export holds the member's conversations (one citing internal cards among them),
    not another member's, and passes the same checks as every member response."""
    env = world.env
    r = env.client.get("/api/v1/me/export", headers=env.auth("member"))
    assert r.status_code == 200, r.text
    exported = {c["id"]: c for c in r.json()["conversations"]}
    assert world.conversations["member"] in exported
    assert world.conversations["other"] not in exported
    assert exported[world.conversations["member"]]["messages"]
    _check(world, "GET /api/v1/me/export as member", r)
