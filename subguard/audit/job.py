"""The audit job: the only place that plans reads and writes. Entry `main(argv) -> int`, also for spark-submit:

    spark-submit --master yarn --py-files subguard.zip subguard/audit/job.py SOURCE... --out DIR

Repositories on a local or mounted file system (`file:`) are listed and read by the Spark tasks
themselves, one folder per task, links never followed (`subguard.audit.local`); on any other file
system Spark reads (HDFS, S3-style URIs) through Spark's `binaryFile` source. The driver only
touches: the first level of each SOURCE (to tell its kind and name the repositories), inventory
files, and the small tables (`subguard.audit.arrowtables`: consumers, subscriptions, deployments,
groups, findings, the group results, the file counts and the records behind state/repos; never a row
per file), each collected once and written as Parquet from the driver, the report's counts,
findings and worst groups read from them.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":  # the program: its driver JVM starts now, beside the imports below
    from subguard.audit import driver

    driver.begin(sys.argv[1:])

import datetime as dt
import functools
import json
import os
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from py4j.protocol import Py4JJavaError
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from subguard.audit import (
    arrowtables,
    codeowners,
    driver,
    filecarry,
    jvm,
    local,
    orgmap,
    prestamp,
    stamps,
    tasks,
)
from subguard.audit import incremental as inc
from subguard.audit import output as outdir
from subguard.audit import previous as prev
from subguard.audit import sources as src
from subguard.audit import summary as summ
from subguard.audit import transforms as T
from subguard.audit.driver import FORMATS, audit_parser, close
from subguard.audit.driver import session as session  # where callers outside the audit take it from
from subguard.core.config import Config, ConfigError, load_config
from subguard.core.model import Finding
from subguard.scan.discover import read_limited
from subguard.simulate.impact import DEFAULT_RUNS

if TYPE_CHECKING:  # imported by --since runs alone (pyarrow's compute module)
    from subguard.audit.tablecarry import Carry

_GLOB_SPECIAL = re.compile(r"[\\*?\[\]{}]")
Progress = Callable[[str], None]
CONCURRENT_JOBS = 8  # Spark jobs the output phase runs at once (small jobs over cached data)


@dataclass(frozen=True)
class AuditArgs:
    sources: tuple[str, ...]
    out: str
    master: str = "local[*]"
    formats: tuple[str, ...] = FORMATS
    config_file: str | None = None
    evidence: tuple[str, ...] = ()
    top: int = 50
    runs: int = DEFAULT_RUNS  # the prediction's default, as `check` and `simulate --inventory`
    extra_conf: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    reader: str = "auto"
    fail_on: str = "none"
    jvm_archive: bool = True  # a class-data archive for a local driver JVM (subguard.audit.jvm)
    verbose: bool = False  # JVM and Spark start-up messages on the terminal (else in `--out`/audit.log)
    compare: str | None = None  # a previous output: new, fixed and unchanged findings by fingerprint
    since: str | None = None  # a previous output whose state is reused for unchanged repositories and groups


def parse_args(argv: Sequence[str]) -> AuditArgs:
    a = audit_parser(DEFAULT_RUNS).parse_args(list(argv))
    return AuditArgs(
        tuple(a.sources),
        a.out,
        a.master,
        tuple(a.formats or FORMATS),
        a.config,
        tuple(a.evidence),
        a.top,
        a.runs,
        reader=a.reader,
        fail_on=a.fail_on,
        jvm_archive=a.jvm_archive,
        verbose=a.verbose,
        compare=a.compare,
        since=a.since,
    )


def extraction_slices(units: int, parallelism: int) -> int:
    """Tasks of the extraction job: up to eight per slot, so that a large repository does not hold one
    slot while the others idle, but at least 16 folders per task beyond one task per slot (a task's
    fixed cost outweighs the balance when the folders are few: the example organisation's 10 took
    10 tasks)."""
    return max(1, min(units, parallelism * 8, max(parallelism, units // 16)))


# --- file system probes (driver, metadata only) ----------------------------------------------------


class FS:
    """Hadoop FileSystem calls through the JVM: the same file systems Spark reads."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        self._jvm = jvm
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()

    def _path(self, uri: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(uri)

    def _fs(self, uri: str) -> Any:
        return self._path(uri).getFileSystem(self._conf)

    def qualify(self, uri: str) -> str:
        fs = self._fs(uri)
        return str(fs.makeQualified(self._path(uri)).toString())

    def stat(self, uri: str) -> bool | None:
        """True for a folder, False for a file, None when missing."""
        fs = self._fs(uri)
        path = self._path(uri)
        if not fs.exists(path):
            return None
        return bool(fs.getFileStatus(path).isDirectory())

    def children(self, uri: str) -> list[tuple[str, bool]]:
        """(name, is a folder) of a folder's entries; on a local file system a link is no folder."""
        path = local.local_path(uri)
        if path is not None:
            try:
                return local.first_level(path)
            except OSError as exc:
                raise src.SourceError(f"{uri}: cannot list: {exc.strerror or exc}") from None
        return [(str(s.getPath().getName()), bool(s.isDirectory())) for s in self._fs(uri).listStatus(self._path(uri))]

    def paths(self, uri: str, max_depth: int = 64) -> list[str]:
        """Every entry below the folder `uri` (files and folders), hidden names included.

        One `globStatus` per depth (`uri/*`, `uri/*/*`, ...) answered as one string: a few JVM calls
        in all, not one per file. Metadata only; nothing is opened.
        """
        fs = self._fs(uri)
        to_paths = self._jvm.org.apache.hadoop.fs.FileUtil.stat2Paths
        wrap = self._jvm.scala.Predef.genericWrapArray
        pattern = _GLOB_SPECIAL.sub(r"\\\g<0>", uri.rstrip("/"))
        out: list[str] = []
        for _ in range(max_depth):
            pattern += "/*"
            statuses = fs.globStatus(self._path(pattern))
            if statuses is None or len(statuses) == 0:
                break
            paths = to_paths(statuses)
            found = str(wrap(paths).mkString("\n")).split("\n")
            out += found if len(found) == len(paths) else [str(p.toString()) for p in paths]  # a name with a newline
        return out

    def status(self, uri: str) -> tuple[bool, int]:
        """(is a folder, size) of one entry."""
        st = self._fs(uri).getFileStatus(self._path(uri))
        return bool(st.isDirectory()), int(st.getLen())

    def rename(self, src_uri: str, dst_uri: str) -> None:
        if not bool(self._fs(src_uri).rename(self._path(src_uri), self._path(dst_uri))):
            raise OSError(f"cannot rename {src_uri} to {dst_uri}")

    def delete(self, uri: str) -> None:
        self._fs(uri).delete(self._path(uri), True)

    def write_text(self, uri: str, text: str) -> None:
        self.write_bytes(uri, text.encode("utf-8", "backslashreplace"))

    def write_bytes(self, uri: str, data: bytes) -> None:
        fs = self._fs(uri)
        stream = fs.create(self._path(uri), True)
        try:
            stream.write(bytearray(data))
        finally:
            stream.close()

    def mkdirs(self, uri: str) -> None:
        """Create the folder (and its parents); a path that cannot be a folder is a SourceError."""
        try:
            made = bool(self._fs(uri).mkdirs(self._path(uri)))
        except Py4JJavaError as exc:
            raise src.SourceError(f"{uri}: cannot create the output folder: {_java_message(exc)}") from None
        if not made:
            raise src.SourceError(f"{uri}: cannot create the output folder")


def _java_message(exc: Py4JJavaError) -> str:
    """The Java exception's class and message, without the JVM stack."""
    java = exc.java_exception
    return f"{java.getClass().getSimpleName()}: {java.getMessage()}"


def read_text(spark: SparkSession, uri: str) -> str:
    """A small file (an inventory): plain file I/O on a local or mounted file system (no Spark job,
    which would be the run's first and pay the query engine's warm-up), else read through Spark."""
    path = local.local_path(uri)
    if path is not None:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError as exc:
            raise src.SourceError(f"{uri}: cannot read: {exc.strerror or exc}") from None
    rows = spark.read.text(uri, wholetext=True).collect()
    return str(rows[0][0]) if rows else ""


# --- planning the inputs ---------------------------------------------------------------------------


@dataclass
class Plan:
    roots: list[tuple[str, str, str]] = field(default_factory=list)  # (base, mode, repo)
    hints: list[src.RepoHint] = field(default_factory=list)
    jsonl: list[str] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)  # (repo, uri)
    problems: list[str] = field(default_factory=list)


