"""Every repository case `tests/rules/<ID>/<case>/` is a small repo that must trigger exactly its annotations.

The directory is scanned with `scan_repo` (its own `.subguard.yaml`, if any, is the config), evaluated
with every policy, and its inline and config waivers are applied as `subguard check` applies them
(so SG903 is judged here too, and waived findings do not count). For the rules under test (the
directory's id plus every id annotated in it) the set of unsuppressed (rule, path, line) found must
equal the `ruleid:` annotations, and no `ok:` line may be hit. A directory holding `repos/` is a
multi-repo case: each `repos/<name>/` is scanned as its own repo and paths are written `<name>/<path>`.
A directory named `...-clean` holds only `ok:` lines and must give no finding of any rule.
A directory holding `base/` and `head/` is a change case (SG6xx, `check --base`): `base/` is committed
to a fresh git repository, the work tree is then replaced by `head/`, and the head is judged with the
base revision; annotations are read from `head/`.
The rule-evidence rules (SG5xx) judge logs, not repos; they have their own harness in
tests/evidence/test_rule_fixtures.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from subguard.core.config import load_config
from subguard.core.model import Finding
from subguard.rules import judge as pipeline
from subguard.rules.change import Change
from subguard.rules.impact import describer
from subguard.rules.policy import load_policies
from subguard.rules.waiver_sources import on_disk
from subguard.scan import gitrev
from subguard.scan.extraction import ScanResult, scan_repo
from tests.engine.annotations import Expectations, read
from tests.fixture_cases import REPO_CASES, RULES, case_id, rule_of

FIXTURES = RULES
CASES = REPO_CASES


def _scan(case: Path) -> list[ScanResult]:
    config = load_config(None, case)
    repos = case / "repos"
    if repos.is_dir():
        return [scan_repo(r, config, repo=r.name) for r in sorted(repos.iterdir()) if r.is_dir()]
    return [scan_repo(case, config)]


def is_change_case(case: Path) -> bool:
    return (case / "base").is_dir() and (case / "head").is_dir()


def _git(root: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def _judge_change(case: Path, policy_dirs: Sequence[Path]) -> list[Finding]:
    """A change case: `base/` committed, the work tree replaced by `head/`, judged as `check --base`."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "head"
        shutil.copytree(case / "base", root)
        _git(root, "init", "-q")
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", "base")
        for entry in root.iterdir():
            if entry.name != ".git":
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        shutil.copytree(case / "head", root, dirs_exist_ok=True)
        config = load_config(None, root)
        results = [scan_repo(root, config)]
        rev = gitrev.resolve(root, "HEAD")
        change = Change(tuple(gitrev.scan_base([str(root)], [rev], results, config)), rev.ref, rev.commit, rev.label)
        rules = pipeline.RuleSet.of(load_policies(policy_dirs))
        return pipeline.judge(
            results, rules, config, waivers=on_disk(results, config), describe=describer(), change=change
        ).findings


def judge(case: Path, policy_dirs: Sequence[Path] = ()) -> list[Finding]:
    """What `subguard check` keeps for the case: every policy (plus `policy_dirs`), then waivers
    (SG903 included)."""
    if is_change_case(case):
        return _judge_change(case, policy_dirs)
    config = load_config(None, case)
    results = _scan(case)
    rules = pipeline.RuleSet.of(load_policies(policy_dirs))
    # with the simulator on, as `check` runs by default: its self-check (SG905) judges every case too
    return pipeline.judge(results, rules, config, waivers=on_disk(results, config), describe=describer()).findings


def expectations(case: Path) -> Expectations:
    if is_change_case(case):
        return read(case / "head")
    return read(case / "repos" if (case / "repos").is_dir() else case)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_fixture(case: Path) -> None:
    multi = (case / "repos").is_dir()
    expect = expectations(case)
    rules = expect.rules | {rule_of(case)}
    live = [f for f in judge(case) if f.suppressed is None]
    found = {
        (f.rule, (f"{f.location.repo}/" if multi else "") + f.location.path, f.location.line)
        for f in live
        if f.rule in rules
    }
    detail = "\n".join(f"  {f.rule} {f.location} {f.message}" for f in live if f.rule in rules)
    assert found == set(expect.expected), f"findings differ from annotations in {case.name}:\n{detail}"
    assert not (found & expect.forbidden)
    if case.name == "clean" or case.name.endswith("-clean"):
        assert not expect.expected and expect.forbidden, f"{case.name}: a clean case holds `ok:` lines only"
        assert live == [], [f"{f.rule} {f.location} {f.message}" for f in live]
    else:
        assert expect.expected, f"{case.name} has no `ruleid:` annotation: a fixture that cannot fail"


def test_a_group_declared_in_java_and_python_is_one_group() -> None:
    """SG102 on a group with a Spring listener (tags from a placeholder) and a Python consumer
    (names from an imported settings module): one finding, a location in each language."""
    [finding] = [f for f in judge(FIXTURES / "SG102" / "java-python") if f.rule == "SG102"]
    paths = [finding.location.path, *(r.location.path for r in finding.related)]
    assert [p.rsplit(".", 1)[1] for p in paths] == ["java", "py"]
    assert "{paid, settled}" in finding.message and "{refunded}" in finding.message
