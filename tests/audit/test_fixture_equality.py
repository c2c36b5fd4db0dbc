"""`subguard check` and the Spark audit give the same findings on every rule fixture.

Each repository case of `tests/rules/` becomes repositories of a small organisation (its `repos/<name>/`
folders, or the case itself as one repository), audited on the shared local SparkSession and checked
with `subguard check` over the same repositories. Both go through `rules.judge.judge`; this test is
what keeps them equal, rule by rule, including waivers, SG903 and the simulated impact.

An audit costs seconds of Spark jobs whatever its size, so single-repository cases share an
organisation when no group or topic joins them (`_batches`): nothing judged across repositories
reaches from one to another, and each case is compared on the findings of its own repository. A case
with a config file is audited alone: `check` reads one config for all its paths (the first path's
nearest, and warns of the others), the audit each repository's own.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from subguard.audit.tasks import CONFIG_FILES
from subguard.cli.main import main as cli_main
from tests.audit.conftest import run
from tests.fixture_cases import REPO_CASES, case_id, rule_of
from tests.report_json import all_findings

pytestmark = pytest.mark.slow

Key = tuple[str, str, str, int, str, str | None, str | None]
Compared = Callable[[Path], tuple[set[Key], set[Key]]]


def _keys(findings: list[dict[str, Any]]) -> set[Key]:
    return {
        (f["rule"], f["repo"], f["path"], f["line"], f["message"], (f["suppressed"] or {}).get("kind"), f["impact"])
        for f in findings
    }


def _repos(case: Path) -> dict[str, Path]:
    """The case's repositories by the folder name they get in the organisation."""
    if (case / "repos").is_dir():
        return {p.name: p for p in sorted((case / "repos").iterdir()) if p.is_dir()}
    return {f"{rule_of(case)}-{case.name}": case}


@functools.cache
def _names(case: Path) -> frozenset[str]:
    """The groups and topics the case's consumers name (an unknown one joins nothing); scanned once."""
    from subguard.core.config import Config
    from subguard.scan.extraction import scan_repo

    names: set[str | None] = set()
    for repo in _repos(case).values():
        for consumer in scan_repo(repo, Config()).consumers:
            names.add(consumer.group.value)
            names.update(s.topic.value for s in consumer.subscriptions)
    return frozenset(n for n in names if n is not None)


def _alone(case: Path) -> bool:
    """A case of several repositories (they may refer to each other), or with a config file of its own."""
    return len(_repos(case)) > 1 or any((case / name).is_file() for name in CONFIG_FILES)


def _batches(cases: list[Path]) -> list[list[Path]]:
    """First fit: a case joins the first batch none of whose cases shares a group or topic name with it,
    unless it or the batch is to be audited alone."""
    batches: list[tuple[list[Path], set[str]]] = []
    for case in cases:
        names = _names(case)
        fit = next((b for b in batches if not _alone(b[0][0]) and not names & b[1]), None)
        if fit is None or _alone(case):
            batches.append(([case], set(names)))
        else:
            fit[0].append(case)
            fit[1].update(names)
    return [cases for cases, _ in batches]


def _compare(spark: Any, batch: list[Path], dest: Path) -> tuple[set[Key], set[Key]]:
    """The batch checked and audited as one organisation: (check's findings, the audit's)."""
    org = dest / "org"
    for case in batch:
        for name, repo in _repos(case).items():
            shutil.copytree(repo, org / name)
    report = dest / "check.json"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(org)  # check names each finding's repository by its folder, as the audit does
        names = sorted(p.name for p in org.iterdir())
        argv = ["check", *names, "--format", "json", "--fail-on", "none", "--no-cache", "-o", str(report)]
        assert cli_main(argv) == 0
    checked = _keys(all_findings(report.read_text(encoding="utf-8")))
    run(spark, [str(org)], dest / "out", formats=("json",))
    return checked, _keys(all_findings((dest / "out" / "findings.json").read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def compared(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Compared:
    """A case's findings (check's, the audit's): its batch compared on first use, then looked up."""
    batches = _batches(REPO_CASES)
    done: dict[int, tuple[set[Key], set[Key]]] = {}

    def of(case: Path) -> tuple[set[Key], set[Key]]:
        index = next(i for i, b in enumerate(batches) if case in b)
        if index not in done:
            done[index] = _compare(spark, batches[index], tmp_path_factory.mktemp("batch"))
        own = set(_repos(case))
        every = {name for c in batches[index] for name in _repos(c)}

        def mine(keys: set[Key]) -> set[Key]:  # a finding of no repository in the batch fails every case
            return {k for k in keys if k[1] in own or k[1] not in every}

        checked, audited = done[index]
        return mine(checked), mine(audited)

    return of


def test_cases_share_no_group_or_topic_within_a_batch() -> None:
    batches = _batches(REPO_CASES)
    assert sorted(c for b in batches for c in b) == sorted(REPO_CASES)
    assert len(batches) < len(REPO_CASES) / 3  # the point of batching
    for batch in batches:
        seen: set[str] = set()
        for case in batch:
            assert not _names(case) & seen, case_id(case)
            seen |= _names(case)


@pytest.mark.parametrize("case", REPO_CASES, ids=[case_id(c) for c in REPO_CASES])
def test_check_and_audit_agree_on_the_fixture(compared: Compared, case: Path) -> None:
    checked, audited = compared(case)
    assert audited == checked, (
        f"only in the audit: {sorted(audited - checked)}\nonly in check: {sorted(checked - audited)}"
    )
