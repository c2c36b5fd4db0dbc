"""One group, one prediction: `check` and `simulate --inventory` give every group of the example
organisation the same figures (same function, runs, seed and member order), wherever the tree lives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from subguard.cli.main import main
from subguard.simulate.impact import DEFAULT_RUNS
from tests.report_json import all_findings

ORG = Path(__file__).resolve().parents[2] / "examples" / "org"


def inventory_predictions(capsys: pytest.CaptureFixture[str], root: Path) -> dict[str, dict[str, Any]]:
    """`simulate --inventory ROOT --format json`, by group (with its defaults: runs, seed, queues)."""
    assert main(["simulate", "--inventory", str(root), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["runs"] == DEFAULT_RUNS
    return {g["group"]: g for g in data["groups"]}


def check_impacts(capsys: pytest.CaptureFixture[str], root: Path) -> dict[str, set[str]]:
    """The impact texts `check ROOT --format json` puts on each group's findings."""
    main(["check", str(root), "--format", "json", "--no-cache", "--fail-on", "none"])
    out: dict[str, set[str]] = {}
    for f in all_findings(capsys.readouterr().out):
        if f.get("impact"):
            out.setdefault(f["group"], set()).add(f["impact"])
    return out


def test_check_and_simulate_inventory_agree_on_every_group(capsys: pytest.CaptureFixture[str]) -> None:
    predicted = inventory_predictions(capsys, ORG)
    main(["check", str(ORG), "--format", "json", "--no-cache", "--fail-on", "none"])
    findings = all_findings(capsys.readouterr().out)
    flagged = {f["group"] for f in findings if f.get("group") and f["rule"] != "SG905"}
    impacts: dict[str, set[str]] = {}
    for f in findings:
        if f.get("impact"):
            impacts.setdefault(f["group"], set()).add(f["impact"])
    assert {"GID_ORDER_EVENTS", "GID_RISK"} <= set(impacts)
    for group, row in predicted.items():
        assert row["runs"] == DEFAULT_RUNS, group
        if group in impacts:  # every finding of the group carries the one prediction, with its runs
            assert impacts[group] == {row["summary"]}, group
            assert row["summary"].startswith(f"simulated ({DEFAULT_RUNS} runs): "), group
        elif group in flagged:
            assert not row["loss"] and not row["never_pulled"], group  # no loss: no impact line


def test_a_copy_elsewhere_predicts_the_same(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The same files in another folder, at another depth, under another name: the same figures."""
    copies = [tmp_path / "a" / "org", tmp_path / "deeper" / "x" / "y" / "elsewhere"]
    for dest in copies:
        shutil.copytree(ORG, dest, ignore=shutil.ignore_patterns(".subguard_cache"))
    here = inventory_predictions(capsys, ORG)
    checked = check_impacts(capsys, ORG)
    for dest in copies:
        assert inventory_predictions(capsys, dest) == here, dest
        assert check_impacts(capsys, dest) == checked, dest
