"""Every directory `tests/fixtures/rules/<ID>/` is a small repo that must trigger exactly its annotations.

The directory is scanned with `scan_repo` (its own `.subguard.yaml`, if any, is the config) and
evaluated with every policy. For the rules under test (the directory's id plus every id annotated
in it) the set of (rule, path, line) found must equal the `ruleid:` annotations, and no `ok:` line
may be hit. A directory holding `repos/` is a multi-repo case: each `repos/<name>/` is scanned as
its own repo and paths are written `<name>/<path>` in the comparison.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from subguard.config import load_config
from subguard.engine import evaluate
from subguard.policy import load_policies
from subguard.scan import ScanResult, scan_repo
from tests.engine.annotations import read

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rules"
CASES = sorted(p for p in FIXTURES.iterdir() if p.is_dir()) if FIXTURES.is_dir() else []


def _scan(case: Path) -> tuple[list[ScanResult], bool]:
    config = load_config(None, case)
    repos = case / "repos"
    if repos.is_dir():
        return [scan_repo(r, config, repo=r.name) for r in sorted(repos.iterdir()) if r.is_dir()], True
    return [scan_repo(case, config)], False


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fixture(case: Path) -> None:
    multi = (case / "repos").is_dir()
    expect = read(case / "repos" if multi else case)
    rules = expect.rules | {case.name.split("-")[0]}
    results, _ = _scan(case)
    config = load_config(None, case)
    findings = evaluate(results, load_policies(), config)
    found = {
        (f.rule, (f"{f.location.repo}/" if multi else "") + f.location.path, f.location.line)
        for f in findings
        if f.rule in rules
    }
    detail = "\n".join(f"  {f.rule} {f.location} {f.message}" for f in findings if f.rule in rules)
    assert found == set(expect.expected), f"findings differ from annotations in {case.name}:\n{detail}"
    assert not (found & expect.forbidden)
    assert expect.expected, f"{case.name} has no `ruleid:` annotation: a fixture that cannot fail"
