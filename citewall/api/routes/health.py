"""Liveness, readiness and Prometheus metrics (no user auth: they carry no KB content).

``/metrics`` needs ``CITEWALL_METRICS_TOKEN`` as a bearer token when that is set: its counters
describe the deployment and its traffic.

``/readyz`` answers everyone with its status alone; the details (database, vector store,
lexical index, reranker name and state) need an admin token, since they describe the
deployment (a reranker configured by path names a directory of the server).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from citewall.api.deps import (
    LimiterDep,
    MetricsDep,
    RuntimeDep,
    SignInDep,
    is_admin_caller,
    require_metrics_token,
)
from citewall.api.responses import error_responses
from citewall.errors import CitewallError
from citewall.storage import db

log = logging.getLogger("citewall.api")
router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """The process is up (no dependency is checked)."""
    return {"status": "ok"}


@router.get("/readyz", responses=error_responses(503))
def readyz(
    runtime: RuntimeDep,
    request: Request,
    limiter: LimiterDep,
    sign_in: SignInDep,
    metrics: MetricsDep,
) -> JSONResponse:
    """``{"status": "ready"}``, or ``"unavailable"`` with 503 when a required part is down.

    For an admin (the proxy's assertion when the admin proxy is configured, else an admin
    bearer token) the answer adds ``checks``: database, vector store, lexical
    index and reranker state, the abstention decision in use (``retrieval.answerability``:
    its thresholds, whether they are the KB's calibration or an operator's override, and the
    stored fit), and the rate limit (shared in Redis or per process; Redis down
    makes the server unready only when the limit fails closed). The lexical index and the
    reranker are optional (retrieval degrades to dense_only / rrf_only and says so); the
    database and the vector store are required.
    """
    checks: dict[str, Any] = {}
    ready = True
    try:
        db.check_database(runtime.engine)
        checks["database"] = {"ok": True}
    except CitewallError as exc:
        ready = False
        log.warning("readiness: %s", exc)
        # The message names the database host; unauthenticated callers get a fixed one.
        checks["database"] = {"ok": False, "error": "unreachable (see the server log)"}
    rate_limit = limiter.status()
    checks["rate_limit"] = rate_limit
    if not rate_limit["ok"] and rate_limit.get("when_down") == "closed":
        ready = False  # every request would be refused
    retrieval = runtime.retriever_status()
    if not vector_store_ok(retrieval):
        ready = False
    checks["retrieval"] = without_error_details(retrieval)
    body: dict[str, Any] = {"status": "ready" if ready else "unavailable"}
    if is_admin_caller(request, runtime, sign_in, metrics):
        body["checks"] = checks
    return JSONResponse(body, status_code=200 if ready else 503)


def without_error_details(status: dict[str, Any]) -> dict[str, Any]:
    """The retrieval status with raw error texts (paths, hosts) logged and replaced.

    Even for admins /readyz says which part is down and the server log says why (an error
    text may name hosts or files). The reranker's status line stays, since it tells operators
    how to enable reranking.
    """
    public: dict[str, Any] = {}
    for part, value in status.items():
        if part == "error":
            log.warning("readiness: retrieval: %s", value)
            public[part] = "retrieval unavailable (see the server log)"
        elif isinstance(value, dict) and value.get("error"):
            log.warning("readiness: %s: %s", part, value["error"])
            public[part] = {**value, "error": f"{part} unavailable (see the server log)"}
        else:
            public[part] = value
    return public


def vector_store_ok(status: dict[str, Any]) -> bool:
    """Whether the retriever reports a reachable vector store."""
    if "error" in status:
        return False
    store = status.get("vector_store")
    if isinstance(store, dict):
        return bool(store.get("ok", True)) and store.get("error") is None
    return True


@router.get(
    "/metrics",
    response_class=Response,
    dependencies=[Depends(require_metrics_token)],
    responses=error_responses(
        described={401: "CITEWALL_METRICS_TOKEN is set and the request's bearer token is not it."}
    ),
)
def metrics(api_metrics: MetricsDep) -> Response:
    """Prometheus text exposition; with ``CITEWALL_METRICS_TOKEN`` set, only for that token."""
    return Response(generate_latest(api_metrics.registry), media_type=CONTENT_TYPE_LATEST)
