"""report.html in real headless Chromium, with every network request refused."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def dump_dom(page: Path, profile: Path) -> str:
    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # any fetch of a remote resource would fail
        "--dump-dom", page.as_uri(),
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
    assert 'data-group="GID_ORDER_EVENTS" data-repos="3"' in dom[first - 20:]
    for repo in ("orders-py", "orders-loadtest", "billing-java"):
        assert f"<td>{repo}</td>" in dom
    assert "<code>created||refunded</code>" in dom and "<code>created||paid</code>" in dom
    for chart in ("chart-rules", "chart-teams", "chart-sizes"):
        assert f'id="{chart}"' in dom and "<svg" in dom.split(f'id="{chart}"')[1][:400]
    assert 'data-label="SG102"' in dom and 'data-label="payments"' in dom
    assert "(lost)" in dom  # simulated loss per tag
