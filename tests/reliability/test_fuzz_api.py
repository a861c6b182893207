"""Schema-driven fuzzing of EVERY operation in the OpenAPI schema (schemathesis, in process).

A few cases per operation here (the full run, >= 100 per operation, is
``benchmarks/fuzz_api.py``). tests/api/test_fuzz.py fuzzes as a member with the server-error
check only; this adds admin tokens on admin routes, negative (schema-violating) input, the
response-schema, content-type, header and ``ignored_auth`` checks, and explicit auth probes.
"""

from __future__ import annotations

from typing import Any

import pytest

from .fuzzing import IRREVERSIBLE, fuzz_operation, load_schema, operations, real_path_ids
from .rig import Rig

#: Cases per operation and mode in the test suite (keeps the module well under a minute).
CASES = 3


@pytest.fixture(scope="module")
def schema(shared_rig: Rig) -> Any:
    return load_schema(shared_rig.app)


@pytest.fixture(scope="module")
def path_ids(shared_rig: Rig) -> dict[str, list[str]]:
    """Ids of real records (conversations, cards, users) for the ``{id}`` routes."""
    return real_path_ids(shared_rig)


@pytest.fixture(scope="module")
def all_operations(schema: Any) -> dict[str, Any]:
    ops = {op.label: op for op in operations(schema)}
    assert len(ops) >= 15, sorted(ops)  # the schema really lists the API
    return ops


def test_schema_lists_every_api_route(shared_rig: Rig, all_operations: dict[str, Any]) -> None:
    """A route missing from the schema would escape the fuzzer: compare with the router."""
    from fastapi.routing import APIRoute

    routed = {
        f"{method} {route.path}"
        for route in shared_rig.app.routes
        if isinstance(route, APIRoute) and route.include_in_schema
        for method in route.methods or ()
    }
    assert routed <= set(all_operations), routed - set(all_operations)


@pytest.mark.parametrize("negative", [False, True], ids=["positive", "negative"])
def test_fuzz_every_operation(
    shared_rig: Rig, all_operations: dict[str, Any], path_ids: dict[str, list[str]], negative: bool
) -> None:
    """No 5xx, responses match the schema, unauthenticated variants are refused; in positive
    mode every read (GET) ``{id}`` route also gets the ids of real records and answers them 2xx."""
    report = []
    total = 0
    id_routes: dict[str, Any] = {}
    for label, op in all_operations.items():
        stats = fuzz_operation(
            op, shared_rig.tokens, max_examples=CASES, negative=negative, path_ids=path_ids
        )
        total += stats.cases
        assert stats.server_errors == 0, (label, stats.statuses, stats.failures[:3])
        report += [f"{label}: {p}" for p in stats.failures]
        if "{" in label:
            id_routes[label] = stats
    assert not report, "\n".join(report[:10])
    assert total >= len(all_operations) * (1 if negative else 2)  # cases really ran
    # The {id} routes: of conversations, messages, cards (and disabling them), users (exposure,
    # erasure), a source (its runs, syncing, removing it), a handoff's conversation, a saved
    # test question, playbooks and an upload's removal.
    assert len(id_routes) == 22, sorted(id_routes)
    for label, stats in id_routes.items():
        two_xx = sum(n for code, n in stats.statuses.items() if 200 <= code < 300)
        if not label.startswith("GET "):  # writes: real ids in their own tests (real_id_cases)
            assert stats.real_id_cases == 0, (label, stats.statuses)
        elif negative:
            assert stats.real_id_cases == 0 and two_xx == 0, (label, stats.statuses)
        else:
            assert stats.real_id_cases > 0 and two_xx >= stats.real_id_cases, (
                label,
                stats.statuses,
            )