def plan_sources(spark: SparkSession, fs: FS, args: Sequence[str], progress: Progress) -> Plan:
    plan = Plan()
    for arg in args:
        kind_dir = fs.stat(arg)
        if kind_dir is None:
            raise src.SourceError(f"{arg}: does not exist")
        uri = fs.qualify(arg)
        children = fs.children(uri) if kind_dir else []
        source = src.classify(uri, kind_dir, children)
        if source.kind in ("repos", "jsonl") and kind_dir:  # a hints file next to the repos / outputs
            for name, is_dir in children:
                if not is_dir and name in src.HINTS_FILES:
                    plan.hints += src.parse_inventory(read_text(spark, f"{uri}/{name}"), f"{uri}/{name}")
        if source.kind == "repos":
            plan.roots.append((uri, "parent", ""))
        elif source.kind == "jsonl":
            plan.jsonl.append(uri)
        else:
            for hint in src.parse_inventory(read_text(spark, uri), uri):
                plan.hints.append(hint)
                state = fs.stat(hint.uri)
                if state is None:
                    plan.missing.append((hint.name, hint.uri))
                elif state:
                    plan.roots.append((fs.qualify(hint.uri), "repo", hint.name))
                else:
                    plan.problems.append(f"{hint.name}: {hint.uri} is a file, not a repository folder")
        progress(f"source {arg}: {source.kind}")
    return plan


