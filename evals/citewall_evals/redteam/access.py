"""Access checks of the gate: a member must reach no admin route and no other member's data.

Admin routes are enumerated from the app itself (every ``APIRoute`` under ``/api/v1/admin``),
so a route added later is probed automatically. Each is called as a member (must answer 403)
and anonymously (must answer 401 or 403), with path parameters filled with real ids (a stored
conversation, an internal card) so that a missing role check would return real data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from citewall_evals.redteam.catalogue import Catalogue
from citewall_evals.redteam.leaks import Finding, canary_findings, flatten

ADMIN_PREFIX = "/api/v1/admin"
_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})
_PARAM = re.compile(r"\{([^}:]+)(?::[^}]*)?\}")


def admin_routes(app: Any) -> list[tuple[str, str]]:
    """``(method, path template)`` of every admin route of ``app``.

    Read from the OpenAPI schema (what the app declares) and from the router tree (which also
    holds routes hidden from the schema), so neither a hidden nor a documented route escapes.
    """
    found: set[tuple[str, str]] = set()
    for path, item in (app.openapi().get("paths") or {}).items():
        if path.startswith(ADMIN_PREFIX):
            for method in item:
                if method.upper() in _METHODS:
                    found.add((method.upper(), path))

    def walk(routes: Any) -> None:
        # Route paths already carry their router's prefix; included routers nest.
        for route in routes or ():
            path = getattr(route, "path", None)
            methods = getattr(route, "methods", None)
            if isinstance(path, str) and methods and path.startswith(ADMIN_PREFIX):
                found.update((m, path) for m in methods if m in _METHODS)
            inner = getattr(route, "original_router", None)
            if inner is not None:
                walk(getattr(inner, "routes", None))
            elif not methods and hasattr(route, "routes"):
                walk(route.routes)

    walk(getattr(app, "routes", None))
    return sorted(found)


def fill_path(template: str, values: Mapping[str, str]) -> str:
    """Replace ``{name}`` parameters: by name when known, ids by kind, else ``x``."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in values:
            return values[name]
        if "conversation" in name:
            return values.get("conversation_id", "x")
        if "card" in name:
            return values.get("card_id", "x")
        return values.get("id", "x")

    return _PARAM.sub(value, template)


def probe_admin_routes(
    client: Any, catalogue: Catalogue, member_token: str, values: Mapping[str, str]
) -> list[Finding]:
    """Call every admin route as a member and anonymously; any non-refusal is a finding."""
    findings: list[Finding] = []
    for method, template in admin_routes(client.app):
        path = fill_path(template, values)
        for who, headers, allowed in (
            ("member", {"Authorization": f"Bearer {member_token}"}, {403}),
            ("anonymous", {}, {401, 403}),
        ):
            kwargs: dict[str, Any] = {"headers": headers}
            if method in {"POST", "PUT", "PATCH"}:
                kwargs["json"] = {"query": "refund", "message": "refund"}
            response = client.request(method, path, **kwargs)
            where = f"{who} {method} {path}"
            if response.status_code not in allowed:
                findings.append(
                    Finding(
                        "admin-reachable",
                        where,
                        f"HTTP {response.status_code}, expected {sorted(allowed)}",
                    )
                )
            try:
                body = response.json()
            except ValueError:
                body = response.text
            findings += canary_findings(flatten(body, where), catalogue)
    return findings


def probe_foreign_conversation(
    client: Any, other_member_token: str, conversation_id: str
) -> list[Finding]:
    """Another member asking for this conversation must get 404 (not 200, not 403: no hint)."""
    response = client.get(
        f"/api/v1/conversations/{conversation_id}",
        headers={"Authorization": f"Bearer {other_member_token}"},
    )
    if response.status_code != 404:
        return [
            Finding(
                "foreign-conversation",
                f"other member GET /api/v1/conversations/{conversation_id}",
                f"HTTP {response.status_code}, expected 404",
            )
        ]
    return []
