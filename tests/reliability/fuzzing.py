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
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
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

    def as_dict(self) -> dict[str, Any]:
        return {
            "operation": self.label,
            "mode": self.mode,
            "cases": self.cases,
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


def token_for(label: str, tokens: dict[str, str]) -> dict[str, str]:
    """The bearer header of the role an operation is meant for."""
    who = "admin" if "/admin/" in label else "member"
    return {"Authorization": f"Bearer {tokens[who]}"}


def fuzz_operation(
    operation: Any, tokens: dict[str, str], *, max_examples: int, negative: bool = False
) -> OperationStats:
    """Run up to ``max_examples`` generated cases against ``operation``; count, never raise."""
    mode = GenerationMode.NEGATIVE if negative else GenerationMode.POSITIVE
    stats = OperationStats(operation.label, mode.value)
    headers = token_for(operation.label, tokens)
    checks = NEGATIVE_CHECKS if negative else POSITIVE_CHECKS
    documented = set(operation.definition.raw.get("responses", {}))

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
        stats.cases += 1
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

    t0 = time.perf_counter()
    try:
        run()
    except Unsatisfiable:
        # Negative mode on an operation without parameters or body: nothing can be violated.
        stats.note = "no input to violate"
    stats.seconds = time.perf_counter() - t0
    return stats
