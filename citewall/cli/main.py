"""The ``citewall`` command line. Each command lives in its own module; this file assembles them.

Heavy imports (torch, Chroma) happen inside the commands, so ``citewall --help`` is instant.
"""

from __future__ import annotations

import typer

from citewall.cli import (
    analytics,
    ask,
    bench,
    demo,
    evaluate,
    ingest,
    retention,
    serve,
    sources,
    users,
)

app = typer.Typer(
    name="citewall",
    help="Retrieval-augmented chat with honest citations and a protected corpus.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.command("serve")(serve.serve)
app.command("ingest")(ingest.ingest)
app.command("ask")(ask.ask)
app.command("demo")(demo.demo)
app.command("sync")(sources.sync)
app.add_typer(sources.app, name="sources")
app.add_typer(users.app, name="users")
app.add_typer(evaluate.app, name="eval")
app.add_typer(bench.app, name="bench")
app.add_typer(analytics.app, name="analytics")
app.add_typer(retention.app, name="retention")


if __name__ == "__main__":  # pragma: no cover
    app()
