"""Schema-driven fuzzing of the whole API (schemathesis v4), in process, with counting.

Shared by ``test_fuzz_api.py`` (a few cases per operation) and ``benchmarks/fuzz_api.py``
(the full run). Every failure is recorded instead of raised, so one run reports all of them.

Each operation is called with the token of the role it is meant for (admin routes with the
admin's, the rest with the member's) and checked for: no 5xx, declared content type and
headers, response body matching the declared schema, and ``ignored_auth`` (the same
request with no token and with a bad token must be refused with 401/403 where the operation
declares the bearer scheme). Negative mode sends schema-violating input and checks for no 5xx
and ``ignored_auth`` (``negative_data_rejection`` is not applied: FastAPI ignores unknown query
parameters by design, and our token header defeats its "missing Authorization" mutation).

Path ids: a generated ``{conversation_id}`` or ``{card_id}`` names no record, so every generated
case of those routes answers 404. ``real_path_ids`` creates real records through the API (the
member's conversations) and reads the ingested card ids; in positive mode each of them is also
sent as an explicit example (``operation.Case(path_parameters=...)``), so the 200 path and its
response schema are fuzzed too, next to the generated ids.
"""

from __future__ import annotations

import base64
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Any

import schemathesis
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    response_headers_conformance,
    response_schema_conformance,
)

from citewall.storage import kb_sources
from citewall.storage.types import utcnow

from .rig import QUESTIONS, Rig

# status_code_conformance is left out: undocumented statuses are counted per operation
# instead (``undocumented``), because the schema's gaps are a known, reported issue.
POSITIVE_CHECKS = [
    not_a_server_error,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    ignored_auth,
]
NEGATIVE_CHECKS = [not_a_server_error, ignored_auth]


@dataclass
class OperationStats:
    """What fuzzing one operation in one mode did."""

    label: str
    mode: str
    cases: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    server_errors: int = 0
    undocumented: Counter[int] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    note: str = ""
    #: Cases sent with the id of a real record (explicit examples), counted in ``cases``.
    real_id_cases: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "operation": self.label,
            "mode": self.mode,
            "cases": self.cases,
            "real_id_cases": self.real_id_cases,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "server_errors": self.server_errors,
            "undocumented_statuses": {str(k): v for k, v in sorted(self.undocumented.items())},
            "failures": len(self.failures),
            "first_failures": self.failures[:5],
            "seconds": round(self.seconds, 2),
            "note": self.note,
        }


def load_schema(app: Any) -> Any:
    """The app's OpenAPI schema, called in process through its ASGI transport."""
    return schemathesis.openapi.from_asgi("/openapi.json", app)


def operations(schema: Any) -> list[Any]:
    """Every operation the schema declares (raises if one cannot be parsed)."""
    return [result.ok() for result in schema.get_all_operations()]


def real_path_ids(rig: Rig) -> dict[str, list[str]]:
    """Ids of real records for the path parameters: conversations the member starts here
    (one with a follow-up turn), every ingested card, and the users who own conversations."""
    member, admin = rig.auth("member"), rig.auth("admin")
    conversations = []
    for question in QUESTIONS[:3]:
        r = rig.client.post("/api/v1/chat", json={"message": question}, headers=member)
        assert r.status_code == 200, r.text
        conversations.append(r.json()["conversation_id"])
    follow_up = {"message": QUESTIONS[3], "conversation_id": conversations[0]}
    assert rig.client.post("/api/v1/chat", json=follow_up, headers=member).status_code == 200
    page = rig.client.get("/api/v1/admin/cards", params={"limit": 100}, headers=admin).json()
    everyone = rig.client.get("/api/v1/admin/conversations", headers=admin).json()
    # A registered KB source (registering has its own tests: a fuzzed one is never synced).
    with rig.runtime.session_factory() as session:
        found = kb_sources.find_source(session, "cards", "/kb/fuzzed.jsonl")
        source = found or kb_sources.add_source(session, "cards", "/kb/fuzzed.jsonl", now=utcnow())
    # A playbook written in the admin pages (its history and rollback have their own tests).
    playbook = {"id": "pb-fuzzed", "title": "Fuzzed playbook", "body": "Notes.", "reply": "Hi."}
    made = rig.client.post("/api/v1/admin/playbooks", json=playbook, headers=admin)
    assert made.status_code in (201, 409), made.text
    # A document uploaded in the admin pages (what it serves has its own tests).
    upload = {
        "filename": "fuzzed-upload.md",
        "content_base64": base64.b64encode(b"# Fuzzed upload\n\nNotes.").decode("ascii"),
        "visibility": "internal",
    }
    uploaded = rig.client.post("/api/v1/admin/uploads", json=upload, headers=admin)
    assert uploaded.status_code == 201, uploaded.text
    return {
        "conversation_id": conversations,
        "card_id": [c["id"] for c in page["cards"]],
        "playbook_id": [playbook["id"]],
        "user_id": sorted({c["user_id"] for c in everyone}),
        "source_id": [str(source.id)],
        "upload_id": [str(uploaded.json()["id"])],
    }


