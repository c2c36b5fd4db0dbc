"""`subguard check`: scan, evaluate the policies, apply waivers and the baseline, report, set the exit code.

Exit codes: 0 when no unsuppressed finding is at or above `--fail-on`; 1 when one is; 2 for usage
errors (bad option, unknown rule id, missing path, bad config, malformed policy or baseline) and
internal errors, each as one line on stderr (the traceback only with SUBGUARD_DEBUG=1).

An empty scan (no file discovered under any path) prints a warning on stderr, shows 0 files in the
summary and exits 0: there is nothing to hold against the change, but it is never silent.

Order of suppression: inline waivers, then config waivers, then the baseline; each only sees what
the previous left unsuppressed. `--write-baseline FILE` records every finding still unsuppressed
after the waivers and then applies that baseline, so the run that writes it exits 0.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from subguard.cli.commands.common import InputError, config_mismatch, load_or_fail, scan_paths, stats_text
from subguard.core import afterwards
from subguard.core.cache import user_cache_dir
from subguard.core.config import Config, config_lookups
from subguard.core.model import WAIVER_PATTERN, FileStatus, Finding, RuleDoc
from subguard.extract import NEEDLES, PARSED_IN_FULL
from subguard.report import FORMATS, ReportContext, Root, render, summary_line, use_color
from subguard.rules import baseline as baseline_mod
from subguard.rules import code_scope
from subguard.rules.impact import describer, impact_memo
from subguard.rules.judge import BaselineStep, RuleSet, judge
from subguard.rules.policy import BUILTIN_DIR, Policy, PolicyError, load_policy_set, policy_dirs, rule_docs
from subguard.rules.waiver_sources import on_disk as waivers_on_disk
from subguard.scan import runrecord
from subguard.scan.extraction import ScanResult, cache_directory, config_dir, unread_files

if TYPE_CHECKING:  # the change rules and git revisions load only with --base, the org map only with --org-map
    from subguard.audit.orgcheck import OrgCheck
    from subguard.rules.change import Change
    from subguard.scan import gitrev

FAIL_ON = ("error", "warning", "note", "none")
F = TypeVar("F", bound=Callable[..., Any])


def guarded(fn: F) -> F:
    """Turn an unexpected exception into one line and exit code 2 (traceback with SUBGUARD_DEBUG=1)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except click.UsageError as exc:  # from the shared helpers: keep it to one line
            raise InputError(exc.format_message()) from None
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort, BrokenPipeError):
            raise
        except Exception as exc:  # noqa: BLE001 - the last resort: one line instead of a traceback
            click.echo(f"subguard: internal error: {type(exc).__name__}: {exc}", err=True)
            if os.environ.get("SUBGUARD_DEBUG") == "1":
                traceback.print_exc()
            return 2

    return wrapper  # type: ignore[return-value]


def split_ids(values: Iterable[str]) -> tuple[str, ...]:
    """`--select SG101,SG102 --select SG2` -> ('SG101', 'SG102', 'SG2')."""
    return tuple(dict.fromkeys(p.strip() for v in values for p in v.split(",") if p.strip()))


def canonical_ids(option: str, ids: Sequence[str], known: Iterable[str]) -> tuple[str, ...]:
    """Each id must be a known rule id or a prefix of one (`SG1`), in any letter case; returned in the
    rules' own case. Anything else is a usage error naming the option."""
    known = sorted(known)
    out: list[str] = []
    for rule in ids:
        hits = {k[: len(rule)] for k in known if k.lower().startswith(rule.lower())}
        if not hits:
            raise InputError(f"unknown rule id in {option}: {rule} (known: {', '.join(known)})")
        out += sorted(hits)
    return tuple(dict.fromkeys(out))


def exit_code(findings: Sequence[Finding], config: Config) -> int:
    """1 when an unsuppressed finding at or above `fail-on` may fail the run (test and example code
    may not: `test-code`), else 0."""
    return int(
        any(
            f.suppressed is None and f.severity.meets(config.fail_on) and code_scope.counts(f, config) for f in findings
        )
    )


def _config_dir(config: Config) -> Path:
    return Path(config.source).parent if config.source else Path.cwd()


