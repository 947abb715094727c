"""``python -m tests.e2e.debezium.scenario write-sample <dir> | coverage``."""

from tests.e2e.waves import scenario_main

from . import build_scenario

scenario_main("python -m tests.e2e.debezium.scenario", build_scenario)
