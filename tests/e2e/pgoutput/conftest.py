"""One real PostgreSQL 15 and one run of its workload (workload.py) for the package:
the harness's own checks (test_harness_smoke.py) and the warehouse's (test_pgoutput_pipeline.py)
read the same captured waves; tests/conftest.py keeps both modules on one worker, so that the
server starts and the workload runs once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest

from tests.e2e.pgoutput.workload import run_workload

# Absolute, as test_harness_smoke.py imports them: its `except PostgresError` must catch what
# this server raises (tests/ is no package: `.postgres` would be a second module, pg.postgres).
from tests.postgres import LocalPostgres


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "postgres: starts a real local PostgreSQL 15 (installed with apt-get if missing, as root)",
    )


class PostgresWorkload(NamedTuple):
    # The server, still running (the workload's slots unread since its last wave).
    pg: LocalPostgres
    # run_workload's waves: not to be changed by a test.
    waves: list[dict[str, Any]]


@pytest.fixture(scope="package")
def postgres_workload(tmp_path_factory) -> Iterator[PostgresWorkload]:
    with LocalPostgres(tmp_path_factory.mktemp("postgres")) as pg:
        yield PostgresWorkload(pg, run_workload(pg))
