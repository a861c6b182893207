"""`citewall serve --host H --port P`: one Runtime (models loaded once), served by uvicorn."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from citewall.cli.errors import cli_errors

if TYPE_CHECKING:
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
    uvicorn.run(app, host=host, port=port, log_level=log_level, proxy_headers=False)


def serve(
    host: str | None = typer.Option(None, "--host", help="Bind address [CITEWALL_HOST]."),
    port: int | None = typer.Option(None, "--port", min=1, max=65535, help="[CITEWALL_PORT]"),
) -> None:
    """Serve the HTTP API and the web UI (migrations run first; models load once)."""
    with cli_errors():
        # Deferred: the models and indexes take seconds to import; `citewall --help` should not.
        from citewall.config import get_settings
        from citewall.runtime import Runtime

        settings = get_settings()
        typer.echo("citewall: loading models and opening the database...", err=True)
        runtime = Runtime.from_settings(settings)
    run_server(runtime, host or settings.host, port or settings.port, settings.log_level)
