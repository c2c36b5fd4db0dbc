"""The org map the Spark audit writes, read by `check --org-map` (slow: the session SparkSession).

- a generated organisation: the audit writes `org-map.sqlite`; `check --org-map` inside one repository
  reports the cross-repository SG102 on its own line citing the other repository; the fix makes it go;
- examples/org: for every repository, `check --org-map` reports exactly the audit's group findings that
  involve that repository (same rules, groups and members).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from subguard.audit import orgmap
from subguard.cli.main import main
from subguard.rules.judge import GROUP_SCOPE, RuleSet
from subguard.rules.policy import load_policies, policy_dirs
from tests.audit.conftest import REPOS, run
from tests.audit.orgmap_helpers import LINE, organisation, write_repo

pytestmark = pytest.mark.slow

Member = tuple[str, str, int]
Key = tuple[str, str, frozenset[Member]]


def _rows(report: Any) -> list[dict[str, Any]]:
    return [*report["findings"], *report.get("diagnostics", [])] if isinstance(report, dict) else list(report)


def _group_keys(rows: list[dict[str, Any]], default_repo: str = "") -> set[Key]:
    rules = RuleSet.of(load_policies(policy_dirs((), None)))
    out: set[Key] = set()
    for f in rows:
        if rules.scope(f["rule"]) != GROUP_SCOPE or f["suppressed"]:
            continue
        members = {(f["repo"] or default_repo, f["path"], f["line"])}
        members |= {(r.get("repo") or default_repo, r["path"], r["line"]) for r in f["related"]}
        out.add((f["rule"], f["group"], frozenset(members)))
    return out


def _check(repo: Path, omap: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[dict[str, Any]]]:
    monkeypatch.chdir(repo)
    out = repo.parent / f".{repo.name}.json"
    code = main(
        ["check", ".", "--no-cache", "--fail-on", "error", "--format", "json", "-o", str(out), "--org-map", str(omap)]
    )
    rows = _rows(json.loads(out.read_text(encoding="utf-8")))
    out.unlink()
    return code, rows


def test_the_audit_writes_the_map_and_check_reads_it(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    org = organisation(tmp_path)
    out = tmp_path / "out"
    run(spark, [str(org)], out)
    omap = out / orgmap.FILE_NAME
    m = orgmap.OrgMap.open(str(omap))
    try:
        assert set(m.repos()) == {"orders", "billing", "shipping"}
        assert {(r[0], r[1]) for r in m.members(["GID_ORDERS"])} == {
            ("orders", "GID_ORDERS"),
            ("billing", "GID_ORDERS"),
        }
    finally:
        m.close()
    manifest = json.loads((out / "_subguard_manifest.json").read_text(encoding="utf-8"))
    assert manifest["files"][orgmap.FILE_NAME] == omap.stat().st_size  # staged and switched in with the rest

    code, rows = _check(org / "billing", omap, monkeypatch)
    (sg102,) = [f for f in rows if f["rule"] == "SG102"]
    assert (sg102["repo"], sg102["path"], sg102["line"]) == ("billing", "billing/consumer.py", LINE)
    assert [(r["repo"], r["path"], r["line"]) for r in sg102["related"]] == [("orders", "orders/consumer.py", LINE)]
    assert code == 1 and all(f["repo"] == "billing" for f in rows)

    write_repo(org, "billing", "created||paid")  # the pull request fixes its tags
    code, rows = _check(org / "billing", omap, monkeypatch)
    assert not [f for f in rows if f["rule"] == "SG102"]


def test_check_reports_exactly_the_audits_group_findings_for_every_repository(
    org_audit: tuple[Path, dict[str, Any]],
    org_copy: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out, _ = org_audit
    omap = out / orgmap.FILE_NAME
    audited = _group_keys(_rows(json.loads((out / "findings.json").read_text(encoding="utf-8"))))
    assert audited, "the example organisation has group findings"
    cross = [k for k in audited if len({m[0] for m in k[2]}) > 1]
    assert cross, "and some span repositories"
    org = tmp_path / "org"
    shutil.copytree(org_copy, org)
    for repo in REPOS:
        _, rows = _check(org / repo, omap, monkeypatch)
        checked = _group_keys(rows, default_repo=repo)
        expected = {k for k in audited if any(m[0] == repo for m in k[2])}
        assert checked == expected, (
            f"{repo}: only in the audit: {sorted(expected - checked)}\nonly in check: {sorted(checked - expected)}"
        )
