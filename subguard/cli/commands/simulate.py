"""`subguard simulate`: run a scenario file, or every scanned group as declared (`--inventory`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from subguard.cli.commands.common import InputError, load_or_fail, scan_paths
from subguard.core.inventory import split_key
from subguard.core.model import Consumer
from subguard.report import ReportContext, Root, cite_text
from subguard.rules import selfcheck
from subguard.rules.code_scope import member_key
from subguard.simulate.declared import declared_group
from subguard.simulate.impact import DEFAULT_RUNS, QUEUES, SEED, describe_impact, predict, runs_phrase
from subguard.simulate.render import render_text
from subguard.simulate.runs import simulate_runs
from subguard.simulate.scenario import ScenarioError, compile_scenario, load_scenario


@click.command("simulate")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--runs",
    type=click.IntRange(1, 100_000),
    default=None,
    help=f"Monte Carlo runs [default: 100 for a scenario; {DEFAULT_RUNS} with --inventory, as check and audit].",
)
@click.option("--seed", type=int, default=SEED, show_default=True, help="Seed: same seed, same result.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--inventory", is_flag=True, help="Scan PATHS and simulate every group as declared.")
@click.option(
    "--queues", type=click.IntRange(1, 1024), default=QUEUES, show_default=True, help="--inventory: queues per topic."
)
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None, help="Config file.")
def simulate(
    paths: tuple[str, ...], runs: int | None, seed: int, fmt: str, inventory: bool, queues: int, config_file: str | None
) -> int:
    """Simulate SCENARIO.yaml (or, with --inventory, the groups found under PATHS)."""
    if inventory:
        return _inventory(paths, runs or DEFAULT_RUNS, seed, fmt, queues, config_file)
    runs = runs or 100
    if len(paths) != 1:
        raise click.UsageError("give exactly one scenario file (or --inventory PATH...)")
    try:
        groups = compile_scenario(load_scenario(Path(paths[0])))
    except ScenarioError as exc:
        click.echo(f"subguard simulate: invalid scenario {paths[0]}: {exc}", err=True)
        return 2
    report = simulate_runs(groups, runs, seed)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2, sort_keys=False))
    else:
        click.echo(render_text(report, title=paths[0]))
    return 0


def _inventory(paths: tuple[str, ...], runs: int, seed: int, fmt: str, queues: int, config_file: str | None) -> int:
    config = load_or_fail(config_file, paths)
    results = scan_paths(paths, config)
    groups: dict[str, list[Consumer]] = {}
    for res in results:
        for consumer in res.consumers:
            # namespace%group: consumers of two namespaces never share a group, nor two samples (as `check` judges)
            key = member_key(consumer, config)
            if key is not None:
                groups.setdefault(key, []).append(consumer)
    if not groups:
        raise InputError("no consumer group with a known name found under " + " ".join(paths))
    from subguard.rules.policy import load_policies, policy_dirs

    policies = load_policies(policy_dirs(config.policies, config.source, ()))
    checked = selfcheck.candidates(
        [c for r in results for c in r.consumers], selfcheck.flagged_groups(results, policies, config), config
    )
    rows: list[dict[str, Any]] = []
    internal: list[str] = []
    for key in sorted(groups):
        members = groups[key]
        name, sample = split_key(key)
        impact = predict(members, runs, queues=queues, seed=seed) if declared_group(members) else None
        if impact is not None and impact.has_loss and key in checked:
            internal.append(selfcheck.message(name, describe_impact(impact)))
        rows.append(
            {
                "group": name,
                **({"sample": sample} if sample else {}),
                "members": len(members),
                "runs": impact.runs if impact else 0,
                "loss": dict(impact.loss) if impact else {},
                "never_pulled": dict(impact.stuck) if impact else {},
                "silent": list(impact.silent) if impact else [],
                "summary": (describe_impact(impact) or f"no predicted loss ({runs_phrase(impact.runs)})")
                if impact
                else "nothing simulable (unknown values)",
            }
        )
    if fmt == "json":
        click.echo(
            json.dumps(
                {"runs": runs, "seed": seed, "queues": queues, "groups": rows, "internal_errors": internal}, indent=2
            )
        )
    else:  # paths as `check` shows them: relative to the working directory (JSON keeps them root-relative)
        ctx = ReportContext(
            roots=tuple(Root(r.repo, r.root) for r in results), workdir=str(Path.cwd()), cite_from_workdir=True
        )
        for key, row in zip(sorted(groups), rows):
            where = f", sample {row['sample']}" if "sample" in row else ""
            summary = cite_text(row["summary"], groups[key][0].repo or groups[key][0].location.repo, ctx)
            click.echo(f"{row['group']} ({row['members']} consumers{where}): {summary}")
    for line in internal:  # the consistency rules and the simulator disagree: never hidden
        click.echo(f"subguard: {selfcheck.RULE} {line}", err=True)
    return 2 if internal else 0
