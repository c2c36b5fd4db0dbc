"""`subguard explain ID`: a rule's documentation sections."""

from __future__ import annotations

import textwrap

import click

from subguard.cli.commands.rules import policies_or_fail
from subguard.core.model import RuleDoc

FIXES = {
    "none": "none (subguard reports it; the repair is yours)",
    "safe": "safe (the repair is mechanical and keeps what the code means)",
    "unsafe": "unsafe (the repair is mechanical but may change what the code means)",
    "mixed": "safe or unsafe by case (`check --fix` applies the safe ones, `--unsafe-fixes` the others; see above)",
}
SECTIONS = (("what", "What it does"), ("why", "Why is this bad?"), ("example", "Example"), ("instead", "Use instead"))


def render(doc: RuleDoc) -> str:
    """The docs as plain text with fixed section headings (same sections as the SARIF help)."""
    out = [f"{doc.id} {doc.name} ({doc.severity.value}, scope {doc.scope})", "", doc.summary]
    for attr, title in SECTIONS:
        body = getattr(doc, attr)
        if body:
            out += ["", title, textwrap.indent(body.rstrip(), "    ")]
    if doc.references:
        out += ["", "References"] + [f"    - {r}" for r in doc.references]
    out += ["", f"Fix: {FIXES.get(doc.fix, doc.fix)}"]
    if doc.source:
        out += ["", f"Defined in {doc.source}"]
    return "\n".join(out)


@click.command()
@click.argument("rule_id")
@click.option(
    "--policies", "extra", multiple=True, type=click.Path(file_okay=False), help="Extra policy directory (repeatable)."
)
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Config file to use.")
def explain(rule_id: str, extra: tuple[str, ...], config_file: str | None) -> int:
    """Show what rule RULE_ID checks, why it matters, and what to write instead."""
    docs = {p.id.upper(): p.doc for p in policies_or_fail(config_file, extra)}
    doc = docs.get(rule_id.upper())
    if doc is None:
        click.echo(f"subguard: unknown rule '{rule_id}' (see `subguard rules`)", err=True)
        return 2
    click.echo(render(doc))
    return 0
