"""The work done inside the audit's Spark tasks: plain Python over plain records, no Spark here.

`scan_task` runs one repository exactly as `subguard check` does (same `scan_files`, same engine,
same repo config); `group_task` runs the engine on every member of one consumer group, wherever
they were declared, and the simulator on the group. Both return flat rows (`RECORD_KEYS`) whose
`payload` is JSON (a repo's file list travels typed, under `files`); `transforms` turns them into tables.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from subguard.audit import codeowners, local
from subguard.core.branches import one_of
from subguard.core.config import Config, ConfigError, parse_config
from subguard.core.inventory import group_name, sort_consumers
from subguard.core.model import (
    ClientFamily,
    Consumer,
    Deployment,
    ExpressionType,
    FileRecord,
    FileStatus,
    Finding,
    Location,
    Resolution,
    StartupFailure,
    Subscription,
    Value,
)
from subguard.deploy.environment import with_environment
from subguard.rules import suppress, waiver_sources
from subguard.rules.judge import GROUP_SCOPE, RuleSet, Waivers, judge
from subguard.rules.waiver_sources import Reader
from subguard.scan import globs
from subguard.scan.discover import Candidate, read_limited
from subguard.scan.extraction import ScanResult, scan_files
from subguard.simulate.impact import DEFAULT_RUNS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RECORD_KEYS = ("repo", "kind", "key", "payload")
CONFIG_FILES = (".subguard.yaml", ".subguard.yml", "pyproject.toml")


@dataclass(frozen=True)
class AuditOptions:
    """Settings every task needs; pickled once into the task closures."""

    config: Config = field(default_factory=Config)
    runs: int = DEFAULT_RUNS  # simulated runs per group: the prediction's default, as in every command
    today: dt.date = field(default_factory=dt.date.today)
    config_waiver_locations: tuple[Location, ...] = ()


@dataclass(frozen=True)
class FileRow:
    """One file of a repo as the task receives it. `content` is None when the prefilter dropped it."""

    path: str
    size: int
    uri: str
    content: bytes | None = None
    skip_reason: str | None = None


# --- configuration -------------------------------------------------------------------------------


def repo_config(read: Reader, default: Config) -> Config:
    """The repo's own config file at its root, as `subguard check` on that repo would find it."""
    for name in CONFIG_FILES:
        data = read(name)
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        if name == "pyproject.toml":
            try:
                table = tomllib.loads(text).get("tool", {})
            except tomllib.TOMLDecodeError:
                continue
            if "subguard" not in table:
                continue
            return parse_config(table["subguard"], name)
        from ruamel.yaml import YAML

        return parse_config(YAML(typ="safe", pure=True).load(text), name)
    return default


def in_task(config: Config) -> Config:
    """The config a Spark task scans with: Spark already runs one task per core, so the scan's own
    process pool (`jobs`) would only fork inside a Python worker. Results do not depend on it."""
    return config if config.jobs == 1 else config.model_copy(update={"jobs": 1})


# --- policies and the engine: the same steps as `subguard check` ------------------------------------


def _policies(config: Config) -> RuleSet:
    source = config.source if config.source and Path(config.source).is_absolute() else None
    return _load_policies(tuple(config.policies), source)


def materialise_builtin_policies() -> None:
    """Under zipimport (`--py-files subguard.zip` on a cluster) the built-in policy folder is inside
    the archive, where the loader cannot list it: extract it once per process and point the loader
    at the copy."""
    import tempfile
    import zipfile

    from subguard.rules import policy

    if policy.BUILTIN_DIR.is_dir():
        return
    archive = getattr(getattr(policy, "__loader__", None), "archive", None)
    if not archive:
        return
    dest = Path(tempfile.mkdtemp(prefix="subguard-policies-"))
    with zipfile.ZipFile(archive) as zf:
        for name in zf.namelist():
            if name.startswith("subguard/rules/policies/") and name.endswith((".yaml", ".yml")):
                (dest / Path(name).name).write_bytes(zf.read(name))
    policy.BUILTIN_DIR = dest