def _policy_dirs(config: Config, cli_dirs: Sequence[str]) -> list[Path]:
    dirs = policy_dirs(config.policies, config.source, cli_dirs)
    for d in dirs:
        if d.is_file():
            raise InputError(f"--policies takes a directory of policy files, not a file: {d}")
        if not d.is_dir():
            raise InputError(f"policy directory does not exist: {d}")
    return dirs


def _load_rules(config: Config, cli_policy_dirs: Sequence[str]) -> tuple[list[Policy], dict[str, RuleDoc], Config, str]:
    """Policies, their docs, the config with select/ignore checked against them (fails fast, before
    scanning), and the policy set's digest (the content cache key)."""
    try:
        policies, digest = load_policy_set(_policy_dirs(config, cli_policy_dirs))
    except PolicyError as exc:
        raise InputError(f"malformed policy: {exc}") from None
    docs = dict(rule_docs(policies))
    known = set(docs)
    select = canonical_ids("select", config.select, known)
    ignore = canonical_ids("ignore", config.ignore, known)
    return policies, docs, config.model_copy(update={"select": select, "ignore": ignore}), digest


def _baseline(config: Config, read: str | None, write: str | None, notes: list[str]) -> BaselineStep | None:
    """The baseline step of `judge`: write the findings it is given as the baseline first when asked,
    then mark the baselined ones; what stderr should say is appended to `notes`."""
    if write:

        def write_then_apply(findings: list[Finding]) -> tuple[list[Finding], int]:
            text = baseline_mod.dumps(findings)
            try:
                Path(write).write_text(text, encoding="utf-8", errors="backslashreplace")
            except OSError as exc:
                raise InputError(f"cannot write baseline {write}: {exc.strerror or exc}") from None
            fps = baseline_mod.loads(text, write)
            notes.append(f"subguard: wrote {len(fps)} finding(s) to baseline {write}")
            return baseline_mod.apply(findings, fps)[0], 0

        return write_then_apply
    path = Path(read) if read else (_config_dir(config) / config.baseline if config.baseline else None)
    if path is None:
        return None
    try:
        fps = baseline_mod.loads(path.read_text(encoding="utf-8"), str(path))
    except OSError as exc:
        raise InputError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
    except baseline_mod.BaselineError as exc:
        raise InputError(str(exc)) from None

    def apply(findings: list[Finding]) -> tuple[list[Finding], int]:
        out, stale = baseline_mod.apply(findings, fps)
        if stale:
            what = "entry no longer matches" if stale == 1 else "entries no longer match"
            notes.append(f"subguard: {stale} baseline {what} a finding; rewrite it with --write-baseline")
        return out, stale

    return apply


def parse_also(values: Sequence[str]) -> list[tuple[str, str]]:
    """`--also sarif=out.sarif` -> [("sarif", "out.sarif")]; an unknown format is a usage error."""
    out: list[tuple[str, str]] = []
    for value in values:
        fmt, sep, target = value.partition("=")
        if not sep or not target or fmt not in FORMATS:
            raise InputError(
                f"--also expects FORMAT=FILE with FORMAT one of {', '.join(sorted(FORMATS))}, got {value!r}"
            )
        out.append((fmt, target))
    return out


