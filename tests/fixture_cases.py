"""The rule fixtures: `tests/rules/<ID>/<case>/`, one folder per rule, one subfolder per case.

A repository case is a small repo whose lines carry `ruleid:` / `ok:` annotations
(tests/engine/test_rule_fixtures.py); an evidence case holds `hit/`, `ok/` and `expect.txt`
(tests/evidence/test_rule_fixtures.py). `scripts/new_rule.py` scaffolds both kinds.
"""

from __future__ import annotations

from pathlib import Path

RULES = Path(__file__).resolve().parent / "rules"


def is_evidence_case(case: Path) -> bool:
    return (case / "expect.txt").is_file()


def rule_of(case: Path) -> str:
    """The rule a case belongs to: its folder's name."""
    return case.parent.name


def case_id(case: Path) -> str:
    return f"{case.parent.name}/{case.name}"


ALL_CASES = sorted(c for c in RULES.glob("*/*") if c.is_dir())
REPO_CASES = [c for c in ALL_CASES if not is_evidence_case(c)]
EVIDENCE_CASES = [c for c in ALL_CASES if is_evidence_case(c)]
