"""report.html and the summary, from a small hand-made summary (no Spark)."""

from __future__ import annotations

from subguard.audit import report_html, summary


def small_summary() -> dict[str, object]:
    return summary.build(
        files=[
            {"repo": "a", "status": "parsed", "reason": "", "count": 3},
            {"repo": "b", "status": "failed", "reason": "syntax error", "count": 2},
        ],
        findings=[
            {"rule": "SG102", "severity": "error", "scope": "group", "team": "pay", "suppressed": False, "count": 2},
            {
                "rule": "SG401",
                "severity": "warning",
                "scope": "subscription",
                "team": "",
                "suppressed": False,
                "count": 1,
            },
            {
                "rule": "SG401",
                "severity": "warning",
                "scope": "subscription",
                "team": "",
                "suppressed": True,
                "count": 4,
            },
        ],
        groups=[
            {
                "group": "GID_<X>",
                "repos": ["a", "b"],
                "repos_count": 2,
                "consumers": 2,
                "worst": 3,
                "errors": 2,
                "warnings": 0,
                "findings": 2,
                "rules": ["SG102"],
                "members": [
                    {"repo": "a", "team": "pay", "topic": "T", "expression": "x||y", "path": "a.py", "line": 3},
                    {"repo": "b", "team": "", "topic": "T", "expression": None, "path": "B.java", "line": 9},
                ],
                "impact": '{"description": "simulated: x 50% lost", "result": {"loss": [["x", 0.5]], "stuck": [["y", 0.25]]}}',
            }
        ],
        group_sizes=[{"repos_count": 2, "count": 1}, {"repos_count": 1, "count": 5}],
        totals={
            "repos": 2,
            "consumers": 7,
            "subscriptions": 8,
            "deployments": 0,
            "groups": 6,
            "groups_with_findings": 1,
            "cross_repo_groups": 1,
        },
        missing=[("gone", "file:/nowhere")],
        problems=[],
        sources=["org"],
        seconds=1.5,
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
        0,
        int(active["error"] > 0),
        int(active["error"] + active["warning"] > 0),
        int(sum(active.values()) > 0),
    ]
    quiet = {**s, "findings": {**s["findings"], "by_severity": {"error": 0, "warning": 0, "note": 1}}}
    assert [summary.exit_code(quiet, f) for f in ("error", "warning", "note")] == [0, 0, 1]


def test_html_is_self_contained_and_escaped() -> None:
    page = report_html.render(small_summary())
    assert "http://" not in page.replace("http://www.w3.org", "") and "https://" not in page
    assert "<script src" not in page and "<link" not in page
    assert "GID_<X>" not in page.split('id="summary-data"')[0]  # the page's own data names it when drawn, escaped
    assert "missing repository <b>gone</b>" in page


# --- report_data: every finding in words (issue 27) -------------------------------------------------


def finding_row(
    rule: str,
    scope: str,
    repo: str,
    path: str,
    group: str,
    message: str,
    fp: str,
    team: str = "pay",
    suppressed: str | None = None,
    severity: str = "error",
) -> dict[str, object]:
    from subguard.core.model import Finding, Location, Related, Severity

    f = Finding(
        rule=rule,
        severity=Severity(severity),
        message=message,
        location=Location(path=path, line=3, repo=repo),
        related=(Related(location=Location(path="B.java", line=9, repo="b"), message="the other member"),),
        group=group,
        fingerprint=fp,
    )
    return {
        "rule": rule,
        "severity": severity,
        "message": message,
        "repo": repo,
        "path": path,
        "line": 3,
        "group": group,
        "team": team,
        "owner": "ann",
        "codeowners": [],
        "fingerprint": fp,
        "suppressed": suppressed,
        "scope": scope,
        "json": f.model_dump_json(),
    }


def sample_data(changes: dict[str, object] | None = None) -> tuple[dict[str, object], dict[str, object]]:
    from subguard.audit.codeowners import Owners
    from subguard.audit.tasks import _policies
    from subguard.core.config import Config

    s = small_summary()
    if changes is not None:
        s["changes"] = changes
    rows = [
        finding_row(
            "SG102", "group", "a", "a.py", "GID_<X>", "Group 'GID_<X>' subscribes with different tag sets", "f1"
        ),
        finding_row("SG402", "subscription", "a", "a.py", "GID_<X>", "SQL92 filter is not usable", "f2"),
        finding_row(
            "SG901", "tool", "b", "bad.yml", "", "bad.yml could not be parsed", "f3", team="", severity="warning"
        ),
    ]
    flagged = [
        {
            **s["worst_groups"][0],
            "impact": '{"description": "simulated (20 runs): x 50% lost", "runs": 20, '
            '"result": {"loss": [["x", 0.5]], "stuck": [["y", 0.25]]}}',
        }
    ]
    owners = Owners({"a": ("pay", "ann")}, {"b": ("CODEOWNERS", "* @b-team\n")})
    return s, report_html.report_data(s, rows, flagged, owners, _policies(Config()).docs)


