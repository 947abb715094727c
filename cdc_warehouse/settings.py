"""Where things are: every path comes from the environment, with defaults inside the project."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROJECT_DIR = Path(os.environ.get("CDC_PROJECT_DIR", Path(__file__).resolve().parent.parent))


@dataclass(frozen=True)
class Settings:
    landing_root: Path
    warehouse_dir: Path
    tables_file: Path
    spark_master: str
    driver_memory: str

    @property
    def metastore_dir(self) -> Path:
        return self.warehouse_dir / "metastore_db"

    @property
    def dbt_dir(self) -> Path:
        """dbt's target/ and logs/ live beside the warehouse they describe, so two warehouses
        (e.g. two test scenarios) never share a manifest or partial-parse cache."""
        return self.warehouse_dir / "_dbt"


def load_settings() -> Settings:
    return Settings(
        landing_root=Path(
            os.environ.get("CDC_LANDING_ROOT", PROJECT_DIR / "sample_data" / "landing")
        ).resolve(),
        warehouse_dir=Path(
            os.environ.get("CDC_WAREHOUSE_DIR", PROJECT_DIR / "warehouse")
        ).resolve(),
        tables_file=Path(os.environ.get("CDC_TABLES", PROJECT_DIR / "cdc_tables.yml")).resolve(),
        spark_master=os.environ.get("CDC_SPARK_MASTER", "local[2]"),
        driver_memory=os.environ.get("CDC_DRIVER_MEMORY", "6g"),
    )
