"""The PostgreSQL server the tests run against: `.ci/run` starts one and exports its DSN; locally
`scripts/pg_cluster.sh start DIR` prints one. Without it a PostgreSQL test skips, except under CI,
where a missing server must fail the run rather than pass it quietly."""

from __future__ import annotations

import os

import pytest

PG_DSN_ENV = "AGENT_EXPLORER_TEST_PG_DSN"


def pg_dsn() -> str:
    """The test server's DSN; absent means skip locally, but under CI=true it is a failure."""
    dsn = os.environ.get(PG_DSN_ENV)
    if not dsn:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true but {PG_DSN_ENV} is not set: the PostgreSQL tests must run in CI (.ci/run starts a cluster)")
        pytest.skip(f"no PostgreSQL: set {PG_DSN_ENV} (scripts/pg_cluster.sh start DIR prints one)")
    return dsn

