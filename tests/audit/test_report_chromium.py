"""report.html in real headless Chromium, with every network request refused."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def dump_dom(page: Path, profile: Path) -> str:
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # any fetch of a remote resource would fail
        "--dump-dom",
        page.as_uri(),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout


def test_report_loads_offline_and_shows_groups(org_audit: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install chromium)")
    out, summary = org_audit
    dom = dump_dom(out / "report.html", tmp_path / "profile")
    assert f'id="n-repos">{summary["totals"]["repos"]}<' in dom
    assert f'id="n-findings">{summary["findings"]["active"]}<' in dom
    assert f'id="n-errors">{summary["findings"]["by_severity"]["error"]}<' in dom
    worst = summary["worst_groups"][0]
    assert worst["group"] == "GID_ORDER_EVENTS"  # 4 rules, errors, 3 repos: the worst group comes first
    first = dom.index('class="group"')
    assert dom.index('data-group="GID_ORDER_EVENTS"') < dom.index('data-group="GID_INVENTORY_SYNC"')
    assert 'data-group="GID_ORDER_EVENTS" data-repos="3"' in dom[first - 20 :]
    for repo in ("orders-py", "orders-loadtest", "billing-java"):
        assert f"<td>{repo}</td>" in dom
    assert "<code>created||refunded</code>" in dom and "<code>created||paid</code>" in dom
    for chart in ("chart-rules", "chart-teams", "chart-sizes"):
        assert f'id="{chart}"' in dom and "<svg" in dom.split(f'id="{chart}"')[1][:400]
    assert 'data-label="SG102"' in dom and 'data-label="payments"' in dom
    assert "(lost)" in dom  # simulated loss per tag


# --- driven over the DevTools pipe (issue 27 item 5) --------------------------------------------------


def needs_chromium() -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install chromium)")


def test_org_report_reads_filters_and_fits_a_phone(org_audit: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    from tests.audit.chromium import Browser

    needs_chromium()
    out, _ = org_audit
    with Browser(tmp_path / "profile") as b:
        b.open((out / "report.html").as_uri())
        assert b.errors == []
        cards = b.eval("Array.from(document.querySelectorAll('section.group')).map(s => s.dataset.group)")
        assert cards[0] == "GID_ORDER_EVENTS"
        first = "document.querySelector('section.group')"
        words = b.eval(f"{first}.textContent")
        assert "SG102" in words and "group-tag-set-mismatch" in words and "different tag sets" in words
        assert "Use instead" in words and "orders-loadtest:loadtest/replay.py" in words
        b.eval(f"{first}.querySelector('details.doc').open = true")  # the rule's docs, inline
        assert b.eval(f"{first}.querySelector('details.doc').textContent").count("Why is this bad?") == 1
        repos = b.eval("Array.from(document.querySelectorAll('section.repo')).map(s => s.dataset.repo)")
        assert "legacy-broken" in repos  # the files that failed have a section of their own
        assert "SG901" in b.eval("document.getElementById('repo-legacy-broken').textContent")
        # a team typed in full leaves only that team's groups
        b.type("#filter", "logistics")
        b.wait("location.hash === '#q=logistics'")
        left = b.eval("Array.from(document.querySelectorAll('section.group')).map(s => s.dataset.group)")
        assert left == ["GID_INVENTORY_SYNC"]
        b.type("#filter", "SG402")  # a rule id: the repository section that holds it
        b.wait("location.hash === '#q=SG402'")
        assert b.eval("Array.from(document.querySelectorAll('section.repo')).map(s => s.dataset.repo)") == [
            "billing-java"
        ]
        b.type("#filter", "")
        b.resize(390, 844, mobile=True)
        b.wait("window.innerWidth === 390")
        assert b.eval("document.documentElement.scrollWidth") <= 390
        assert b.errors == []


def synthetic(groups: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """An organisation of `groups` flagged groups (two repos each, an SG102 and an SG203 finding), as the
    audit's records would hold them, and the report data built from them."""
    from subguard.audit import report_html, summary
    from subguard.audit.codeowners import Owners
    from subguard.audit.tasks import _policies
    from subguard.core.config import Config
    from subguard.core.model import Finding, Location, Related, Severity

    rows, flagged = [], []
    for g in range(groups):
        name, a, b = f"GID_PLANTED_{g}", f"repo-{g % 997:04d}", f"repo-{(g * 7 + 3) % 997:04d}"
        pa, pb = f"src/planted_{g}.py", f"src/planted_{g}.java"
        for rule, text in (
            (
                "SG102",
                f"Group '{name}' subscribes topic 'TOPIC_PLANTED' with different tag sets: "
                f"{{created, paid}} at {a}:{pa}:7, {{created, refunded}} at {b}:{pb}:9",
            ),
            (
                "SG203",
                f"CLUSTERING group '{name}' is declared by 2 services ({a}, {b}): {a} at {a}:{pa}:6, {b} at {b}:{pb}:7",
            ),
        ):
            f = Finding(
                rule=rule,
                severity=Severity.ERROR,
                message=text,
                location=Location(path=pa, line=7, repo=a),
                related=(Related(location=Location(path=pb, line=9, repo=b), message="the other member"),),
                group=name,
                fingerprint=hashlib.md5(f"{rule}{g}".encode()).hexdigest(),
            )  # as long as real ones
            rows.append(
                {
                    "rule": rule,
                    "severity": "error",
                    "message": text,
                    "repo": a,
                    "path": pa,
                    "line": 7,
                    "group": name,
                    "team": f"team-{g % 40}",
                    "owner": "",
                    "codeowners": [],
                    "fingerprint": f.fingerprint,
                    "suppressed": None,
                    "scope": "group",
                    "json": f.model_dump_json(),
                }
            )
        member = {
            "repo": a,
            "team": f"team-{g % 40}",
            "environment": "prod",
            "service": a,
            "client": "python-native-4x",
            "message_model": "CLUSTERING",
            "topic": "TOPIC_PLANTED",
            "expression": "created||paid",
            "path": pa,
            "line": 7,
        }
        flagged.append(
            {
                "group": name,
                "worst": 3,
                "errors": 2,
                "warnings": 0,
                "findings": 2,
                "repos": sorted({a, b}),
                "repos_count": 2,
                "consumers": 2,
                "topics": ["TOPIC_PLANTED"],
                "members": [member, {**member, "repo": b, "path": pb, "expression": "created||refunded"}],
                "impact": json.dumps(
                    {
                        "description": "simulated (20 runs): paid 50% lost, refunded 50% lost",
                        "runs": 20,
                        "result": {"loss": [["paid", 0.5], ["refunded", 0.5]], "stuck": []},
                    }
                ),
            }
        )
    s = summary.build(
        files=[],
        findings=[
            {
                "rule": r["rule"],
                "severity": "error",
                "scope": "group",
                "team": r["team"],
                "suppressed": False,
                "count": 1,
            }
            for r in rows
        ],
        groups=flagged[:50],
        group_sizes=[{"repos_count": 2, "count": groups}],
        totals={
            "repos": 997,
            "consumers": 2 * groups,
            "subscriptions": 2 * groups,
            "deployments": 0,
            "groups": groups,
            "groups_with_findings": groups,
            "cross_repo_groups": groups,
        },
        missing=[],
        problems=[],
        sources=["generated"],
        seconds=1.0,
    )
    return s, report_html.report_data(s, rows, flagged, Owners({}, {}), _policies(Config()).docs)


