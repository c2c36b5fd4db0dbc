"""`subguard check` and the Spark audit give the same findings on every rule fixture.

Each repository case of `tests/rules/` becomes a small organisation (its `repos/<name>/` folders,
or the case itself as one repository), is audited once on the shared local SparkSession, and is
checked with `subguard check` over the same repositories. Both go through `rules.judge.judge`; this
test is what keeps them equal, rule by rule, including waivers, SG903 and the simulated impact.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from subguard.cli.main import main as cli_main
from tests.audit.conftest import run
from tests.fixture_cases import REPO_CASES, case_id
from tests.report_json import all_findings

pytestmark = pytest.mark.slow

Key = tuple[str, str, str, int, str, str | None, str | None]


def _keys(findings: list[dict[str, Any]]) -> set[Key]:
    return {
        (f["rule"], f["repo"], f["path"], f["line"], f["message"], (f["suppressed"] or {}).get("kind"), f["impact"])
        for f in findings
    }


def _organisation(case: Path, dest: Path) -> list[Path]:
    """The case as an organisation folder; returns its repositories."""
    if (case / "repos").is_dir():
        shutil.copytree(case / "repos", dest)
    else:
        shutil.copytree(case, dest / case.name)
    return sorted(p for p in dest.iterdir() if p.is_dir())


@pytest.mark.parametrize("case", REPO_CASES, ids=[case_id(c) for c in REPO_CASES])
def test_check_and_audit_agree_on_the_fixture(
    spark: Any, case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repos = _organisation(case, tmp_path / "org")
    monkeypatch.chdir(tmp_path / "org")  # check names each finding's repository by its folder, as the audit does
    report = tmp_path / "check.json"
    code = cli_main(
        ["check", *(r.name for r in repos), "--format", "json", "--fail-on", "none", "--no-cache", "-o", str(report)]
    )
    assert code == 0
    checked = _keys(all_findings(report.read_text(encoding="utf-8")))
    out = tmp_path / "out"
    run(spark, [str(tmp_path / "org")], out, formats=("json",))
    audited = _keys(all_findings((out / "findings.json").read_text(encoding="utf-8")))
    assert audited == checked, (
        f"only in the audit: {sorted(audited - checked)}\nonly in check: {sorted(checked - audited)}"
    )
