"""Classification of the fixture logs (seed formats): class, group and counts per finding."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from subguard.core.model import Finding, Severity
from subguard.evidence import classify, parse_line
from subguard.evidence.analyze import analyze
from subguard.evidence.cadence import cadence

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "evidence"


def run(*names: str) -> list[Finding]:
    return list(analyze([str(FIX / n) for n in names], workdir=str(FIX)).findings)


def only(findings: list[Finding], rule: str, group: str) -> Finding:
    hits = [f for f in findings if f.rule == rule and f.group == group]
    assert len(hits) == 1, [(f.rule, f.group) for f in findings]
    return hits[0]


def props(f: Finding) -> dict[str, object]:
    return dict(f.properties)


def test_seed004_offset_moved_and_20s_churn() -> None:
    findings = run("seed004_broker.log")
    assert sorted(f.rule for f in findings) == ["SG503", "SG506"]
    churn = only(findings, "SG503", "digg-group")
    assert churn.severity is Severity.WARNING and churn.topic == "digg-topic"
    assert props(churn)["changes"] == 8 and props(churn)["cadence_s"] == 20 and props(churn)["rebalance_loop"] is True
    assert churn.location.path == "seed004_broker.log" and churn.location.line == 4  # first (wrapped) change
    moved = only(findings, "SG506", "digg-group")
    assert props(moved)["pulls"] == 8 and props(moved)["offsets"] == 1 and props(moved)["stuck"] == 1
    assert moved.location.line == 2 and "156798" in moved.message
    assert props(moved)["clients"] == ("10.12.4.31:54437",)


def test_seed000_startup_burst_is_transient() -> None:
    (note,) = run("seed000_rocketmq_client.log")
    assert (note.rule, note.group, note.severity) == ("SG504", "mqcloud-json-test-consumer", Severity.NOTE)
    assert props(note) == {"refusals": 4, "bursts": 1, "sources": 1}
    assert note.location.line == 5


def test_persistent_code25_for_one_client_gzip() -> None:
    (warn,) = run("persistent_rocketmq_client.log.gz")
    assert (warn.rule, warn.group, warn.severity) == ("SG505", "order-group", Severity.WARNING)
    assert props(warn)["refusals"] == 150 and props(warn)["side"] == "client"
    assert warn.location.path == "persistent_rocketmq_client.log.gz" and warn.location.line == 2


def test_tag_flapping_and_topic_set_flapping() -> None:
    findings = run("flapping_broker.log")
    flap = only(findings, "SG501", "tagflip-group")
    assert flap.severity is Severity.ERROR and flap.topic == "TagTopic"
    assert props(flap)["flips"] == 6
    assert props(flap)["variants"] == (("tag1", "TAG", 4), ("tag2", "TAG", 3))
    assert flap.location.line == 6
    topics = only(findings, "SG502", "mixed-group")
    assert props(topics)["removed"] == (("Audit", 3, 3),) and "code 24 3x" in topics.message
    # the flapping group's broker-side code 25 keeps coming for 150 s: not the start-up race
    assert only(findings, "SG505", "tagflip-group").location.line == 7


def test_spelling_only_flapping_is_a_warning() -> None:
    sub = (
        "SubscriptionData [classFilterMode=false, topic=T, subString={s}, tagsSet=[a, b], codeSet=[97, 98], "
        "subVersion={v}, expressionType=TAG]"
    )
    rows = []
    for i in range(3):
        s_old, s_new = ("a||b", "b || a") if i % 2 == 0 else ("b || a", "a||b")
        row = parse_line(
            f"2024-03-01 10:00:{10 + i:02d} INFO ClientManageThread_1 - subscription changed, group: g OLD: "
            + sub.format(s=s_old, v=i)
            + " NEW: "
            + sub.format(s=s_new, v=i + 1)
        )
        assert row is not None
        rows.append({**row, "path": "b.log", "line": i + 1})
    (f,) = classify(rows)
    assert (f.rule, f.severity, props(f)["flips"]) == ("SG501", Severity.WARNING, 3)


def test_version_only_changes_without_cadence_are_a_note() -> None:
    sub = "SubscriptionData [classFilterMode=false, topic=T, subString=*, tagsSet=[], codeSet=[], subVersion={v}, expressionType=null]"
    rows = []
    for i, sec in enumerate((0, 7, 50, 52, 140)):
        row = parse_line(
            f"2024-03-01 10:{sec // 60:02d}:{sec % 60:02d} INFO C - subscription changed, group: g OLD: "
            + sub.format(v=i)
            + " NEW: "
            + sub.format(v=i + 1)
        )
        assert row is not None
        rows.append({**row, "path": "c.log", "line": i + 1})
    (f,) = classify(rows)
    assert (f.rule, f.severity, props(f)["regular"]) == ("SG503", Severity.NOTE, False)


def test_cadence() -> None:
    assert cadence({20: 6, 21: 1}).rebalance_loop
    assert not cadence({7: 1, 43: 1, 2: 1, 88: 1}).regular
    assert cadence({}).intervals == 0


def test_large_gzip_streams_and_counts_garbage(tmp_path: Path) -> None:
    src = FIX / "seed004_broker.log"
    target = tmp_path / "broker.log.gz"
    with open(src, "rb") as fh, gzip.open(target, "wb") as out:
        shutil.copyfileobj(fh, out)
        out.write(b"\xff\xfe not utf-8 \x00\n")
    result = analyze([str(target)], workdir=str(tmp_path))
    (stats,) = result.files
    assert stats.compressed and stats.format == "broker-log" and stats.events == 24 and stats.garbled == 1
    assert sorted(f.rule for f in result.findings) == ["SG503", "SG506"]


def test_truncated_gzip_is_not_fatal(tmp_path: Path) -> None:
    data = gzip.compress((FIX / "seed004_broker.log").read_bytes() * 200)
    bad = tmp_path / "broker.log.gz"
    bad.write_bytes(data[: len(data) // 2])
    result = analyze([str(bad)], workdir=str(tmp_path))
    assert result.files[0].error.startswith("read stopped at line")
    assert result.files[0].events > 24  # what was read before the cut still counts
    assert any(f.rule == "SG506" for f in result.findings)


@pytest.mark.parametrize("name", ["missing.log"])
def test_missing_file_is_reported(tmp_path: Path, name: str) -> None:
    result = analyze([str(tmp_path / name)], workdir=str(tmp_path))
    assert result.files[0].error and not result.findings
