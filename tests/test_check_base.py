"""`subguard check --base REF` on real git repositories built in the test: the change rules SG601 and
SG602, the formats that carry the base revision, and the one-line exit-2 errors."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from subguard.cli.main import main
from tests.report_json import all_findings

CONSUMER = """from rocketmq.client import MessageModel, PushConsumer


def handle(msg):
    return None


consumer = PushConsumer("{group}", message_model={model})
consumer.subscribe("TopicOrders", handle, expression="{tags}")
{extra}consumer.start()
"""
SQL_CONSUMER = """import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;

public class OrderListener {{
    public void start() throws Exception {{
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("GID_ORDERS");
        consumer.subscribe("TopicOrders", MessageSelector.bySql("{sql}"));
        consumer.start();
    }}
}}
"""
DEPLOYMENT = """apiVersion: apps/v1
kind: {kind}
metadata:
  name: orders
spec:
  replicas: {replicas}
{strategy}  template:
    metadata:
      labels: {{app: orders}}
    spec:
      containers:
        - name: orders
          image: registry.example.com/orders:{version}
"""


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def consumer(
    group: str = "GID_ORDERS", tags: str = "created||paid", model: str = "MessageModel.CLUSTERING", extra: str = ""
) -> str:
    return CONSUMER.format(group=group, tags=tags, model=model, extra=extra)


def deployment(kind: str = "Deployment", replicas: int = 3, strategy: str = "", version: str = "1.0") -> str:
    block = (
        f"  {'updateStrategy' if kind == 'StatefulSet' else 'strategy'}:\n    type: {strategy}\n" if strategy else ""
    )
    return DEPLOYMENT.format(kind=kind, replicas=replicas, strategy=block, version=version)


def make_repo(root: Path, files: dict[str, str]) -> str:
    """A git repository holding `files` in one commit; its commit id."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    write(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return git(root, "rev-parse", "HEAD")


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def check(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> tuple[int, list[dict[str, object]], str]:
    code = main(["check", str(root), "--no-cache", "--format", "json", *argv])
    out, err = capsys.readouterr()
    return code, (all_findings(out) if out.strip() else []), err


def change_findings(findings: list[dict[str, object]]) -> list[dict[str, object]]:
    return [f for f in findings if str(f["rule"]).startswith("SG6")]


def base_case(tmp_path: Path, manifest: str | None = None) -> tuple[Path, str]:
    files = {"orders/pyproject.toml": "[project]\nname = 'orders'\n", "orders/consumer.py": consumer()}
    if manifest is not None:
        files["orders/k8s/workload.yaml"] = manifest
    root = tmp_path / "repo"
    return root, make_repo(root, files)


def test_tag_added_under_rolling_update_gives_sg601_with_the_loss(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, commit = base_case(tmp_path, deployment())
    write(root, {"orders/consumer.py": consumer(tags="created||paid||refunded")})
    code, findings, err = check(capsys, root, "--base", "main")
    assert code == 0, err
    (f,) = change_findings(findings)
    assert f["rule"] == "SG601" and f["severity"] == "warning" and f["group"] == "GID_ORDERS"
    assert (f["path"], f["line"]) == ("orders/consumer.py", 9)
    message = str(f["message"])
    assert "TopicOrders: +refunded" in message and "Deployment 'orders' (3 replicas, RollingUpdate)" in message
    assert f"main ({commit[:12]})" in message
    impact = str(f["impact"])
    assert impact.startswith("while 1-3 of 3 pods run the new subscription: refunded ") and "% lost" in impact
    assert f["base"] == {"ref": "main", "commit": commit}
    assert f["change"] == [
        {
            "member": "orders/consumer.py:8",
            "topic": "TopicOrders",
            "before": "`created||paid`",
            "after": "`created||paid||refunded`",
        }
    ]


def test_the_same_change_under_recreate_is_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, _ = base_case(tmp_path, deployment(strategy="Recreate"))
    write(root, {"orders/consumer.py": consumer(tags="created||paid||refunded")})
    code, findings, err = check(capsys, root, "--base", "main")
    assert code == 0, err
    assert change_findings(findings) == []


def test_an_image_bump_only_is_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, _ = base_case(tmp_path, deployment())
    write(root, {"orders/k8s/workload.yaml": deployment(version="1.1")})
    _, findings, _ = check(capsys, root, "--base", "main")
    assert change_findings(findings) == []


def test_tag_order_alone_is_not_a_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, _ = base_case(tmp_path, deployment())
    write(root, {"orders/consumer.py": consumer(tags="paid || created")})
    _, findings, _ = check(capsys, root, "--base", "main")
    assert change_findings(findings) == []


def test_topic_added_gives_sg601(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, _ = base_case(tmp_path, deployment())
    write(root, {"orders/consumer.py": consumer(extra='consumer.subscribe("TopicRefunds", handle, expression="*")\n')})
    _, findings, _ = check(capsys, root, "--base", "main")
    (f,) = change_findings(findings)
    assert f["rule"] == "SG601" and "+topic TopicRefunds" in str(f["message"])
    assert "TopicRefunds" in str(f["impact"]) or "never pulled" in str(f["impact"]) or "lost" in str(f["impact"])


def test_message_model_changed_gives_sg601(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, _ = base_case(tmp_path, deployment())
    write(root, {"orders/consumer.py": consumer(model="MessageModel.BROADCASTING")})
    _, findings, _ = check(capsys, root, "--base", "main")
    sg601 = [f for f in change_findings(findings) if f["rule"] == "SG601"]
    assert len(sg601) == 1 and "CLUSTERING -> BROADCASTING" in str(sg601[0]["message"])


def test_sql92_edited_gives_sg601(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "repo"
    make_repo(
        root,
        {
            "pom.xml": "<project><artifactId>orders</artifactId></project>\n",
            "src/main/java/OrderListener.java": SQL_CONSUMER.format(sql="amount > 10"),
            "k8s/workload.yaml": deployment(replicas=2),
        },
    )
    write(root, {"src/main/java/OrderListener.java": SQL_CONSUMER.format(sql="amount > 100")})
    _, findings, _ = check(capsys, root, "--base", "main")
    (f,) = change_findings(findings)
    assert f["rule"] == "SG601"
    assert "TopicOrders: SQL92 `amount > 10` -> SQL92 `amount > 100`" in str(f["message"])
    assert "(2 replicas, RollingUpdate)" in str(f["message"])


def test_group_renamed_gives_sg602(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, commit = base_case(tmp_path, deployment())
    write(root, {"orders/consumer.py": consumer(group="GID_ORDERS_V2")})
    _, findings, _ = check(capsys, root, "--base", commit)
    (f,) = change_findings(findings)
    assert f["rule"] == "SG602" and f["severity"] == "note" and f["group"] == "GID_ORDERS_V2"
    message = str(f["message"])
    assert "'GID_ORDERS' is renamed to 'GID_ORDERS_V2'" in message
    assert "at the newest offset of each queue (CONSUME_FROM_LAST_OFFSET, the default)" in message
    assert "offset 0 is still in memory" in message and "abandoned unless it is drained first" in message
    assert f["base"] == {"ref": commit, "commit": commit}


def test_statefulset_rolls_one_pod_at_a_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, _ = base_case(tmp_path, deployment(kind="StatefulSet", replicas=3))
    write(root, {"orders/consumer.py": consumer(tags="created||paid||refunded")})
    _, findings, _ = check(capsys, root, "--base", "main")
    (f,) = change_findings(findings)
    assert "StatefulSet 'orders' (3 replicas, RollingUpdate)" in str(f["message"])
    assert str(f["impact"]).startswith("while 1-2 of 3 pods run the new subscription: refunded ")


def test_single_replica_statefulset_never_overlaps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, _ = base_case(tmp_path, deployment(kind="StatefulSet", replicas=1))
    write(root, {"orders/consumer.py": consumer(tags="created||paid||refunded")})
    _, findings, _ = check(capsys, root, "--base", "main")
    assert change_findings(findings) == []


def test_no_manifest_assumes_a_rolling_update_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, _ = base_case(tmp_path, None)
    write(root, {"orders/consumer.py": consumer(tags="created")})
    _, findings, _ = check(capsys, root, "--base", "main")
    (f,) = change_findings(findings)
    assert "no workload in this repository (a rolling update is assumed)" in str(f["message"])
    assert "2 instances assumed" in str(f["message"])


def test_markdown_sarif_and_github_carry_the_base(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sarif_validator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # paths read relative to the working directory: repo/orders/...
    root, commit = base_case(tmp_path, deployment())
    write(root, {"orders/consumer.py": consumer(tags="created||paid||refunded")})
    sarif, md = tmp_path / "out.sarif", tmp_path / "out.md"
    code = main(
        [
            "check",
            str(root),
            "--no-cache",
            "--base",
            "main",
            "--format",
            "github",
            "--also",
            f"sarif={sarif}",
            "--also",
            f"markdown={md}",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert f"base: main ({commit[:12]})" in out and "::warning " in out
    log = json.loads(sarif.read_text(encoding="utf-8"))
    assert not list(sarif_validator.iter_errors(log))
    run = log["runs"][0]
    assert run["properties"]["base"] == {"ref": "main", "commit": commit}
    (result,) = [r for r in run["results"] if r["ruleId"] == "SG601"]
    assert result["properties"]["base"]["commit"] == commit
    text = md.read_text(encoding="utf-8")
    assert f"judged against base `main ({commit[:12]})`" in text
    assert f"| member | topic | before (main ({commit[:12]})) | after (head) |" in text
    assert (
        "| `repo/orders/consumer.py:8` | `TopicOrders` | `created\\|\\|paid` | `created\\|\\|paid\\|\\|refunded` |"
        in text
    )


def test_unchanged_files_come_from_the_content_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second run reads the base from its per-tree result; the first reads only the changed blob."""
    from subguard.scan import gitrev

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root, _ = base_case(tmp_path, deployment())
    write(root, {"orders/consumer.py": consumer(tags="created||paid||refunded")})
    read: list[list[str]] = []
    real = gitrev.read_blobs
    monkeypatch.setattr(gitrev, "read_blobs", lambda folder, blobs: read.append(list(blobs)) or real(folder, blobs))
    assert main(["check", str(root), "--base", "main", "--format", "json"]) == 0
    first = all_findings(capsys.readouterr().out)
    assert [len(b) for b in read] == [1]  # only orders/consumer.py changed since the base
    assert main(["check", str(root), "--base", "main", "--format", "json"]) == 0
    assert all_findings(capsys.readouterr().out) == first
    assert len(read) == 1  # the base's whole result came from the cache
    assert not (root / ".subguard_cache").exists() or "subguard_cache" not in git(root, "status", "--porcelain")


@pytest.mark.parametrize("how", ["unknown", "shallow", "no-repo", "no-git"])
def test_unusable_base_is_exit_2_and_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    root, first = base_case(tmp_path, deployment())
    ref = "origin/nope"
    if how == "shallow":
        write(root, {"orders/consumer.py": consumer(tags="created")})
        git(root, "commit", "-qam", "second")
        clone = tmp_path / "clone"
        subprocess.run(
            ["git", "clone", "-q", "--depth", "1", f"file://{root}", str(clone)], check=True, capture_output=True
        )
        root, ref = clone, first
    elif how == "no-repo":
        plain = tmp_path / "plain"
        write(plain, {"consumer.py": consumer()})
        root = plain
    elif how == "no-git":
        monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    code = main(["check", str(root), "--no-cache", "--base", ref])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    expected = {
        "unknown": "unknown revision in this clone; fetch it first (`git fetch origin origin/nope`",
        "shallow": "shallow clone without that commit; fetch the history (actions/checkout with `fetch-depth: 0`",
        "no-repo": "is not inside a git work tree",
        "no-git": "--base needs git, and no `git` executable is on PATH",
    }[how]
    assert expected in lines[0]
