"""The reused repositories' rows of the previous files table's parts that a `--since` run writes
again, copied by the driver with pyarrow (a local output with the previous one's layout): each
previous Parquet file of such a part, less the rows of the repositories not reused now, under its
own name. A Spark job read them back and wrote them again beside the scanned repositories' rows
(about 100,000 rows at 1,000,000 files and 1% changed: the last job of the run)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

THREADS = 4


def copy_reused(base: str, names: Sequence[str], dest: str, reused: frozenset[str]) -> int:
    """Copy the rows of the repositories `reused` of each file `names` of the folder `base` into the
    folder `dest`, same name, schema and Spark metadata (a file left with no rows is not written).
    Returns how many files were written."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    keep = pa.array(sorted(reused), pa.string())
    os.makedirs(dest, exist_ok=True)

    def copy(name: str) -> int:
        table = pq.read_table(os.path.join(base, name))
        kept = table.filter(pc.is_in(table["repo"], value_set=keep))
        if kept.num_rows == 0:
            return 0
        pq.write_table(kept, os.path.join(dest, name), compression="snappy")
        return 1

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        return sum(pool.map(copy, names))
