"""A file that is neither a log nor mqadmin output is named as unrecognised (exit 2 when nothing is
recognised); the shipped examples/evidence run as the README says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "evidence"


def evidence(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "subguard", "evidence", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_readme_is_not_evidence() -> None:
    done = evidence("README.md")
    assert done.returncode == 2, done
    assert "README.md: not recognised" in done.stderr
    assert "0 parsed, 1 skipped" in done.stdout


def test_an_unrecognised_file_next_to_real_evidence_is_named_and_skipped() -> None:
    done = evidence("README.md", "examples/evidence/broker.log")
    assert done.returncode == 1 and "README.md: not recognised" in done.stderr  # the log's findings decide
    assert "SG501" in done.stdout and "1 parsed, 1 skipped" in done.stdout


def test_the_shipped_examples_run_as_the_readme_says() -> None:
    files = sorted(str(p.relative_to(ROOT)) for p in EXAMPLES.iterdir())
    assert len(files) >= 4 and any(f.endswith(".log") for f in files)
    assert "subguard evidence examples/evidence/* --inventory examples/org" in (ROOT / "README.md").read_text()
    done = evidence(*files, "--inventory", "examples/org", "--stats")
    assert done.returncode == 1 and "not recognised" not in done.stderr
    for rule in ("SG501", "SG505", "SG506"):
        assert rule in done.stdout, rule
    assert "[broker-log]" in done.stderr and "[mqadmin-consumerConnection]" in done.stderr
    assert "[mqadmin-consumerStatus]" in done.stderr and "[mqadmin-consumerProgress]" in done.stderr
    assert f"{len(files)} parsed, 0 skipped, 0 failed" in done.stdout
