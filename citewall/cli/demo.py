"""`citewall demo`: ingest the demo KB (incrementally), make demo users, print their tokens,
and serve on localhost. The README's first command ends here."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from pydantic import SecretStr

from citewall.cli.demo_helpdesk import DemoHelpdesk
from citewall.cli.errors import cli_errors
from citewall.config import Settings, check_example_questions
from citewall.errors import ConfigError, NotFoundError
from citewall.storage import users
from citewall.text.question import clean_question

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from citewall.runtime import Runtime

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
#: The demo member's question the demo KB does not answer, handed over to the demo helpdesk.
HANDOFF_QUESTION = "Can I change the delivery address after the parcel has shipped?"
HANDOFF_MESSAGE = "The parcel is already on its way: can someone look at it?"
#: The demo member's question the demo KB answers, asked as if a little more than the
#: resolution window ago, so the Resolution page has a decided ``resolved`` conversation beside
#: the escalated one (an outcome is counted only once its window has closed).
RESOLVED_QUESTION = "How long do refunds take?"


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


def with_demo_helpdesk(settings: Settings, helpdesk: DemoHelpdesk, public_url: str) -> Settings:
    """``settings`` delivering handoffs to the demo's own helpdesk on loopback, unless
    ``CITEWALL_HANDOFF_WEBHOOK_URL`` chose a real one."""
    if settings.handoff_webhook_url:
        return settings
    return settings.model_copy(
        update={
            "handoff_webhook_url": helpdesk.url,
            "handoff_webhook_secret": SecretStr(helpdesk.secret),
            "public_url": settings.public_url or public_url,
        }
    )


def seed_support_history(runtime: Runtime) -> bool:
    """Once per demo member: the demo member asked a question the KB answers a little more
    than the resolution window ago (a resolved conversation), and now asks one it does not
    cover, then asks for a person (an escalated one), so the Handoffs and Resolution pages have
    something to show. True when it was made now."""
    # Deferred: the answer pipeline imports the models' libraries, and the serve boundary
    # costs most of a second; `citewall --help` should not pay for them.
    from citewall.chat.turn import run_turn
    from citewall.handoff.request import request_handoff
    from citewall.storage.handoffs import has_handoff

    with runtime.session_factory() as session:
        member = users.get_user(session, DEMO_USERS[0][0])
        if has_handoff(session, member.id):
            return False
    closed = runtime.clock() - timedelta(hours=runtime.settings.resolution_window_hours + 1)
    run_turn(
        replace(runtime, clock=lambda: closed),
        user_id=member.id,
        viewer=users.viewer_of(member),
        question=clean_question(RESOLVED_QUESTION),
        conversation_id=None,
    )
    turn = run_turn(
        runtime,
        user_id=member.id,
        viewer=users.viewer_of(member),
        question=clean_question(HANDOFF_QUESTION),
        conversation_id=None,
    )
    with runtime.session_factory() as session:
        request_handoff(
            session,
            runtime.settings,
            member=member,
            conversation_id=turn.conversation_id,
            message=HANDOFF_MESSAGE,
            now=runtime.clock(),
        )
    return True


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
        from citewall.cli.sources import run_line
        from citewall.config import get_settings
        from citewall.ingest.sync import sync_source
        from citewall.retrieval.embedder import load_embedder
        from citewall.runtime import Runtime
        from citewall.storage import db, kb_sources, schema
        from citewall.storage.models import SourceKind
        from citewall.storage.types import utcnow

        settings = get_settings()
        kb_path = kb or default_kb()
        if not kb_path.exists():
            raise ConfigError(f"demo KB {kb_path} not found; pass --kb PATH")
        schema.migrate(settings.sqlalchemy_url)
        typer.echo("citewall demo: loading the embedding model...", err=True)
        embedder = load_embedder(settings)
        engine = db.make_engine(settings.sqlalchemy_url)
        sessions = db.make_session_factory(engine)
        # The demo KB is a registered source, synced like any other (the admin's source list
        # is not empty on a fresh machine, and a card removed from the file leaves the KB).
        kind: SourceKind = "folder" if kb_path.is_dir() else "cards"
        location = str(kb_path.resolve())
        with sessions() as session:
            source = kb_sources.ensure_source(session, kind, location, now=utcnow())
        run = sync_source(
            source.id, settings, session_factory=sessions, embedder=embedder, progress=True
        )
        engine.dispose()
        typer.echo(f"demo KB {kb_path} (source {source.id}): {run_line(run)}")
        for refused in run.refusals:
            typer.echo(f"refused: {refused.reason}", err=True)
        port = port or settings.port
        helpdesk = DemoHelpdesk().start()
        served = with_demo_helpdesk(
            with_demo_examples(settings, kb_path), helpdesk, f"http://{host}:{port}"
        )
        runtime = Runtime.from_settings(served, embedder=embedder)
        tokens = demo_tokens(runtime.session_factory)
        seeded = (
            seed_support_history(runtime) if served.handoff_webhook_url == helpdesk.url else False
        )
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
    if served.handoff_webhook_url == helpdesk.url:
        typer.echo(
            f"Handoffs go to the demo helpdesk at {helpdesk.url} (a stand-in for Zendesk or "
            "Help Scout, docs/handoff.md)"
            + (
                "; the demo member asked one question answered a few days ago (resolved) and"
                " has asked for a person once (escalated)."
                if seeded
                else "."
            )
        )
        typer.echo(f"Admin pages: http://{host}:{port}/admin/handoffs and /admin/resolution")
        typer.echo("")
    try:
        run_server(runtime, host, port, settings.log_level)
    finally:
        helpdesk.stop()
