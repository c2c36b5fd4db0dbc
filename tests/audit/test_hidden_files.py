"""Files whose names start with `.` or `_`: Spark's listing drops them, the audit must not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from subguard.cli.main import main as cli_main
from tests.audit.conftest import run
from tests.report_json import all_findings

pytestmark = pytest.mark.slow

CONSUMER = """from rocketmq.client import PushConsumer

from pkg import GROUP, TOPIC


def {name}(handle):
    c = PushConsumer(GROUP)
    c.set_name_server_address("ns.local:9876")
    c.subscribe(TOPIC, handle, "{tags}")
    c.start()
"""
WORKER = """from rocketmq.client import PushConsumer


def start_worker(handle):
    c = PushConsumer("GID_HIDDEN_WORKER")
    c.set_name_server_address("ns.local:9876")
    c.subscribe("TopicHiddenWorker", handle, "TagA|TagB")
    c.start()
"""
FILES = {
    # the group and topic live only in the package's __init__.py
    "pkg/__init__.py": '"""Constants."""\n\nGROUP = "GID_HIDDEN_INIT"\nTOPIC = "TopicHiddenInit"\n',
    "pkg/consumer.py": CONSUMER.format(name="start", tags="TagA||TagB"),
    # a second member of the group, with other tags (SG102), in a module named like a private one
    "_private.py": CONSUMER.format(name="start_private", tags="TagC"),
    # SG401 here, ignored by the repo's own config file
    "worker.py": WORKER,
    ".subguard.yaml": 'ignore: ["SG401"]\n',
    "_config.yml": "title: docs\n",
    ".env": "NAMESRV=ns.local:9876\n",
    ".github/workflows/ci.yml": "on: push\njobs: {}\n",
    ".git/HEAD": "ref: refs/heads/main\n",
}


@pytest.fixture(scope="module")
def hidden_org(tmp_path_factory: pytest.TempPathFactory) -> Path:
    org = tmp_path_factory.mktemp("hidden") / "org"
    for rel, text in FILES.items():
        path = org / "hidden-py" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (org / ".DS_Store").write_bytes(b"\0\1")  # a hidden file of the organisation folder itself
    return org


def _rows(spark: Any, out: Path, name: str) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in spark.read.parquet(str(out / name)).collect()]


@pytest.mark.parametrize("reader", ["auto", "binaryfile"])
def test_hidden_files_are_listed_scanned_and_judged_as_check_does(
    spark: Any, hidden_org: Path, tmp_path: Path, reader: str
) -> None:
    """Both readers: the tasks' own listing (local roots) and binaryFile plus the job's hidden-file pass."""
    out = tmp_path / "out"
    run(spark, [str(hidden_org)], out, reader=reader)
    files = {(r["repo"], r["path"]): r for r in _rows(spark, out, "files")}
    expected = {("hidden-py", rel) for rel in FILES} | {("", ".DS_Store")}
    assert set(files) == expected
    assert files[("hidden-py", "pkg/__init__.py")]["status"] == "parsed"
    assert files[("hidden-py", "_private.py")]["status"] == "parsed"
    assert files[("hidden-py", ".git/HEAD")]["status"] == "skipped"

    report = tmp_path / "check.json"
    code = cli_main(
        [
            "check",
            str(hidden_org / "hidden-py"),
            "--format",
            "json",
            "--no-simulate",
            "--fail-on",
            "none",
            "-o",
            str(report),
        ]
    )
    assert code == 0
    checked = {(f["rule"], f["path"], f["line"], f["message"]) for f in all_findings(report.read_text())}
    audited = {(f["rule"], f["path"], f["line"], f["message"]) for f in _rows(spark, out, "findings")}
    assert audited == checked
    # the constants were resolved (no unresolved-value finding) and the repo config applied (no SG401)
    assert {f[0] for f in audited} == {"SG102"}
    consumers = _rows(spark, out, "consumers")
    assert {c["group"] for c in consumers} == {"GID_HIDDEN_INIT", "GID_HIDDEN_WORKER"}
    assert {c["path"] for c in consumers} == {"pkg/consumer.py", "_private.py", "worker.py"}
