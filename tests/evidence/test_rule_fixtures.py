"""Every evidence case `tests/rules/<ID>/logs/` pins one runtime-evidence rule (SG5xx).

A case holds:
  hit/        evidence files (broker/client logs, mqadmin output) that must produce the rule;
  ok/         near-miss files, the realistic look-alike, that must not produce it at all;
  repo/       optional declaring repository, passed as `--inventory repo` to both runs;
  expect.txt  one `<RULE> <group> <path>:<line>` per finding of the case's rule on hit/, paths
              relative to the case directory, the line being the first evidence line of the finding.

`subguard evidence` runs through the CLI with the case directory as working directory, as a user
would run it next to the files. Only the case's own rule is compared: a hit file may well raise
other rules too (a flapping log also shows code 25), and the near-misses usually do.

The near-misses: SG501 version-only changes of one expression, and rollouts (one change, or changes
that never return, logged by two brokers); SG502 topics re-added after the whole group left, never
removed by a member, and a topic removed once for good; SG503 the expression itself flipping at the
20 s cadence (that is SG501) and a group with only two version-only changes; SG504 a code-25 stream
that does not settle; SG505 a start-up burst and bursts that each follow a rebalance (two, and five
hourly ones); SG506 offset chatter of the same group ([NOTIFYME] commit below the stored offset);
SG507 the declared tags spelled in another order; SG508 every declared subscription live, and a
declared group with no subscription evidence; SG509 only declared and system groups.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from subguard.cli.main import main
from subguard.rules.policy import load_policies
from tests.fixture_cases import EVIDENCE_CASES, RULES, case_id, rule_of

FIXTURES = RULES
CASES = EVIDENCE_CASES

Key = tuple[str, str, str, int]  # rule, group, path, line


def expected(case: Path) -> list[Key]:
    """The lines of expect.txt (blank lines and `#` comments skipped), sorted."""
    out: list[Key] = []
    for raw in (case / "expect.txt").read_text(encoding="utf-8").splitlines():
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        rule, group, where = text.split()
        path, _, line = where.rpartition(":")
        out.append((rule, group, path, int(line)))
    return sorted(out)


def evidence_files(case: Path, kind: str) -> list[str]:
    folder = case / kind
    files = sorted(p.relative_to(case).as_posix() for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
    assert files, f"{case.name}/{kind}/ holds no evidence file"
    return files


def run(
    case: Path, kind: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> list[dict[str, object]]:
    """Findings of `subguard evidence <kind>/* [--inventory repo] --format json`, run in the case directory."""
    inventory = ["--inventory", "repo"] if (case / "repo").is_dir() else []
    files = evidence_files(case, kind)
    monkeypatch.chdir(case)
    code = main(["evidence", *files, *inventory, "--format", "json"])
    captured = capsys.readouterr()
    assert code in (0, 1), f"{case.name}/{kind}: exit {code}, a file was not read:\n{captured.err}"
    out = json.loads(captured.out)
    findings = out["findings"] if isinstance(out, dict) else out
    assert isinstance(findings, list)
    return findings


def keys(findings: list[dict[str, object]], rule: str) -> list[Key]:
    return sorted(
        (str(f["rule"]), str(f["group"]), str(f["path"]), int(str(f["line"]))) for f in findings if f["rule"] == rule
    )


def describe(findings: list[dict[str, object]], rule: str) -> Iterator[str]:
    for f in findings:
        if f["rule"] == rule:
            yield f"  {f['rule']} {f['group']} {f['path']}:{f['line']} {f['message']}"


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_hit_gives_exactly_the_expected_findings(
    case: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rule = rule_of(case)
    findings = run(case, "hit", monkeypatch, capsys)
    detail = "\n".join(describe(findings, rule)) or "  (none)"
    assert keys(findings, rule) == expected(case), (
        f"{rule} findings on {case.name}/hit differ from expect.txt:\n{detail}"
    )


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_near_miss_gives_none(case: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    rule = rule_of(case)
    findings = run(case, "ok", monkeypatch, capsys)
    assert not keys(findings, rule), f"{rule} raised on the near-miss {case.name}/ok:\n" + "\n".join(
        describe(findings, rule)
    )


def test_every_evidence_rule_has_a_case() -> None:
    policies = {p.id: p.name for p in load_policies() if p.id.startswith("SG5")}
    assert policies, "no SG5xx policy loaded"
    cases = {rule_of(c): c for c in CASES}
    assert len(cases) == len(CASES), "two cases for one rule: put the evidence of both into one case"
    missing = sorted(set(policies) - set(cases))
    assert not missing, f"evidence rules without a case under {FIXTURES}: {missing}"
    unknown = sorted(set(cases) - set(policies))
    assert not unknown, f"cases for rules that do not exist: {unknown}"


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_case_is_complete(case: Path) -> None:
    rule = rule_of(case)
    expect = expected(case)
    assert expect, f"{case.name}/expect.txt is empty: a case that cannot fail"
    assert {e[0] for e in expect} == {rule}, f"{case.name}/expect.txt may only list {rule}"
    assert len(set(expect)) == len(expect), f"{case.name}/expect.txt lists a finding twice"
    hit = set(evidence_files(case, "hit"))
    assert {e[2] for e in expect} <= hit, f"{case.name}/expect.txt names a file that is not in hit/"
    evidence_files(case, "ok")
