"""`citewall demo`: ingest the demo KB (incrementally), make demo users, print their tokens,
and serve on localhost. The README's first command ends here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from citewall.cli.errors import cli_errors
from citewall.config import Settings, check_example_questions
from citewall.errors import ConfigError, NotFoundError
from citewall.storage import users

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

#: The demo KB shipped in the repository (``kb/demo``), found from the source tree or the cwd.
REPO_KB = Path(__file__).resolve().parents[2] / "kb" / "demo"
#: Name, role and groups: ``demo-enterprise`` is a member of the ``enterprise`` audience and
#: also sees the cards of ``kb/demo/enterprise/`` (docs/audiences.md).
DEMO_USERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("demo-member", "member", ()),
    ("demo-enterprise", "member", ("enterprise",)),
    ("demo-admin", "admin", ()),
)
#: The demo KB's example questions (about its external help pages only), beside its cards.
EXAMPLES_FILE = "examples.json"


def default_kb() -> Path:
    return REPO_KB if REPO_KB.is_dir() else Path("kb/demo")


def with_demo_examples(settings: Settings, kb_path: Path) -> Settings:
    """``settings`` with the example questions of the demo KB at ``kb_path`` (the
    ``examples.json`` in its folder), unless ``CITEWALL_EXAMPLE_QUESTIONS`` chose some."""
    folder = kb_path if kb_path.is_dir() else kb_path.parent
    path = folder / EXAMPLES_FILE
    if "example_questions" in settings.model_fields_set or not path.is_file():
        return settings
    try:
        questions = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(questions, list) or not all(isinstance(q, str) for q in questions):
            raise ValueError("expected a JSON list of strings")
        questions = check_example_questions(questions)
    except ValueError as exc:  # JSONDecodeError is a ValueError
        raise ConfigError(f"{path}: {exc}") from None
    return settings.model_copy(update={"example_questions": questions})


def demo_tokens(session_factory: sessionmaker[Session]) -> dict[str, str]:
    """Create the demo users if absent; issue each a fresh token. ``{name: token}``."""
    tokens: dict[str, str] = {}
    with session_factory() as session:
        for name, role, groups in DEMO_USERS:
            try:
                user = users.get_user(session, name)
            except NotFoundError:
                _, tokens[name] = users.create_user(session, name, role, groups)
                continue
            tokens[name] = users.add_token(session, user)
    return tokens


def demo(
    kb: Path = typer.Option(None, "--kb", help="Demo KB folder or file [kb/demo]."),
    host: str = typer.Option("127.0.0.1", "--host", help="Bind address (localhost by default)."),
    port: int | None = typer.Option(None, "--port", min=1, max=65535, help="[CITEWALL_PORT]"),
) -> None:
    """Set up the demo KB and users, print their tokens, then serve."""
    with cli_errors():
        # Deferred: models, indexes and FastAPI take seconds to import; `citewall --help`
        # should not.
        from citewall.cli.serve import run_server
        from citewall.config import get_settings
        from citewall.ingest.pipeline import ingest_paths
        from citewall.retrieval.embedder import load_embedder
        from citewall.runtime import Runtime
        from citewall.storage import db, schema

        settings = get_settings()
        kb_path = kb or default_kb()
        if not kb_path.exists():
            raise ConfigError(f"demo KB {kb_path} not found; pass --kb PATH")
        schema.migrate(settings.sqlalchemy_url)
        typer.echo("citewall demo: loading the embedding model...", err=True)
        embedder = load_embedder(settings)
        engine = db.make_engine(settings.sqlalchemy_url)
        report = ingest_paths(
            [kb_path], settings, embedder=embedder, session_factory=db.make_session_factory(engine)
        )
        engine.dispose()
        typer.echo(f"demo KB {kb_path}: {report.summary()}")
        for err in report.errors:
            typer.echo(f"refused: {err}", err=True)
        runtime = Runtime.from_settings(with_demo_examples(settings, kb_path), embedder=embedder)
        tokens = demo_tokens(runtime.session_factory)
    port = port or settings.port
    typer.echo("")
    typer.echo("Demo users (fresh tokens, shown once):")
    for name, role, groups in DEMO_USERS:
        shown = f" ({', '.join(groups)})" if groups else ""
        typer.echo(f"  {role:<6} {name + shown:<28} {tokens[name]}")
    typer.echo("")
    typer.echo(f"Open http://{host}:{port}/ and paste the member token, or try:")
    typer.echo(
        f"  curl -s -H 'Authorization: Bearer {tokens['demo-member']}' "
        f"-H 'Content-Type: application/json' -d '{{\"message\": \"How long do refunds take?\"}}' "
        f"http://{host}:{port}/api/v1/chat"
    )
    typer.echo("")
    run_server(runtime, host, port, settings.log_level)
