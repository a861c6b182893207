"""`citewall serve --host H --port P [--workers N]`: uvicorn serving one Runtime per process.

One worker (the default) serves the Runtime this process built. With ``--workers N`` this
process migrates the database once and loads no model; uvicorn starts N worker processes, each
building its own Runtime (models loaded once per worker, the malloc arena cap and thread
settings applied in each) and sharing the port. Limits meant to hold across workers need
``CITEWALL_REDIS_URL`` (docs/api.md). An idle connection is closed after
``CITEWALL_KEEP_ALIVE_TIMEOUT_S`` (uvicorn's ``timeout_keep_alive``); a body slower than
``CITEWALL_BODY_READ_TIMEOUT_S`` is cut off by the app (``api/body_timeout.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from citewall.cli.errors import cli_errors

if TYPE_CHECKING:
    from citewall.config import Settings
    from citewall.runtime import Runtime


def run_server(runtime: Runtime, host: str, port: int, log_level: str) -> None:
    """Serve ``create_app(runtime)`` until interrupted (one worker: the models live here)."""
    # Deferred: FastAPI and uvicorn take a second to import; `citewall --help` should not.
    import uvicorn

    from citewall.api.allocator import cap_malloc_arenas
    from citewall.api.app import create_app

    if runtime.settings.malloc_arena_max:
        cap_malloc_arenas(runtime.settings.malloc_arena_max)

    app = create_app(runtime)
    typer.echo(f"citewall: serving on http://{host}:{port}  (API docs: http://{host}:{port}/docs)")
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        proxy_headers=False,
        timeout_keep_alive=runtime.settings.keep_alive_timeout_s,
    )


def run_workers(host: str, port: int, workers: int, settings: Settings) -> None:
    """Serve with ``workers`` processes, each calling ``create_worker_app``."""
    # Deferred: uvicorn takes a second to import; `citewall --help` should not.
    import uvicorn

    typer.echo(
        f"citewall: serving on http://{host}:{port} with {workers} workers "
        f"(API docs: http://{host}:{port}/docs)"
    )
    uvicorn.run(
        "citewall.api.app:create_worker_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=settings.log_level,
        proxy_headers=False,
        timeout_keep_alive=settings.keep_alive_timeout_s,
    )


def serve(
    host: str | None = typer.Option(None, "--host", help="Bind address [CITEWALL_HOST]."),
    port: int | None = typer.Option(None, "--port", min=1, max=65535, help="[CITEWALL_PORT]"),
    workers: int = typer.Option(
        1, "--workers", min=1, max=64, help="Worker processes, each with its own models."
    ),
) -> None:
    """Serve the HTTP API and the web UI (migrations run first; models load once per worker)."""
    if workers > 1:
        with cli_errors():
            # Deferred: SQLAlchemy and the settings cost time to import; `--help` should not.
            from citewall.config import get_settings
            from citewall.storage import db, schema

            settings = get_settings()
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            engine = db.make_engine(settings.sqlalchemy_url)
            try:  # once, here: N workers migrating at once would race
                schema.migrate(engine)
            finally:
                engine.dispose()
        run_workers(host or settings.host, port or settings.port, workers, settings)
        return
    with cli_errors():
        # Deferred: the models and indexes take seconds to import; `citewall --help` should not.
        from citewall.config import get_settings
        from citewall.runtime import Runtime

        settings = get_settings()
        typer.echo("citewall: loading models and opening the database...", err=True)
        runtime = Runtime.from_settings(settings)
    run_server(runtime, host or settings.host, port or settings.port, settings.log_level)
