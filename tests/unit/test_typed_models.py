"""What `cdcw generate-typed-models` writes, without Spark: names, yml entries, the tables it
leaves alone, and the system columns it shares with macros/marts/typed_system_columns.sql."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import yaml

from cdc_warehouse import typed_models
from cdc_warehouse.settings import PROJECT_DIR
from cdc_warehouse.typed_models import SourceColumn, SourceTable
from tests.project_macros import render_macro

ORDERS = SourceTable("datastream", "mysql_shop", "shop.orders")
ORDERS_COLUMNS = [
    SourceColumn("id", "long", "bigint"),
    SourceColumn("placed_at", "long:timestamp-micros", "timestamp"),
    SourceColumn("note", None, "string"),
]


def macro_system_columns(state: str) -> list[str]:
    return render_macro("marts/typed_system_columns.sql", f"typed_system_columns('{state}')").split(
        ","
    )


def test_system_columns_are_the_macros():
    for state, columns in typed_models.SYSTEM_COLUMNS.items():
        assert list(columns) == macro_system_columns(state), state


def test_the_projects_hand_written_models_are_found():
    typed = typed_models.typed_sources(PROJECT_DIR / "models")
    assert SourceTable("datastream", "mysql_shop", "shop.products") in typed
    assert SourceTable("datastream", "postgres_crm", "public.accounts") in typed


def test_names_join_source_and_table_and_take_the_family_only_to_tell_two_apart():
    twins = [
        SourceTable("debezium", "shop", "public.orders"),
        SourceTable("pgoutput", "shop", "public.orders"),
        ORDERS,
    ]
    assert typed_models.model_names(twins) == {
        twins[0]: "debezium__shop__public_orders",
        twins[1]: "pgoutput__shop__public_orders",
        ORDERS: "mysql_shop__shop_orders",
    }


def test_entries_give_source_types_and_document_unknown_apart_from_null():
    current, history = typed_models.model_entries(ORDERS, "mysql_shop__shop_orders", ORDERS_COLUMNS)
    assert (current["name"], history["name"]) == (
        "mysql_shop__shop_orders_current",
        "mysql_shop__shop_orders_history",
    )
    assert current["config"]["meta"]["cdc_source"] == {
        "source_system": "datastream",
        "source_name": "mysql_shop",
        "source_table": "shop.orders",
    }
    assert current["data_tests"] == ["typed_values_fit"]
    typed = {c["name"]: c.get("data_type") for c in current["columns"]}
    assert typed["id"] == "bigint" and typed["placed_at"] == "timestamp"
    assert typed["note"] == "string"
    described = {c["name"]: c["description"] for c in history["columns"]}
    assert described["unavailable_columns"] == "{{ doc('typed_unavailable_columns') }}"
    assert "names no type" in described["note"]
    assert [c["name"] for c in history["columns"]][
        -len(typed_models.SYSTEM_COLUMNS["history"]) :
    ] == (list(typed_models.SYSTEM_COLUMNS["history"]))


def test_a_second_run_appends_the_new_tables_and_rewrites_none(tmp_path: Path):
    project = tmp_path / "project"
    out = project / typed_models.GENERATED_DIR
    first = typed_models.plan({ORDERS: ORDERS_COLUMNS}, set())
    written = typed_models.write(out, first)
    assert {path.name for path in written} == {
        "mysql_shop__shop_orders_current.sql",
        "mysql_shop__shop_orders_history.sql",
        "_generated.yml",
    }
    assert (out / "mysql_shop__shop_orders_current.sql").read_text() == (
        "{{ typed_current_state() }}\n"
    )
    (out / "mysql_shop__shop_orders_current.sql").write_text("-- edited\n")

    users = SourceTable("spanner", "app", "Users")
    columns = {ORDERS: ORDERS_COLUMNS, users: [SourceColumn("UserId", "INT64", "bigint")]}
    second = typed_models.plan(columns, typed_models.typed_sources(project / "models"))
    assert list(second) == ["app__users"]
    typed_models.write(out, second)
    assert (out / "mysql_shop__shop_orders_current.sql").read_text() == "-- edited\n"
    document = yaml.safe_load((out / "_generated.yml").read_text())
    assert [model["name"] for model in document["models"]] == [
        "mysql_shop__shop_orders_current",
        "mysql_shop__shop_orders_history",
        "app__users_current",
        "app__users_history",
    ]
    assert typed_models.plan(columns, typed_models.typed_sources(project / "models")) == {}


# Run in a child whose files may not grow past a limit, so that the OS stops its write midway as
# a kill would: the child only plans and writes, like `cdcw generate-typed-models`.
CUT_SHORT_WRITE = """
import sys
from pathlib import Path
from cdc_warehouse import typed_models
from cdc_warehouse.typed_models import SourceColumn, SourceTable
users = SourceTable("spanner", "app", "Users")
columns = [SourceColumn(f"Column{n}", "STRING", "string") for n in range(40)]
typed_models.write(Path(sys.argv[1]), typed_models.plan({users: columns}, set()))
"""


def test_a_write_cut_short_leaves_the_yml_whole_and_the_next_run_completes_it(tmp_path: Path):
    project = tmp_path / "project"
    out = project / typed_models.GENERATED_DIR
    typed_models.write(out, typed_models.plan({ORDERS: ORDERS_COLUMNS}, set()))
    yml = out / "_generated.yml"
    before = yml.read_text()
    limit = len(before.encode()) + 64  # room for the .sql files, not for the grown yml

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    child = subprocess.run(
        [sys.executable, "-c", CUT_SHORT_WRITE, str(out)],
        preexec_fn=limit_file_size,
        capture_output=True,
        text=True,
        cwd=PROJECT_DIR,
    )
    assert child.returncode != 0 and "File too large" in child.stderr
    assert yml.read_text() == before
    assert typed_models.typed_sources(project / "models") == {ORDERS}

    users = SourceTable("spanner", "app", "Users")
    planned = typed_models.plan(
        {ORDERS: ORDERS_COLUMNS, users: [SourceColumn("UserId", "INT64", "bigint")]},
        typed_models.typed_sources(project / "models"),
    )
    assert list(planned) == ["app__users"]
    typed_models.write(out, planned)
    document = yaml.safe_load(yml.read_text())
    assert [model["name"] for model in document["models"]][-2:] == [
        "app__users_current",
        "app__users_history",
    ]
