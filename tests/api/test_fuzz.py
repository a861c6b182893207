"""Schema-driven fuzzing (schemathesis strategies): no input a member or an anonymous caller can
send makes the server fail (5xx), and a 2xx body always matches the documented schema."""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import response_schema_conformance
from testenv import examples

from .conftest import ApiEnv

#: Examples per operation (valid chat calls run the whole pipeline, so keep this modest).
EXAMPLES = 10


def test_no_input_makes_the_server_fail(env_sqlite: ApiEnv) -> None:
    env = env_sqlite
    schema = schemathesis.openapi.from_asgi("/openapi.json", env.app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15
    seen: dict[str, set[int]] = {}

    for operation in operations:
        label = f"{operation.method.upper()} {operation.path}"

        @settings(
            max_examples=examples(EXAMPLES), deadline=None, suppress_health_check=list(HealthCheck)
        )
        @given(case=operation.as_strategy())
        def run(case: Any, who: str, label: str) -> None:
            response = case.call(headers=env.auth(who))
            assert response.status_code < 500, (label, who, response.status_code, response.text)
            seen.setdefault(label, set()).add(response.status_code)
            if 200 <= response.status_code < 300 and "json" in response.headers.get(
                "content-type", ""
            ):
                case.validate_response(response, checks=[response_schema_conformance])

        for who in ("member", "admin"):
            run(who=who, label=label)
    assert set(seen) == {f"{o.method.upper()} {o.path}" for o in operations}