@functools.lru_cache(maxsize=8)
def _load_policies(dirs: tuple[str, ...], source: str | None) -> RuleSet:
    """Policies and their docs, loaded once per task process (they are read-only)."""
    from subguard.rules.policy import load_policies, policy_dirs

    materialise_builtin_policies()
    return RuleSet.of(load_policies(policy_dirs(dirs, source)))


def local_findings(result: ScanResult, config: Config, read: Reader, today: dt.date) -> list[Finding]:
    """What `subguard check` reports for this repo alone, minus group-scope rules (judged per group).

    Waivers are applied to all findings first, so a waiver for a group rule is not "unused" here.
    """
    rules = _policies(config)
    waivers = waiver_sources.in_memory(result, read, config, today)

    def own(f: Finding) -> bool:  # group rules are judged per group, across repositories
        return rules.scope(f.rule) != GROUP_SCOPE

    # the organisation's other repositories are beyond this one: a consumer whose group is unknown could
    # be a member of any of their groups (check on one repository cannot know that, so it says nothing)
    return judge([result], rules, config, waivers=waivers, keep=own, beyond=True).findings


# --- rows ----------------------------------------------------------------------------------------


def _row(repo: str, kind: str, key: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"repo": repo, "kind": kind, "key": key, "payload": json.dumps(payload, ensure_ascii=False, default=str)}


def file_row(repo: str, rec: FileRecord) -> dict[str, Any]:
    return _row(
        repo,
        "file",
        rec.path,
        {
            "path": rec.path,
            "status": rec.status.value,
            "reason": rec.reason,
            "extractor": rec.extractor,
            "size": rec.size,
        },
    )


def files_row(repo: str, recs: Sequence[FileRecord]) -> dict[str, Any]:
    """All file records of one repo in one row, as typed tuples under `files` (no JSON payload): a
    repository of thousands of files crosses into the JVM as one row, and the `files` table
    explodes it there without parsing text."""
    return {
        "repo": repo,
        "kind": "files",
        "key": repo,
        "payload": "",
        "files": [(r.path, r.status.value, r.reason, r.extractor, r.size) for r in recs],
    }


def consumer_row(c: Consumer, origin: str) -> dict[str, Any]:
    return _row(
        c.repo,
        "consumer",
        c.consumer_id,
        {
            # the group the broker sees (namespace%group), as findings and the group tasks name it
            "consumer_id": c.consumer_id,
            "group": group_name(c),
            "namespace": c.namespace.value if c.namespace else None,
            "client": c.client.value,
            "message_model": c.message_model.value,
            "consume_mode": c.consume_mode.value,
            "service": c.service,
            "environment": c.environment,
            "path": c.location.path,
            "line": c.location.line,
            "subscriptions": len(c.subscriptions),
            "origin": origin,
            "json": c.model_dump_json(),
        },
    )


def deployment_row(d: Deployment) -> dict[str, Any]:
    return _row(
        d.repo,
        "deployment",
        d.deployment_id,
        {
            "deployment_id": d.deployment_id,
            "service": d.service,
            "kind": d.kind,
            "name": d.name,
            "namespace": d.namespace,
            "environment": d.environment,
            "image": d.image,
            "replicas": d.replicas,
            "path": d.location.path,
            "line": d.location.line,
            "json": d.model_dump_json(),
        },
    )


def waiver_row(repo: str, w: suppress.InlineWaiver) -> dict[str, Any]:
    return _row(
        repo,
        "waiver",
        f"{w.location.path}:{w.location.line}",
        {
            "rules": list(w.rules),
            "reason": w.reason,
            "location": w.location.model_dump(),
            "covers": list(w.covers),
        },
    )


def waiver_from_json(text: str) -> suppress.InlineWaiver:
    d = json.loads(text)
    return suppress.InlineWaiver(
        tuple(d["rules"]), d["reason"], Location.model_validate(d["location"]), tuple(d["covers"])
    )


def finding_row(repo: str, f: Finding, scope: str) -> dict[str, Any]:
    related_repos = sorted({r.location.repo for r in f.related if r.location.repo} | {f.location.repo} - {""})
    return _row(
        repo,
        "finding",
        f.fingerprint,
        {
            "rule": f.rule,
            "severity": f.severity.value,
            "message": f.message,
            "scope": scope,
            "path": f.location.path,
            "line": f.location.line,
            "column": f.location.column,
            "group": f.group,
            "topic": f.topic,
            "fingerprint": f.fingerprint,
            "suppressed": f.suppressed.kind if f.suppressed else None,
            "impact": f.impact,
            "repos": related_repos,
            "json": f.model_dump_json(),
        },
    )


