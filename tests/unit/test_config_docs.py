"""docs/configuration.md is generated from the settings module and dbt_project.yml's vars, and
names every environment variable the code reads and every var the project reads: adding or
renaming one without describing it, or without regenerating the file, fails here."""

from __future__ import annotations

import re

import yaml

from cdc_warehouse import config_docs
from cdc_warehouse.settings import DESCRIBED_SETTINGS, PROJECT_DIR

DOC = PROJECT_DIR / "docs" / "configuration.md"
REGENERATE = "python -m cdc_warehouse.config_docs > docs/configuration.md"
# Variables the code sets or reads for Spark, Java or the shell's own sake, not settings of an
# installation.
NOT_SETTINGS = {
    "PYSPARK_DRIVER_PYTHON",
    "PYSPARK_SUBMIT_ARGS",
    "SPARK_HOME",
    "SPARK_LOCAL_IP",
}


def python_sources():
    for folder in ("cdc_warehouse", "python_udfs"):
        yield from (PROJECT_DIR / folder).rglob("*.py")


def dbt_sources():
    for folder in ("models", "macros", "tests/dbt", "profiles"):
        for pattern in ("*.sql", "*.yml"):
            yield from (PROJECT_DIR / folder).rglob(pattern)


def test_the_file_is_what_the_generator_writes():
    assert DOC.read_text() == config_docs.render(), f"regenerate it: {REGENERATE}"


def test_every_environment_variable_the_code_reads_is_described():
    read = {
        name
        for path in python_sources()
        for name in re.findall(r"[\"']((?:CDC|SPARK|PYSPARK)_[A-Z_]+)[\"']", path.read_text())
    }
    read |= {
        name
        for path in dbt_sources()
        for name in re.findall(r"env_var\(\s*['\"](\w+)['\"]", path.read_text())
    }
    # Keyword arguments of an environment built for a child process (the benchmark's).
    read |= {
        name
        for path in python_sources()
        for name in re.findall(r"\b(CDC_[A-Z_]+)=", path.read_text())
    }
    described = {setting.name for setting in DESCRIBED_SETTINGS}
    assert read - NOT_SETTINGS - described == set()
    assert len(described) == len(DESCRIBED_SETTINGS)
    assert all(setting.meaning and setting.default for setting in DESCRIBED_SETTINGS)


def test_every_var_the_project_reads_is_declared_or_listed():
    used = {
        name
        for path in dbt_sources()
        for name in re.findall(r"\bvar\(\s*['\"]([\w:]+)['\"]", path.read_text())
    }
    declared = set(yaml.safe_load((PROJECT_DIR / "dbt_project.yml").read_text())["vars"])
    assert used - declared - set(config_docs.UNDECLARED_VARS) == set()
    assert set(config_docs.UNDECLARED_VARS) & declared == set()


def test_every_var_has_a_description():
    described = config_docs.project_vars(PROJECT_DIR / "dbt_project.yml")
    declared = yaml.safe_load((PROJECT_DIR / "dbt_project.yml").read_text())["vars"]
    assert [name for name, _, _ in described] == list(declared)
    assert all(meaning for _, _, meaning in described)