def test_every_status_the_api_answers_is_documented(all_operations: dict[str, Any]) -> None:
    missing = []
    for label, op in all_operations.items():
        declared = set(op.definition.raw.get("responses", {}))
        secured = bool(op.definition.raw.get("security"))
        need = set()
        if secured:
            need |= {"401", "429", "503"}
        if "/admin/" in label:
            need.add("403")
        if "{" in label:
            need.add("404")
        if label.endswith("/chat"):
            need |= {"409", "413", "502"}
        if label == "GET /readyz":
            need.add("503")
        missing += [f"{label}: {code}" for code in sorted(need - declared)]
    assert not missing, missing


#: Admin writes whose bodies and records this generic call does not make (a saved test
#: question, its removal, an erasure, a source registered, synced or removed): their own tests
#: cover what they answer.
ADMIN_WRITES = frozenset(
    {
        "POST /api/v1/admin/eval-questions",
        "DELETE /api/v1/admin/eval-questions/{question_id}",
        "POST /api/v1/admin/users/{user_id}/erasure",
        "POST /api/v1/admin/playbooks",
        "PUT /api/v1/admin/playbooks/{playbook_id}",
        "POST /api/v1/admin/playbooks/{playbook_id}/rollback",
        "POST /api/v1/admin/sources",
        "POST /api/v1/admin/sources/{source_id}/sync",
        "DELETE /api/v1/admin/sources/{source_id}",
        "POST /api/v1/admin/uploads",
        "DELETE /api/v1/admin/uploads/{upload_id}",
        *(f"POST /api/v1/admin/cards/{{card_id}}/{change}" for change in ("disable", "enable")),
    }
)


def test_no_or_bad_token_is_401_and_member_on_admin_is_403(
    shared_rig: Rig, all_operations: dict[str, Any], path_ids: dict[str, list[str]]
) -> None:
    """Every operation that declares the bearer scheme refuses anonymous and forged callers
    (real record ids in the path: the refusal is about the token, not a missing record)."""
    client = shared_rig.client
    secured = 0
    for label, op in all_operations.items():
        if not op.definition.raw.get("security"):
            continue
        secured += 1
        method, path = label.split(" ", 1)
        url = path
        for name, ids in path_ids.items():
            url = url.replace(f"{{{name}}}", ids[0])
        body: dict[str, str] | None = None
        if method == "POST":
            body = {"query": "void"} if "search" in path else {"message": "void a label?"}
        for headers in ({}, {"Authorization": "Bearer not-a-token"}, {"Authorization": "Basic x"}):
            r = client.request(method, url, json=body, headers=headers)
            assert r.status_code == 401, (label, headers, r.status_code, r.text)
            assert r.headers.get("www-authenticate") == "Bearer", label
        if "/admin/" in label:
            r = client.request(method, url, json=body, headers=shared_rig.auth("member"))
            assert r.status_code == 403, (label, r.status_code, r.text)
            if label in IRREVERSIBLE:  # on a user or source that does not exist, not the rig's
                url = path.replace("{user_id}", "999999").replace("{source_id}", "999999")
            if label.endswith(("/disable", "/enable")):  # the rig's cards stay served
                url = path.replace("{card_id}", "no-such-card")
            r = client.request(method, url, json=body, headers=shared_rig.auth("admin"))
            if label in ADMIN_WRITES:  # the token is accepted; the body is their own tests'
                assert r.status_code not in (401, 403) and r.status_code < 500, (label, r.text)
            else:
                assert r.status_code == 200, (label, r.status_code, r.text)
    assert secured >= 12


def test_the_fuzzer_catches_a_route_that_ignores_its_token() -> None:
    """Self-check: the same fuzzing code flags an operation that declares the bearer scheme
    but never checks it (so a pass above means something)."""
    from fastapi import Depends, FastAPI
    from fastapi.security import HTTPBearer

    app = FastAPI()
    bearer = HTTPBearer(auto_error=False)

    @app.get("/open")
    def open_route(credentials: Any = Depends(bearer)) -> dict[str, bool]:
        return {"ok": True}

    (op,) = operations(load_schema(app))
    stats = fuzz_operation(op, {"member": "x", "admin": "x"}, max_examples=2)
    assert any("without authentication" in f for f in stats.failures), stats.failures
