"""Paths read one way: relative to the working directory (absolute outside it), in a finding's location
and in every path its message, related messages and impact cite, in every format of `check` a person
or a CI reads; JSON, the data format the audit also writes, keeps them relative to the root throughout.

`subguard check` runs for real from a working directory other than the scanned root, on a repository
whose group GID_PAY is declared in two files with different topics (SG101).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from subguard.cli.main import main
from subguard.core.members import MEMBERS, Member
from subguard.core.model import Finding, Location, Related, Severity
from subguard.report import ReportContext, Root, cite_paths
from tests.report_json import all_findings

WORKER = 'from rocketmq.client import PushConsumer\n\n\ndef handle(msg):\n    return None\n\n\nconsumer = PushConsumer("GID_PAY")\nconsumer.subscribe("{topic}", handle)\n'
BILLING, ORDERS = "billing/worker.py", "orders/worker.py"  # relative to the scanned root
LINE, COL = 8, 12  # the construction `PushConsumer("GID_PAY")`


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """`shop/svc` (the root to scan) and `work/` (a working directory beside it, outside the root)."""
    root = tmp_path / "shop" / "svc"
    for rel, topic in ((ORDERS, "TopicA"), (BILLING, "TopicB")):
        (root / rel).parent.mkdir(parents=True)
        (root / rel).write_text(WORKER.format(topic=topic), encoding="utf-8")
    (tmp_path / "work").mkdir()
    return root


def check(capsys: pytest.CaptureFixture[str], fmt: str, *roots: str) -> str:
    code = main(["check", *roots, "--no-cache", "--no-simulate", "--fail-on", "none", "--format", fmt])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def message(billing: str, orders: str) -> str:
    return f"Group 'GID_PAY' members subscribe different topic sets: {{TopicB}} at {billing}:{LINE}, {{TopicA}} at {orders}:{LINE}"


# where the files are shown from each working directory: below it, or outside it (absolute)
CASES = {
    "inside": ("", "shop/svc"),  # cwd: the folder holding shop/; root given as shop/svc
    "outside": ("work", "../shop/svc"),  # cwd: a sibling of shop/; root given as ../shop/svc
}


def shown(tmp_path: Path, case: str) -> tuple[str, str]:
    prefix = "shop/svc" if case == "inside" else (tmp_path.resolve() / "shop" / "svc").as_posix()
    return f"{prefix}/{BILLING}", f"{prefix}/{ORDERS}"


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest, shop: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path / CASES[request.param][0])
    monkeypatch.delenv("NO_COLOR", raising=False)
    return str(request.param)


def test_text(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    billing, orders = shown(tmp_path, case)
    out = check(capsys, "text", CASES[case][1])
    width = max(len(billing), len(orders)) + len(f":{LINE}")
    assert out.splitlines()[:4] == [
        "group GID_PAY",
        f"  SG101 [error] {message(billing, orders)}",
        f'      {f"{billing}:{LINE}".ljust(width)}  TopicB  "*"  CLUSTERING',
        f'      {f"{orders}:{LINE}".ljust(width)}  TopicA  "*"  CLUSTERING',
    ]


def test_json_keeps_paths_relative_to_the_root(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    """JSON is the data format the audit also writes: `path` and the message's paths are relative to
    the root `repo` names, wherever check runs."""
    (f,) = all_findings(check(capsys, "json", CASES[case][1]))
    assert (f["repo"], f["path"], f["line"], f["message"]) == ("svc", BILLING, LINE, message(BILLING, ORDERS))
    assert [(r["repo"], r["path"], r["line"], r["message"]) for r in f["related"]] == [
        ("svc", ORDERS, LINE, "a member of 'GID_PAY' subscribes {TopicA}")
    ]


def test_sarif(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    billing, orders = shown(tmp_path, case)
    run = json.loads(check(capsys, "sarif", CASES[case][1]))["runs"][0]
    (result,) = run["results"]
    assert result["message"]["text"] == f"{message(billing, orders)} (also: [{orders}:{LINE}](1))"
    where = result["locations"][0]["physicalLocation"]["artifactLocation"]
    also = result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]
    if case == "inside":  # URIs from %SRCROOT%, the working directory: the same text as shown
        assert (where, also) == ({"uri": billing, "uriBaseId": "%SRCROOT%"}, {"uri": orders, "uriBaseId": "%SRCROOT%"})
    else:  # a root outside it has its own base, whose URI is the root: the same file
        assert (where, also) == ({"uri": BILLING, "uriBaseId": "ROOT0"}, {"uri": ORDERS, "uriBaseId": "ROOT0"})
        assert run["originalUriBaseIds"]["ROOT0"]["uri"] == Path(billing[: -len(BILLING)]).as_uri() + "/"


def test_github(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    billing, orders = shown(tmp_path, case)
    out = check(capsys, "github", CASES[case][1])
    file = billing.replace(":", "%3A").replace(",", "%2C")
    assert out.splitlines() == [
        f"::error file={file},line={LINE},col={COL},endLine={LINE},endColumn=35,"
        f"title=SG101 group-topic-set-mismatch::{message(billing, orders)}"
        f"%0Aalso: {orders}:{LINE}: a member of 'GID_PAY' subscribes {{TopicA}}"
    ]


def test_markdown(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    billing, orders = shown(tmp_path, case)
    lines = check(capsys, "markdown", CASES[case][1]).splitlines()
    assert f"**SG101 group-topic-set-mismatch** (error): {message(billing, orders)}" in lines
    assert f"| `{billing}:{LINE}` | `TopicB` | `*` | CLUSTERING |" in lines
    assert f"| `{orders}:{LINE}` | `TopicA` | `*` | CLUSTERING |" in lines


def test_junit_and_gitlab(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    billing, orders = shown(tmp_path, case)
    xml = check(capsys, "junit", CASES[case][1])
    assert f'file="{billing}" line="{LINE}"' in xml
    assert f"at {billing}:{LINE}:{COL} (topic TopicB" in xml and f"also {orders}:{LINE}:{COL}: a member" in xml
    assert xml.count(message(billing, orders)) == 2  # the failure's message and its body
    (issue,) = json.loads(check(capsys, "gitlab", CASES[case][1]))
    assert issue["location"]["path"] == billing and issue["description"] == f"SG101: {message(billing, orders)}"


def test_console_entry_from_another_directory(shop: Path, tmp_path: Path) -> None:
    """The installed entry point (a subprocess), text format, root outside the working directory."""
    proc = subprocess.run(
        [sys.executable, "-m", "subguard", "check", "../shop/svc", "--no-cache", "--no-simulate", "--fail-on", "none"],
        cwd=tmp_path / "work",
        capture_output=True,
        text=True,
        check=False,
    )
    billing, orders = shown(tmp_path, "outside")
    assert proc.returncode == 0, proc.stderr
    assert f"  SG101 [error] {message(billing, orders)}\n" in proc.stdout


def test_two_roots_cite_each_member_under_its_own_root(
    shop: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Members in two roots are cited `root:path:line` by the rule; shown, each is its display path."""
    monkeypatch.chdir(shop)
    (f,) = [f for f in all_findings(check(capsys, "json", "billing", "orders")) if f["rule"] == "SG101"]
    assert f["message"] == message("billing:worker.py", "orders:worker.py")  # as the rule writes it
    out = check(capsys, "text", "billing", "orders")
    assert f"  SG101 [error] {message(BILLING, ORDERS)}" in out.splitlines()


