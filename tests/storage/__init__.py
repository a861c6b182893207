"""Storage tests (a package so module names do not clash with tests/cli)."""