def _write(target: str, text: str) -> None:
    try:
        Path(target).write_text(text, encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
    runrecord.note_output(target, text)


def _note_inputs(
    roots: Sequence[str],
    config: Config,
    config_file: str | None,
    policy_folders: Sequence[Path],
    baseline_file: str | None,
    outputs: Sequence[str],
) -> None:
    """Tell the run memo (when it records: never with --no-cache) what this run depends on, before
    anything is read."""
    if runrecord.ACTIVE is None:
        return
    files = [str(p) for r in roots for p in config_lookups(Path(r))] if not config_file else [config_file]
    for folder in policy_folders:
        files.append(str(folder))
        files += [str(f) for f in sorted(folder.glob("*.y*ml"))] if folder.is_dir() else []
    files += [baseline_file] if baseline_file else []
    caches = [str(cache_directory(Path(r).resolve(), config)) for r in roots if Path(r).is_dir()]
    caches += [str(user_cache_dir())]
    runrecord.note_inputs(roots, files, caches, [*outputs, *caches], config.exclude, config_dir(config))


def _note_unread(
    roots: Sequence[str], results: Sequence[ScanResult], findings: Sequence[Finding], config: Config
) -> None:
    """Tell the run memo which files of each root this run did not see, and those whose parse is all
    it took from them (`subguard.scan.unread`)."""
    if runrecord.ACTIVE is None or len(roots) != len(results):
        return
    cited = {f.location.path for f in findings} | {r.location.path for f in findings for r in f.related}
    for root, result in zip(roots, results):
        parsed = {r.path: r.extractor for r in result.read_files() if r.status is FileStatus.PARSED and r.extractor}
        runrecord.note_unread(
            root,
            unread_files(result, cited),
            NEEDLES,
            result.looked.patterns,
            config.max_file_size,
            parsed,
            result.prints,
            PARSED_IN_FULL,
            WAIVER_PATTERN,
        )


def _context(
    results: Sequence[ScanResult], color: bool, show_notes: bool = False, hide_marked: bool = True
) -> ReportContext:
    per_root = [r.counts() for r in results]  # one pass over each root's files, not one per status
    counts = {s: sum(c[s.value] for c in per_root) for s in FileStatus}
    return ReportContext(
        roots=tuple(Root(r.repo, r.root) for r in results),
        workdir=str(Path.cwd()),
        parsed=counts[FileStatus.PARSED],
        skipped=counts[FileStatus.SKIPPED],
        failed=counts[FileStatus.FAILED],
        color=color,
        show_notes=show_notes,
        hide_marked=hide_marked,
        cite_from_workdir=True,
    )


def _org_map_file(cli_value: str | None, config: Config) -> str | None:
    """The org map to judge with: `--org-map` (relative to the working directory), else config
    `org-map` (relative to the config file); noted as an input of the run memo."""
    path = cli_value or (str(_config_dir(config) / config.org_map) if config.org_map else None)
    if path:
        runrecord.note_inputs([], [path], [], [])
    return path


def _org_check(cli_value: str | None, results: Sequence[ScanResult], config: Config) -> OrgCheck | None:
    """The check joined with the org map (`subguard.audit.orgcheck`); a map that cannot be used is exit 2."""
    path = _org_map_file(cli_value, config)
    if not path:
        return None
    from subguard.audit import orgcheck

    try:
        return orgcheck.prepare(path, results, config, config.org_map_max_age)
    except orgcheck.MapError as exc:
        raise InputError(str(exc)) from None


def _base_revisions(roots: Sequence[str], ref: str | None) -> list[gitrev.Revision]:
    """`--base REF` resolved in each root's repository before anything is scanned (exit 2 when not)."""
    if not ref:
        return []
    runrecord.spoil("compares with a base revision")
    from subguard.scan import gitrev

    try:
        return gitrev.resolve_roots([r for r in roots if Path(r).exists()], ref)
    except gitrev.RevisionError as exc:
        raise InputError(str(exc)) from None


def _base_change(
    roots: Sequence[str],
    revisions: Sequence[gitrev.Revision],
    results: Sequence[ScanResult],
    config: Config,
    key: str | None,
) -> Change | None:
    """The base revision's scan of every root, for the change rules."""
    if not revisions:
        return None
    from subguard.rules.change import Change
    from subguard.scan import gitrev

    try:
        base = gitrev.scan_base(roots, revisions, results, config.model_copy(update={"base": None}), key)
    except gitrev.RevisionError as exc:
        raise InputError(str(exc)) from None
    return Change(tuple(base), revisions[0].ref, revisions[0].commit, revisions[0].label)


def _fix_options(fix: bool, diff: bool, unsafe: bool) -> None:
    if unsafe and not (fix or diff):
        raise InputError("--unsafe-fixes needs --fix or --diff")


def _with_fixes(
    results: Sequence[ScanResult], findings: list[Finding], formats: set[str], config: Config
) -> list[Finding]:
    """The findings with their fixes attached when a SARIF report shows them (its `fixes`)."""
    if "sarif" not in formats:
        return findings
    from subguard.fix.run import annotate

    return annotate(results, findings, config)


FIX_PASSES = 10  # --fix runs again on the fixed files while a pass fixes something (a fix may unblock another)


def _fixes(
    results: Sequence[ScanResult], findings: Sequence[Finding], config: Config, *, diff: bool, unsafe: bool
) -> int | None:
    """`--diff`: print the fixes and return the exit code. `--fix`: write them and check again (the
    same command, until nothing more is fixed); None when the run should go on to report."""
    from subguard.fix import run as fixing

    ctx = click.get_current_context()
    done = ctx.meta.setdefault("subguard.fix", {"fixed": 0, "passes": 0})
    outcome = fixing.fix(results, findings, config, unsafe=unsafe, apply=not diff)
    if diff:
        text = fixing.diff(outcome, Path.cwd())
        click.echo(text, nl=False)
        for line in outcome.summary("can fix"):
            click.echo(line, err=True)
        return 1 if text else 0
    if outcome.fixed:
        runrecord.spoil("fixes files")
        done["fixed"] += outcome.fixed
        done["passes"] += 1
        if done["passes"] < FIX_PASSES:
            return int(ctx.invoke(ctx.command, **ctx.params))
    outcome.fixed_before = done["fixed"]
    for line in outcome.summary("fixed"):
        click.echo(line, err=True)
    return None


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default="text", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report here instead of stdout.")
@click.option(
    "--also",
    "also",
    multiple=True,
    metavar="FORMAT=FILE",
    help="Also write the report in FORMAT to FILE (repeatable; one scan, several reports).",
)
@click.option("--fail-on", type=click.Choice(FAIL_ON), help="Lowest severity that fails the run [config, else error].")
@click.option("--select", multiple=True, metavar="IDS", help="Only these rule ids or prefixes (comma-separated).")
@click.option("--ignore", multiple=True, metavar="IDS", help="Skip these rule ids or prefixes (comma-separated).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Config file to use.")
@click.option(
    "--policies",
    "extra_policies",
    multiple=True,
    type=click.Path(),
    metavar="DIR",
    help="Extra policy directory (repeatable).",
)
@click.option(
    "--baseline", "baseline_file", type=click.Path(dir_okay=False), help="Suppress findings recorded in this baseline."
)
@click.option("--write-baseline", type=click.Path(dir_okay=False), help="Record the current findings as the baseline.")
@click.option(
    "--show-notes",
    is_flag=True,
    default=None,
    help="Text and GitHub output: list every note (else one line counts them) [config show-notes].",
)
@click.option("--stats", is_flag=True, help="Print files parsed/skipped/failed and why (to stderr).")
@click.option("--no-simulate", is_flag=True, help="Do not attach a simulated impact to group findings.")
@click.option(
    "--no-cache",
    is_flag=True,
    help="Do not read or write the content cache (config `cache-dir`, default <root>/.subguard_cache).",
)
@click.option("--show-config", is_flag=True, help="Print the effective settings and where each came from, then exit.")
@click.option(
    "--base",
    "base_ref",
    metavar="REF",
    help="Also judge the change since git revision REF against the rollout that ships it (SG6xx) [config base].",
)
@click.option("--fix", "fix", is_flag=True, help="Apply the safe fixes, then report what is left.")
@click.option(
    "--diff",
    "diff",
    is_flag=True,
    help="Print the fixes as a unified diff and change nothing (exit 1 when there is one).",
)
@click.option(
    "--unsafe-fixes", is_flag=True, help="With --fix or --diff: also the fixes that may change what is delivered."
)
@click.option(
    "--org-map",
    "org_map",
    type=click.Path(dir_okay=True),
    metavar="FILE",
    help="Judge each group declared here with the other repositories' members in this org map "
    "(written by `subguard audit`) [config org-map].",
)
@click.option(
    "--serve",
    is_flag=True,
    help="Hand the run to the resident server of this install (`subguard serve`), starting one in the "
    "background when none runs; the same report either way.",
)
@guarded
def check(
    paths: tuple[str, ...],
    fmt: str,
    output: str | None,
    also: tuple[str, ...],
    fail_on: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    config_file: str | None,
    extra_policies: tuple[str, ...],
    baseline_file: str | None,
    write_baseline: str | None,
    show_notes: bool | None,
    stats: bool,
    no_simulate: bool,
    no_cache: bool,
    show_config: bool,
    base_ref: str | None = None,
    org_map: str | None = None,
    fix: bool = False,
    diff: bool = False,
    unsafe_fixes: bool = False,
    serve: bool = False,  # handled by the console entry before the CLI loads (`subguard.cli.resident.client`)
) -> int:
    """Lint the consumer subscriptions under PATHS (default: the current directory).

    Exit 0 when nothing unsuppressed is at or above --fail-on, 1 when something is, 2 on errors.
    """
    roots = paths or (".",)
    extra_reports = parse_also(also)
    _fix_options(fix, diff, unsafe_fixes)
    config = load_or_fail(config_file, roots)
    overrides: dict[str, Any] = {}
    if select:
        overrides["select"] = split_ids(select)
    if ignore:
        overrides["ignore"] = split_ids(ignore)
    if no_simulate:
        overrides["simulate"] = False
    if show_notes:
        overrides["show_notes"] = True
    if fail_on:
        overrides["fail_on"] = fail_on
    if base_ref:
        overrides["base"] = base_ref
    file_config = config
    config = config.model_copy(
        update={"select": split_ids(config.select), "ignore": split_ids(config.ignore), **overrides}
    )
    threshold = config.fail_on
    if threshold not in FAIL_ON:
        raise InputError(f"{config.source or 'config'}: fail-on must be one of {', '.join(FAIL_ON)}, got {threshold!r}")
    policies, docs, config, digest = _load_rules(config, extra_policies)
    if show_config:
        runrecord.spoil("shows the config")
        searched = [] if config_file else config_lookups(Path(roots[0]))
        caches = [cache_directory(Path(r).resolve(), config) for r in roots if not no_cache and Path(r).is_dir()]
        folders = [BUILTIN_DIR.resolve(), *_policy_dirs(config, extra_policies)]
        from subguard.cli.commands.show_config import describe

        click.echo(describe(config, file_config, overrides, searched, folders, caches), nl=False)
        return 0
    if write_baseline:
        runrecord.spoil("writes a baseline")
    _note_inputs(
        roots,
        config,
        config_file,
        _policy_dirs(config, extra_policies),
        baseline_file,
        [p for p in (output, *(t for _, t in extra_reports)) if p],
    )
    revisions = _base_revisions(roots, config.base)
    results = scan_paths(roots, config.model_copy(update={"base": None}), cache_key=None if no_cache else digest)
    if revisions:
        afterwards.now()  # the base revision's scan reads the content cache this scan wrote
    change = _base_change(roots, revisions, results, config, None if no_cache else digest)
    mismatch = config_mismatch(config, config_file, roots)
    notes = [mismatch] if mismatch else []
    memo = impact_memo() if config.simulate and not no_cache else None
    org = _org_check(org_map, results, config)
    notes += org.warnings if org is not None else ()
    judged = (org.judge if org is not None else judge)(
        results,
        RuleSet(tuple(policies), docs),
        config,
        waivers=waivers_on_disk(results, config),
        baseline=_baseline(config, baseline_file, write_baseline, notes),
        describe=describer(memo, config.jobs) if config.simulate else None,
        change=change,
    )
    if memo is not None:
        afterwards.later(memo.save)
    findings = judged.findings
    fixed = _fixes(results, findings, config, diff=diff, unsafe=unsafe_fixes) if fix or diff else None
    if fixed is not None:
        return fixed
    findings = _with_fixes(results, findings, {fmt, *(f for f, _ in extra_reports)}, config)
    afterwards.later(functools.partial(_note_unread, roots, results, findings, config))
    note = "\n".join(notes)
    ctx = _context(
        results,
        color=output is None and use_color(sys.stdout.isatty()),
        show_notes=config.show_notes,
        hide_marked=config.test_code != "fail",
    )
    if change is not None:
        ctx = dataclasses.replace(ctx, base_ref=change.ref, base_commit=change.commit)
    report = render(fmt, findings, docs, ctx)
    plain = dataclasses.replace(ctx, color=False)
    for extra_fmt, target in extra_reports:
        _write(target, render(extra_fmt, findings, docs, plain))
    if output:
        _write(output, report)
        click.echo(f"subguard: {summary_line(findings, ctx)}", err=True)
    else:
        click.echo(report, nl=False)
    if ctx.files == 0:
        click.echo(f"subguard: warning: no files found under {', '.join(roots)}: nothing was checked", err=True)
    if note:
        click.echo(note, err=True)
    if stats:
        click.echo(stats_text(results), err=True)
    return exit_code(findings, config)
