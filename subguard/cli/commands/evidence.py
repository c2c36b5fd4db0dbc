"""`subguard evidence`: classify broker/client logs and mqadmin output per consumer group (SG5xx)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import click

from subguard.core.model import Finding, RuleDoc
from subguard.evidence.analyze import EvidenceResult, analyze, display
from subguard.evidence.correlate import Declared
from subguard.evidence.formats import UNKNOWN
from subguard.evidence.reader import FileStats
from subguard.report import FORMATS

FAIL_ON = ("error", "warning", "note", "none", "never")  # `never`: the old spelling of `none`, as check and audit say


def _declared(paths: Sequence[str], config_file: str | None) -> tuple[list[Declared], list[Finding]]:
    """Scan the inventory roots; also evaluate the policies to link offset-store findings."""
    from subguard.cli.commands.common import InputError, load_or_fail, scan_paths

    config = load_or_fail(config_file, paths)
    results = scan_paths(paths, config)
    workdir = os.getcwd()
    declared = [Declared(display(r.root, workdir), c) for r in results for c in r.consumers]
    from subguard.evidence.rules import OFFSET_MOVED
    from subguard.rules.engine import run
    from subguard.rules.policy import PolicyError, builtin

    try:
        cited = builtin(OFFSET_MOVED).links  # the static findings an offset-moved finding cites
        linked = [f for f in run(results, config) if f.rule in cited]
    except PolicyError as exc:
        raise InputError(str(exc)) from None
    prefixes = {r.repo: display(r.root, workdir) for r in results}
    linked = [
        f.model_copy(
            update={
                "location": f.location.model_copy(
                    update={"path": f"{prefixes.get(f.location.repo, '')}/{f.location.path}".lstrip("/"), "repo": ""}
                )
            }
        )
        for f in linked
    ]
    return declared, linked


def _docs() -> dict[str, RuleDoc]:
    from subguard.rules.policy import load_policies, rule_docs

    return {k: v for k, v in rule_docs(load_policies()).items() if k.startswith("SG5")}


def _stats_text(files: Sequence[FileStats], events: int) -> str:
    lines = [f"evidence: {len(files)} file(s), {events} event(s)"]
    for s in files:
        state = (
            f"error: {s.error}"
            if s.error
            else (
                f"{s.lines} lines, {s.records} records, {s.continuation} continuation, {s.garbled} garbled, {s.events} events"
            )
        )
        lines.append(f"  {s.path} [{s.format or '?'}{', gzip' if s.compressed else ''}]: {state}")
    return "\n".join(lines)


def unrecognised(s: FileStats) -> bool:
    """A file that is neither a broker/client log nor mqadmin output: its name and first lines matched
    no format, and no line of it read as a log record."""
    return not s.error and s.format == UNKNOWN and s.records == 0 and s.events == 0


def _render(fmt: str, result: EvidenceResult) -> str:
    from subguard.report import ReportContext, render

    ctx = ReportContext(
        workdir=os.getcwd(),
        parsed=sum(1 for s in result.files if not s.error and not unrecognised(s)),
        skipped=sum(1 for s in result.files if unrecognised(s)),
        failed=sum(1 for s in result.files if s.error),
    )
    return render(fmt, list(result.findings), _docs(), ctx)


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option(
    "--inventory", "inventory", multiple=True, type=click.Path(), help="Repo/path declaring the consumers (repeatable)."
)
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default="text", show_default=True)
@click.option("--group", "default_group", default="", help="Group of mqadmin outputs that do not name one.")
@click.option("--fail-on", type=click.Choice(sorted(FAIL_ON)), default="error", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), help="Write here instead of stdout.")
@click.option("--stats", is_flag=True, help="Print per-file line counts (to stderr).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Config file for the inventory scan.")
def evidence(
    files: tuple[str, ...],
    inventory: tuple[str, ...],
    fmt: str,
    default_group: str,
    fail_on: str,
    output: str | None,
    stats: bool,
    config_file: str | None,
) -> int:
    """Classify runtime evidence in FILES: broker.log, rocketmq_client.log (gzip too) and mqadmin
    consumerConnection / consumerStatus / consumerProgress output, per consumer group."""
    from subguard.cli.commands.common import InputError

    missing = [p for p in files if not os.path.isfile(p)]
    if missing:
        raise InputError(f"not a file: {missing[0]}")
    declared, linked = _declared(inventory, config_file) if inventory else ([], [])
    result = analyze(files, declared, linked, default_group)
    text = _render(fmt, result)
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        click.echo(text, nl=not text.endswith("\n"))
    if stats or any(s.error for s in result.files):
        click.echo(_stats_text(result.files, result.events), err=True)
    strangers = [s for s in result.files if unrecognised(s)]
    for s in strangers:
        click.echo(
            f"subguard evidence: {s.path}: not recognised (neither a broker or client log nor mqadmin "
            "consumerConnection, consumerStatus or consumerProgress output); skipped",
            err=True,
        )
    if any(s.error for s in result.files) or len(strangers) == len(result.files):
        return 2  # a file that could not be read, or nothing recognised at all
    return int(any(f.suppressed is None and f.severity.meets(fail_on) for f in result.findings))
