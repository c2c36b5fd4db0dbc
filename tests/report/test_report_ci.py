"""junit and gitlab renderers, and both end to end through `subguard check`."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from report_helpers import DOCS, at_root, context, flat_finding, seed002_finding, suppressed_finding

from subguard.cli.main import main
from subguard.core.model import Finding, Location, Severity, Suppression
from subguard.report import render
from subguard.report.junit import xml_safe

SEED002 = Path(__file__).resolve().parents[1] / "fixtures" / "check" / "seed002"


def all_findings() -> list[Finding]:
    return [seed002_finding(impact="tag1: 10 of 10 lost"), flat_finding(), suppressed_finding()]


def junit(findings: list[Finding]) -> ET.Element:
    return ET.fromstring(render("junit", findings, DOCS, at_root(context())).encode("utf-8"))


def cases(root: ET.Element) -> dict[str, ET.Element]:
    return {f"{c.get('classname')}::{c.get('name')}": c for c in root.iter("testcase")}


# --- junit ------------------------------------------------------------------------------------------


def test_junit_suites_per_rule_with_counts() -> None:
    root = junit(all_findings())
    assert root.tag == "testsuites" and root.get("name") == "subguard"
    assert (root.get("tests"), root.get("failures"), root.get("skipped"), root.get("errors")) == ("3", "2", "1", "0")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == ["SG102 group-tag-set-mismatch", "SG401 malformed-tag-expression"]
    sg401 = suites["SG401 malformed-tag-expression"]
    assert (sg401.get("tests"), sg401.get("failures"), sg401.get("skipped")) == ("2", "1", "1")
    assert sum(int(s.get("tests", "")) for s in suites.values()) == len(list(root.iter("testcase")))


def test_junit_failure_body_lists_location_and_members() -> None:
    case = cases(junit(all_findings()))["subguard.SG102::group test-consumer, topic TopicTest2"]
    assert (case.get("file"), case.get("line")) == ("app/consumer1.py", "7")
    failure = case.find("failure")
    assert failure is not None and case.find("skipped") is None
    assert failure.get("type") == "SG102" and failure.get("message", "").startswith("error: group test-consumer")
    lines = (failure.text or "").splitlines()
    assert lines[1] == 'at app/consumer1.py:7:1 (topic TopicTest2, expression "tag1", model CLUSTERING)'
    assert lines[2].startswith("also app/consumer2.py:9:5: subscribes 'tag2' (") and '"tag2 || tag3"' in lines[2]
    assert "impact: tag1: 10 of 10 lost" in lines


def test_junit_suppressed_is_skipped_and_any_severity_fails() -> None:
    note = flat_finding(severity=Severity.NOTE, location=Location(path="app/n.py", line=2, repo="shop"))
    by_name = cases(junit([note, suppressed_finding()]))
    skipped = by_name["subguard.SG401::app/old.py, group g2, topic T"]
    mark = skipped.find("skipped")
    assert skipped.find("failure") is None and mark is not None
    assert mark.get("message") == "suppressed: legacy, removed in Q3"
    assert by_name["subguard.SG401::app/n.py, group g2, topic T"].find("failure") is not None


def test_junit_names_are_stable_and_unique() -> None:
    moved = seed002_finding(location=Location(path="app/consumer1.py", line=70, column=3, repo="shop"))
    assert set(cases(junit([seed002_finding()]))) == set(cases(junit([moved])))  # lines are not in names
    twins = [flat_finding(fingerprint="a" * 32), flat_finding(fingerprint="b" * 32), flat_finding(fingerprint="b" * 32)]
    names = [c.get("name") for c in junit(twins).iter("testcase")]
    assert len(set(names)) == 3 and all(n and ":3" not in n for n in names)
    assert "app/bad.py, group g2, topic T #aaaaaaaa" in names


def test_junit_without_findings_is_one_passing_test() -> None:
    root = junit([])
    assert (root.get("tests"), root.get("failures")) == ("1", "0")
    (case,) = root.iter("testcase")
    assert case.get("name") == "subguard" and list(case) == []


HOSTILE = "a\x00b\x1b[31m\x0bc]]><x>&\ud800\udfff\ufffe\n::error::forged\u202e"


def test_junit_hostile_characters_stay_well_formed() -> None:
    loc = Location(path=f"dir/{HOSTILE}.py", line=1, repo="shop")
    f = flat_finding(message=HOSTILE, location=loc, group=HOSTILE)
    waived = suppressed_finding().model_copy(update={"suppressed": Suppression(kind="inline", reason=HOSTILE)})
    out = render("junit", [f, waived], DOCS, context())
    root = ET.fromstring(out.encode("utf-8"))  # encodes: no lone surrogate survived
    (failure,) = root.iter("failure")
    message = failure.get("message", "")
    assert "]]><x>&" in message and "\\x00" in message and "\\ud800" in message and "\\ufffe" in message
    assert "]]>" not in out and "\n::error::" not in out and "\\n::error::forged" in (failure.text or "")
    (skipped,) = root.iter("skipped")
    assert skipped.get("message", "").startswith("suppressed: a\\x00b")


def test_xml_safe_keeps_valid_text() -> None:
    assert xml_safe("tab\tnl\n ok é 🙂") == "tab\tnl\n ok é 🙂"
    assert xml_safe("\x01\uffff") == "\\x01\\uffff"


@settings(max_examples=50, deadline=None)
@given(message=st.text(), path=st.text(min_size=1), group=st.text())
def test_junit_parses_for_any_text(message: str, path: str, group: str) -> None:
    f = flat_finding(message=message, group=group, location=Location(path=path, line=1, repo="shop"))
    root = ET.fromstring(render("junit", [f], DOCS, context()).encode("utf-8"))
    assert len(list(root.iter("failure"))) == 1


# --- gitlab -----------------------------------------------------------------------------------------


def gitlab(findings: list[Finding]) -> list[dict[str, object]]:
    data = json.loads(render("gitlab", findings, DOCS, context()))
    assert isinstance(data, list)
    return data


def test_gitlab_shape_and_severity() -> None:
    note = flat_finding(severity=Severity.NOTE, fingerprint="n" * 32)
    issues = gitlab([*all_findings(), note])
    assert len(issues) == 3  # the suppressed finding is left out
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert all(isinstance(issue[k], str) and issue[k] for k in ("description", "check_name", "fingerprint"))
        loc = issue["location"]
        assert isinstance(loc, dict) and isinstance(loc["path"], str) and isinstance(loc["lines"]["begin"], int)
    by_sev = {i["severity"]: i for i in issues}
    assert set(by_sev) == {"major", "minor", "info"}
    err = by_sev["major"]
    assert err["check_name"] == "SG102" and str(err["description"]).startswith("SG102: group test-consumer")
    assert err["location"] == {"path": "_root/app/consumer1.py", "lines": {"begin": 7}}  # relative to the workdir
    assert err["fingerprint"] == seed002_finding().fingerprint
    assert all("waived one" not in str(i["description"]) for i in issues)


def test_gitlab_fingerprints_are_unique() -> None:
    same = [
        flat_finding(location=Location(path=f"app/{n}.py", line=1, repo="shop"), fingerprint="c" * 32) for n in "abc"
    ]
    fps = [i["fingerprint"] for i in gitlab([*same, flat_finding(fingerprint="")])]
    assert len(fps) == len(set(fps)) == 4 and "c" * 32 in fps and "" not in fps


def test_gitlab_empty_is_an_empty_array() -> None:
    assert gitlab([]) == [] and gitlab([suppressed_finding()]) == []


# --- end to end -------------------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the seed 002 fixture under a scratch working directory."""
    shutil.copytree(SEED002, tmp_path / "repo")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "repo"


def test_check_writes_junit_and_gitlab(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "junit.xml"
    code = main(["check", "repo", "--no-simulate", "--format", "gitlab", "--also", f"junit={target}"])
    out = capsys.readouterr().out
    assert code == 1
    issues = json.loads(out)
    (sg102,) = [i for i in issues if i["check_name"] == "SG102"]
    assert sg102["severity"] == "major" and sg102["location"]["path"].startswith("repo/app/consumer")
    root = ET.fromstring(target.read_bytes())
    failure = next(c for c in root.iter("testcase") if c.get("classname") == "subguard.SG102").find("failure")
    assert failure is not None and "repo/app/consumer1.py:" in (failure.text or "")
    assert "repo/app/consumer2.py:" in (failure.text or "")

    code = main(["check", "repo", "--no-simulate", "--format", "junit"])
    assert code == 1
    assert ET.tostring(ET.fromstring(capsys.readouterr().out.encode("utf-8"))) == ET.tostring(root)
