"""`exclude` in the audit (issue 24): a repository's own config, else the audit's `--config`, leaves
out files by glob over repo-relative paths, on both readers, and the files table says why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.audit.conftest import run

CONSUMER = """from rocketmq.client import PushConsumer


def start(handle):
    c = PushConsumer("{group}")
    c.set_name_server_address("ns:9876")
    c.subscribe("TopicExcl", handle, "{tags}")
    c.start()
"""


def _org(tmp_path: Path) -> tuple[Path, Path]:
    org = tmp_path / "org"
    files = {
        "alpha/app/live.py": CONSUMER.format(group="GID_ALPHA", tags="TagA"),
        "alpha/legacy/stale.py": CONSUMER.format(group="GID_ALPHA", tags="TagB"),
        "alpha/pyproject.toml": '[tool.subguard]\nexclude = ["legacy"]\n',
        "beta/app/live.py": CONSUMER.format(group="GID_BETA", tags="TagA"),
        "beta/src/generated/gen.py": CONSUMER.format(group="GID_BETA", tags="TagC"),
        "beta/legacy/kept.py": CONSUMER.format(group="GID_BETA_LEGACY", tags="TagA"),
    }
    for rel, text in files.items():
        (org / rel).parent.mkdir(parents=True, exist_ok=True)
        (org / rel).write_text(text)
    config = tmp_path / "audit.yaml"
    config.write_text("exclude: ['**/generated/**']\n")  # for repos without a config of their own
    return org, config


@pytest.mark.slow
@pytest.mark.parametrize("reader", ["auto", "binaryfile"])
def test_audit_honours_exclude(spark: Any, tmp_path: Path, reader: str) -> None:
    org, config = _org(tmp_path)
    out = tmp_path / "out"
    summary = run(spark, [str(org)], out, config_file=str(config), reader=reader)
    consumers = {(r.repo, r.path) for r in spark.read.parquet(str(out / "consumers")).collect()}
    assert consumers == {("alpha", "app/live.py"), ("beta", "app/live.py"), ("beta", "legacy/kept.py")}
    assert not [r for r in spark.read.parquet(str(out / "findings")).collect() if r.rule == "SG102"]
    files = {(r.repo, r.path): (r.status, r.reason) for r in spark.read.parquet(str(out / "files")).collect()}
    assert files[("alpha", "legacy/stale.py")] == ("skipped", "excluded by config (exclude: legacy)")
    assert files[("beta", "src/generated/gen.py")] == ("skipped", "excluded by config (exclude: **/generated/**)")
    assert summary["totals"]["consumers"] == 3
