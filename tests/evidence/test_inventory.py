"""Evidence against a declared inventory (the Python fixture repo: tag1 and tag2 in one group)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from subguard.cli.main import main

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "evidence"


@pytest.fixture()
def in_fixtures(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(FIX)
    return FIX


def run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, object]]]:
    code = main(["evidence", *args, "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    findings = out["findings"] if isinstance(out, dict) else out
    assert isinstance(findings, list)
    return code, findings


def test_tag_flip_names_log_lines_and_declaring_files(in_fixtures: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, findings = run_json(["flapping_broker.log", "--inventory", "tagflip_repo"], capsys)
    assert code == 1
    flaps = [f for f in findings if f["rule"] == "SG501"]
    assert len(flaps) == 1
    text = json.dumps(flaps[0])
    assert "flapping_broker.log" in text
    assert "tagflip_repo/worker_a.py" in text and "tagflip_repo/worker_b.py" in text
    assert not [f for f in findings if f["rule"] in ("SG507", "SG508")]  # both variants are declared
    # the other groups of the same log are declared nowhere
    assert sorted(str(f["group"]) for f in findings if f["rule"] == "SG509") == ["legacy-billing", "mixed-group"]


def test_live_subscription_undeclared_from_mqadmin(in_fixtures: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, findings = run_json(["tagflip.consumerConnection.txt", "--inventory", "tagflip_repo"], capsys)
    undeclared = [f for f in findings if f["rule"] == "SG507"]
    assert len(undeclared) == 1 and "tag3 || tag4" in json.dumps(undeclared[0])
    # neither declared consumer (tag1, tag2) matches the only live subscription
    assert len([f for f in findings if f["rule"] == "SG508"]) == 2


def test_text_format_and_exit_codes(in_fixtures: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evidence", "seed000_rocketmq_client.log"]) == 0  # a note only
    assert "SG504" in capsys.readouterr().out
    assert main(["evidence", "seed000_rocketmq_client.log", "--fail-on", "note"]) == 1
    capsys.readouterr()
    for spelling in ("none", "never"):  # `none` as check and audit say it; `never` still accepted
        assert main(["evidence", "seed000_rocketmq_client.log", "--fail-on", spelling]) == 0
    capsys.readouterr()
    for fmt in ("github", "junit", "gitlab"):  # every report format of check
        assert main(["evidence", "seed000_rocketmq_client.log", "--format", fmt]) == 0
        assert "SG504" in capsys.readouterr().out, fmt
    assert main(["evidence", "does-not-exist.log"]) == 2
    assert os.getcwd() == str(FIX)


def test_offset_moved_of_a_broadcasting_consumer_links_its_offset_store(
    in_fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # seed 004: digg-group is declared BROADCASTING and its offset directory ($HOME) is on an emptyDir (SG301)
    code, findings = run_json(["seed004_broker.log", "--inventory", "digg_repo"], capsys)
    assert code == 1
    (moved,) = [f for f in findings if f["rule"] == "SG506"]
    assert (moved["group"], moved["severity"]) == ("digg-group", "error")
    assert "declared BROADCASTING" in str(moved["message"]) and "(see SG301)" in str(moved["message"])
    related = moved["related"]
    assert isinstance(related, list)
    assert [(r["path"], r["line"]) for r in related if str(r["message"]).startswith("declares group digg-group")] == [
        ("digg_repo/digg/consumer.py", 9)
    ]
    (store,) = [r for r in related if str(r["message"]).startswith("SG301:")]
    assert store["path"] == "digg_repo/deploy/deployment.yaml" and "emptyDir" in str(store["message"])
    assert not [f for f in findings if f["rule"] in ("SG507", "SG508", "SG509")]  # declared and live alike


def test_offset_moved_of_a_clustering_consumer_stays_a_warning(
    in_fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the same service and deployment, CLUSTERING: offsets live on the broker, no offset-store finding to link
    _, findings = run_json(["seed004_broker.log", "--inventory", "digg_clustering_repo"], capsys)
    (moved,) = [f for f in findings if f["rule"] == "SG506"]
    assert (moved["group"], moved["severity"]) == ("digg-group", "warning")
    assert "declared BROADCASTING" not in str(moved["message"]) and "see SG30" not in str(moved["message"])
    related = moved["related"]
    assert isinstance(related, list)
    assert [(r["path"], r["message"]) for r in related if str(r["path"]).startswith("digg_clustering_repo/")] == [
        ("digg_clustering_repo/digg/consumer.py", "declares group digg-group (CLUSTERING)")
    ]
    assert not [r for r in related if str(r["message"]).startswith(("SG301", "SG302"))]


def test_sarif_is_valid_and_points_into_the_log_and_the_declaring_files(
    in_fixtures: Path,
    capsys: pytest.CaptureFixture[str],
    sarif_validator: Any,
) -> None:
    code = main(
        ["evidence", "flapping_broker.log", "seed004_broker.log", "--inventory", "tagflip_repo", "--format", "sarif"]
    )
    assert code == 1
    log = json.loads(capsys.readouterr().out)
    errors = sorted(sarif_validator.iter_errors(log), key=str)
    assert not errors, "\n".join(str(e.message) for e in errors[:5])
    (run,) = log["runs"]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert {"SG501", "SG503", "SG506"} <= set(by_rule)
    flap = by_rule["SG501"]
    assert flap["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("flapping_broker.log")
    related = json.dumps(flap.get("relatedLocations", []))
    assert "worker_a.py" in related and "worker_b.py" in related
    rules = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert {"SG501", "SG503", "SG506"} <= rules  # each result's rule is described, with its docs


def test_markdown_lists_each_finding_with_its_group(in_fixtures: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evidence", "seed004_broker.log", "--format", "markdown"]) == 0  # warnings only
    text = capsys.readouterr().out
    assert "SG503" in text and "SG506" in text and "digg-group" in text
    assert "| where | what |" in text and "| `seed004_broker.log:11` | subVersion changed |" in text
    assert "| ? |" not in text  # log lines have no topic, expression or model columns to leave unknown


def test_declared_consumers_are_matched_by_the_name_the_broker_logs() -> None:
    """A namespaced consumer logs as `namespace%group`; the bare name is another group."""
    from subguard.core.model import ClientFamily, Consumer, Location, Value
    from subguard.evidence.correlate import Declared, by_group

    def consumer(ns: str | None) -> Declared:
        return Declared(
            "",
            Consumer(
                consumer_id=f"c-{ns}",
                group=Value.literal("GID_ORDERS"),
                client=ClientFamily.JAVA_PUSH_4X,
                namespace=Value.literal(ns) if ns else None,
                location=Location(path="A.java"),
            ),
        )

    groups = by_group([consumer("MQ_INST_1"), consumer(None)])
    assert sorted(groups) == ["GID_ORDERS", "MQ_INST_1%GID_ORDERS"]
