"""The audit on a real Spark standalone cluster: a master and two workers on the loopback interface
(`tests.audit.standalone`), the job submitted with `spark-submit --master spark://...`, its tasks
run by executors in other processes; the outputs equal the local run's on the same organisation."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.audit import equality, standalone
from tests.audit.conftest import ORG, ROOT
from tests.audit.test_spark_submit import zip_package

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[standalone.Cluster]:
    pytest.importorskip("pyspark")
    if standalone.java() is None:
        pytest.skip("no java")
    running = standalone.start(tmp_path_factory.mktemp("standalone"), workers=2, cores=1, memory="1g")
    try:
        yield running
    finally:
        standalone.stop(running)
    assert all(d.proc.poll() is not None for d in running.daemons()), "a cluster daemon outlived the test"


def test_audit_on_standalone_cluster_equals_local(
    cluster: standalone.Cluster,
    org_audit: tuple[Path, dict[str, Any]],
    tmp_path: Path,
) -> None:
    from subguard.audit.driver import JIT_OPTIONS

    submit = shutil.which("spark-submit") or str(Path(sys.executable).parent / "spark-submit")
    if not Path(submit).exists():
        pytest.skip("spark-submit not found")
    archive = zip_package(tmp_path)
    out = tmp_path / "out"
    proc = subprocess.run(
        [
            submit,
            "--master",
            cluster.url,
            "--deploy-mode",
            "client",
            "--py-files",
            str(archive),
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            f"spark.driver.host={standalone.HOST}",
            "--conf",
            f"spark.driver.bindAddress={standalone.HOST}",
            "--conf",
            "spark.executor.memory=512m",
            "--conf",
            "spark.executor.cores=1",
            "--conf",
            "spark.cores.max=2",
            "--conf",  # short-lived JVMs: the start-up options the local driver uses (`driver.JIT_OPTIONS`)
            f"spark.executor.extraJavaOptions={JIT_OPTIONS}",
            "--driver-java-options",
            JIT_OPTIONS,
            str(ROOT / "subguard" / "audit" / "job.py"),
            str(ORG),
            "--out",
            str(out),
            "--master",
            cluster.url,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=standalone.env(),
        cwd=tmp_path,
        check=False,
    )
    logs = "\n".join(f"--- {d.name}\n{d.tail(15)}" for d in cluster.daemons())
    assert proc.returncode == 0, f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}\n{logs}"
    # the tasks ran in executors the workers launched, one per worker, not in the driver
    launched = [d.name for d in cluster.workers if "Asked to launch executor" in d.log.read_text(errors="replace")]
    assert launched == [d.name for d in cluster.workers], logs
    local_out, _ = org_audit
    diff = equality.differences(equality.result(local_out), equality.result(out))
    assert not diff, "\n".join(diff)
    assert os.path.isfile(out / "report.html")
