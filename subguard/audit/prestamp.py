"""Repositories a `--since` run reuses without a task: a clone at the commit its inventory names is
stamped on the driver (a read of its HEAD, no walk), and when that stamp equals the previous run's,
its previous records are read back with a filter on its name instead of being joined with a reuse
marker its extraction task would have emitted (a shuffle of the previous state and a reduce stage).

Every other unit goes to the extraction tasks as before (`incremental.unit_rows`); the previous
stamps they compare with are only those of the units the driver could not stamp, so a task never
emits a reuse marker for a repository the driver found changed, and when no task can emit one the
join is left out (`incremental.with_reused`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from subguard.audit import stamps
from subguard.audit.local import Unit

THREADS = 8  # HEAD reads side by side (file I/O: the GIL is released)


@dataclass(frozen=True)
class Split:
    """The units a `--since` run hands to its extraction tasks, and what it reuses without them."""

    units: list[Unit]  # the units the tasks list (scan or stamp)
    reused: frozenset[str]  # repositories whose driver stamp equals the previous run's
    previous: dict[str, str]  # repo -> previous stamp, for the tasks' units the driver could not stamp


def driver_stamp(unit: Unit) -> str | None:
    """The unit's stamp when its inventory names a commit that is its HEAD (`stamps.stamp` with that
    commit: what its task would compute); None when only a task can tell (no such commit)."""
    if unit.kind != "repo" or not unit.commit:
        return None
    try:
        named = stamps.inventory_commit(unit.path, unit.commit)
    except OSError:
        return None
    return stamps.stamp(unit.path, unit.nested, named) if named else None


def driver_stamps(units: Sequence[Unit]) -> list[str | None]:
    """`driver_stamp` of each unit, in order."""
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        return list(pool.map(driver_stamp, units))


def split_units(units: Sequence[Unit], previous: Mapping[str, str], found: Sequence[str | None] | None = None) -> Split:
    """Split `units` by their driver stamps (`found`: `driver_stamps`, taken now when None) against
    `previous` (repo -> stamp of the previous run)."""
    if found is None:
        found = driver_stamps(units)
    left: list[Unit] = []
    reused: set[str] = set()
    ask: dict[str, str] = {}
    for unit, stamp in zip(units, found, strict=True):
        before = previous.get(unit.repo) if unit.kind == "repo" else None
        if stamp is not None and before is not None and stamp == before and unit.repo not in reused:
            reused.add(unit.repo)
            continue
        if stamp is None and before is not None:
            ask[unit.repo] = before
        left.append(unit)
    # a name reused here and also handed to a task (two folders of one name) is scanned there, as
    # its stamp differs: never compared with the previous one
    return Split(left, frozenset(reused), {k: v for k, v in ask.items() if k not in reused})


def sql_text(value: str) -> str:
    """`value` as a Spark SQL string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def among(column: str, names: frozenset[str]) -> Column:
    """`column IN (names...)`, parsed from one SQL text: `Column.isin` makes one JVM call per value,
    about 3 s for 5,000 names; the optimizer makes either a hash set (`InSet`)."""
    if not names:
        return F.lit(False)
    return F.expr(f"`{column}` IN ({', '.join(sql_text(n) for n in sorted(names))})")


def reused_records(repos: DataFrame, names: frozenset[str], previous: frozenset[str]) -> DataFrame:
    """The previous records (state/repos rows) of the repositories `names`, each `stamp` record
    doubled as the `reuse` marker its task would have emitted (same key: the stamp is equal);
    `previous`: every repository of the previous state, so the filter names the smaller side."""
    kinds = F.when(F.col("kind") == "stamp", F.array(F.lit("stamp"), F.lit("reuse"))).otherwise(F.array(F.col("kind")))
    others = previous - names
    kept = repos.where(among("repo", names) if len(names) <= len(others) else ~among("repo", others))
    return kept.select(*[F.explode(kinds).alias("kind") if c == "kind" else F.col(c) for c in repos.columns])