# --- per repo ------------------------------------------------------------------------------------


def scan_task(repo: str, root: str, rows: Sequence[FileRow], options: AuditOptions) -> list[dict[str, Any]]:
    """Scan one repository from in-memory files (Spark's `binaryFile` rows) and judge it alone."""
    skipped = [
        FileRecord(path=r.path, status=FileStatus.SKIPPED, reason=r.skip_reason, repo=repo, size=r.size)
        for r in rows
        if r.skip_reason
    ]
    live = [r for r in rows if not r.skip_reason]
    # the task never goes back to the file system: a live file always arrives with its content
    candidates = [Candidate(r.path, r.uri, r.size, r.content if r.content is not None else b"") for r in live]
    texts = {r.path: r.content for r in live if r.content is not None}
    config, problems = task_config(repo, texts.get, options)
    return problems + scan_candidates(repo, root, candidates, skipped, texts.get, config, options)


def unit_task(unit: local.Unit, options: AuditOptions) -> list[dict[str, Any]]:
    """List and scan one folder of a local or mounted file system (see `subguard.audit.local`)."""
    if unit.kind != "repo":
        return [files_row("", local.list_outside(unit))]

    def reader(max_size: int) -> Reader:
        def read(rel: str) -> bytes | None:
            try:
                return read_limited(f"{unit.path}/{rel}", max_size)
            except OSError:
                return None

        return read

    config, problems = task_config(unit.repo, reader(options.config.max_file_size), options)
    read = reader(config.max_file_size)  # the repo's own config may set another size limit
    candidates, skipped = local.list_repo(unit, config.max_file_size, globs.matcher(config.exclude))
    return problems + scan_candidates(unit.repo, f"file:{unit.path}", candidates, skipped, read, config, options)


def task_config(repo: str, read: Reader, options: AuditOptions) -> tuple[Config, list[dict[str, Any]]]:
    """The repo's config (else the audit's), and a problem row when the repo's file is broken."""
    try:
        return repo_config(read, options.config), []
    except ConfigError as exc:
        return options.config, [_row(repo, "problem", "config", {"message": str(exc)})]


def scan_candidates(
    repo: str,
    root: str,
    candidates: Sequence[Candidate],
    skipped: Sequence[FileRecord],
    read: Reader,
    config: Config,
    options: AuditOptions,
) -> list[dict[str, Any]]:
    """Scan one repository and judge it alone (repo-local rules), as `subguard check` on it would.

    `read` gives the content of a file of the repo (the files that may hold inline waivers);
    `candidates` carry their content or are read by the scan itself.
    """
    result = scan_files(root, repo, candidates, skipped, in_task(config))
    # the group tasks judge with the audit's config: each consumer carries its own repo's environments
    result = dataclasses.replace(result, consumers=tuple(with_environment(c, config) for c in result.consumers))
    out = [_row(repo, "repo", repo, {"root": root, "config": config.source or ""})]
    out.append(files_row(repo, result.files))
    out += [consumer_row(c, "source") for c in result.consumers]
    out += [deployment_row(d) for d in result.deployments]
    rules = _policies(config)
    out += [finding_row(repo, f, rules.scope(f.rule)) for f in local_findings(result, config, read, options.today)]
    out += [waiver_row(repo, w) for w in waiver_sources.inline_of(result, read)]
    out += owners_rows(repo, read)
    return out


def owners_rows(repo: str, read: Reader) -> list[dict[str, Any]]:
    """The repository's CODEOWNERS file (`subguard.audit.codeowners.LOCATIONS`) as one `owners` record
    (its path and text; the driver parses it): who owns a finding when the inventory names no team."""
    for rel in codeowners.LOCATIONS:
        data = read(rel)
        if data is not None and len(data) <= codeowners.MAX_BYTES:
            return [_row(repo, "owners", rel, {"path": rel, "text": data.decode("utf-8", "replace")})]
    return []


