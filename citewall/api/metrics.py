"""Prometheus metrics, one registry per app (so several apps in one process do not collide).

Latency is labelled by route template (``/api/v1/conversations/{conversation_id}``), never by
raw path, so ids cannot blow up the label set.
"""

from __future__ import annotations

import time
from typing import Literal

from prometheus_client import CollectorRegistry, Counter, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: How a sign-in came: a member's host token, or the admin proxy's assertion.
SignInKind = Literal["member", "admin_proxy"]

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class ApiMetrics:
    """The counters and histograms citewall exports at ``/metrics``."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.request_seconds = Histogram(
            "citewall_http_request_duration_seconds",
            "HTTP request latency by route template, method and status",
            ["route", "method", "status"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.answers = Counter(
            "citewall_answers_total",
            "Answered chat turns by hybrid_path (none = nothing retrieved)",
            ["hybrid_path"],
            registry=self.registry,
        )
        self.rerank_over_budget = Counter(
            "citewall_rerank_over_budget_total",
            "Turns whose cross-encoder rerank ran over rerank_budget_ms (served rrf_only)",
            registry=self.registry,
        )
        self.dropped_markers = Counter(
            "citewall_dropped_markers_total",
            "[n] markers the generator wrote that pointed outside the context (dropped)",
            registry=self.registry,
        )
        self.stopped = Counter(
            "citewall_answers_stopped_total",
            "Streamed answers the member stopped (closed the connection) mid-answer, by whether "
            "the prose said so far was stored",
            ["stored"],
            registry=self.registry,
        )
        self.rate_limit_redis_errors = Counter(
            "citewall_rate_limit_redis_errors_total",
            "Rate-limit checks that could not reach Redis (then failing open or closed as "
            "CITEWALL_RATE_LIMIT_REDIS_DOWN says)",
            registry=self.registry,
        )
        self.restricted = Counter(
            "citewall_answers_restricted_total",
            "Turns answered from external cards only: the member's exposure budget was spent",
            registry=self.registry,
        )
        self.exposure_alerts = Counter(
            "citewall_exposure_alerts_total",
            "Members who spent their exposure budget (counted at the first restricted turn "
            "of a window)",
            registry=self.registry,
        )
        self.sign_ins = Counter(
            "citewall_sign_ins_total",
            "Sign-ins by kind (member: a host token exchanged for a session; admin_proxy: a "
            "request authenticated by the proxy's assertion) and outcome (ok or the reason "
            "it was refused)",
            ["kind", "outcome"],
            registry=self.registry,
        )
        self.chat_errors = Counter(
            "citewall_chat_errors_total",
            "Chat turns that failed, by error class",
            ["kind"],
            registry=self.registry,
        )

    def record_answer(self, hybrid_path: str | None, dropped: int, over_budget: bool) -> None:
        """Count one answered turn."""
        self.answers.labels(hybrid_path=hybrid_path or "none").inc()
        if dropped:
            self.dropped_markers.inc(dropped)
        if over_budget:
            self.rerank_over_budget.inc()

    def record_restriction(self, restricted: bool, alert: bool) -> None:
        """Count a turn limited by the exposure budget, and the alert of its first one."""
        if restricted:
            self.restricted.inc()
        if alert:
            self.exposure_alerts.inc()

    def record_stop(self, stored: bool) -> None:
        """Count one answer the member stopped."""
        self.stopped.labels(stored="true" if stored else "false").inc()

    def record_sign_in(self, kind: SignInKind, outcome: str) -> None:
        """Count one sign-in: ``outcome`` is ``ok`` or the refusal's reason."""
        self.sign_ins.labels(kind=kind, outcome=outcome).inc()

    def record_error(self, exc: BaseException) -> None:
        self.chat_errors.labels(kind=type(exc).__name__).inc()


def route_label(scope: Scope) -> str:
    """The matched route's path template, ``static`` for files, or ``unmatched``."""
    route = scope.get("route")
    template = getattr(route, "path", None)
    if isinstance(template, str):
        return template
    return "unmatched" if scope.get("endpoint") is None else "static"


class MetricsMiddleware:
    """Times every HTTP request (to the end of the body, streams included)."""

    def __init__(self, app: ASGIApp, metrics: ApiMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            self.metrics.request_seconds.labels(
                route=route_label(scope), method=scope.get("method", ""), status=str(status)
            ).observe(time.perf_counter() - start)
