"""json, sarif, github and markdown renderers."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from report_helpers import DOCS, at_root, context, flat_finding, seed002_finding, suppressed_finding

from subguard.core.model import Finding, Location, Severity, Suppression
from subguard.report import Root, render
from subguard.report.github import escape_data, escape_property
from subguard.report.markdown import code
from tests.conftest import load_sarif_validator


def sarif_validator() -> Any:
    return load_sarif_validator()


def all_findings() -> list[Finding]:
    return [seed002_finding(impact="tag1: 10 of 10 lost"), flat_finding(), suppressed_finding()]


# --- json -------------------------------------------------------------------------------------------


def test_json_shape_includes_suppressed_and_related() -> None:
    report = json.loads(render("json", all_findings(), DOCS, context()))
    assert set(report) == {"findings", "diagnostics"} and report["diagnostics"] == []
    data = report["findings"]
    assert [(d["rule"], d["path"]) for d in data] == [
        ("SG401", "app/bad.py"),
        ("SG102", "app/consumer1.py"),
        ("SG401", "app/old.py"),
    ]
    by_msg = {d["message"]: d for d in data}
    g = next(d for d in data if d["rule"] == "SG102")
    assert set(g) >= {
        "rule",
        "severity",
        "message",
        "path",
        "line",
        "column",
        "group",
        "topic",
        "related",
        "fingerprint",
        "suppressed",
        "impact",
    }
    assert (g["path"], g["line"], g["column"], g["group"], g["topic"]) == (
        "app/consumer1.py",
        7,
        1,
        "test-consumer",
        "TopicTest2",
    )
    assert g["related"] == [
        {
            "path": "app/consumer2.py",
            "line": 9,
            "column": 5,
            "message": "subscribes 'tag2'",
            "repo": "shop",
            "org_map": None,
        }
    ]
    assert g["suppressed"] is None and g["impact"] == "tag1: 10 of 10 lost"
    assert by_msg["waived one"]["suppressed"] == {"kind": "inline", "reason": "legacy, removed in Q3"}


# --- sarif ------------------------------------------------------------------------------------------


def test_sarif_validates_against_the_schema(tmp_path: Path) -> None:
    validator = sarif_validator()
    log = json.loads(render("sarif", all_findings(), DOCS, context(tmp_path)))
    errors = sorted(validator.iter_errors(log), key=str)
    assert not errors, errors[0]
    log["runs"][0]["results"][0]["level"] = "fatal"  # the validator really checks
    assert list(validator.iter_errors(log))


def test_sarif_content(tmp_path: Path) -> None:
    log = json.loads(render("sarif", all_findings(), DOCS, context(tmp_path)))
    run = log["runs"][0]
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    driver = run["tool"]["driver"]
    assert driver["name"] == "subguard" and driver["version"]
    rules = {r["id"]: (i, r) for i, r in enumerate(driver["rules"])}
    idx, sg102 = rules["SG102"]
    assert sg102["name"] == "group-tag-set-mismatch"
    assert sg102["defaultConfiguration"]["level"] == "error"
    assert sg102["shortDescription"]["text"].startswith("Consumers of one group")
    assert "## Why is this bad?" in sg102["help"]["markdown"] and "last heartbeat wins" in sg102["help"]["text"]
    result = next(r for r in run["results"] if r["ruleId"] == "SG102")
    assert result["ruleIndex"] == idx and result["level"] == "error"
    phys = result["locations"][0]["physicalLocation"]
    assert phys["artifactLocation"] == {"uri": "shop/app/consumer1.py", "uriBaseId": "%SRCROOT%"}
    assert phys["region"] == {"startLine": 7, "startColumn": 1}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    rel = result["relatedLocations"][0]
    assert rel["id"] == 1 and rel["message"]["text"] == "subscribes 'tag2'"
    assert rel["physicalLocation"]["artifactLocation"]["uri"] == "shop/app/consumer2.py"
    assert "[app/consumer2.py:9](1)" in result["message"]["text"]
    assert result["partialFingerprints"] == {"subguard/v1": seed002_finding().fingerprint}
    assert "suppressions" not in result
    waived = next(r for r in run["results"] if r["message"]["text"] == "waived one")
    assert waived["suppressions"] == [
        {"kind": "inSource", "status": "accepted", "justification": "legacy, removed in Q3"}
    ]


def test_sarif_external_suppression_and_undocumented_rule_and_outside_root(tmp_path: Path) -> None:
    validator = sarif_validator()
    outside = tmp_path / "elsewhere"
    f = Finding(
        rule="SG999",
        severity=Severity.NOTE,
        message="odd [x] path",
        location=Location(path="a b.py", line=1, repo="other"),
        suppressed=Suppression(kind="baseline", reason="in baseline"),
        fingerprint="1" * 32,
    )
    ctx = context(tmp_path / "work", roots=(Root("other", str(outside)),))
    log = json.loads(render("sarif", [f], DOCS, ctx))
    assert not list(validator.iter_errors(log))
    result = log["runs"][0]["results"][0]
    assert result["suppressions"][0]["kind"] == "external"
    assert result["message"]["text"] == "odd \\[x\\] path"
    loc = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": "a%20b.py", "uriBaseId": "ROOT0"}
    assert log["runs"][0]["originalUriBaseIds"]["ROOT0"]["uri"] == outside.resolve().as_uri() + "/"
    assert any(r["id"] == "SG999" for r in log["runs"][0]["tool"]["driver"]["rules"])


def test_sarif_empty_run_validates(tmp_path: Path) -> None:
    log = json.loads(render("sarif", [], DOCS, context(tmp_path)))
    assert log["runs"][0]["results"] == []
    assert not list(sarif_validator().iter_errors(log))


# --- github -----------------------------------------------------------------------------------------


def test_github_escaping() -> None:
    assert escape_data("50%\r\nnext") == "50%25%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_github_one_annotation_per_active_finding_with_related() -> None:
    ctx = context()
    out = render("github", all_findings(), DOCS, at_root(ctx))
    lines = out.splitlines()
    assert len(lines) == 2  # the suppressed one is not annotated
    err = next(line for line in lines if line.startswith("::error "))
    assert err.startswith("::error file=app/consumer1.py,line=7,col=1,title=SG102 group-tag-set-mismatch::")
    assert "%0Aalso: app/consumer2.py:9: subscribes 'tag2'" in err
    assert lines[0].startswith("::warning file=app/bad.py,line=3,col=30,")


def test_github_escapes_hostile_paths_and_messages() -> None:
    f = flat_finding(
        severity=Severity.NOTE,
        message="100% bad\nsecond",
        location=Location(path="we,ird:name.py", line=2, column=1, repo="shop"),
    )
    ctx = dataclasses.replace(context(), show_notes=True)
    line = render("github", [f], {}, at_root(ctx)).rstrip("\n")
    assert line == "::notice file=we%2Cird%3Aname.py,line=2,col=1,title=SG401::100%25 bad%0Asecond"
    assert "\n" not in line


def test_terminal_formats_count_notes_on_one_line_unless_asked() -> None:
    """Text and GitHub output list what a user acts on; notes are counted by rule on one line
    (`--show-notes` lists them), while JSON keeps every one."""
    note = flat_finding(
        severity=Severity.NOTE, message="value unknown", location=Location(path="a.py", line=2, repo="shop")
    )
    warn = flat_finding(
        severity=Severity.WARNING, message="bad tags", location=Location(path="b.py", line=3, repo="shop")
    )
    notes = [note, note.model_copy(update={"location": Location(path="c.py", line=4, repo="shop")})]
    ctx = at_root(context())
    github = render("github", [warn, *notes], DOCS, ctx).splitlines()
    assert len(github) == 2 and github[0].startswith("::warning ")
    assert github[1] == "2 notes not shown (2 SG401 malformed-tag-expression); --show-notes lists them"
    text = render("text", [warn, *notes], DOCS, ctx)
    assert "value unknown" not in text and text.rstrip().endswith("--show-notes lists them")
    shown = render("text", [warn, *notes], DOCS, dataclasses.replace(ctx, show_notes=True))
    assert shown.count("value unknown") == 2 and "not shown" not in shown
    report = json.loads(render("json", [warn, *notes], DOCS, ctx))
    assert len(report["findings"]) + len(report["diagnostics"]) == 3


def test_json_keeps_diagnostics_under_their_own_key() -> None:
    """SG9xx tool findings (roles: [diagnostic]) are what subguard could not read or judge: JSON keeps
    them apart from the findings a user fixes in code."""
    from subguard.core.model import RuleDoc

    docs = {
        **DOCS,
        "SG902": RuleDoc(
            id="SG902", name="unresolved-value", severity=Severity.NOTE, scope="tool", roles=("diagnostic",)
        ),
    }
    note = flat_finding(rule="SG902", severity=Severity.NOTE, message="group unknown")
    warn = flat_finding(severity=Severity.WARNING, message="bad tags")
    report = json.loads(render("json", [warn, note], docs, at_root(context())))
    assert [f["rule"] for f in report["findings"]] == ["SG401"]
    assert [f["rule"] for f in report["diagnostics"]] == ["SG902"]


# --- markdown ---------------------------------------------------------------------------------------


def test_markdown_table_per_group_and_impact() -> None:
    out = render("markdown", all_findings(), DOCS, context())
    assert out.startswith("## subguard\n\n:x: 2 findings (1 error, 1 warning, 0 note), 1 suppressed;")
    assert "### Group `test-consumer`" in out
    assert "| member | topic | expression | model |" in out
    assert "| `_root/app/consumer2.py:9` | `TopicTest2` | `tag2 \\|\\| tag3` | CLUSTERING |" in out
    assert "> **Impact:** tag1: 10 of 10 lost" in out
    assert "### Other findings" in out and "SG401 malformed-tag-expression" in out
    assert "waived one" not in out


def test_markdown_clean_and_code_spans() -> None:
    assert "No findings." in render("markdown", [], DOCS, context())
    assert "No files were scanned." in render("markdown", [], DOCS, context(parsed=0, skipped=0))
    assert code("a`b") == "``a`b``" and code(None) == "?" and code("") == '`""`'


# --- properties -------------------------------------------------------------------------------------


def _unescape(text: str) -> str:
    for escaped, char in (("%3A", ":"), ("%2C", ","), ("%0D", "\r"), ("%0A", "\n"), ("%25", "%")):
        text = text.replace(escaped, char)
    return text


@given(st.text())
def test_github_property_escaping_is_reversible_and_safe(value: str) -> None:
    escaped = escape_property(value)
    assert not set(escaped) & {":", ",", "\n", "\r"}
    assert _unescape(escaped) == value


@settings(max_examples=25, deadline=None)
@given(message=st.text(), path=st.text(min_size=1).filter(lambda p: not p.startswith("/")), line=st.integers(1, 10**6))
def test_sarif_stays_valid_for_any_message_and_path(tmp_path_factory: Any, message: str, path: str, line: int) -> None:
    validator = sarif_validator()
    f = flat_finding(message=message, location=Location(path=path, line=line, column=1, repo="shop"))
    log = json.loads(render("sarif", [f], DOCS, context(tmp_path_factory.getbasetemp())))
    assert not list(validator.iter_errors(log))
