"""`subguard rules`: the rule catalogue (built-in and configured policies)."""

from __future__ import annotations

import json

import click

from subguard.cli.commands.common import InputError, load_or_fail
from subguard.rules.policy import Policy, PolicyError, load_policies, policy_dirs


def policies_or_fail(config_file: str | None, extra: tuple[str, ...]) -> list[Policy]:
    """Built-in + config + `--policies` policies; a broken policy is a usage error (exit 2)."""
    config = load_or_fail(config_file, ())
    try:
        return load_policies(policy_dirs(config.policies, config.source, extra))
    except PolicyError as exc:
        raise InputError(str(exc)) from None


def table(policies: list[Policy]) -> str:
    cols = ("id", "name", "severity", "scope", "summary")
    rows = [[p.id, p.name, p.severity.value, p.kind, p.docs.summary.strip()] for p in policies]
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(cols[:-1])]
    out = ["  ".join(c.ljust(w) for c, w in zip(cols, widths)) + "  summary"]
    out += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) + "  " + r[-1] for r in rows]
    return "\n".join(out)


def markdown(policies: list[Policy]) -> str:
    """The catalogue as the Markdown table README.md embeds (generated, never edited by hand)."""
    out = ["| id | name | default | scope | fix | summary |", "| --- | --- | --- | --- | --- | --- |"]
    for p in policies:
        summary = p.docs.summary.strip().replace("|", "\\|")
        out.append(f"| {p.id} | {p.name} | {p.severity.value} | {p.kind} | {p.fix} | {summary} |")
    return "\n".join(out)


@click.command()
@click.option(
    "--policies", "extra", multiple=True, type=click.Path(file_okay=False), help="Extra policy directory (repeatable)."
)
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Config file to use.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
def rules(extra: tuple[str, ...], config_file: str | None, fmt: str) -> int:
    """List every rule: id, name, severity, scope, summary (`--format markdown`: README's table)."""
    policies = policies_or_fail(config_file, extra)
    if fmt == "json":
        click.echo(json.dumps([p.doc.model_dump(mode="json") for p in policies], indent=2, ensure_ascii=False))
    elif fmt == "markdown":
        click.echo(markdown(policies))
    else:
        click.echo(table(policies))
    return 0
