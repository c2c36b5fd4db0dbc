"""The cluster path: spark-submit --master local[2] on the job module, the package shipped as a zip."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.audit.conftest import ORG, ROOT

pytestmark = pytest.mark.slow


def zip_package(dest: Path) -> Path:
    """subguard/ as a zip for --py-files (the policies link is followed, so the rules ship inside)."""
    archive = dest / "subguard.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for folder, _, files in os.walk(ROOT / "subguard", followlinks=True):
            for name in files:
                if name.endswith(".pyc"):
                    continue
                full = Path(folder) / name
                zf.write(full, full.relative_to(ROOT).as_posix())
    return archive


def test_spark_submit_local(tmp_path: Path) -> None:
    from subguard.audit.driver import JIT_OPTIONS

    submit = shutil.which("spark-submit") or str(Path(sys.executable).parent / "spark-submit")
    if not Path(submit).exists():
        pytest.skip("spark-submit not found")
    archive = zip_package(tmp_path)
    with zipfile.ZipFile(archive) as zf:
        assert "subguard/rules/policies/SG102-group-tag-set-mismatch.yaml" in zf.namelist()
    out = tmp_path / "out"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    proc = subprocess.run(
        [
            submit,
            "--master",
            "local[2]",
            "--conf",
            "spark.ui.enabled=false",
            "--driver-java-options",  # a short-lived JVM: the start-up options `subguard audit` gives its own
            JIT_OPTIONS,
            "--py-files",
            str(archive),
            str(ROOT / "subguard" / "audit" / "job.py"),
            str(ORG),
            "--out",
            str(out),
            "--master",
            "local[2]",
            "--fail-on",
            "error",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]  # the example org has errors: --fail-on error trips
    assert f"report: {out}/report.html" in proc.stdout
    assert "[audit] extract:" in proc.stdout + proc.stderr  # spark-submit merges the driver's stderr into stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["totals"]["repos"] >= 6 and summary["findings"]["by_severity"]["error"] > 0
