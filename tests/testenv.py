"""How the test run is configured: CI or not, and the property-test profile.

Property tests: under CI (``CI`` set, as ``scripts/test`` and ``.ci/run`` do) they replay the same
examples every run, so a submission never fails on an example nobody looked for. The explore run
(``scripts/test --explore``) searches at random with ten times as many examples and keeps what it
finds in ``.hypothesis/`` (not in git), so later local runs replay it first.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: A PostgreSQL server's maintenance database: tests create (and drop) their databases there.
PG_ADMIN_URL = os.environ.get(
    "CITEWALL_TEST_PG_ADMIN_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
#: Redis for the shared rate limit (scripts/services starts it); tests use unique key prefixes.
REDIS_URL = os.environ.get("CITEWALL_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")

IN_CI = os.environ.get("CI", "").lower() not in {"", "0", "false", "no"}

settings.register_profile("ci", derandomize=True, deadline=None, database=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.register_profile("explore", deadline=None, suppress_health_check=[HealthCheck.too_slow])
HYPOTHESIS_PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if IN_CI else "dev")
settings.load_profile(HYPOTHESIS_PROFILE)


def examples(n: int) -> int:
    """A property test's example count: ``n``, or ten times ``n`` in the explore run."""
    return n * 10 if HYPOTHESIS_PROFILE == "explore" else n
