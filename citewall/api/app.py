"""Assemble the FastAPI app: routers, error handlers, security headers, metrics, the SPA.

Nothing here does work per request; ``Runtime`` holds the models and the database.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from prometheus_client import Counter

from citewall import __version__
from citewall.api.allocator import cap_malloc_arenas
from citewall.api.body_timeout import BodyReadTimeoutMiddleware
from citewall.api.docs import build_docs_router
from citewall.api.errors import UnexpectedErrorMiddleware, install_error_handlers
from citewall.api.headers import ApiCorsMiddleware, SecurityHeadersMiddleware
from citewall.api.limits import (
    BodySizeLimitMiddleware,
    RateLimiter,
    SlidingWindowLimiter,
    body_limit,
    upload_body_limit,
)
from citewall.api.metrics import ApiMetrics, MetricsMiddleware
from citewall.api.responses import EncodableJSONResponse
from citewall.api.retention_schedule import RetentionSchedule
from citewall.api.routes import (
    admin,
    auth,
    chat,
    conversations,
    eval_questions,
    examples,
    feedback,
    handoff,
    health,
    me,
    playbooks,
    preview,
    privacy,
    resolution,
    search,
    sources,
    uploads,
)
from citewall.api.shared_limiter import RedisWindowLimiter, connect
from citewall.api.spa import install_spa
from citewall.api.sync_schedule import SyncSchedule
from citewall.auth.factory import build_sign_in
from citewall.config import Settings, get_settings
from citewall.handoff.delivery import Webhook
from citewall.handoff.worker import DeliveryWorker
from citewall.runtime import Runtime

DESCRIPTION = """Retrieval-augmented chat with honest citations and a protected corpus.

Members receive answers as prose (no citation markers) with external, public sources only;
admins see stored data in full. Authenticate with `Authorization: Bearer <token>`
(`citewall users add NAME --role member|admin`)."""


def create_app(runtime: Runtime | None = None) -> FastAPI:
    """The citewall ASGI app. Builds a ``Runtime`` from the environment when none is given."""
    if runtime is None:
        runtime = Runtime.from_settings(get_settings())
    app = FastAPI(
        title="citewall",
        version=__version__,
        description=DESCRIPTION,
        openapi_url="/openapi.json",
        # Served by api/docs.py from packaged assets (FastAPI's pages load them from a CDN).
        docs_url=None,
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
        default_response_class=EncodableJSONResponse,
        lifespan=background_work,
    )
    app.state.runtime = runtime
    app.state.metrics = ApiMetrics()
    app.state.limiter = build_limiter(
        runtime.settings,
        lambda: runtime.clock().timestamp(),
        app.state.metrics.rate_limit_redis_errors,
    )
    app.state.sign_in = build_sign_in(runtime.settings, clock=lambda: runtime.clock())
    install_error_handlers(app)
    routers = (
        chat,
        conversations,
        feedback,
        handoff,
        examples,
        search,
        me,
        auth,
        admin,
        playbooks,
        uploads,
        preview,
        sources,
        eval_questions,
        resolution,
        privacy,
        health,
    )
    for module in routers:
        app.include_router(module.router)
    app.include_router(build_docs_router())
    install_spa(app)  # the fallback: only what no route answers (405s and redirects first)
    # Innermost first: errors -> metrics -> CORS (answers preflights) -> security headers
    # (so every response) -> the body deadline (outermost: it times every read and closes the
    # connection of any response given before the body was in).
    embed_origins = runtime.settings.embed_origins
    app.add_middleware(
        BodySizeLimitMiddleware,
        max_bytes=body_limit(runtime.settings),
        upload_max_bytes=upload_body_limit(runtime.settings),
    )
    app.add_middleware(UnexpectedErrorMiddleware)
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)
    if embed_origins:
        app.add_middleware(ApiCorsMiddleware, origins=embed_origins)
    app.add_middleware(SecurityHeadersMiddleware, embed_origins=embed_origins)
    app.add_middleware(BodyReadTimeoutMiddleware, timeout_s=runtime.settings.body_read_timeout_s)
    return app


@asynccontextmanager
async def background_work(app: FastAPI) -> AsyncIterator[None]:
    """What the server runs beside its requests while it is up: the handoff delivery loop, when
    a helpdesk webhook is configured, the retention schedule, when a retention window is set,
    and the sync schedule of the registered sources (every process runs each; database leases
    and claims let one act at a time)."""
    runtime: Runtime = app.state.runtime
    webhook = Webhook.from_settings(runtime.settings)
    worker = None
    if webhook is not None:
        worker = DeliveryWorker(
            runtime.session_factory,
            webhook,
            poll_s=runtime.settings.handoff_poll_s,
            clock=runtime.clock,
        )
        worker.start()
    schedule = None
    if RetentionSchedule.wanted(runtime.settings):
        schedule = RetentionSchedule(runtime.session_factory, runtime.settings, runtime.clock)
        schedule.start()
    app.state.retention = schedule
    syncs = None
    if SyncSchedule.wanted(runtime.settings):
        syncs = SyncSchedule(
            runtime.session_factory, runtime.settings, runtime.embedder.model, runtime.clock
        )
        syncs.start()
    try:
        yield
    finally:
        if syncs is not None:
            syncs.stop()
        if worker is not None:
            worker.stop()
        if schedule is not None:
            schedule.stop()


def create_worker_app() -> FastAPI:
    """The app of one ``citewall serve --workers N`` process: its own Runtime and models,
    with the malloc arena cap applied before any request thread starts."""
    settings = get_settings()
    if settings.malloc_arena_max:
        cap_malloc_arenas(settings.malloc_arena_max)
    return create_app(Runtime.from_settings(settings))


def build_limiter(settings: Settings, clock: Callable[[], float], errors: Counter) -> RateLimiter:
    """The per-member rate limit: in Redis when ``CITEWALL_REDIS_URL`` is set, else in-process.

    ``clock`` gives seconds (the runtime's clock, so tests can move time); ``errors`` counts
    the checks that could not reach Redis.
    """
    if settings.redis_url:
        return RedisWindowLimiter(
            connect(settings.redis_url),
            settings.rate_limit_per_minute,
            on_down=settings.rate_limit_redis_down,
            errors=errors,
            clock=clock,
            prefix=f"{settings.redis_key_prefix}rate:",
        )
    return SlidingWindowLimiter(settings.rate_limit_per_minute, clock=clock)
