"""The evaluation workspace: a throwaway data dir with the demo and hostile KBs ingested, the
real runtime and API app, and three users (two members, one admin).

Everything is real: the packaged embedder, Chroma, bm25s, SQLite, the FastAPI app driven
in-process through ``TestClient``. Only the model behind the OpenAI-compatible generator is
a stand-in (the adversary), at the one true outer boundary.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fastapi import FastAPI

from citewall.api.app import create_app
from citewall.config import Settings, load_settings
from citewall.generation.factory import build_condenser
from citewall.generation.protocols import Generator
from citewall.ingest.pipeline import ingest_paths
from citewall.retrieval.embedder import load_embedder
from citewall.retrieval.protocols import Embedder
from citewall.runtime import Runtime
from citewall.storage import db, schema
from citewall.storage.users import create_user
from citewall_evals.data import DEMO_CARDS, HOSTILE_CARDS, require
from citewall_evals.redteam.catalogue import Catalogue


@dataclass(slots=True)
class Tokens:
    member: str
    other_member: str
    admin: str


@dataclass(slots=True)
class EvalWorkspace:
    """A ready KB, runtime and users. ``app_for`` gives the real app with a chosen generator."""

    settings: Settings
    runtime: Runtime
    catalogue: Catalogue
    tokens: Tokens
    kb_paths: list[Path]
    ingest_summary: str = ""
    #: Every question the member has asked in this workspace (their own words, see ``leaks``).
    asked: list[str] = field(default_factory=list)
    _apps: dict[str, FastAPI] = field(default_factory=dict)

    @property
    def embedder(self) -> Embedder:
        return self.runtime.embedder

    def runtime_for(self, generator: Generator) -> Runtime:
        """The same runtime (database, indexes, models) with another generator."""
        condenser = build_condenser(self.settings, generator)
        return dataclasses.replace(self.runtime, generator=generator, condenser=condenser)

    def app_for(self, name: str, generator: Generator | None = None) -> FastAPI:
        """The real FastAPI app over this workspace, generating with ``generator``."""
        if name not in self._apps:
            runtime = self.runtime if generator is None else self.runtime_for(generator)
            self._apps[name] = create_app(runtime)
        return self._apps[name]

    def app_without_abstention(self) -> FastAPI:
        """The real app with the answerability check switched off (a negative control)."""
        name = "extractive-no-abstention"
        if name not in self._apps:
            self._apps[name] = create_app(dataclasses.replace(self.runtime, thresholds=None))
        return self._apps[name]

    def close(self) -> None:
        self.runtime.close()


def workspace_settings(data_dir: Path, **overrides: object) -> Settings:
    """Settings for an evaluation run: SQLite in ``data_dir``, embedded Chroma, no rate limit
    and no exposure budget (the harness sends hundreds of requests with one token; the budget
    is measured on its own by ``citewall eval extraction``), extractive generator."""
    base: dict[str, object] = {
        "data_dir": data_dir,
        "database_url": None,
        "chroma_url": None,
        "rate_limit_per_minute": 0,
        "exposure_budget_cards": 0,
        "generator": "extractive",
    }
    base.update(overrides)
    return load_settings(**base)


def build_workspace(
    data_dir: Path,
    *,
    kb_paths: Sequence[Path] = (DEMO_CARDS, HOSTILE_CARDS),
    embedder: Embedder | None = None,
    settings_overrides: dict[str, object] | None = None,
) -> EvalWorkspace:
    """Ingest ``kb_paths`` into a fresh data dir, build the runtime and create the users."""
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = workspace_settings(data_dir, **(settings_overrides or {}))
    if embedder is None:
        embedder = load_embedder(settings)
    engine = db.make_engine(settings.sqlalchemy_url)
    schema.migrate(engine)
    session_factory = db.make_session_factory(engine)
    paths = [require(p) for p in kb_paths]
    report = ingest_paths(
        paths, settings, embedder=embedder, session_factory=session_factory, progress=False
    )
    engine.dispose()
    runtime = Runtime.from_settings(settings, embedder=embedder)
    with runtime.session_factory() as session:
        _, member = create_user(session, "eval-member", "member")
        _, other = create_user(session, "eval-member-2", "member")
        _, admin = create_user(session, "eval-admin", "admin")
        session.commit()
    return EvalWorkspace(
        settings=settings,
        runtime=runtime,
        catalogue=Catalogue.from_paths(paths),
        tokens=Tokens(member=member, other_member=other, admin=admin),
        kb_paths=paths,
        ingest_summary=report.summary(),
    )