# --- inventory outputs (jsonl) -------------------------------------------------------------------


def _value(value: Any, resolution: str | None, detail: str | None) -> Value:
    if value is None:
        return Value.unknown(detail or "unknown in the inventory output")
    try:
        res = Resolution(resolution) if resolution else Resolution.LITERAL
    except ValueError:
        res = Resolution.LITERAL
    return Value(value=str(value), resolution=res)


def consumer_from_rows(rows: Sequence[Mapping[str, Any]], repo_hint: str) -> Consumer:
    """Rebuild one consumer from its `subguard inventory --format jsonl` rows (one per subscription)."""
    head = rows[0]
    repo = head.get("repo") or repo_hint
    res = head.get("resolution") or {}
    unresolved = head.get("unresolved") or {}

    def loc(r: Mapping[str, Any]) -> Location:
        return Location(
            path=r.get("path") or "", line=int(r.get("line") or 1), column=int(r.get("column") or 1), repo=repo
        )

    subs: list[Subscription] = []
    for r in rows:
        if r.get("topic") is None and "topic" not in (r.get("unresolved") or {}):
            continue
        r_res, r_unres = r.get("resolution") or {}, r.get("unresolved") or {}
        subs.append(
            Subscription(
                topic=_value(r.get("topic"), r_res.get("topic"), r_unres.get("topic")),
                expression=_value(r.get("expression"), r_res.get("expression"), r_unres.get("expression")),
                expression_type=ExpressionType(r.get("expression_type") or "TAG"),
                tags=tuple(r.get("tags") or ()),
                location=loc(r),
            )
        )
    # a consumer registers one subscription per topic: rows of one topic are its alternatives
    by_topic: dict[str, list[Subscription]] = {}
    for sub in subs:
        if sub.topic.value is not None:
            by_topic.setdefault(sub.topic.value, []).append(sub)
    subs = [
        one_of(tuple(by_topic[sub.topic.value])) if sub.topic.value is not None else sub
        for sub in subs
        if sub.topic.value is None or by_topic[sub.topic.value][0] is sub
    ]
    model = head.get("message_model")
    return Consumer(
        consumer_id=str(head.get("consumer_id") or f"{repo}:{head.get('path')}:{head.get('line')}"),
        group=_value(head.get("group"), res.get("group"), unresolved.get("group")),
        subscriptions=tuple(subs),
        message_model=_value(model, None, unresolved.get("message_model")),
        consume_mode=_value(head.get("consume_mode") or "CONCURRENTLY", None, None),
        client=ClientFamily(head.get("client")),
        service=head.get("service") or "",
        environment=head.get("environment") or "",
        repo=repo,
        name_server=_value(head["name_server"], None, None) if head.get("name_server") else None,
        namespace=_value(head["namespace"], None, None) if head.get("namespace") else None,
        instance_name=_value(head["instance_name"], None, None) if head.get("instance_name") else None,
        registers=head.get("registers") is not False,
        template=tuple(head.get("template") or ()),
        startup_failure=StartupFailure(reason=str(head["startup_failure"])) if head.get("startup_failure") else None,
        location=loc(head),
    )


def inventory_task(repo_hint: str, lines: Iterable[str]) -> list[dict[str, Any]]:
    """Consumers rebuilt from one repo's inventory rows; a bad line becomes a problem row."""
    by_consumer: dict[tuple[str, str], list[dict[str, Any]]] = {}
    out: list[dict[str, Any]] = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            out.append(_row(repo_hint, "problem", f"line {i}", {"message": f"{repo_hint}: line {i}: {exc}"}))
            continue
        if not isinstance(row, dict):
            out.append(
                _row(repo_hint, "problem", f"line {i}", {"message": f"{repo_hint}: line {i}: not a JSON object"})
            )
            continue
        key = (str(row.get("repo") or repo_hint), str(row.get("consumer_id") or f"{row.get('path')}:{row.get('line')}"))
        by_consumer.setdefault(key, []).append(row)
    for (repo, _), rows in sorted(by_consumer.items()):
        try:
            out.append(consumer_row(consumer_from_rows(rows, repo), "inventory"))
        except (ValueError, KeyError) as exc:
            out.append(_row(repo, "problem", rows[0].get("consumer_id") or "", {"message": f"{repo}: {exc}"}))
    return out