def test_ten_thousand_groups_stay_small_open_and_filter(tmp_path: Path) -> None:
    import time

    from subguard.audit import report_html
    from tests.audit.chromium import Browser

    needs_chromium()
    s, data = synthetic(10_000)
    page = tmp_path / "report.html"
    page.write_text(report_html.render(s, data))
    assert page.stat().st_size < 10 * 1024 * 1024
    with Browser(tmp_path / "profile") as b:
        start = time.monotonic()
        b.open(page.as_uri())
        opened = time.monotonic() - start
        assert b.errors == [] and b.eval("document.querySelectorAll('section.group').length") == 20
        assert b.eval("document.getElementById('shown').textContent").startswith("10000 of 10000 groups")
        start = time.monotonic()
        b.type("#filter", "team-7")
        b.wait("document.getElementById('shown').textContent.indexOf('250 of') === 0")
        filtered = time.monotonic() - start
        teams = b.eval("Array.from(document.querySelectorAll('section.group .finding .who')).map(e => e.textContent)")
        assert teams and all(t == "owners: team-7" for t in teams)
        b.resize(390, 844, mobile=True)
        b.wait("window.innerWidth === 390")
        assert b.eval("document.documentElement.scrollWidth") <= 390
    assert opened < 20 and filtered < 10, (opened, filtered)  # generous: a shared two-core machine
