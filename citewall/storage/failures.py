"""Turning database failures into ``StorageError``: rolled back, one line, no SQL or parameters.

A raw SQLAlchemy message carries the statement and its bound values (token hashes, message
text); none of that belongs in an error a caller may print or return.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress

from sqlalchemy.exc import DBAPIError, SQLAlchemyError, StatementError
from sqlalchemy.orm import Session

from citewall.errors import CitewallError, StorageError


def failure_summary(exc: BaseException) -> str:
    """The first line of the underlying driver error (or of ``exc``), without SQL/parameters."""
    inner: BaseException = exc
    if isinstance(exc, DBAPIError | StatementError) and exc.orig is not None:
        inner = exc.orig
    text = str(inner).strip().splitlines()
    first = text[0].strip() if text else ""
    return first or type(inner).__name__


def _rollback(session: Session) -> None:
    # If the connection is gone the database has discarded the transaction anyway.
    with suppress(SQLAlchemyError):
        session.rollback()


@contextmanager
def storage_errors(session: Session, action: str, *, catch_all: bool = False) -> Iterator[None]:
    """Roll ``session`` back on any failure; re-raise database failures as ``StorageError``.

    citewall's own errors pass through unchanged (after the rollback). With ``catch_all`` any
    other exception also becomes a ``StorageError``: for writes that must be all-or-nothing.
    """
    try:
        yield
    except CitewallError:
        _rollback(session)
        raise
    except Exception as exc:
        _rollback(session)
        if not (catch_all or isinstance(exc, SQLAlchemyError)):
            raise
        raise StorageError(f"{action} failed and was rolled back: {failure_summary(exc)}") from exc