# --- the one function, on findings built by hand ----------------------------------------------------------


def _finding(message: str, impact: str = "") -> Finding:
    a = Location(path="orders/worker.py", line=8, repo="svc")
    b = Location(path="worker.py", line=3, repo="other")
    return Finding(
        rule="SG101",
        severity=Severity.ERROR,
        message=message,
        location=a,
        related=(Related(location=b, message="also at svc:orders/worker.py:8"),),
        impact=impact,
        properties=((MEMBERS, (Member(location=a), Member(location=b, message="also at svc:orders/worker.py:8"))),),
    )


def test_cite_paths_rewrites_citations_only(tmp_path: Path) -> None:
    ctx = ReportContext(
        roots=(Root("svc", str(tmp_path / "svc")), Root("other", str(tmp_path / "lib"))),
        workdir=str(tmp_path),
        cite_from_workdir=True,
    )
    text = (
        "at orders/worker.py:8, svc:orders/worker.py:8:12, other:worker.py:3 and billing/worker.py:9; "
        "cluster namesrv.prod:9876, mq.example.com:9876; map member team-x:app/a.py:4; /etc/app.yml:2; "
        "see orders/worker.py."
    )
    f = cite_paths(_finding(text, impact="consumer orders/worker.py:8 loses 50%"), ctx)
    assert f.message == (
        "at svc/orders/worker.py:8, svc/orders/worker.py:8:12, lib/worker.py:3 and svc/billing/worker.py:9; "
        "cluster namesrv.prod:9876, mq.example.com:9876; map member team-x:app/a.py:4; /etc/app.yml:2; "
        "see svc/orders/worker.py."
    )
    assert f.impact == "consumer svc/orders/worker.py:8 loses 50%"
    assert f.related[0].message == "also at svc/orders/worker.py:8"
    members = dict(f.properties)[MEMBERS]  # what the text and Markdown member tables print
    assert [m.message for m in members] == ["", "also at svc/orders/worker.py:8"]
    assert f.location == _finding(text).location  # locations stay root-relative: renderers show them


