"""Alembic migrations for citewall's schema, run programmatically by ``citewall.storage.db``."""