def split_roots(
    roots: Sequence[tuple[str, str, str]], reader: str
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """(local roots as plain paths, for the task reader; roots for Spark's binaryFile source)."""
    mine: list[tuple[str, str, str]] = []
    theirs: list[tuple[str, str, str]] = []
    for base, mode, repo in roots:
        path = local.local_path(base) if reader != "binaryfile" else None
        if path is not None:
            mine.append((path, mode, repo))
        else:
            theirs.append((base, mode, repo))
    return mine, theirs


def hidden_inputs(fs: FS, roots: Sequence[tuple[str, str, str]], max_size: int) -> list[src.HiddenFile]:
    """The files below the roots that Spark's own listing drops (`.subguard.yaml`, `__init__.py`,
    `.github/...`): found by one listing of each root on the driver (metadata only)."""
    from subguard.scan.discover import DEFAULT_EXCLUDE_DIRS

    seen: dict[str, src.HiddenFile] = {}
    for base, mode, _ in roots:
        entries = [(uri, *fs.status(uri)) for uri in src.spark_hidden(base, fs.paths(base))]
        for h in src.hidden_files(base, mode, entries, max_size, DEFAULT_EXCLUDE_DIRS):
            seen.setdefault(h.uri, h)
    return sorted(seen.values(), key=lambda h: h.uri)


def _read_hidden(h: tuple[str, int, bool]) -> tuple[str, int, bytes | None]:
    """In a task: the content of one hidden file (None when not wanted, or not on a local or mounted
    file system: `transforms.mark_skips` then records why it was not read)."""
    uri, size, wanted = h
    path = local.local_path(uri)
    if not wanted or path is None:
        return uri, size, None
    try:
        return uri, size, read_limited(path, 1 << 31)  # the size limit was applied when it was listed
    except OSError:
        return uri, size, None


def read_hidden(spark: SparkSession, hidden: Sequence[src.HiddenFile]) -> DataFrame:
    """The hidden files as `binaryFile` rows (path, length, content), read inside Spark tasks.

    Every Spark and Hadoop file reader drops these names, even when named explicitly (checked on
    Spark 4.3: `binaryFile`, `sc.binaryFiles`; no option turns the filter off, and a Hadoop
    `PathFilter` can only add to it), so the tasks open them with Python's own file API.
    """
    sc = spark.sparkContext
    slices = max(1, min(len(hidden) // 256 + 1, sc.defaultParallelism * 4))
    rows = sc.parallelize([(h.uri, h.size, h.read) for h in hidden], slices).map(_read_hidden)
    return spark.createDataFrame(rows, "path string, length long, content binary")


def with_commits(units: Sequence[local.Unit], hints: Sequence[src.RepoHint]) -> list[local.Unit]:
    """The repository units with the commit the inventory names for them (`stamps.inventory_commit`)."""
    commits = {name: h.commit for name, h in src.merge_hints(hints).items() if h.commit}
    if not commits:
        return list(units)
    return [replace(u, commit=commits.get(u.repo, "")) if u.kind == "repo" else u for u in units]


def hints_by_repo(plan: Plan) -> dict[str, tuple[str | None, ...]]:
    """The inventory's hints by repository (`transforms.HINT_FIELDS`, for `transforms.with_hints`),
    those naming no team, owner or environment left out (a repository without a hint gets the same
    empty values)."""
    merged = src.merge_hints(plan.hints).values()
    rows = {h.name: (h.team or h.owner, h.owner, h.environment) for h in merged}
    return {name: values for name, values in rows.items() if any(values)}


# --- the run ---------------------------------------------------------------------------------------

NOTE_KINDS = ("owners", "problem", "repo", "waiver", "stamp", "reuse")  # records the driver reads (`Note`)


@dataclass(frozen=True)
class Note:
    """A record the driver reads: a repository's CODEOWNERS file (`owners`), root (`repo`), inline
    waiver (for the org map), stamp (for state/marks.json), reuse marker or a task's problem."""

    repo: str
    kind: str
    payload: str
    key: str = ""


def load_audit_config(config_file: str | None) -> Config:
    try:
        return load_config(Path(config_file), Path.cwd()) if config_file else Config()
    except ConfigError as exc:
        raise src.SourceError(str(exc)) from None


def _config_locations(config: Config) -> tuple[Any, ...]:
    from subguard.rules import suppress

    if not config.waivers or not config.source:
        return ()
    text = Path(config.source).read_text(encoding="utf-8")
    return tuple(suppress.locate_config_waivers(config.waivers, config.source, text, ""))


def open_output(fs: FS, out: str) -> outdir.Output:
    """The run's output (`subguard.audit.output`): staging folder made, dead runs' leftovers gone.
    Before any work: an output path that cannot be written ends the run at once."""
    output = outdir.Output(fs.qualify(out.rstrip("/") or "/"))
    try:
        if output.local is not None:
            output.open_local()
            return output
    except outdir.OutputError as exc:
        raise src.SourceError(str(exc)) from None
    if fs.stat(output.out):
        others = sorted({name for name, _ in fs.children(output.out)} - outdir.OURS)
        if others:
            raise src.SourceError(
                f"{out}: holds files that are not an audit output ({', '.join(others[:3])}): the audit "
                "replaces the whole folder, so choose an empty or new one"
            )
    fs.mkdirs(output.staging)
    return output


def commit_output(fs: FS, output: outdir.Output, log: str | None) -> None:
    """Switch the finished output in (`subguard.audit.output`), the JVM log copied in first."""
    if log is not None:
        try:
            with open(log, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            text = ""
        output.write_text(outdir.LOG, text, fs.write_text)
    if output.local is not None:
        output.commit_local()
        return
    old = output.sibling("old")
    had = fs.stat(output.out) is not None
    if had:
        fs.rename(output.out, old)
    fs.rename(output.staging, output.out)
    if had:
        fs.delete(old)
    listing = [(uri, fs.status(uri)) for uri in fs.paths(output.out)]
    sizes = outdir.remote_sizes([(uri, size) for uri, (is_dir, size) in listing if not is_dir], output.out)
    fs.write_text(f"{output.out}/{outdir.MANIFEST}", output.manifest(sizes))  # last: readers check it


def run_audit(spark: SparkSession, args: AuditArgs, progress: Progress, log: str | None = None) -> dict[str, Any]:
    """Read the sources, run the pipeline, write every output to a staging folder and switch it in
    as `args.out` (`subguard.audit.output`); returns the summary. `log`: the JVM's stderr file, copied
    into the output as audit.log."""
    fs = FS(spark)
    config = load_audit_config(args.config_file)
    output = open_output(fs, args.out)
    try:
        summary = _pipeline(Run(spark, fs, args, config, output, progress))
        commit_output(fs, output, log)
    except BaseException:
        output.abandon()
        raise
    return summary


@dataclass(frozen=True)
class Run:
    """One audit's fixed parts, read by both of its stages (`_pipeline`, then `_judge_and_write`)."""

    spark: SparkSession
    fs: FS
    args: AuditArgs
    config: Config
    output: outdir.Output
    progress: Progress


@dataclass(frozen=True)
class Extracted:
    """What the extraction stage hands the judging and writing stage: the run's plan and settings, the
    records (`cached`, the reused repositories' included; `extracted`: the scanned ones alone, kept
    with `--since`) and the futures of the jobs already submitted."""

    run: Run
    pool: ThreadPoolExecutor
    plan: Plan
    options: tasks.AuditOptions
    since: inc.Since | None
    settings: str  # `stamps.settings_key`
    out: str  # the staging folder as Spark's writers name it
    written: str  # when the run started (ISO, UTC)
    hints: Mapping[str, tuple[str | None, ...]]  # `hints_by_repo`
    cached: DataFrame
    extracted: DataFrame | None
    prior: Prior | None  # with --since, the previous tables and K, when the tables are carried (`_prior`)
    kinds_f: Future[Any]  # `_kept_records`
    previous_f: Future[prev.Previous] | None
    t0: float
    t_extract: float


def _pipeline(run: Run) -> dict[str, Any]:
    spark, fs, args, config, output, progress = run.spark, run.fs, run.args, run.config, run.output, run.progress
    t0 = time.monotonic()
    # the first job starts the Python workers while the driver plans the inputs beside it; with
    # --since, the previous state and findings are read and the clones stamped (`prestamp`) beside them too
    background = ThreadPoolExecutor(max_workers=5 if args.since else 2, thread_name_prefix="subguard-background")
    background.submit(warm_up, spark, progress)
    options = tasks.AuditOptions(config=config, runs=args.runs, config_waiver_locations=_config_locations(config))
    settings = stamps.settings_key(config, args.runs, options.today)
    since_f = background.submit(inc.read_since, spark, args.since, settings) if args.since else None
    out = output.staging if output.local is None else f"file:{output.staging}"
    plan = plan_sources(spark, fs, args.sources, progress)
    compare = args.compare or args.since  # an incremental run reports what changed since the output it builds on
    previous_f: Future[prev.Previous] | None = None
    if compare:  # its findings are read beside the extraction (a Spark job of its own on Parquet)
        prev.check(spark, compare)
        previous_f = background.submit(prev.read, spark, compare)
    local_roots, other_roots = split_roots(plan.roots, args.reader)
    units = with_commits(local.plan_units(local_roots), plan.hints) if local_roots else []
    # with --since, clones at their inventory's commit are stamped on the driver (`prestamp`)
    stamps_f = background.submit(prestamp.driver_stamps, units) if args.since else None
    # and the previous output's small tables read, whose rows it may carry (`tablecarry`)
    tables_f = background.submit(_read_tables, args.since) if args.since and not args.evidence else None
    background.shutdown(wait=False)
    written = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    since, why = since_f.result() if since_f is not None else (None, "")
    if why:
        progress(f"since: {why}")
    hints = hints_by_repo(plan)
    # the records of each kind of source, unioned in this order (no empty frame first: its parse and
    # its tasks would come before the extraction's)
    parts: list[DataFrame] = []
    early: frozenset[str] = frozenset()  # repositories reused on the driver's stamp (`prestamp`)
    prior: Prior | None = None  # with --since, the previous tables and K (`_prior`)
    asked: dict[str, str] = {}  # the previous stamps the extraction tasks compare with
    if local_roots:
        sc = spark.sparkContext
        # clones whose driver stamp equals the previous run's are reused without a task
        split = (
            prestamp.split_units(units, since.stamps, stamps_f.result() if stamps_f is not None else None)
            if since is not None
            else prestamp.Split(units, frozenset(), {})
        )
        early, asked = split.reused, split.previous
        if not other_roots and not plan.jsonl:  # no other source may name a repository as they do
            prior = _prior(since, tables_f, early - {u.repo for u in split.units}, hints)
        slices = extraction_slices(len(split.units), sc.defaultParallelism)
        parts.append(inc.extract_local(spark, sc.parallelize(split.units, slices), options, asked))
        progress(f"local folders to list and scan in tasks: {len(units)}")
    if other_roots:
        raw = (
            spark.read.format("binaryFile")
            .option("recursiveFileLookup", "true")
            .load([base for base, _, _ in other_roots])
            .select("path", "length", "content")
        )
        hidden = hidden_inputs(fs, other_roots, config.max_file_size)
        if hidden:
            raw = raw.unionByName(read_hidden(spark, hidden))
        progress(f"files Spark's listing skips (names starting with . or _): {len(hidden)}")
        roots = spark.createDataFrame(other_roots, T.ROOTS)
        files = T.mark_skips(T.assign_repos(raw, roots), config.max_file_size)
        parts.append(T.extract(files, options))
    if plan.jsonl:
        lines = (
            spark.read.option("recursiveFileLookup", "true")
            .option("pathGlobFilter", "*.jsonl")
            .text(plan.jsonl)
            .select("value", F.col("_metadata.file_path").alias("file_path"))
        )
        parts.append(T.inventory_records(lines))
    if plan.missing:
        parts.append(T.missing_repo_records(spark.createDataFrame(plan.missing, "repo string, uri string")))
    records = functools.reduce(DataFrame.unionByName, parts) if parts else spark.createDataFrame([], T.RECORDS)
    extracted = None
    if since is not None and asked:
        # the reuse markers are joined back (`with_reused`): kept, so the extraction tasks run once
        extracted = records = records.persist(StorageLevel.MEMORY_AND_DISK)
    # the repositories whose rows are carried (K) never reach Spark: the driver reads their records
    reread = early - prior[1] if prior is not None else early
    cached = inc.with_reused(records, since, reread, join=bool(asked)).persist(StorageLevel.MEMORY_AND_DISK)
    t_extract = time.monotonic()
    # the Spark jobs from here on are small: several run side by side (Spark runs the jobs of several
    # driver threads at once), so that their planning and their tasks overlap, not queue
    pool = ThreadPoolExecutor(max_workers=CONCURRENT_JOBS, thread_name_prefix="subguard-audit")
    try:
        # the extraction's job, while the driver plans what does not need its notes
        kinds_f = pool.submit(_kept_records, cached)
        return _judge_and_write(
            Extracted(
                run,
                pool,
                plan,
                options,
                since,
                settings,
                out,
                written,
                hints,
                cached,
                extracted,
                prior,
                kinds_f,
                previous_f,
                t0,
                t_extract,
            )
        )
    finally:
        pool.shutdown(wait=True)


Prior = tuple[Mapping[str, Any], frozenset[str]]  # the previous output's small tables, and K


def _read_tables(uri: str) -> Mapping[str, Any] | None:
    from subguard.audit import tablecarry  # pyarrow's compute module: loaded by --since runs alone

    return tablecarry.read(uri)


def _prior(
    since: inc.Since | None,
    tables_f: Future[Mapping[str, Any] | None] | None,
    early: frozenset[str],
    hints: Mapping[str, tuple[str | None, ...]],
) -> Prior | None:
    """With --since, the previous output's small tables and K (`tablecarry.kept_repos` of `early`: the
    repositories reused on the driver's stamps and handed to no task); None when every table is
    computed whole: the previous output did not write its tables from its repositories alone
    (`Since.tables`), or its state names no repository's groups or hints (`incremental.touched_groups`
    names the groups to compute again from them)."""
    if since is None or tables_f is None or not since.tables or since.members is None or since.hints is None:
        return None
    tables = tables_f.result()
    if tables is None:
        return None
    from subguard.audit import tablecarry

    return tables, tablecarry.kept_repos(early, hints, since.hints)


def _carried_records(since: inc.Since | None, prior: Prior) -> list[dict[str, Any]]:
    from subguard.audit import tablecarry

    assert since is not None
    return tablecarry.reused_records(since.uri, prior[1])


def _plan_carry(
    since: inc.Since | None,
    prior: Prior | None,
    touched: frozenset[str] | None,
    kept: Sequence[Mapping[str, Any]],
    progress: Progress,
) -> Carry | None:
    """The run's `tablecarry.Carry` (`prior`: `_prior`), None when its tables are computed whole."""
    if since is None or prior is None:
        return None
    assert touched is not None  # the previous state names the members and hints (`_prior`)
    from subguard.audit import tablecarry

    carry = tablecarry.plan(since.uri, prior[0], prior[1], touched, kept)
    progress(
        f"carry: the rows of {len(carry.kept)} repositories kept from {since.uri}; {len(carry.touched)} groups "
        f"judged or compared, {len(carry.regrouped)} groups' rows computed again"
    )
    return carry


def _groups_frame(
    spark: SparkSession,
    carry: Carry | None,
    subs: DataFrame,
    findings: DataFrame,
    group_records: DataFrame,
) -> DataFrame:
    """The groups table's rows; with a carry, those of the groups computed again (`Carry.regrouped`),
    each from all of its rows: those computed now and the previous ones that stand."""
    if carry is None:
        return T.groups(subs, findings, T.impacts(group_records))
    from subguard.audit import tablecarry

    again = carry.previous_groups(spark, carry.regrouped - carry.touched)
    return T.groups(
        subs.unionByName(carry.previous_rows(spark, "subscriptions", subs.schema)),
        findings.select(*tablecarry.FINDING_COUNTS).unionByName(carry.previous_findings(spark)),
        T.impacts(group_records).unionByName(T.impacts(again)),
    ).where(prestamp.among("group", carry.regrouped))


def _collected(carry: Carry | None, idle: frozenset[str], name: str, df: DataFrame) -> Any:
    """A small table's rows, collected in one job (none for a table with no row to compute now,
    `idle`); with a carry, after the previous rows that stand."""
    table = carry.empty(name) if carry is not None and name in idle else arrowtables.collect(df)
    return carry.merged(name, table) if carry is not None else table


def _spark_schema(carry: Carry | None, name: str, df: DataFrame) -> str:
    """The Spark schema (JSON) a small table is written with: a carried table's is the previous one's
    (a full audit's), any other its frame's."""
    return carry.spark_schema(name) if carry is not None and name in carry.previous else df.schema.json()


def _regrouped(
    spark: SparkSession,
    carry: Carry,
    judged: Any,
    table: Any,
    frames: tuple[DataFrame, DataFrame, DataFrame],
) -> Any:
    """The groups table of a carry (`table`), checked: a group task's finding computed now (`judged`:
    the group records collected) names a group the carry computed again, else the groups table is
    computed again with those groups too (a finding's group is not always its task's)."""
    named = {
        json.loads(r["payload"]).get("group")
        for r in arrowtables.rows(judged, ["kind", "payload"])
        if r["kind"] == "finding"
    }
    missing = frozenset(str(g) for g in named if g is not None) - carry.regrouped
    if not missing:
        return table
    wider = replace(carry, regrouped=carry.regrouped | missing)
    return wider.merged("groups", arrowtables.collect(_groups_frame(spark, wider, *frames)))


def _kept_records(cached: DataFrame) -> Any:
    """One job: every record but the file rows (`incremental.FILE_KINDS`; a few per consumer and per
    repository, never one per file), as an Arrow table of repo, kind, key and payload. The driver
    counts them by kind (the summary's consumers and deployments, what was reused), reads its notes
    from them (`NOTE_KINDS`) and writes state/repos from them (`incremental.state_rows`)."""
    kept = cached.where(~F.col("kind").isin(*inc.FILE_KINDS)).select("repo", "kind", "key", "payload")
    return arrowtables.collect(kept)


def kinds_and_notes(records: Sequence[Mapping[str, Any]]) -> tuple[dict[str, int], list[Note]]:
    """The records counted by kind, and those the driver reads (`NOTE_KINDS`) as notes, in order."""
    kinds = dict(Counter(str(r["kind"]) for r in records))
    notes = sorted(
        (
            Note(r["repo"] or "", str(r["kind"]), r["payload"], r["key"] or "")
            for r in records
            if r["kind"] in NOTE_KINDS
        ),
        key=lambda n: (n.kind, n.repo, n.payload, n.key),
    )
    return kinds, notes


def _judge_and_write(x: Extracted) -> dict[str, Any]:
    spark, fs, args, config, output, progress = (
        x.run.spark,
        x.run.fs,
        x.run.args,
        x.run.config,
        x.run.output,
        x.run.progress,
    )
    pool, plan, options, since, settings, out, written = (
        x.pool,
        x.plan,
        x.options,
        x.since,
        x.settings,
        x.out,
        x.written,
    )
    cached, extracted, hints, kinds_f, previous_f, t0, t_extract = (
        x.cached,
        x.extracted,
        x.hints,
        x.kinds_f,
        x.previous_f,
        x.t0,
        x.t_extract,
    )
    # the records are few and small next to the files they came from: a few partitions, not one per
    # extraction slice, keep every later stage from paying a task per slice
    records = cached.coalesce(spark.sparkContext.defaultParallelism)
    # with --since and a carry (`tablecarry`), the previous records of the repositories whose rows are
    # carried (K), read on the driver while the extraction runs: Spark never reads them
    carried_f = pool.submit(_carried_records, since, x.prior) if x.prior is not None else None
    consumers = T.effective_environment(T.with_hints(T.table(records, "consumer", T.CONSUMERS), hints)).persist()
    deployments = T.table(records, "deployment", T.DEPLOYMENTS)
    declared = T.subscriptions(consumers)  # planned while the extraction's job runs
    kept = arrowtables.rows(kinds_f.result()) + (carried_f.result() if carried_f is not None else [])
    kinds, notes = kinds_and_notes(kept)
    # the reused repositories (their markers collected with the notes)
    reused_repos = frozenset(r.repo for r in notes if r.kind == "reuse")
    # each repository's groups (kept in state/marks.json): with --since, only the groups a repository
    # not reused touches, now or then, have their input digested
    members = inc.repo_groups(kept)
    touched = inc.touched_groups(since, members, reused_repos, hints) if since is not None else None
    carry = _plan_carry(since, x.prior, touched, kept, progress)
    touched = carry.touched if carry is not None else touched
    # the previous consumers that stand of the groups computed again: the other members of those groups
    carried = None if carry is None else carry.previous_rows(spark, "consumers", consumers.schema)
    members_df = consumers if carried is None else consumers.unionByName(carried)
    # the inline waivers, collected with the notes, looked up by the group inputs (no broadcast job)
    judged, held = inc.judge_groups(
        members_df,
        inc.waivers_by_repo(kept),
        options,
        since,
        touched,
        others=carry is None,
        compared=carry.previous_groups(spark, carry.touched) if carry is not None else None,
    )
    group_records = judged.persist(StorageLevel.MEMORY_AND_DISK)
    # the one heavy stage, run once (before the outputs read it side by side) and collected in one job
    # (state/groups, its groups counted by whether they were reused, and its problems) while the
    # driver plans the tables that read it
    group_table_f = pool.submit(arrowtables.collect, group_records)
    progress(
        f"extract: {sum(kinds.values())} records (file lists apart) from {len(plan.roots)} root(s), {len(plan.jsonl)} inventory "
        f"output(s) in {time.monotonic() - t_extract:.1f} s"
    )
    t_groups = time.monotonic()
    parquet = "parquet" in args.formats
    writes: list[Future[Any]] = []

    def write_small(name: str, df: DataFrame, table: Any) -> None:
        """A table the driver collected (with a carry, in the Spark schema of the previous table: a full audit's)."""
        arrowtables.write_schema(
            _spark_schema(carry, name, df), table, name, lambda rel, data: output.write_bytes(rel, data, fs.write_bytes)
        )

    # the files table of the repositories scanned now (state/repos holds no file rows), with its part:
    # its jobs (the counts, the table) need no group result, so they are submitted behind the group job
    # and fill the task slots it leaves while the driver plans the tables (the fixed cost's outputs
    # 1.6-1.8 s -> 0.8 s; a full audit's peak memory did not follow the order, docs/audit-incremental.md)
    parts = inc.parts_for(len({r.repo for r in notes if r.kind == "repo"}))
    files_df = T.files_table(records).withColumn("part", inc.part_of(F.col("repo"), parts)).persist()
    # the reused repositories are filtered on by one parsed IN
    counts_df = inc.file_counts(files_df, since, reused_repos, parts)  # collected once: not cached
    files_at = "files" if parquet else inc.STATE_FILES

    def write_files(touched: Sequence[int]) -> None:
        write_files_table(spark, fs, out, files_at, files_df, since, reused_repos, parts, touched, progress)

    # with --since, the parts the files table writes again: from the previous marks (the files table
    # is written beside the other jobs), else from the counts (after them)
    gone = inc.gone_parts(since, reused_repos, parts) if since is not None else []

    def files_and_counts() -> tuple[Any, dict[str, int]]:
        """state/file_counts and each repository's part; with --since and no parts in the previous
        marks, then the files table: the parts it writes again are read from the counts."""
        counted = arrowtables.collect(counts_df)
        live = inc.live_counts(counted)
        write_small(inc.FILE_COUNTS, counts_df.select(*live.column_names), live)
        if gone is None:
            write_files(inc.touched_parts(arrowtables.rows(counted, ["part", "origin"])))
        return live, inc.repo_parts(arrowtables.rows(counted, ["repo", "part", "origin"]))

    counts_f = pool.submit(files_and_counts)
    if gone is not None:
        writes.append(pool.submit(write_files, gone))

    owned = {
        r.repo: (json.loads(r.payload)["path"], json.loads(r.payload)["text"]) for r in notes if r.kind == "owners"
    }

    found = T.table(records, "finding", T.FINDINGS).unionByName(T.table(group_records, "finding", T.FINDINGS))
    if args.evidence:
        found = found.unionByName(evidence_findings(spark, args.evidence, consumers, found, progress))
    findings = T.with_owners(T.with_hints(found, hints), owned).persist()
    subs = T.with_owners(T.with_hints(declared, hints, env=False), owned).persist()
    # collected once: not cached
    groups_df = _groups_frame(spark, carry, subs, findings, group_records)

    idle = carry.idle(kept) if carry is not None else frozenset()  # no job for a table with no row to compute

    def small_table(name: str, df: DataFrame, write: bool = True) -> Any:
        """One collect: the table written from the driver (when `write`), and returned for its aggregates;
        with a carry, the previous rows that stand and the rows computed now."""
        table = _collected(carry, idle, name, df)
        if write:
            write_small(name, df, table)
        return table

    # the tables' jobs are submitted at once, behind the group job (FIFO): they are planned while it
    # runs. The groups table first: its job has the most stages, one after another (Spark's FIFO
    # scheduler gives the first job submitted the free task slots first)
    # with a carry, the groups table is written once its groups are checked (`_regrouped`)
    groups_f = pool.submit(small_table, "groups", groups_df, parquet and carry is None)
    findings_f = pool.submit(small_table, "findings", findings, parquet)
    subs_f = pool.submit(small_table, "subscriptions", subs) if parquet else None
    repo_roots = [(r.repo, json.loads(r.payload)["root"]) for r in notes if r.kind == "repo"]
    if "org-map" in args.formats:  # the org map for `check --org-map`, written beside the other jobs
        writes.append(
            pool.submit(
                orgmap.write_audit,
                # with a carry, the consumers computed now and those of K (Spark never read their records)
                consumers
                if carry is None
                else consumers.unionByName(carry.previous_all(spark, "consumers", consumers.schema)),
                [(r.repo, r.payload) for r in notes if r.kind == "waiver"],
                src.merge_hints(plan.hints),
                repo_roots,
                output,
                args.sources,
                progress,
            )
        )
    write_small(inc.REPOS, cached, arrowtables.from_rows(inc.state_rows(kept, settings, parts), cached))
    stamped = [(n.repo, n.key) for n in notes if n.kind == "stamp"]
    if parquet:
        writes += [
            pool.submit(small_table, n, df) for n, df in (("consumers", consumers), ("deployments", deployments))
        ]
    group_table = judged_table = group_table_f.result()
    if carry is not None:  # the previous records of the groups not judged or compared again
        group_table = carry.merged(inc.GROUPS, group_table, {"reused": True})
    reused_groups = inc.group_counts(arrowtables.rows(group_table, ["group", "reused", "kind", "payload"]))
    group_problems = sorted(json.loads(p)["message"] for r in reused_groups for p in r["problems"])
    narrowed = (
        f", inputs digested for the {len(touched)} groups changed repositories touch" if touched is not None else ""
    )
    progress(f"group tasks done: {group_table.num_rows} result rows in {time.monotonic() - t_groups:.1f} s{narrowed}")
    group_keys = [(r["group"], r["input"]) for r in arrowtables.rows(group_table, ["group", "input"]) if r["group"]]
    t_outputs = time.monotonic()
    writes.append(
        pool.submit(write_small, inc.GROUPS, inc.state_groups(group_records), group_table.drop_columns(["reused"]))
    )
    n_subs = subs_f.result().num_rows if subs_f is not None else subs.count()
    groups_table = groups_f.result()
    if carry is not None:
        groups_table = _regrouped(spark, carry, judged_table, groups_table, (subs, findings, group_records))
        if parquet:
            write_small("groups", groups_df, groups_table)
    groups_rows = arrowtables.rows(groups_table)
    group_sizes = _group_sizes(groups_rows)
    # the --top worst groups for summary.json and every group with a finding for report.html
    worst, flagged = _ranked_groups(groups_rows, args.top, "html" in args.formats)
    # bound: all findings are collected (one small record each) to render findings.json and SARIF;
    # the summary's counts by rule, severity, scope and team are taken from them
    rows = arrowtables.rows(
        findings_f.result(), [*summ.CHANGE_KEYS, "suppressed", "scope", "owner", "codeowners", "json"]
    )
    finding_counts = summ.finding_counts(rows)
    n_groups = sum(int(g["count"]) for g in group_sizes)
    progress(
        f"consumers: {kinds.get('consumer', 0)}; groups judged: {n_groups}; "
        f"findings: {sum(int(r['count']) for r in finding_counts)}"
    )
    live_counts, repo_parts = counts_f.result()
    file_counts = arrowtables.rows(live_counts)
    output.write_text(
        inc.MARKS,
        inc.marks_json(
            settings, parts, stamped, group_keys, repo_parts, members, hints, tables=parquet and not args.evidence
        ),
        fs.write_text,
    )
    summary = summ.build(
        files=file_counts,
        findings=finding_counts,
        groups=worst,
        group_sizes=group_sizes,
        totals={
            "repos": len({r["repo"] for r in file_counts if r["repo"]}),
            "consumers": kinds.get("consumer", 0),
            "subscriptions": n_subs,
            "deployments": kinds.get("deployment", 0),
            "groups": n_groups,
            "groups_with_findings": sum(int(g["flagged"]) for g in group_sizes),
            "cross_repo_groups": sum(int(g["count"]) for g in group_sizes if int(g["repos_count"]) > 1),
        },
        missing=plan.missing,
        problems=plan.problems
        + [json.loads(r.payload)["message"] for r in notes if r.kind == "problem"]
        + group_problems,
        sources=list(args.sources),
        seconds=0.0,
        written=written,
    )
    collected = [Finding.model_validate_json(r["json"]) for r in rows]
    summary["incremental"] = inc.summary(args.since if since is not None else None, kinds, reused_groups)
    progress(inc.headline(summary["incremental"]))
    previous = previous_f.result() if previous_f is not None else None
    if previous is not None:
        summary["changes"] = summ.changes(rows, previous.findings, previous.out, previous.written)
    for w in writes:
        w.result()
    if parquet:
        progress("wrote 6 Parquet tables")
    progress(
        f"outputs: {time.monotonic() - t_outputs:.1f} s after the group results for the tables, the state and the "
        "report aggregates, side by side"
    )
    summary["seconds"] = round(time.monotonic() - t0, 2)
    _write_reports(fs, output, args, config, collected, summary, repo_roots, progress)
    owners = codeowners.Owners(
        {h.name: (h.team or h.owner, h.owner) for h in src.merge_hints(plan.hints).values()}, owned
    )
    written_extra(
        output,
        fs.write_text,
        args.formats,
        summary,
        rows,
        flagged,
        owners,
        tasks._policies(config).docs,
        previous,
    )
    for df in (cached, files_df, consumers, group_records, findings, subs, extracted, *held):
        if df is not None:
            df.unpersist()
    return summary


def _warm(part: Iterable[int]) -> Iterator[int]:
    from subguard.audit import incremental, tasks  # noqa: F401 - what the extraction tasks import

    yield sum(1 for _ in part)


def warm_up(spark: SparkSession, progress: Progress) -> None:
    """The run's first Spark job, one tiny Python task per slot: it pays the first job's fixed cost
    (the Python workers' start and imports, the scheduler's first use) while the driver plans the
    inputs, and times it on a progress line of its own."""
    t = time.monotonic()
    sc = spark.sparkContext
    try:
        sc.parallelize(range(sc.defaultParallelism), sc.defaultParallelism).mapPartitions(_warm).collect()
    except Exception:  # noqa: BLE001 - only a head start: the extraction meets any real problem itself
        return
    progress(f"first job: Python workers started in {time.monotonic() - t:.1f} s, beside the driver's planning")


def _group_sizes(groups: Sequence[Mapping[str, Any]]) -> list[dict[str, int]]:
    """The groups counted by how many repositories they span (`repos_count`, `count`, `flagged`: with
    a finding)."""
    sizes: dict[int, dict[str, int]] = {}
    for g in groups:
        n = int(g["repos_count"])
        size = sizes.setdefault(n, {"repos_count": n, "count": 0, "flagged": 0})
        size["count"] += 1
        size["flagged"] += int(int(g["findings"]) > 0)
    return list(sizes.values())


def _ranked_groups(
    groups: Sequence[Mapping[str, Any]], top: int, flagged: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the `top` worst groups, every group with a finding when `flagged`), worst first: in
    `transforms.worst_first_order`'s order (descending keys first, the name last; a group is one
    row, so the order is total)."""
    ranked = sorted(groups, key=T.worst_first_key)
    worst = [dict(g) for g in ranked[:top]]
    return worst, [dict(g) for g in ranked if flagged and int(g["findings"]) > 0]


def evidence_findings(
    spark: SparkSession, paths: Sequence[str], consumers: DataFrame, found: DataFrame, progress: Progress
) -> DataFrame:
    """SG5xx findings from runtime evidence (log and mqadmin files or folders of them, on any file
    system Spark reads), as finding rows: Spark reads them (`text` source, `.gz` decompressed by it)
    and `subguard.audit.evidence` classifies them in tasks, one per file and one per group.

    Bound: only the consumers (and SG301/SG302 findings) of the groups the evidence names are
    joined in, never collected; so SG508 (declared but not live) covers those groups only.
    """
    from subguard.audit import evidence as ev
    from subguard.evidence.analyze import display

    fs = FS(spark)
    sources: dict[str, str] = {}  # qualified URI -> display path, in argument order
    for path in paths:
        if fs.stat(path) is None:
            raise src.SourceError(f"evidence file not found: {path}")
        sources.setdefault(fs.qualify(path), path if ":" in path.split("/", 1)[0] else display(path, str(Path.cwd())))
    lines = spark.read.option("recursiveFileLookup", "true").text(list(sources))
    progress(f"evidence: {len(sources)} source(s) read by Spark")
    return ev.evidence_findings(ev.evidence_events(lines, list(sources.items())), consumers, found)


def _local(uri: str) -> str:
    return uri.removeprefix("file:")


def write_files_table(
    spark: SparkSession,
    fs: FS,
    out: str,
    at: str,
    fresh: DataFrame,
    since: inc.Since | None,
    reused: frozenset[str],
    parts: int,
    touched: Sequence[int],
    progress: Progress,
) -> None:
    """The files table at `out/at`, split by repository (`incremental`): the scanned repositories'
    rows (`fresh`, with their part; `touched`: the parts `incremental.touched_parts` names), the reused repositories' rows of the parts those touch read back
    from the previous table, the previous table's other parts linked in unchanged."""
    plan, base, copy = inc.Carry(), "", False
    if since is not None:
        for name in ("files", inc.STATE_FILES):
            uri = f"{since.uri.rstrip('/')}/{name}"
            if fs.stat(uri):
                base = fs.qualify(uri)
                break
        previous = inc.file_parts(name for name, is_dir in fs.children(base) if not is_dir) if base else {}
        linkable = local.local_path(out) is not None and local.local_path(base or out) is not None
        plan = inc.carry(previous, touched, since.parts == parts, linkable)
        # the same layout in local folders: the driver copies the reused rows of the parts written
        # again (`filecarry`), beside the Spark job that writes the scanned repositories' rows
        copy = linkable and since.parts == parts
    dest = f"{out}/{at}"
    copied: Future[int] | None = None
    if copy and plan.read:
        held = ThreadPoolExecutor(max_workers=1, thread_name_prefix="subguard-filecarry")
        copied = held.submit(
            filecarry.copy_reused, local.local_path(base) or base, plan.read, local.local_path(dest) or dest, reused
        )
        held.shutdown(wait=False)
    carried = None if copy else inc.carried_rows(spark, [f"{base}/{name}" for name in plan.read], reused, parts)
    rows = fresh if carried is None else fresh.unionByName(carried)
    split = f"{out}/_files_parts"
    files_by_part(rows, spark.sparkContext.defaultParallelism).write.mode("overwrite").partitionBy("part").parquet(
        split
    )
    moved = _flatten_parts(fs, split, dest) + (copied.result() if copied is not None else 0)
    if not moved and not plan.link:  # no rows at all: an empty table that still has its schema
        fresh.drop("part").limit(0).write.mode("overwrite").parquet(dest)
    for name in plan.link:
        local.link_or_copy(f"{local.local_path(base)}/{name}", f"{local.local_path(dest)}/{name}")
    progress(
        f"files table: {moved} file(s) written in {parts} part(s), {len(plan.link)} linked from {since.uri if since else '-'}"
    )


WRITERS_UNSHUFFLED = 4  # up to this many task slots, the files table is written without a shuffle


def files_by_part(rows: DataFrame, slots: int) -> DataFrame:
    """The files table's rows as its writer gets them: with few task slots (a local master), in as many
    partitions, not shuffled (each task writes a file per part it holds: at most `slots` files a part,
    and no stage that moves every file row); with more (a cluster), one partition per part (a file a
    part however many tasks wrote)."""
    return rows.coalesce(slots) if slots <= WRITERS_UNSHUFFLED else rows.repartition("part")


def _flatten_parts(fs: FS, split: str, dest: str) -> int:
    """Move the Parquet files of `split/part=N/` to `dest/p<N>-<name>` (`incremental.part_name`),
    then delete `split`; returns how many were moved. A local output is moved by plain file calls
    (hundreds of parts: one JVM call each would add up)."""
    path, target = local.local_path(split), local.local_path(dest)
    if path is not None and target is not None:
        os.makedirs(target, exist_ok=True)

        def move(src_at: str, dest_at: str) -> None:
            os.rename(f"{path}/{src_at}", f"{target}/{dest_at}")

        def remove() -> None:
            shutil.rmtree(path)

    else:
        fs.mkdirs(dest)

        def move(src_at: str, dest_at: str) -> None:
            fs.rename(f"{split}/{src_at}", f"{dest}/{dest_at}")

        def remove() -> None:
            fs.delete(split)

    moved = 0
    for folder, is_dir in fs.children(split):
        if is_dir and folder.startswith("part="):
            for name, _ in fs.children(f"{split}/{folder}"):
                if name.endswith(".parquet"):
                    move(f"{folder}/{name}", inc.part_name(int(folder[5:]), name))
                    moved += 1
    remove()
    return moved


def _write_reports(
    fs: FS,
    output: outdir.Output,
    args: AuditArgs,
    config: Config,
    collected: Sequence[Finding],
    summary: dict[str, Any],
    repo_roots: Sequence[tuple[str, str]],
    progress: Progress,
) -> None:
    """The report files, into the staging folder: plain file I/O on a local output (no Hadoop
    `.crc` checksum files beside them), the Hadoop FileSystem API elsewhere."""
    from subguard.report import ReportContext, Root, render

    output.write_text("summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n", fs.write_text)
    if "json" in args.formats or "sarif" in args.formats:
        docs = tasks._policies(config).docs
        files = summary["files"]
        ctx = ReportContext(
            roots=tuple(Root(repo, _local(root)) for repo, root in sorted(repo_roots)),
            workdir=str(Path.cwd()),
            parsed=files["parsed"],
            skipped=files["skipped"],
            failed=files["failed"],
        )
        for fmt in ("json", "sarif"):
            if fmt in args.formats:
                output.write_text(f"findings.{fmt}", render(fmt, collected, docs, ctx), fs.write_text)
    progress(f"wrote summary.json, findings.json, findings.sarif and report.html; switching {args.out} over")


def written_extra(
    output: outdir.Output,
    remote: Callable[[str, str], None],
    formats: Sequence[str],
    summary: dict[str, Any],
    rows: Sequence[Mapping[str, Any]],
    flagged: Sequence[Mapping[str, Any]],
    owners: codeowners.Owners,
    docs: Mapping[str, Any],
    previous: prev.Previous | None,
) -> None:
    """report.html (every finding in words, issue 27), teams/<team>.md, and the history of runs, into
    the staging folder through the output's writer."""
    from subguard.audit import report_html, teams

    lines = summ.history(previous.history if previous else [], summary, previous.summary if previous else None)
    output.write_text(summ.HISTORY, "".join(json.dumps(line, sort_keys=True) + "\n" for line in lines), remote)
    if "html" in formats:
        data = report_html.report_data(summary, rows, flagged, owners, docs, lines)
        output.write_text("report.html", report_html.render(summary, data), remote)
    if "markdown" in formats:
        for name, text in teams.render_all(summary, rows, owners, docs).items():
            output.write_text(f"teams/{name}.md", text, remote)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the audit: 0 when it completed (and, with --fail-on, nothing unsuppressed at or above that
    severity was found), 1 when something was, 2 on a usage or input error."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    # begun before the imports when this module is the program (`driver.begin`, at the top)
    started = driver.take(argv)
    start = started.began if started is not None else time.monotonic()

    def progress(text: str) -> None:
        print(f"[audit] {text} (+{time.monotonic() - start:.1f} s)", file=sys.stderr, flush=True)

    launched = (
        started.result
        if started is not None and started.result is not None
        else driver.launch_audit(args.master, args.jvm_archive, args.verbose)
    )
    spark, cds, early, log = launched.spark, launched.cds, launched.zygote, launched.log
    progress(f"session: Spark started in {time.monotonic() - start:.1f} s (Python imports, JVM start, SparkContext)")
    done = False
    try:
        summary = run_audit(spark, args, progress, log)
        done = True
        # the results first: a JVM that writes its class-data archive takes a while to exit
        print(summ.headline(summary))
        print(f"report: {args.out.rstrip('/')}/report.html", flush=True)
        if cds.pending is not None:
            progress(f"writing the JVM's class-data archive for the next audits (once; {jvm.OFF_FLAG}: never)")
    except src.SourceError as exc:
        print(f"subguard: error: {exc}", file=sys.stderr)
        done = True
        return 2
    finally:
        close(spark, cds)
        if early is not None:
            early.close()
        if log is not None and done:
            try:
                os.unlink(log)  # the JVM keeps writing to its open file; the copy is in the output
            except OSError:
                pass
        elif log is not None:
            print(f"subguard: the JVM's messages are in {log}", file=sys.stderr)
    return summ.exit_code(summary, args.fail_on)


if __name__ == "__main__":  # pragma: no cover - spark-submit entry
    sys.exit(main())
