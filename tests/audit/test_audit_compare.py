"""What changed since the last audit (issue 27): a second audit after one fix, compared by
fingerprint with the first, on a copy of the example organisation. The copy's inventory names no
team for price-cache, whose CODEOWNERS file then names its owners."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.audit.chromium import CHROMIUM, Browser
from tests.audit.conftest import ORG, run

pytestmark = pytest.mark.slow
CODEOWNERS = "# price-cache\n*  @acme/pricing\n/deploy/ @acme/sre @erin\n"


def report_data(out: Path) -> dict[str, Any]:
    page = (out / "report.html").read_text()
    start = page.index('id="report-data">') + len('id="report-data">')
    from subguard.audit.report_html import unpack

    return unpack(json.loads(page[start : page.index("</script>", start)].replace("<\\/", "</")))


@pytest.fixture(scope="module")
def compared(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any], dict[str, Any]]:
    base = tmp_path_factory.mktemp("compare")
    org = base / "org"
    shutil.copytree(ORG, org, ignore=shutil.ignore_patterns(".subguard_cache"))
    inventory = org / "inventory.yaml"
    inventory.write_text(
        inventory.read_text().replace(
            "{name: price-cache, path: price-cache, team: commerce, owner: alice, environment: prod}",
            "{name: price-cache, path: price-cache, environment: prod}",
        )
    )
    (org / "price-cache" / ".github").mkdir()
    (org / "price-cache" / ".github" / "CODEOWNERS").write_text(CODEOWNERS)
    first_out, second_out = base / "first", base / "second"
    first = run(spark, [str(org)], first_out)
    replica = org / "billing-java" / "src/main/java/com/acme/billing/LedgerReplica.java"
    replica.write_text(replica.read_text().replace('"refunded||paid"', '"paid||refunded"'))  # the SG103 fix
    second = run(spark, [str(org)], second_out, compare=str(first_out))
    return first_out, second_out, first, second


def test_one_fix_is_one_fixed_finding_and_nothing_new(
    compared: tuple[Path, Path, dict[str, Any], dict[str, Any]],
) -> None:
    first_out, second_out, first, second = compared
    assert "changes" not in first
    ch = second["changes"]
    assert (ch["new"], ch["fixed"]) == (0, 1)
    assert ch["unchanged"] == first["findings"]["active"] - 1 == second["findings"]["active"]
    assert [f["rule"] for f in ch["fixed_findings"]] == ["SG103"]
    assert ch["fixed_findings"][0]["team"] == "payments"
    assert ch["previous"]["written"] == first["written"] and ch["previous"]["out"] == str(first_out)
    assert {r["rule"]: r["fixed"] for r in ch["by_rule"] if r["fixed"]} == {"SG103": 1}
    assert {r["repo"]: r["fixed"] for r in ch["by_repo"] if r["fixed"]} == {"billing-java": 1}
    assert {r["team"]: r["fixed"] for r in ch["by_team"] if r["fixed"]} == {"payments": 1}
    assert json.loads((second_out / "summary.json").read_text())["changes"] == ch
    # the history carried over: one line per run
    lines = [json.loads(line) for line in (second_out / "history.jsonl").read_text().splitlines()]
    assert [(h["written"], h["active"], h["fixed"]) for h in lines] == [
        (first["written"], first["findings"]["active"], None),
        (second["written"], second["findings"]["active"], 1),
    ]
    page = (second_out / "report.html").read_text()
    assert 'id="headline">No new errors since' in page
    assert 'id="n-new">0<' in page and 'id="n-fixed">1<' in page and f'id="n-unchanged">{ch["unchanged"]}<' in page
    assert report_data(second_out)["new_first"] == []


def test_codeowners_name_the_owners_where_the_inventory_names_no_team(
    compared: tuple[Path, Path, dict[str, Any], dict[str, Any]],
    spark: Any,
) -> None:
    _, second_out, _, _ = compared
    rows = spark.read.parquet(str(second_out / "findings")).where("repo = 'price-cache'").collect()
    assert rows and all(r.team for r in rows)
    by_path = {r.path: (r.team, list(r.codeowners)) for r in rows}
    assert by_path == {
        p: (
            ("@acme/sre @erin", ["@acme/sre", "@erin"])
            if p.startswith("deploy/")
            else ("@acme/pricing", ["@acme/pricing"])
        )
        for p in by_path
    }
    data = report_data(second_out)
    assert "@acme/sre" in data["owners"] and "commerce" in data["owners"]  # orders-py keeps the inventory's team
    teams = {f["team"] for f in data["findings"] if f["repo"] == "price-cache"}
    assert teams == {t for t, _ in by_path.values()}
    md = sorted(p.name for p in (second_out / "teams").iterdir())
    assert "acme-sre-erin.md" in md or "acme-pricing.md" in md
    payments = (second_out / "teams" / "payments.md").read_text()
    assert "## Fixed" in payments and "SG103" in payments.split("## Fixed")[1]
    assert "Since " in payments and ": 0 new, 1 fixed." in payments


def test_compare_page_in_chromium(compared: tuple[Path, Path, dict[str, Any], dict[str, Any]], tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install chromium)")
    _, second_out, _, second = compared
    with Browser(tmp_path / "profile") as b:
        b.open((second_out / "report.html").as_uri())
        assert b.errors == []
        assert b.eval("document.getElementById('n-fixed').textContent") == "1"
        assert b.eval("document.getElementById('n-new').textContent") == "0"
        assert b.eval("document.getElementById('headline').textContent").startswith("No new errors since ")
        b.eval("document.getElementById('fixed-list').open = true")
        assert "SG103" in b.eval("document.getElementById('fixed-list').textContent")
        b.type("#filter", "@acme/sre")  # a CODEOWNERS owner, typed in full
        b.wait("document.getElementById('shown').textContent.indexOf('0 of') === 0")
        repos = b.eval("Array.from(document.querySelectorAll('section.repo')).map(s => s.dataset.repo)")
        assert repos == ["price-cache"]
    assert second["changes"]["fixed"] == 1