def test_group_cards_hold_group_findings_and_repositories_the_rest() -> None:
    _, data = sample_data()
    found = data["findings"]
    (group,) = data["groups"]
    assert [found[i]["rule"] for i in group["items"]] == ["SG102"]
    assert [found[i]["rule"] for i in group["other"]] == ["SG402"]  # linked from the card, listed under repo a
    assert {r["repo"]: [found[i]["rule"] for i in r["items"]] for r in data["repos"]} == {
        "a": ["SG402"],
        "b": ["SG901"],
    }
    assert group["loss"] == [("x (lost)", 50.0), ("y (never pulled)", 25.0)]  # as describe_impact prints them
    sg102 = found[group["items"][0]]
    assert sg102["members"][1] == {
        "repo": "b",
        "path": "B.java",
        "line": 9,
        "message": "the other member",
        "topic": None,
        "expression": None,
        "model": None,
        "team": "@b-team",
    }  # CODEOWNERS of repo b
    assert data["rules"]["SG102"]["name"] == "group-tag-set-mismatch" and data["rules"]["SG102"]["instead"]
    assert all("://" not in ref for d in data["rules"].values() for ref in d["references"])
    assert {"pay", "ann", "@b-team"} <= set(data["owners"])


def test_page_embeds_the_data_safely_and_fetches_nothing() -> None:
    s, data = sample_data()
    page = report_html.render(s, data)
    assert "https://" not in page and "http://" not in page.replace("http://www.w3.org", "")
    body = page.split('id="report-data">')[1].split("</script>")[0]
    assert "</" not in body.replace("<\\/", "")
    import json

    unpacked = report_html.unpack(json.loads(body.replace("<\\/", "</")))
    assert json.loads(json.dumps(unpacked)) == json.loads(json.dumps(data))  # packed, whole
    assert 'id="changes"' in page and "Not compared with a previous audit" in page


def test_new_findings_first_and_the_headline() -> None:
    from subguard.audit import summary as summ

    prev = [
        {
            "rule": "SG901",
            "severity": "warning",
            "message": "m",
            "repo": "b",
            "path": "bad.yml",
            "line": 1,
            "group": "",
            "team": "",
            "fingerprint": "f3",
            "suppressed": None,
        },
        {
            "rule": "SG103",
            "severity": "warning",
            "message": "gone",
            "repo": "a",
            "path": "a.py",
            "line": 1,
            "group": "G",
            "team": "pay",
            "fingerprint": "old",
            "suppressed": None,
        },
    ]
    s0, _ = sample_data()
    rows = [
        {"rule": "SG102", "severity": "error", "repo": "a", "team": "pay", "fingerprint": "f1", "suppressed": None},
        {"rule": "SG402", "severity": "error", "repo": "a", "team": "pay", "fingerprint": "f2", "suppressed": None},
        {"rule": "SG901", "severity": "warning", "repo": "b", "team": "", "fingerprint": "f3", "suppressed": None},
    ]
    ch = summ.changes(rows, prev, "/prev", "2030-01-02T03:04:05+00:00")
    assert (ch["new"], ch["fixed"], ch["unchanged"]) == (2, 1, 1) and ch["new_by_severity"]["error"] == 2
    assert ch["by_team"][0] == {"team": "pay", "new": 2, "fixed": 1, "unchanged": 0}
    s, data = sample_data(ch)
    assert [data["findings"][i]["rule"] for i in data["new_first"]] == ["SG102", "SG402"]
    page = report_html.render(s, data)
    assert 'id="headline">2 new errors since 2030-01-02 03:04 UTC<' in page
    assert 'id="n-new">2<' in page and 'id="n-fixed">1<' in page and 'id="n-unchanged">1<' in page
    lines = summ.history([], {**s, "written": "w2"}, {**s0, "written": "w1"})
    assert [(h["written"], h["new"]) for h in lines] == [("w1", None), ("w2", 2)]


def test_team_markdown_lists_new_first_with_places() -> None:
    from subguard.audit import teams
    from subguard.audit.codeowners import Owners
    from subguard.audit.tasks import _policies
    from subguard.core.config import Config

    s, _ = sample_data(
        {
            "new_fingerprints": ["f2"],
            "previous": {"written": "2030-01-01", "out": "p"},
            "fixed_findings": [],
            "new": 1,
            "fixed": 0,
            "unchanged": 1,
        }
    )
    rows = [
        finding_row("SG102", "group", "a", "a.py", "G", "tag sets differ", "f1"),
        finding_row("SG402", "subscription", "a", "q.py", "G", "SQL92 not usable", "f2"),
    ]
    text = teams.render_all(s, rows, Owners({"a": ("pay", "ann")}, {}), _policies(Config()).docs)["pay"]
    assert text.index("## New") < text.index("SG402") < text.index("## Still open") < text.index("SG102")
    assert "`a:q.py:3`" in text and "Since 2030-01-01: 1 new, 0 fixed." in text
