"""Runtime evidence read by Spark (`subguard.audit.evidence`) gives exactly the CLI's findings
(`subguard.evidence.analyze`) on the same files: logs with wrapped and stack-trace records, gzip,
mqadmin tables, files read in many splits, and the correlation with a declared inventory."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from subguard.audit import evidence as E
from subguard.audit import transforms as T
from subguard.audit.sources import SourceError
from subguard.core.config import Config
from subguard.core.model import Finding
from subguard.evidence.analyze import analyze
from subguard.evidence.correlate import Declared
from subguard.scan.extraction import scan_repo
from tests.audit.conftest import ROOT

pytestmark = pytest.mark.slow

FIX = ROOT / "tests" / "fixtures" / "evidence"
LOGS = sorted(p.name for p in FIX.iterdir() if p.is_file())
REPO = FIX / "tagflip_repo"


def sources(spark: Any, names: Sequence[str]) -> list[E.Source]:
    from subguard.audit.job import FS

    fs = FS(spark)
    return [(fs.qualify(str(FIX / n)), n) for n in names]


def events_of(spark: Any, names: Sequence[str]) -> Any:
    srcs = sources(spark, names)
    return E.evidence_events(spark.read.text([uri for uri, _ in srcs]), srcs)


def declared_repo() -> list[Declared]:
    result = scan_repo(REPO, Config(), repo="tagflip")
    assert len(result.consumers) == 2
    return [Declared("tagflip", c) for c in result.consumers]


def consumers_frame(spark: Any, declared: Sequence[Declared]) -> Any:
    rows = [(d.prefix, d.consumer.group.value, d.consumer.model_dump_json()) for d in declared]
    return spark.createDataFrame(rows, "repo string, `group` string, json string")


def spark_findings(spark: Any, names: Sequence[str], declared: Sequence[Declared] = ()) -> list[Finding]:
    findings = spark.createDataFrame([], f"repo string, {T.FINDINGS}")
    rows = E.evidence_findings(events_of(spark, names), consumers_frame(spark, declared), findings).collect()
    return [Finding.model_validate_json(r.json) for r in rows]


def cli_findings(names: Sequence[str], declared: Sequence[Declared] = ()) -> list[Finding]:
    return list(analyze([str(FIX / n) for n in names], declared, workdir=str(FIX)).findings)


def key(f: Finding) -> str:
    return f.model_dump_json()


def same(a: Sequence[Finding], b: Sequence[Finding]) -> None:
    assert sorted(map(key, a)) == sorted(map(key, b))


@pytest.fixture()
def small_splits(spark: Any) -> Iterator[None]:
    """Files read in ~1 KiB splits, spread over several partitions."""
    before = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "1024")
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    yield
    spark.conf.set("spark.sql.files.maxPartitionBytes", before)
    spark.conf.unset("spark.sql.files.openCostInBytes")


def test_every_fixture_gives_the_cli_findings(spark: Any) -> None:
    assert "persistent_rocketmq_client.log.gz" in LOGS and len(LOGS) >= 7
    expected = cli_findings(LOGS)
    got = spark_findings(spark, LOGS)
    same(got, expected)
    rules = {f.rule for f in got}
    assert {"SG501", "SG502", "SG503", "SG504", "SG505", "SG506"} <= rules


def test_events_keep_the_cli_line_numbers_and_joined_records(spark: Any) -> None:
    from subguard.evidence.reader import EvidenceFile

    for name in (
        "seed004_broker.log",
        "seed000_rocketmq_client.log",
        "persistent_rocketmq_client.log.gz",
        "digg.consumerStatus.txt",
    ):
        rows = [r.asDict() for r in events_of(spark, [name]).collect()]
        cli = [e.to_dict() for e in EvidenceFile(str(FIX / name), name).events()]
        assert rows and [{k: r[k] for k in cli[0]} for r in sorted(rows, key=lambda r: r["line"])] == cli, name
        assert {r["file_index"] for r in rows} == {0}


def test_seed004_cadence_seed000_stack_traces_and_gzip(spark: Any) -> None:
    got = {
        f.rule: f
        for f in spark_findings(
            spark, ["seed004_broker.log", "seed000_rocketmq_client.log", "persistent_rocketmq_client.log.gz"]
        )
    }
    churn = dict(got["SG503"].properties)
    assert churn["changes"] == 8 and churn["cadence_s"] == 20 and churn["rebalance_loop"] is True
    assert (got["SG503"].location.path, got["SG503"].location.line) == ("seed004_broker.log", 4)  # a wrapped record
    assert dict(got["SG504"].properties) == {"refusals": 4, "bursts": 1, "sources": 1}  # stack-trace code 25
    assert got["SG504"].location.line == 5
    assert dict(got["SG505"].properties)["refusals"] == 150
    assert (got["SG505"].location.path, got["SG505"].location.line) == ("persistent_rocketmq_client.log.gz", 2)


def test_files_read_in_many_splits_give_the_same_findings(spark: Any, small_splits: None) -> None:
    names = ["flapping_broker.log", "seed004_broker.log", "seed000_rocketmq_client.log"]
    raw = spark.read.text([uri for uri, _ in sources(spark, names)])
    assert raw.rdd.getNumPartitions() >= 6  # several splits per file, records across split ends
    same(spark_findings(spark, names), cli_findings(names))


def test_flapping_log_against_the_tagflip_inventory_names_both_declaring_files(spark: Any) -> None:
    declared = declared_repo()
    got = spark_findings(spark, ["flapping_broker.log"], declared)
    same(got, cli_findings(["flapping_broker.log"], declared))
    (flap,) = [f for f in got if f.rule == "SG501"]
    text = flap.model_dump_json()
    assert "tagflip/worker_a.py" in text and "tagflip/worker_b.py" in text
    assert not [f for f in got if f.rule in ("SG507", "SG508")]
    assert sorted(f.group for f in got if f.rule == "SG509") == ["legacy-billing", "mixed-group"]


def test_mqadmin_against_the_inventory_and_only_named_groups_are_joined(spark: Any) -> None:
    declared = declared_repo()
    other = [
        Declared(
            "elsewhere",
            c.consumer.model_copy(update={"group": c.consumer.group.model_copy(update={"value": "not-live"})}),
        )
        for c in declared
    ]
    got = spark_findings(spark, ["tagflip.consumerConnection.txt"], [*declared, *other])
    same(got, cli_findings(["tagflip.consumerConnection.txt"], declared))
    assert [f.rule for f in got if f.rule == "SG507"] == ["SG507"]
    assert len([f for f in got if f.rule == "SG508"]) == 2
    assert "not-live" not in json.dumps([f.model_dump_json() for f in got])


def test_job_reads_evidence_files_and_folders_with_spark(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from subguard.audit import job

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "flapping_broker.log").write_bytes((FIX / "flapping_broker.log").read_bytes())
    (logs / "nested").mkdir()
    (logs / "nested" / "persistent_rocketmq_client.log.gz").write_bytes(
        (FIX / "persistent_rocketmq_client.log.gz").read_bytes()
    )
    monkeypatch.chdir(tmp_path)
    declared = declared_repo()
    static = spark.createDataFrame([], f"repo string, {T.FINDINGS}")
    said: list[str] = []
    # a folder and a file inside it: every file is read once, named relative to the working directory
    # (absolute paths: the JVM resolves relative ones against its own working directory)
    df = job.evidence_findings(
        spark, [str(logs), str(logs / "flapping_broker.log")], consumers_frame(spark, declared), static, said.append
    )
    rows = [r.asDict() for r in df.collect()]
    got = [Finding.model_validate_json(r["json"]) for r in rows]
    files = ["logs/flapping_broker.log", "logs/nested/persistent_rocketmq_client.log.gz"]
    same(got, list(analyze(files, declared, workdir=str(tmp_path)).findings))
    (flap,) = [r for r in rows if r["rule"] == "SG501"]
    assert flap["path"] == "logs/flapping_broker.log" and flap["line"] > 0 and flap["repo"] == "" and flap["scope"]
    assert "tagflip/worker_a.py" in flap["json"] and "tagflip/worker_b.py" in flap["json"]
    (persist,) = [r for r in rows if r["rule"] == "SG505" and r["group"] == "order-group"]
    assert (persist["path"], persist["line"]) == ("logs/nested/persistent_rocketmq_client.log.gz", 2)
    assert sorted(r["group"] for r in rows if r["rule"] == "SG509") == ["legacy-billing", "mixed-group", "order-group"]
    assert said and "evidence" in said[0]
    with pytest.raises(SourceError, match="not found"):
        job.evidence_findings(
            spark, [str(tmp_path / "nope.log")], consumers_frame(spark, declared), static, said.append
        )


def test_audit_run_names_both_declaring_files_of_the_flapping_group(spark: Any, tmp_path: Path) -> None:
    from tests.audit.conftest import run

    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(f"- {{name: tagflip, path: {REPO}}}\n")
    out = tmp_path / "out"
    run(spark, [str(inventory)], out, evidence=(str(FIX / "flapping_broker.log"),), formats=("parquet",))
    rows = [r.asDict() for r in spark.read.parquet(str(out / "findings")).collect()]
    (flap,) = [r for r in rows if r["rule"] == "SG501"]
    assert flap["group"] == "tagflip-group" and flap["path"].endswith("flapping_broker.log") and flap["line"] == 6
    assert "tagflip/worker_a.py" in flap["json"] and "tagflip/worker_b.py" in flap["json"]
    assert sorted(r["group"] for r in rows if r["rule"] == "SG509") == ["legacy-billing", "mixed-group"]