def test_cite_paths_rewrites_the_folders_that_hold_the_findings_files(tmp_path: Path) -> None:
    """A note names the module whose config lacks a key: a folder of its own file, shown the same way;
    a service id of a root (`repo/module`) is shown as its module folder is; a folder of no file of the
    finding stays as written."""
    ctx = ReportContext(roots=(Root("svc", str(tmp_path / "svc")),), workdir=str(tmp_path), cite_from_workdir=True)
    where = Location(path="shop/orders/src/main/java/Task.java", line=5, repo="svc")
    f = Finding(
        rule="SG902",
        severity=Severity.NOTE,
        message="placeholder ${mq.group} is not set in the Spring config of module 'shop/orders' "
        "(services svc/shop/orders and shop/billing; shop/orders/src/main/java/Task.java:5)",
        location=where,
    )
    assert cite_paths(f, ctx).message == (
        "placeholder ${mq.group} is not set in the Spring config of module 'svc/shop/orders' "
        "(services svc/shop/orders and shop/billing; svc/shop/orders/src/main/java/Task.java:5)"
    )


def test_cite_paths_leaves_findings_alone_when_the_root_is_the_working_directory(tmp_path: Path) -> None:
    ctx = ReportContext(roots=(Root("svc", str(tmp_path)),), workdir=str(tmp_path), cite_from_workdir=True)
    f = _finding("at orders/worker.py:8")
    assert cite_paths(f, ctx) is f


def test_service_ids_of_a_root_read_as_their_module_folders(tmp_path: Path) -> None:
    """SG203 names services `repo/module`, the repo being the scanned folder's name: from the root they
    read as the module folders, from elsewhere as the folders' paths; another repository's stay."""
    f = Finding(
        rule="SG203",
        severity=Severity.ERROR,
        message="declared by 3 services (svc/billing, svc/orders, lib/api): svc/billing at billing/worker.py:8",
        location=Location(path="billing/worker.py", line=8, repo="svc"),
    )
    here = ReportContext(roots=(Root("svc", str(tmp_path)),), workdir=str(tmp_path), cite_from_workdir=True)
    assert cite_paths(f, here).message == (
        "declared by 3 services (billing, orders, lib/api): billing at billing/worker.py:8"
    )
    above = ReportContext(roots=(Root("svc", str(tmp_path / "svc")),), workdir=str(tmp_path), cite_from_workdir=True)
    assert cite_paths(f, above).message == (
        "declared by 3 services (svc/billing, svc/orders, lib/api): svc/billing at svc/billing/worker.py:8"
    )


def test_a_root_level_file_cited_alone_is_shown_from_the_working_directory(tmp_path: Path) -> None:
    """A text without a folder, a line or a repository still has its bare own paths rewritten (a pom
    at the root), and a finding whose texts cite nothing to rewrite is returned as it is."""
    ctx = ReportContext(roots=(Root("svc", str(tmp_path / "svc")),), workdir=str(tmp_path), cite_from_workdir=True)
    pom = Finding(
        rule="SG901",
        severity=Severity.NOTE,
        message="the group is set in pom.xml",
        location=Location(path="pom.xml", line=3, repo="svc"),
        related=(Related(location=Location(path="pom.xml", line=9, repo="svc"), message="pom.xml again"),),
    )
    shown = cite_paths(pom, ctx)
    assert shown.message == "the group is set in svc/pom.xml"
    assert shown.related[0].message == "svc/pom.xml again"
    plain = _finding("a word, pom and xml: nothing cited")
    assert cite_paths(plain.model_copy(update={"related": ()}), ctx).message == "a word, pom and xml: nothing cited"
    quiet = Finding(rule="SG901", severity=Severity.NOTE, message="nothing here", location=pom.location)
    assert cite_paths(quiet, ctx) is quiet
