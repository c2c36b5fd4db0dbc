"""`subguard inventory`: every declared subscription, one row each."""

from __future__ import annotations

import json

import click

from subguard.cli.commands.common import config_mismatch, load_or_fail, policy_cache_key, scan_paths, stats_text
from subguard.core.inventory import sort_consumers, subscription_rows


def _table(rows: list[dict[str, object]]) -> str:
    cols = ("group", "topic", "expression", "message_model", "client", "path", "line")
    cells = [[str(r.get(c) if r.get(c) is not None else "?") for c in cols] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
    out = ["  ".join(c.ljust(w) for c, w in zip(cols, widths))]
    out += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(out)


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["jsonl", "json", "table"]), default="jsonl", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), help="Write here instead of stdout.")
@click.option("--stats", is_flag=True, help="Print files parsed/skipped/failed and why (to stderr).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Config file to use.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the content cache.")
def inventory(
    paths: tuple[str, ...], fmt: str, output: str | None, stats: bool, config_file: str | None, no_cache: bool
) -> int:
    """Print every declared subscription under PATHS (default: the current directory)."""
    roots = paths or (".",)
    config = load_or_fail(config_file, roots)
    results = scan_paths(roots, config, cache_key=None if no_cache else policy_cache_key(config))
    rows = subscription_rows(sort_consumers([c for r in results for c in r.consumers]))
    if fmt == "jsonl":
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    elif fmt == "json":
        text = json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
    else:
        text = _table(rows) + "\n" if rows else "no subscriptions found\n"
    if output:
        with open(output, "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(text)
    else:
        click.echo(text, nl=False)
    if mismatch := config_mismatch(config, config_file, roots):
        click.echo(mismatch, err=True)
    if stats:
        click.echo(stats_text(results), err=True)
    return 0
