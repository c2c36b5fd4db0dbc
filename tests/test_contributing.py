"""CONTRIBUTING.md's worked example runs as written, and scripts/new_rule.py scaffolds a rule that loads."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from subguard.rules.policy import load_policy
from tests.engine.test_rule_fixtures import expectations, judge

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```\w+ file=(?P<path>\S+)\n(?P<body>.*?)^```$", re.M | re.S)


def worked_example() -> dict[str, str]:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    return {m["path"]: m["body"] for m in FENCE.finditer(text)}


def test_a_declarative_group_rule_is_its_yaml_and_its_fixture_folder(tmp_path: Path) -> None:
    files = worked_example()
    assert len(files) == 3
    rule = next(Path(p).stem.split("-")[0] for p in files if p.startswith("policies/"))
    assert all(p.startswith(("policies/", f"tests/rules/{rule}/")) for p in files), "nothing else is touched"
    for rel, body in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(body, encoding="utf-8")
    case = tmp_path / "tests" / "rules" / rule / "basic"
    found = judge(case, [tmp_path / "policies"])
    hits = {(f.rule, f"{f.location.repo}/{f.location.path}", f.location.line) for f in found if f.rule == rule}
    expect = expectations(case)
    assert hits == set(expect.expected) and hits, [f.message for f in found if f.rule == rule]
    assert not hits & expect.forbidden
    [finding] = [f for f in found if f.rule == rule]
    assert (
        finding.message
        == "Group 'GID_SHARED' is declared in 2 repositories (billing, orders): one repository should own it"
    )


def _new_rule(tmp_path: Path, scope: str) -> subprocess.CompletedProcess[str]:
    """scripts/new_rule.py ACME900 some-new-rule for `scope`, into a scratch policy and fixture folder."""
    argv = ["ACME900", "some-new-rule", "--scope", scope, "--policies", str(tmp_path / "policies")]
    argv += ["--fixtures", str(tmp_path / "rules"), "--readme", ""]
    script = str(ROOT / "scripts" / "new_rule.py")
    return subprocess.run([sys.executable, script, *argv], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("scope", ["group", "subscription", "consumer", "consumer+deployment", "evidence"])
def test_new_rule_scaffolds_a_policy_that_loads_and_a_case(tmp_path: Path, scope: str) -> None:
    proc = _new_rule(tmp_path, scope)
    assert proc.returncode == 0, proc.stderr
    policy = load_policy(tmp_path / "policies" / "ACME900-some-new-rule.yaml")
    assert (policy.id, policy.scope) == ("ACME900", scope)
    assert all(getattr(policy.docs, s).strip() for s in ("what", "why", "example", "instead"))
    case = tmp_path / "rules" / "ACME900" / ("logs" if scope == "evidence" else "basic")
    assert case.is_dir() and any(case.rglob("*"))
    again = _new_rule(tmp_path, scope)
    assert again.returncode != 0 and "already exists" in again.stderr, "a scaffold never overwrites"


def test_the_projects_own_hooks_are_valid_and_subguard_passes_on_the_examples() -> None:
    """.pre-commit-config.yaml is a valid pre-commit config, and its subguard hook's command passes:
    every finding of examples/org is in the baseline, so only a new one fails the hook."""
    import shlex

    from ruamel.yaml import YAML

    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", ".pre-commit-config.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    config = YAML(typ="safe").load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    [hook] = [h for r in config["repos"] for h in r["hooks"] if h["id"] == "subguard-examples"]
    words = shlex.split(hook["entry"])
    assert words[:2] == ["subguard", "check"]
    run = subprocess.run(
        [sys.executable, "-m", "subguard", *words[1:], "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 findings" in run.stdout and "suppressed" in run.stdout


def test_the_version_is_written_once() -> None:
    """pyproject.toml reads the version from subguard/__init__.py; the installed metadata agrees."""
    from importlib.metadata import version

    import subguard

    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject and 'version = {attr = "subguard.__version__"}' in pyproject
    assert version("subguard") == subguard.__version__