# --- per group -----------------------------------------------------------------------------------


def with_hint(c: Consumer, environment: str | None) -> Consumer:
    """The inventory's environment hint fills a consumer whose code and config named none."""
    return c.model_copy(update={"environment": environment}) if environment and not c.environment else c


def group_task(
    group: str, members: Sequence[tuple[str, str | None]], waivers_json: Sequence[str], options: AuditOptions
) -> list[dict[str, Any]]:
    """Judge one consumer group across all repos: group-scope findings plus the simulated impact.

    `members` holds (consumer JSON, environment hint) for every consumer declaring the group, in
    any order: they are judged in the group map's order (`inventory.sort_consumers`), so the
    findings and the simulated impact do not depend on the order a shuffle delivered them in.
    `waivers_json` the inline waivers (JSON) of the member repos. Waiver problems are reported by the
    per-repo tasks, not here. The group is predicted once (`simulate.impact.predict`, as `check` and
    `simulate --inventory` predict it): its findings' impact and its row's chart are that one prediction.
    """
    consumers = sort_consumers([with_hint(Consumer.model_validate_json(js), env) for js, env in members])
    by_repo: dict[str, list[Consumer]] = {}
    for c in consumers:
        by_repo.setdefault(c.repo, []).append(c)
    results = [
        ScanResult(root="", repo=repo, files=(), consumers=tuple(cs), deployments=())
        for repo, cs in sorted(by_repo.items())
    ]
    config, rules = options.config, _policies(options.config)
    waivers = Waivers([waiver_from_json(w) for w in waivers_json], options.config_waiver_locations, options.today)
    prediction = Prediction(options.runs)
    judged = judge(
        results,
        rules,
        config,
        waivers=lambda _: waivers,
        keep=lambda f: rules.scope(f.rule) == GROUP_SCOPE,
        describe=prediction.describe if config.simulate else None,
    )
    out = [finding_row(f.location.repo, f, GROUP_SCOPE) for f in judged.findings]
    # a lone, unflagged consumer cannot disagree with anyone: nothing to simulate (most groups of an org)
    impact = prediction.row(consumers) if config.simulate and (len(consumers) > 1 or judged.findings) else {}
    out.append(_row("", "group", group, {"group": group, "impact": impact}))
    return out


class Prediction:
    """The prediction of the task's group, made at most once (`simulate.impact.predict`) and shared by
    the `describe` step of `judge` (findings' impact, self-check) and the group row (chart)."""

    def __init__(self, runs: int) -> None:
        self.runs = runs
        self._made: dict[str, Any] = {}

    def of(self, consumers: Sequence[Consumer]) -> Any:
        """The group's `GroupImpact`, or None when the simulator is absent or fails (the findings stand)."""
        key = "\n".join(c.model_dump_json() for c in sort_consumers(consumers))
        if key not in self._made:
            try:
                from subguard.simulate.impact import predict
            except ImportError:  # the simulator is optional for the audit, as for `check`
                self._made[key] = None
            else:
                try:
                    self._made[key] = predict(consumers, self.runs)
                except Exception as exc:  # noqa: BLE001 - reported; the findings stand without the impact
                    print(
                        f"subguard: warning: simulation of a group failed: {type(exc).__name__}: {exc}", file=sys.stderr
                    )
                    self._made[key] = None
        return self._made[key]

    def describe(self, groups: Mapping[str, Sequence[Consumer]]) -> dict[str, str | None]:
        from subguard.simulate.impact import describe_impact

        made = {g: self.of(members) for g, members in groups.items()}
        return {g: describe_impact(p) if p is not None else None for g, p in made.items()}

    def row(self, consumers: Sequence[Consumer]) -> dict[str, Any]:
        """The group row's impact: the description, the per-tag figures and the runs they come from."""
        made = self.of(consumers)
        if made is None:
            return {}
        from subguard.simulate.impact import describe_impact

        return {"description": describe_impact(made), "runs": made.runs, "result": _plain(made)}


def _plain(obj: Any) -> Any:
    import dataclasses

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, frozenset, set)):
        return [_plain(v) for v in obj]
    return obj
