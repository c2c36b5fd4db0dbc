"""Helpers shared by the subcommands: config loading, scanning several roots, stats."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import click

from subguard.core.config import Config, ConfigError, find_config, load_config
from subguard.scan.extraction import ScanResult, scan_repo, unusual_skip


class InputError(click.ClickException):
    """A usage or input error found after the options parsed: one line on stderr, exit code 2."""

    exit_code = 2

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"subguard: error: {self.format_message()}", err=True)


def load_or_fail(config_file: str | None, paths: Sequence[str]) -> Config:
    start = Path(paths[0]) if paths else Path.cwd()
    try:
        return load_config(Path(config_file) if config_file else None, start)
    except ConfigError as exc:
        raise InputError(str(exc)) from None


def config_mismatch(config: Config, config_file: str | None, paths: Sequence[str]) -> str | None:
    """The warning for paths whose nearest config files differ: `config` (the first path's, from
    `load_or_fail`) applies to every path, where each path checked alone would get its own; None when
    they agree or with --config."""
    if config_file or len(paths) < 2:
        return None
    first = Path(config.source) if config.source else None
    for path in paths[1:]:
        own = find_config(Path(path))
        if own != first:
            return (
                f"subguard: warning: {path} has {f'its own config {own}' if own else 'no config file'}, but the "
                f"first path's ({first or 'the defaults'}) applies to every path; check it alone, or pass --config"
            )
    return None


def scan_paths(paths: Sequence[str], config: Config, cache_key: str | None = None) -> list[ScanResult]:
    """Scan each root; a missing path is an input error (exit 2). With `cache_key` (a hash of the policy
    set), directory roots use the content cache."""
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        raise InputError(f"path does not exist: {missing[0]}")
    return [scan_repo(Path(p), config, cache_key=cache_key) for p in paths]


def policy_cache_key(config: Config, cli_dirs: Sequence[str] = ()) -> str | None:
    """The content cache key of a run without parsing policies: the digest of the policy files
    (built-in, config and `--policies`); None (no cache) when a policy directory is unreadable."""
    from subguard.rules.policy import PolicyError, policy_digest, policy_dirs, policy_files

    try:
        return policy_digest(policy_files(policy_dirs(config.policies, config.source, cli_dirs)))
    except PolicyError:
        return None


def stats_text(results: Sequence[ScanResult]) -> str:
    """Files parsed / skipped / failed, grouped by reason (parsed files without one: by extractor)."""
    lines: list[str] = []
    totals = {"parsed": 0, "skipped": 0, "failed": 0}
    reasons: dict[tuple[str, str], int] = {}
    for res in results:
        for rec in res.files:
            totals[rec.status.value] += 1
            why = rec.reason or (f"by the {rec.extractor} extractor" if rec.extractor else "")
            if why:
                key = (rec.status.value, why)
                reasons[key] = reasons.get(key, 0) + 1
    total = sum(totals.values())
    lines.append(
        f"files: {total} discovered, {totals['parsed']} parsed, {totals['skipped']} skipped, {totals['failed']} failed"
    )
    for (status, reason), n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  {status:7} {n:6}  {reason}")
    failed = [(r.path, r.reason) for res in results for r in res.files if r.status.value == "failed"]
    for path, reason in failed[:50]:
        lines.append(f"  failed: {path}: {reason}")
    # a file skipped for a reason a user would not guess (size, link, device, unreadable, ...) is named
    unusual = [(r.path, r.reason) for res in results for r in res.files if unusual_skip(r)]
    lines += [f"  skipped: {path}: {reason}" for path, reason in sorted(unusual)]
    return "\n".join(lines)
