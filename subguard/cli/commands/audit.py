"""`subguard audit`: every repository of an organisation on Spark (see `subguard.audit.job`)."""

from __future__ import annotations

import click

from subguard.simulate.impact import DEFAULT_RUNS


@click.command(context_settings={"ignore_unknown_options": False})
@click.argument("sources", nargs=-1, required=True)
@click.option(
    "--out",
    required=True,
    help="Output folder (any file system Spark writes): replaced as a whole when the run "
    "succeeds (written beside it first), so it must be new, empty or a previous audit output.",
)
@click.option("--master", default="local[*]", show_default=True, help="Spark master URL.")
@click.option(
    "--format",
    "formats",
    multiple=True,
    type=click.Choice(["parquet", "json", "sarif", "html", "markdown", "org-map"]),
    help="Outputs to write (repeatable; default: all). markdown: teams/<team>.md, one summary per team; "
    "org-map: org-map.sqlite, for check --org-map.",
)
@click.option(
    "--compare",
    "compare",
    metavar="PREV_OUT",
    help="A previous audit output (it may be --out itself): findings matched by fingerprint, new, fixed and "
    "unchanged counts in summary.json and the report, and its run history carried over.",
)
@click.option(
    "--since",
    "since",
    metavar="PREVIOUS_OUT",
    help="A previous audit output (it may be --out itself): repositories whose commit (or tree hash) is "
    "unchanged and groups whose members are unchanged are not scanned or judged again; same results.",
)
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Config for group rules and waivers.")
@click.option(
    "--evidence",
    multiple=True,
    help="Runtime evidence file (broker/client log, mqadmin output): adds SG5xx findings (repeatable).",
)
@click.option(
    "--top",
    default=50,
    show_default=True,
    help="Groups listed in summary.json (worst_groups), worst first; report.html lists every flagged group, 20 a page.",
)
@click.option(
    "--runs",
    default=DEFAULT_RUNS,
    show_default=True,
    type=click.IntRange(1, 100000),
    help="Simulated runs per group (the prediction `check` and `simulate --inventory` make by default).",
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "note", "none"]),
    default="none",
    show_default=True,
    help="Exit 1 when an unsuppressed finding is at or above this severity (a gate for scheduled audits).",
)
@click.option(
    "--reader",
    type=click.Choice(["auto", "binaryfile"]),
    default="auto",
    show_default=True,
    help="auto: local folders are listed and read by the Spark tasks (links never followed), other file "
    "systems through Spark's binaryFile source; binaryfile: everything through binaryFile.",
)
@click.option(
    "--jvm-archive/--no-jvm-archive",
    default=True,
    show_default=True,
    help="Local masters: keep a class-data archive of Spark's JVM in the user cache (~190 MB). The first "
    "run writes it (slower, after printing its results); every later one starts several seconds sooner.",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Show the JVM's and Spark's own messages on the terminal (else they go to OUT/audit.log).",
)
def audit(
    sources: tuple[str, ...],
    out: str,
    master: str,
    formats: tuple[str, ...],
    config_file: str | None,
    evidence: tuple[str, ...],
    top: int,
    runs: int,
    fail_on: str,
    reader: str,
    jvm_archive: bool,
    verbose: bool,
    compare: str | None = None,
    since: str | None = None,
) -> int:
    """Audit SOURCE... (folders of repos, inventory files, `inventory --format jsonl` outputs) on Spark.

    Exit 0 when the audit completed (with --fail-on: and nothing at or above it), 1 when --fail-on
    tripped, 2 on a usage or input error.
    """
    from subguard.audit import java
    from subguard.cli.commands.common import InputError

    missing = java.problem()
    if missing:  # before Spark: one line, not a PySpark traceback
        raise InputError(missing)
    argv = [
        *sources,
        "--out",
        out,
        "--master",
        master,
        "--top",
        str(top),
        "--runs",
        str(runs),
        "--fail-on",
        fail_on,
        "--reader",
        reader,
    ]
    for fmt in formats:
        argv += ["--format", fmt]
    if config_file:
        argv += ["--config", config_file]
    for ev in evidence:
        argv += ["--evidence", ev]
    argv.append("--jvm-archive" if jvm_archive else "--no-jvm-archive")
    if compare:
        argv += ["--compare", compare]
    if since:
        argv += ["--since", since]
    if verbose:
        argv.append("--verbose")
    try:
        from subguard.audit import driver

        driver.begin(argv)  # the driver JVM starts while the job's heavier modules import
        from subguard.audit import job
    except ImportError as exc:  # pyspark is an extra
        raise InputError(f"the audit needs the spark extra (pip install 'subguard[spark]'): {exc}") from None
    return job.main(argv)
