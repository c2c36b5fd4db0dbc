"""The audit's small tables (consumers, subscriptions, deployments, groups, findings and the group
and file-count state: aggregates and per-consumer rows, never per-file rows) collected once to the
driver as Arrow and written there as one Parquet file each.

One collect serves both a table and what the driver reads from it (the summary's counts, the worst
groups, findings.json): a Spark write job per table and a collect job per aggregate cost the example
organisation a dozen jobs where six do. The Parquet file carries Spark's schema (the key Spark's
own writer sets), so Spark reads the same types and nullability back; the files table, one row per
file, is still written by Spark tasks (`job.write_files_table`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession

from subguard.audit.transforms import column_names

SPARK_SCHEMA_KEY = b"org.apache.spark.sql.parquet.row.metadata"  # what Spark's Parquet writer stores
FILE_NAME = "part-00000.snappy.parquet"


def collect(df: DataFrame) -> pa.Table:
    """The DataFrame's rows as one Arrow table with its schema (also when there are none), in one job."""
    if hasattr(DataFrame, "toArrow"):  # PySpark 4
        table: pa.Table = cast(Any, df).toArrow()
        return table
    from pyspark.sql.pandas.types import to_arrow_schema  # PySpark 3.5

    return pa.Table.from_batches(cast(Any, df)._collect_as_arrow(), schema=to_arrow_schema(df.schema))


def from_rows(rows: Sequence[Mapping[str, Any]], df: DataFrame) -> pa.Table:
    """Rows the driver made (dicts by column name) as an Arrow table of `df`'s schema, as `collect`
    would give them: to be written by `write` with that schema."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return pa.Table.from_pylist(list(rows), schema=to_arrow_schema(df.schema))


def text_frame(spark: SparkSession, rows: Sequence[Sequence[str]], schema: str) -> DataFrame:
    """Rows of text columns (`schema`: "name string, ...") as a DataFrame the driver made: with
    PySpark 4 a local relation from Arrow (a join that broadcasts it still runs a small Spark job for
    it, as for any relation; `transforms.lookup` needs none); with PySpark 3.5 from the list."""
    if not hasattr(DataFrame, "toArrow"):  # PySpark 3.5: no DataFrame from Arrow
        return spark.createDataFrame(list(rows), schema)
    names = column_names(schema)
    return spark.createDataFrame(
        pa.table({n: pa.array([r[i] for r in rows], pa.string()) for i, n in enumerate(names)})
    )


def parquet_bytes(table: pa.Table, spark_schema: str) -> bytes:
    """`table` as a Parquet file (snappy, as Spark writes), with Spark's schema JSON in its metadata."""
    sink = pa.BufferOutputStream()
    meta = {**(table.schema.metadata or {}), SPARK_SCHEMA_KEY: spark_schema.encode()}
    pq.write_table(table.replace_schema_metadata(meta), sink, compression="snappy")
    return bytes(sink.getvalue().to_pybytes())


def write(df: DataFrame, table: pa.Table, folder: str, write_bytes: Callable[[str, bytes], None]) -> None:
    """The table at `folder` (relative to the output) as Spark lays a table out: a folder with one
    Parquet file and an empty `_SUCCESS`."""
    write_schema(df.schema.json(), table, folder, write_bytes)


def write_schema(spark_schema: str, table: pa.Table, folder: str, write_bytes: Callable[[str, bytes], None]) -> None:
    """`write` with Spark's schema given as its JSON (a table the driver merged, `tablecarry`)."""
    write_bytes(f"{folder}/{FILE_NAME}", parquet_bytes(table, spark_schema))
    write_bytes(f"{folder}/_SUCCESS", b"")


def rows(table: pa.Table, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The rows as dicts (of `columns`, else all), as `Row.asDict(recursive=True)` gives them."""
    return list((table.select(list(columns)) if columns is not None else table).to_pylist())
