"""report.html and the summary, from a small hand-made summary (no Spark)."""

from __future__ import annotations

from subguard.audit import report_html, summary


def small_summary() -> dict[str, object]:
    return summary.build(
        files=[{"repo": "a", "status": "parsed", "reason": "", "count": 3},
               {"repo": "b", "status": "failed", "reason": "syntax error", "count": 2}],
        findings=[{"rule": "SG102", "severity": "error", "scope": "group", "team": "pay", "suppressed": False, "count": 2},
                  {"rule": "SG401", "severity": "warning", "scope": "subscription", "team": "", "suppressed": False, "count": 1},
                  {"rule": "SG401", "severity": "warning", "scope": "subscription", "team": "", "suppressed": True, "count": 4}],
        groups=[{"group": "GID_<X>", "repos": ["a", "b"], "repos_count": 2, "consumers": 2, "worst": 3, "errors": 2,
                 "warnings": 0, "findings": 2, "rules": ["SG102"], "members": [
                     {"repo": "a", "team": "pay", "topic": "T", "expression": "x||y", "path": "a.py", "line": 3},
                     {"repo": "b", "team": "", "topic": "T", "expression": None, "path": "B.java", "line": 9}],
                 "impact": '{"description": "simulated: x 50% lost", "result": {"loss": [["x", 0.5]], "stuck": [["y", 0.25]]}}'}],
        group_sizes=[{"repos_count": 2, "count": 1}, {"repos_count": 1, "count": 5}],
        totals={"repos": 2, "consumers": 7, "subscriptions": 8, "deployments": 0, "groups": 6, "groups_with_findings": 1,
                "cross_repo_groups": 1},
        missing=[("gone", "file:/nowhere")], problems=[], sources=["org"], seconds=1.5,
    )


def test_summary_counts() -> None:
    s = small_summary()
    assert s["files"]["total"] == 5 and s["files"]["failed"] == 2
    assert s["findings"]["active"] == 3 and s["findings"]["suppressed"] == 4
    assert s["findings"]["by_team"][0] == {"team": "pay", "count": 2}
    assert s["group_sizes"][0] == {"repos": 1, "groups": 5}
    assert "1 missing repo(s)" in summary.headline(s)


def test_exit_code_follows_fail_on() -> None:
    s = small_summary()
    active = s["findings"]["by_severity"]
    assert [summary.exit_code(s, f) for f in ("none", "error", "warning", "note")] == [
        0, int(active["error"] > 0), int(active["error"] + active["warning"] > 0), int(sum(active.values()) > 0),
    ]
    quiet = {**s, "findings": {**s["findings"], "by_severity": {"error": 0, "warning": 0, "note": 1}}}
    assert [summary.exit_code(quiet, f) for f in ("error", "warning", "note")] == [0, 0, 1]


def test_html_is_self_contained_and_escaped() -> None:
    page = report_html.render(small_summary())
    assert "http://" not in page.replace("http://www.w3.org", "") and "https://" not in page
    assert "<script src" not in page and "<link" not in page
    assert "GID_&lt;X&gt;" in page and "GID_<X>" not in page.split('id="summary-data"')[0]
    assert 'data-label="x (lost)" data-value="50"' in page  # the per-tag loss chart
    assert 'data-label="y (never pulled)" data-value="25"' in page
    assert "missing repository <b>gone</b>" in page
