"""One group, one prediction: the audit's group rows (report chart), its findings' impact, `check`
and `simulate --inventory` give every group of the example organisation the same figures."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from subguard.simulate.impact import DEFAULT_RUNS
from tests.audit.conftest import ORG
from tests.simulate.test_one_prediction import check_impacts, inventory_predictions

pytestmark = pytest.mark.slow


def without_labels(text: str) -> str:
    """A description with member labels blanked: a label is the member's file:line relative to the
    scanned root (the audit's repository, `check`'s folder), the figures are what must agree."""
    return re.sub(r"consumer \S+ receives", "consumer * receives", text)


def test_check_simulate_and_audit_predict_every_group_alike(
    org_audit: tuple[Path, dict[str, Any]], spark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = org_audit
    rows = {
        r["group"]: json.loads(r["impact"]) if r["impact"] else {}
        for r in spark.read.parquet(str(out / "groups")).select("group", "impact").collect()
    }
    predicted = inventory_predictions(capsys, ORG)
    checked = check_impacts(capsys, ORG)
    audited: dict[str, set[str]] = {}
    for f in json.loads((out / "findings.json").read_text())["findings"]:
        if f.get("impact"):
            audited.setdefault(f["group"], set()).add(f["impact"])
    assert set(rows) == set(predicted)
    simulated = 0
    for group, sim in predicted.items():
        row = rows[group]
        if not row:  # a lone member without findings: nothing to disagree with, not simulated
            assert not sim["loss"] and not sim["never_pulled"] and not sim["silent"], group
            continue
        simulated += 1
        result = row["result"]
        assert row["runs"] == result["runs"] == sim["runs"] == DEFAULT_RUNS, group
        assert dict(result["loss"]) == sim["loss"], group
        assert dict(result["stuck"]) == sim["never_pulled"], group
        assert [n for _, n in result["silent"]] == [n for _, n in sim["silent"]], group
        assert all(c.endswith("/" + a) for (a, _), (c, _) in zip(result["silent"], sim["silent"])), group
        assert without_labels(row["description"]) == without_labels(
            sim["summary"] if sim["loss"] or sim["never_pulled"] else ""
        )
        # the findings' impact is that same prediction, in the audit and in `check`
        for texts in (audited.get(group, set()), checked.get(group, set())):
            assert {without_labels(t) for t in texts} <= {without_labels(row["description"])}, group
    assert simulated >= 4 and {"GID_ORDER_EVENTS", "GID_RISK"} <= set(audited)
    from tests.audit.test_audit_compare import report_data

    drawn = {g["group"]: g for g in report_data(out)["groups"]}  # the page's figure per group is that row's prediction
    for group in drawn.keys() & {g for g, row in rows.items() if row}:
        assert drawn[group]["runs"] == rows[group]["runs"] and drawn[group]["description"] == rows[group]["description"]
