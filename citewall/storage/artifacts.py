"""The KB's published artifacts in the database: the ``ArtifactStore`` replicas share.

``DatabaseArtifactStore`` is what ``retrieval.shared_artifacts`` pushes to and pulls from when
citewall runs on PostgreSQL with a Chroma server (``Settings.shared_kb``). A version is written
in one transaction (its row and every part), so a replica never reads half of one; the two
newest versions of each artifact are kept (a replica copying the previous one as the next is
pushed still finds it), older ones are deleted with their parts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from citewall.config import Settings
from citewall.errors import StorageError
from citewall.retrieval.shared_artifacts import StoredVersion
from citewall.storage.failures import storage_errors
from citewall.storage.models import KBArtifact, KBArtifactPart
from citewall.storage.schema import open_database

#: Versions of each artifact kept in the database.
KEEP_VERSIONS = 2


class DatabaseArtifactStore:
    """An ``ArtifactStore`` over the citewall database; every call uses a session of its own."""

    def __init__(self, sessions: Callable[[], Session]) -> None:
        self._sessions = sessions

    def latest(self, name: str) -> StoredVersion | None:
        with self._sessions() as session, storage_errors(session, f"reading the {name} version"):
            row = session.execute(
                select(KBArtifact.version, KBArtifact.sha256, KBArtifact.size)
                .where(KBArtifact.name == name)
                .order_by(KBArtifact.id.desc())
                .limit(1)
            ).first()
        return None if row is None else StoredVersion(row.version, row.sha256, int(row.size))

    def parts(self, name: str, version: str) -> Iterator[bytes]:
        with self._sessions() as session, storage_errors(session, f"reading {name} {version}"):
            artifact_id = session.scalar(
                select(KBArtifact.id).where(KBArtifact.name == name, KBArtifact.version == version)
            )
            if artifact_id is None:
                raise StorageError(f"{name} {version} is no longer stored")
            numbers = session.scalars(
                select(KBArtifactPart.part)
                .where(KBArtifactPart.artifact_id == artifact_id)
                .order_by(KBArtifactPart.part)
            ).all()
            for number in numbers:  # one part in memory at a time
                yield session.scalars(
                    select(KBArtifactPart.payload).where(
                        KBArtifactPart.artifact_id == artifact_id, KBArtifactPart.part == number
                    )
                ).one()

    def put(self, name: str, stored: StoredVersion, parts: Iterable[bytes]) -> None:
        action = f"storing {name} {stored.version}"
        with self._sessions() as session, storage_errors(session, action, catch_all=True):
            artifact = KBArtifact(
                name=name, version=stored.version, sha256=stored.sha256, size=stored.size
            )
            session.add(artifact)
            session.flush()
            for number, payload in enumerate(parts):  # one part in memory at a time
                session.execute(
                    insert(KBArtifactPart).values(
                        artifact_id=artifact.id, part=number, payload=payload
                    )
                )
            older = session.scalars(
                select(KBArtifact.id)
                .where(KBArtifact.name == name)
                .order_by(KBArtifact.id.desc())
                .offset(KEEP_VERSIONS)
            ).all()
            if older:
                session.execute(delete(KBArtifactPart).where(KBArtifactPart.artifact_id.in_(older)))
                session.execute(delete(KBArtifact).where(KBArtifact.id.in_(older)))
            session.commit()


def shared_store(settings: Settings) -> DatabaseArtifactStore | None:
    """The database's artifact store when ``settings`` run on shared services, else None
    (opens, and if needed migrates, the database)."""
    if not settings.shared_kb:
        return None
    return DatabaseArtifactStore(open_database(settings.sqlalchemy_url).sessions)
