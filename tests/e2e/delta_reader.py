"""A reader in its own process, as an analyst's notebook would be: reads Delta tables by path
(no metastore), checksumming each in a loop, one JSON line per read, until the stop file
appears; then one last read of each. Used by test_run_guarantees.py.

    python delta_reader.py TABLE_DIR [TABLE_DIR ...] READS_FILE STOP_FILE
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

from cdc_warehouse import table_format

# Order-independent: the row count and the sum of every row's hash (as a decimal: a sum of
# 64-bit hashes overflows a bigint), as text that no tool reads as a number.
CHECKSUM = (
    "select concat(count(*), ':', cast(sum(cast(xxhash64(to_json(struct(*))) as decimal(38, 0)))"
    " as string)) as checksum from {relation}"
)
# Between rounds of reads: the runs being watched keep the cores (each lasts a minute or more, so
# every state still gets read).
PAUSE_SECONDS = 15.0
# A notebook's settings for small tables, so that the reader takes little CPU from the run it
# watches: by default Delta replays a table's log in 50 tasks and an aggregate shuffles into 200.
SMALL_TABLE_CONF = {
    "spark.databricks.delta.snapshotPartitions": "1",
    "spark.sql.shuffle.partitions": "1",
}


def main(argv: list[str]) -> int:
    *tables, reads_file, stop_file = argv
    builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
    builder = builder.config("spark.jars", table_format.session_jars())
    builder = builder.config("spark.driver.extraClassPath", table_format.driver_class_path())
    for key, value in {**table_format.SESSION_CONF, **SMALL_TABLE_CONF}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    with Path(reads_file).open("a") as reads:

        def read_all() -> None:
            for table in tables:
                record = {"table": Path(table).name, "at": time.time()}
                try:
                    relation = f"delta.`{table}`"
                    record["checksum"] = spark.sql(CHECKSUM.format(relation=relation)).first()[0]
                except Exception as error:  # any failure is what the test looks for
                    record["error"] = str(error)[:2000]
                reads.write(json.dumps(record) + "\n")
                reads.flush()

        while not Path(stop_file).exists():
            read_all()
            time.sleep(PAUSE_SECONDS)
        read_all()
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