def real_id_cases(operation: Any, path_ids: Mapping[str, Sequence[str]]) -> list[Any]:
    """One case per combination of real ids, for a read (GET) whose every path parameter has
    some (none otherwise). Writes on ``{id}`` routes (rename, delete, regenerate, feedback) get
    real ids in their own tests: here a real DELETE would hide the records the reads need."""
    if operation.method.upper() != "GET":
        return []
    names = [p.name for p in operation.path_parameters]
    if not names or any(not path_ids.get(n) for n in names):
        return []
    return [
        operation.Case(path_parameters=dict(zip(names, ids, strict=True)))
        for ids in product(*(path_ids[n] for n in names))
    ]


#: Operations a fuzzed id must not aim at a real record: an erasure cannot be undone, and the
#: rig's member and admin must outlive the run (erasure has its own tests); a source's removal
#: would take the rig's source from the reads, and a sync would read whatever a fuzzed
#: registration pointed a source at (both have their own tests, tests/api/test_admin_sources.py).
IRREVERSIBLE = frozenset(
    {
        "POST /api/v1/admin/users/{user_id}/erasure",
        "DELETE /api/v1/admin/sources/{source_id}",
        "POST /api/v1/admin/sources/{source_id}/sync",
    }
)
#: The path parameters of those operations that name a real record by a small integer.
_SPARED_IDS = ("user_id", "source_id")


def _spare_real_records(case: Any) -> None:
    """Move a generated integer id past every record the rig made (it then answers 404)."""
    for name in _SPARED_IDS:
        value = (case.path_parameters or {}).get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            case.path_parameters[name] = abs(value) + 1_000_000


def token_for(label: str, tokens: dict[str, str]) -> dict[str, str]:
    """The bearer header of the role an operation is meant for."""
    who = "admin" if "/admin/" in label else "member"
    return {"Authorization": f"Bearer {tokens[who]}"}


def fuzz_operation(
    operation: Any,
    tokens: dict[str, str],
    *,
    max_examples: int,
    negative: bool = False,
    path_ids: Mapping[str, Sequence[str]] | None = None,
) -> OperationStats:
    """Run up to ``max_examples`` generated cases against ``operation``; count, never raise.

    In positive mode, a case per real id in ``path_ids`` (see ``real_path_ids``) runs first.
    """
    mode = GenerationMode.NEGATIVE if negative else GenerationMode.POSITIVE
    stats = OperationStats(operation.label, mode.value)
    headers = token_for(operation.label, tokens)
    checks = NEGATIVE_CHECKS if negative else POSITIVE_CHECKS
    documented = set(operation.definition.raw.get("responses", {}))
    explicit = [] if negative else real_id_cases(operation, path_ids or {})
    real_paths = {case.formatted_path for case in explicit}

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Any) -> None:
        if operation.label in IRREVERSIBLE:
            _spare_real_records(case)
        stats.cases += 1
        stats.real_id_cases += case.formatted_path in real_paths
        try:
            response = case.call(headers=headers)
        except Exception as exc:  # a transport-level crash is a server failure too
            stats.server_errors += 1
            stats.failures.append(f"{case.method} {case.formatted_path}: {exc!r}")
            return
        stats.statuses[response.status_code] += 1
        if str(response.status_code) not in documented:
            stats.undocumented[response.status_code] += 1
        if response.status_code >= 500:
            stats.server_errors += 1
        try:
            case.validate_response(response, checks=checks, headers=headers)
        except (Exception, FailureGroup) as exc:  # FailureGroup is a BaseExceptionGroup
            stats.failures.append(
                f"{case.method} {case.formatted_path} -> {response.status_code}: "
                f"{str(exc).strip()[:600]}"
            )

    for case in explicit:
        run = example(case=case)(run)
    t0 = time.perf_counter()
    try:
        run()
    except Unsatisfiable:
        # Negative mode on an operation without parameters or body: nothing can be violated.
        stats.note = "no input to violate"
    stats.seconds = time.perf_counter() - t0
    return stats
