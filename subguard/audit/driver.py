"""The audit's Spark session on the driver: its settings, the launch of a local driver JVM (with its
class-data archive, `subguard.audit.jvm`, and the Python workers' zygote, `subguard.audit.zygote`),
the audit's arguments (`audit_parser`), and `begin`: that launch started in a thread as soon as
`python -m subguard.audit.job` runs with valid arguments, so that the JVM's start overlaps the job's
heavier imports (the rules, the extractors' registry, pyarrow).

Imports only what the launch needs (pyspark, `jvm`, `zygote`), never the job's modules.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from pyspark import SparkContext
from pyspark.errors import PySparkRuntimeError
from pyspark.sql import SparkSession

from subguard.audit import jvm, zygote


def shuffle_partitions(master: str) -> int:
    """Partitions after a shuffle: the audit's tables are small (records per consumer and per file),
    so one per local core (each task of a shuffle's stage costs the driver and the JVM a fixed
    scheduling and set-up time, and twice the cores paid it twice: with `extraction_slices`,
    examples/org's process-tree CPU 19.7 s -> 16.1 s), and Spark's usual 200 spread over a cluster's
    executors."""
    m = re.fullmatch(r"local\[(\d+|\*)(?:,\d+)?\]|local", master)
    if not m:
        return 200
    cores = (os.cpu_count() or 1) if m.group(1) in (None, "*") else int(m.group(1))
    return max(1, cores)


def cluster_partitions(conf: dict[str, str]) -> int | None:
    """On a cluster, twice the cores the application may use when its settings say (`spark.cores.max`,
    else executors x cores each); None when they do not (Spark's 200 stand, adaptive execution
    coalesces them). A run on 2 executors otherwise pays 200 tasks for every small shuffle."""
    try:
        cores = int(conf.get("spark.cores.max") or 0) or (
            int(conf.get("spark.executor.instances") or 0) * int(conf.get("spark.executor.cores") or 0)
        )
    except ValueError:
        return None
    return max(2, 2 * cores) if cores else None


# a local driver JVM lives seconds to minutes with a heap of at most a few GB: the quick compiler
# alone (see `session`), the serial collector (no collector threads to start and schedule beside the
# two-core runs it is measured on) and no shared performance-counter file
JIT_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData"
# a local audit's tables are small and its shuffles already few-partitioned (`shuffle_partitions`):
# adaptive execution would only split each query into one Spark job per stage and plan it again after
# each (the example organisation: 62 jobs -> 32); the Python workers fork from a daemon that has the
# audit's modules imported (`subguard.audit.daemon`)
LOCAL_CONF = (
    ("spark.sql.adaptive.enabled", "false"),
    ("spark.python.daemon.module", "subguard.audit.daemon"),
    # a --since run reads back a few hundred of the previous files table's files by name: Spark lists
    # more than 32 paths in a job of its own (16 tasks); the driver lists local files as fast
    ("spark.sql.sources.parallelPartitionDiscovery.threshold", "4096"),
    # the queries' expressions interpreted, not compiled: each of a run's twenty-odd queries otherwise
    # generates Java source and compiles it (Janino, itself run by the quick compiler), which cost the
    # example organisation more than a second of the JVM's CPU; the rows a local audit's JVM handles
    # are few (records per consumer; the file rows are written as they come), and a 200,000-file
    # audit's CPU fell with it too (34.7 s -> 29.1 s, with the JVM options above)
    ("spark.sql.codegen.wholeStage", "false"),
    ("spark.sql.codegen.factoryMode", "NO_CODEGEN"),
)
# the driver JVM's log4j2 configuration (local masters): warnings and errors only, no "default
# profile" banner; where they go is the process's stderr (`main` sends it to `--out`/audit.log)
LOG4J2 = Path(__file__).resolve().parent / "log4j2.properties"


def session(master: str, app: str = "subguard-audit", java_options: str = "", quiet: bool = True) -> SparkSession:
    """A Spark session with quiet logs; `--master` is honoured unless spark-submit already set one.
    `java_options` are added to a local driver JVM's (see `launch`); `quiet`: with subguard's log4j2
    configuration (else Spark's default one, as `-v` shows it)."""
    builder = SparkSession.builder.appName(app).config("spark.ui.showConsoleProgress", "false")
    if master.startswith("local"):
        builder = builder.config("spark.sql.shuffle.partitions", str(shuffle_partitions(master)))
        for key, value in LOCAL_CONF:
            builder = builder.config(key, value)
    builder = builder.config("spark.ui.enabled", "false")
    builder = builder.config("spark.log.level", "ERROR")
    # repositories are many small files: pack thousands per read task instead of Spark's 32
    builder = builder.config("spark.sql.files.openCostInBytes", str(8 * 1024))
    # listing a folder of many repos: Spark starts one listing task per folder (200 repos -> 200 tiny
    # tasks, several seconds on a laptop); a few tasks list them as fast
    builder = builder.config("spark.sql.sources.parallelPartitionDiscovery.parallelism", "16")
    if master.startswith("local"):
        # a local audit is a short-lived JVM: the quick compiler alone finishes the example org's many
        # small jobs about a quarter sooner; at 200,000 files no difference was measurable (the
        # optimising compiler wins on repeated heavy jobs, which one audit does not run)
        log4j = f"-Dlog4j2.configurationFile={LOG4J2.as_uri()}" if quiet and LOG4J2.is_file() else ""
        builder = builder.config("spark.driver.extraJavaOptions", f"{JIT_OPTIONS} {java_options} {log4j}".strip())
    if master.startswith("local") and not os.environ.get("PYSPARK_PYTHON"):
        # local workers run this interpreter (a venv's), not whatever `python3` is first on PATH
        os.environ["PYSPARK_PYTHON"] = sys.executable
    active = SparkSession.getActiveSession()
    spark = active or builder.master(master).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    conf = dict(spark.sparkContext.getConf().getAll())
    if not str(conf.get("spark.master", master)).startswith("local") and "spark.sql.shuffle.partitions" not in conf:
        wanted = cluster_partitions(conf)
        if wanted:
            spark.conf.set("spark.sql.shuffle.partitions", str(wanted))
    return spark


def spark_jars() -> str:
    """The folder of the jars the driver JVM runs: `$SPARK_HOME/jars`, else pyspark's own."""
    import pyspark

    home = os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)
    return os.path.join(home, "jars")


def launches_jvm() -> bool:
    """Whether `launch` starts the driver JVM itself (not under spark-submit, no session yet)."""
    return (
        SparkContext._active_spark_context is None
        and SparkSession.getActiveSession() is None
        and not os.environ.get("PYSPARK_GATEWAY_PORT")
    )


def launch(master: str, archive: bool = False, quiet: bool = True) -> tuple[SparkSession, jvm.Plan]:
    """The audit's session; with `archive`, a class-data archive (`subguard.audit.jvm`) when this
    process launches the JVM. A JVM that will not start with the archive is started again without it."""
    cds = jvm.plan(master, JIT_OPTIONS, spark_jars()) if archive and launches_jvm() else jvm.Plan()
    if cds.options:
        try:
            return session(master, java_options=cds.options, quiet=quiet), cds
        except PySparkRuntimeError:  # JAVA_GATEWAY_EXITED: the JVM did not come up with this archive
            if cds.archive is not None:
                jvm.discard(cds.archive)
    return session(master, quiet=quiet), jvm.Plan()


@contextmanager
def stderr_to(path: str | None) -> Iterator[None]:
    """Inside the block, file descriptor 2 is `path` (appended): a JVM started here keeps it as its
    stderr for its whole life, and so do the Python workers it forks. None: unchanged."""
    if path is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(fd, 2)
        os.close(fd)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def close(spark: SparkSession, cds: jvm.Plan) -> None:
    """End of the audit: when the JVM writes a class-data archive, stop it now and put the archive
    in place once it is complete; otherwise leave the JVM to exit with this process."""
    if cds.pending is None:
        return
    gateway = SparkContext._gateway
    spark.stop()
    jvm.finish(cds, getattr(gateway, "proc", None))


@dataclass(frozen=True)
class Launched:
    """The audit's session with what its launch made: the class-data archive plan, the workers'
    zygote (None without one) and the file the JVM's messages go to (None: the terminal)."""

    spark: SparkSession
    cds: jvm.Plan
    zygote: zygote.Zygote | None
    log: str | None


def launch_audit(master: str, archive: bool, verbose: bool) -> Launched:
    """`launch` as the audit runs it. When this process launches the JVM: on a local master the
    workers' zygote first (it imports their modules beside the JVM's start), and the JVM's start-up
    chatter (incubator modules, loopback hostname, native-hadoop, ...) and later log lines sent to a
    file, copied into the output as audit.log (`verbose` leaves them on the terminal). The zygote is
    closed when the launch fails."""
    own_jvm = launches_jvm()
    early = zygote.start() if own_jvm and master.startswith("local") else None
    log = None
    if not verbose and own_jvm:
        handle, log = tempfile.mkstemp(prefix="subguard-audit-", suffix=".log")
        os.close(handle)
    try:
        with stderr_to(log):
            spark, cds = launch(master, archive, quiet=not verbose)
    except BaseException:
        if early is not None:
            early.close()
        raise
    return Launched(spark, cds, early, log)


# --- the launch begun before the job's imports ----------------------------------------------------


@dataclass
class Started:
    """A launch `begin` started in a thread: its result or what it raised, and when it began
    (`time.monotonic`)."""

    argv: tuple[str, ...]
    began: float
    thread: threading.Thread | None = None
    result: Launched | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


_STARTED: list[Started] = []


FORMATS = (
    "parquet",
    "json",
    "sarif",
    "html",
    "markdown",
    "org-map",
)  # markdown: teams/<team>.md; org-map: audit.orgmap
# how repositories are read: `auto` (file: roots listed and read by the Spark tasks themselves, links
# never followed; other file systems through Spark's binaryFile source), `binaryfile` (every root
# through binaryFile; on a local file system Hadoop then follows symbolic links)
READERS = ("auto", "binaryfile")


class _Refused(Exception):
    pass


class _QuietParser(argparse.ArgumentParser):
    """A parser that raises on wrong arguments instead of printing and exiting (`job.parse_args`
    then reports them)."""

    def error(self, message: str) -> NoReturn:
        raise _Refused(message)


def audit_parser(default_runs: int, quiet: bool = False) -> argparse.ArgumentParser:
    """`subguard audit`'s arguments (`job.parse_args`; `default_runs`: the prediction's default, whose
    module `begin` does not import)."""
    p = (_QuietParser if quiet else argparse.ArgumentParser)(
        prog="subguard audit", description="Audit every repository of an organisation on Spark."
    )
    p.add_argument("sources", nargs="+", metavar="SOURCE")
    p.add_argument("--out", required=True)
    p.add_argument("--master", default="local[*]")
    p.add_argument("--format", dest="formats", action="append", choices=FORMATS)
    p.add_argument("--config")
    p.add_argument("--evidence", action="append", default=[])
    p.add_argument("--top", type=int, default=50)
    p.add_argument("--runs", type=int, default=default_runs)
    p.add_argument("--reader", choices=READERS, default="auto")
    p.add_argument("--fail-on", choices=("error", "warning", "note", "none"), default="none")
    p.add_argument("--jvm-archive", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("--compare", metavar="PREV_OUT")
    p.add_argument("--since", metavar="PREVIOUS_OUT")
    return p


def _early_args(argv: Sequence[str]) -> argparse.Namespace | None:
    """The audit's arguments when they are valid and ask for a run, else None (help asked, or wrong:
    `job.parse_args` then prints the help or the error, and no JVM was started for it)."""
    if {"-h", "--help"} & set(argv):
        return None
    try:
        return audit_parser(0, quiet=True).parse_args(list(argv))
    except (_Refused, SystemExit):
        return None


def begin(argv: Sequence[str]) -> None:
    """Start the driver JVM (and, on a local master, the workers' zygote) in a thread now, for `main`
    to `take` once the job's modules are imported. Nothing when this process does not launch the JVM
    itself (spark-submit, a session already there) or the arguments do not look like a run."""
    a = _early_args(argv)
    if a is None or not launches_jvm() or _STARTED:
        return
    started = Started(tuple(argv), time.monotonic())

    def run() -> None:
        try:
            started.result = launch_audit(a.master, a.jvm_archive, a.verbose)
        except BaseException as exc:  # noqa: BLE001 - handed to `take`, which raises it in the main thread
            started.error = exc
        finally:
            started.done.set()

    # a daemon thread: a run that stops at a usage error does not wait for the JVM
    started.thread = threading.Thread(target=run, name="subguard-launch", daemon=True)
    _STARTED.append(started)
    started.thread.start()


def take(argv: Sequence[str]) -> Started | None:
    """The launch `begin` started for these arguments, once it has finished (its error raised: its
    zygote was closed by `launch_audit`); None when none was begun for them."""
    if not _STARTED or _STARTED[0].argv != tuple(argv):
        return None
    started = _STARTED.pop()
    started.done.wait()
    if started.error is not None:
        raise started.error
    return started
