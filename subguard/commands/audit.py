"""`subguard audit`: every repository of an organisation on Spark (see `subguard.audit.job`)."""

from __future__ import annotations

import click


@click.command(context_settings={"ignore_unknown_options": False})
@click.argument("sources", nargs=-1, required=True)
@click.option("--out", required=True, help="Output folder (any file system Spark writes).")
@click.option("--master", default="local[*]", show_default=True, help="Spark master URL.")
@click.option("--format", "formats", multiple=True, type=click.Choice(["parquet", "json", "sarif", "html"]),
              help="Outputs to write (repeatable; default: all).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Config for group rules and waivers.")
@click.option("--evidence", multiple=True, help="Runtime evidence file (broker/client log, mqadmin output): adds SG5xx findings (repeatable).")
@click.option("--top", default=50, show_default=True, help="Groups shown in report.html, worst first.")
def audit(sources: tuple[str, ...], out: str, master: str, formats: tuple[str, ...], config_file: str | None,
          evidence: tuple[str, ...], top: int) -> int:
    """Audit SOURCE... (folders of repos, inventory files, `inventory --format jsonl` outputs) on Spark."""
    try:
        from subguard.audit import job
    except ImportError as exc:  # pyspark is an extra
        raise click.UsageError(f"the audit needs the spark extra (pip install 'subguard[spark]'): {exc}") from None
    argv = [*sources, "--out", out, "--master", master, "--top", str(top)]
    for fmt in formats:
        argv += ["--format", fmt]
    if config_file:
        argv += ["--config", config_file]
    for ev in evidence:
        argv += ["--evidence", ev]
    return job.main(argv)
