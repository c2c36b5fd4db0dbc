"""The hostile repository inside an audit: the job completes, links are never followed, special
files never opened, and the `files` table has a row with a reason for every entry."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from subguard.cli.main import main as cli_main
from subguard.scan import discover
from tests.audit.conftest import run
from tests.report_json import all_findings
from tests.test_hostile import MARKER, build_hostile_repo, discovered

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hostile_org(tmp_path_factory: pytest.TempPathFactory) -> Path:
    org = tmp_path_factory.mktemp("hostile-org") / "org"
    org.mkdir()
    build_hostile_repo(org / "hostile")
    (org / "etc-link").symlink_to("/etc", target_is_directory=True)  # a "repository" that is a link
    (org / "loop").symlink_to(".", target_is_directory=True)
    os.mkfifo(org / "pipe")
    return org


@pytest.fixture(scope="module")
def audited(spark: Any, hostile_org: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("hostile-out") / "out"
    return out, run(spark, [str(hostile_org)], out)


def _rows(spark: Any, out: Path, name: str) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in spark.read.parquet(str(out / name)).collect()]


def test_every_entry_has_one_row_with_a_reason(
    spark: Any, hostile_org: Path, audited: tuple[Path, dict[str, Any]]
) -> None:
    out, summary = audited
    files = _rows(spark, out, "files")
    keys = [(r["repo"], r["path"]) for r in files]
    assert len(keys) == len(set(keys))
    expected = {("hostile", p) for p in discovered(hostile_org / "hostile")}
    expected |= {("", "etc-link"), ("", "loop"), ("", "pipe")}
    assert set(keys) == expected
    assert summary["files"]["total"] == len(expected)
    assert all(r["reason"] for r in files if r["status"] != "parsed")


def test_links_are_not_followed_and_specials_not_opened(spark: Any, audited: tuple[Path, dict[str, Any]]) -> None:
    out, _ = audited
    files = {(r["repo"], r["path"]): r for r in _rows(spark, out, "files")}
    for link in ("app/escape.py", "config/application-escape.yml", "app/loop_a.py", "app/dangling.py", "up", "linkdir"):
        assert files[("hostile", link)]["reason"] == discover.LINK, link
    assert files[("hostile", "app/fifo.py")]["reason"] == discover.SPECIAL
    assert files[("", "etc-link")]["reason"] == discover.LINK and files[("", "pipe")]["reason"] == discover.SPECIAL
    # nothing below a followed link: no `up/...`, `linkdir/...`, `etc-link/...` rows, no repo named after one
    assert not [k for k in files if k[1].startswith(("up/", "linkdir/", "etc-link/", "loop/"))]
    assert {k[0] for k in files} == {"", "hostile"}
    assert not MARKER.exists()


def test_findings_match_check_on_the_same_repo(
    spark: Any, hostile_org: Path, audited: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    out, _ = audited
    report = tmp_path / "check.json"
    code = cli_main(
        [
            "check",
            str(hostile_org / "hostile"),
            "--format",
            "json",
            "--no-simulate",
            "--no-cache",
            "--fail-on",
            "none",
            "-o",
            str(report),
        ]
    )
    assert code == 0
    checked = {(f["rule"], f["path"], f["line"]) for f in all_findings(report.read_text())}
    audited_rows = {(f["rule"], f["path"], f["line"]) for f in _rows(spark, out, "findings")}
    assert checked and audited_rows == checked
    statuses = {(r["path"], r["status"]) for r in _rows(spark, out, "files") if r["repo"] == "hostile"}
    assert ("app/escape.py", "skipped") in statuses
