"""Fixtures shared by the end-to-end modules."""

from __future__ import annotations

import pytest

from tests.conftest import Pipeline

from .datastream.scenario import declared_tables_yaml
from .families import FamiliesRun, run_families


@pytest.fixture(scope="session")
def families_run(tmp_path_factory, java_available) -> FamiliesRun:
    """Every family's scenario wave by wave in one warehouse (tests/e2e/families.py). The
    modules that use it run on one worker, one after another (tests/conftest.py), and build it
    once."""
    return run_families(Pipeline(tmp_path_factory.mktemp("families"), declared_tables_yaml()))
