"""Every built-in policy parses, has a unique id matching its file name, and complete docs."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from subguard.rules.policy import BUILTIN_DIR, load_policies, load_policy, rule_docs

POLICY_FILES = sorted(BUILTIN_DIR.glob("*.y*ml"))


def test_builtin_dir_is_the_packaged_link() -> None:
    assert BUILTIN_DIR.resolve() == (Path(__file__).resolve().parents[1] / "policies").resolve()
    assert len(POLICY_FILES) >= 13


@pytest.mark.parametrize("path", POLICY_FILES, ids=[p.stem for p in POLICY_FILES])
def test_policy_file(path: Path) -> None:
    policy = load_policy(path)
    assert path.stem == f"{policy.id}-{policy.name}"
    doc = policy.doc
    assert doc.summary and "\n" not in doc.summary, "summary must be one line"
    for section in ("what", "why", "example", "instead"):
        assert getattr(doc, section).strip(), f"{path.name}: docs.{section} is empty"
    assert doc.references and all(r.strip() for r in doc.references)
    if policy.scope not in ("tool", "evidence", "change"):  # tool, evidence and change findings are emitted by code
        assert policy.condition is not None, "a rule without a condition reports every subject"
    if policy.condition is None:  # a code rule names the function that implements it, and it exists
        assert policy.implemented_by, f"{path.name}: a rule without a condition needs implemented_by"
        module, _, attr = policy.implemented_by.partition(":")
        assert callable(getattr(importlib.import_module(module), attr)), policy.implemented_by
    if "consistency" in policy.roles:
        assert policy.scope == "group", "only a group rule can judge a group's consistency"
    assert set(policy.links) <= {p.id for p in load_policies()}, "links name built-in rules"


def test_ids_unique_and_catalogue_complete() -> None:
    policies = load_policies()
    ids = [p.id for p in policies]
    assert len(ids) == len(set(ids))
    required = {f"SG10{i}" for i in range(1, 8)} | {"SG401", "SG402", "SG403", "SG901", "SG902", "SG903"}
    assert required <= set(ids)
    docs = rule_docs(policies)
    assert docs["SG102"].name == "group-tag-set-mismatch" and docs["SG102"].scope == "group/topic"


def test_rule_roles_come_from_the_yaml() -> None:
    """Which rules the self-check trusts, which rules an offset-moved finding cites, and which rules
    are implemented in code are read from the policy files, nowhere else."""
    from subguard.rules.policy import builtin, with_role

    policies = load_policies()
    assert with_role(policies, "consistency") == {"SG101", "SG102", "SG104", "SG105", "SG106"}
    assert with_role(policies, "diagnostic") == {"SG901", "SG902", "SG903", "SG904", "SG905"}
    assert with_role(policies, "topology") == {"SG201", "SG203", "SG301", "SG302"}
    assert builtin("SG506").links == ("SG301", "SG302")
    assert {p.id for p in policies if p.implemented_by} == {p.id for p in policies if p.condition is None}


def test_every_repo_rule_has_fixtures_that_must_and_must_not_trigger_it() -> None:
    """Each rule judged on repositories (all but the log-evidence SG5xx, whose hit/ok cases
    tests/evidence/test_rule_fixtures.py demands) has a `ruleid:` and an `ok:` line in the fixtures
    that tests/engine/test_rule_fixtures.py walks."""
    from tests.engine.test_rule_fixtures import CASES, expectations

    hit: set[str] = set()
    ok: set[str] = set()
    for case in CASES:
        expect = expectations(case)
        hit |= {rule for rule, _, _ in expect.expected}
        ok |= {rule for rule, _, _ in expect.forbidden}
    # SG905 fires only when subguard's two models disagree (a bug, so no correct repo triggers it):
    # tests/simulate/test_self_check.py drives it through a policy set without the consistency rules
    repo_rules = {p.id for p in load_policies() if p.scope != "evidence"}
    assert not repo_rules - {"SG905"} - hit, f"rules with no `ruleid:` fixture: {sorted(repo_rules - {'SG905'} - hit)}"
    assert not repo_rules - ok, f"rules with no `ok:` fixture: {sorted(repo_rules - ok)}"


def test_every_policy_has_a_fixture_folder_and_every_folder_a_policy() -> None:
    """tests/rules/<ID>/ holds every rule's cases (repository cases and evidence cases alike)."""
    from tests.fixture_cases import ALL_CASES, RULES

    ids = {p.id for p in load_policies()}
    folders = {d.name for d in RULES.iterdir() if d.is_dir()}
    assert not ids - folders, f"policies without a folder under tests/rules: {sorted(ids - folders)}"
    assert not folders - ids, f"folders under tests/rules that name no policy: {sorted(folders - ids)}"
    assert {c.parent.name for c in ALL_CASES} == ids, "every rule folder holds at least one case"


def test_readme_rule_table_is_generated_from_the_yaml() -> None:
    """README's rule table is `subguard rules --format markdown`; regenerate it when a policy changes."""
    from click.testing import CliRunner

    from subguard.cli.main import cli

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    begin = readme.index("<!-- rules:begin")
    embedded = readme[readme.index("\n", begin) + 1 : readme.index("<!-- rules:end -->")]
    result = CliRunner().invoke(cli, ["rules", "--format", "markdown"])
    assert result.exit_code == 0, result.output
    assert embedded == result.output, "README.md's rule table is stale: paste `subguard rules --format markdown`"
