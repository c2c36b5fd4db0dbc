"""`subguard simulate`: JSON shape, text tables, one-line errors with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from subguard.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "seed002-tags-race.yaml"


def test_json_has_the_documented_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(EXAMPLE), "--runs", "40", "--seed", "9", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["runs"] == 40
    received = data["consumers"]["consumer1"]["received"]
    assert set(received) == {"mean", "min", "max", "histogram"} and sum(received["histogram"].values()) == 40
    assert {"sent", "delivered_mean", "lost_mean", "loss_rate"} <= set(data["tags"]["tag1"])
    assert {"subscription_not_latest", "offset_moved", "subscription_not_exist"} <= set(data["events"])
    assert sum(w["runs"] for w in data["winners"].values()) == 40


def test_same_seed_same_output(capsys: pytest.CaptureFixture[str]) -> None:
    main(["simulate", str(EXAMPLE), "--runs", "10", "--seed", "4", "--format", "json"])
    first = capsys.readouterr().out
    main(["simulate", str(EXAMPLE), "--runs", "10", "--seed", "4", "--format", "json"])
    assert capsys.readouterr().out == first


def test_text_shows_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(EXAMPLE), "--runs", "5"]) == 0
    out = capsys.readouterr().out
    assert "consumers" in out and "loss rate" in out and "consumer2" in out


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (
            "topics: {T: 4}\nmembers: [{name: a, subscriptions: {T: x}, message_model: BOTH}]\nmessages: [{count: 1}]\n",
            "members.0.message_model",
        ),
        (
            "topics: {T: 4}\nmembers: [{name: a, subscriptions: {U: x}}]\nmessages: [{count: 1}]\n",
            "members.0.subscriptions.U",
        ),
        (
            "topics: {T: 4}\nmembers: [{name: a, subscriptions: {T: '||'}}]\nmessages: [{count: 1}]\n",
            "members.0.subscriptions.T",
        ),
        (
            "topics: {T: 4}\nmembers: [{name: a, subscriptions: {T: x}, start: soon}]\nmessages: [{count: 1}]\n",
            "members.0.start",
        ),
        ("topics: {T: 4}\nmembers: [{name: a, subscriptions: {T: x}}]\nmessages: [{tag: x}]\n", "messages.0"),
        ("topics: {T: 4}\nmembers: [{name: a, subscriptions: {T: x}}]\nmessages: [{count: 1}]\nbogus: 1\n", "bogus"),
        ("- just a list\n", "(top level)"),
    ],
)
def test_invalid_scenario_exits_2_with_one_line_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, key: str
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    assert main(["simulate", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and key in err


def _python_consumer(path: Path, group: str, topic: str, tags: str) -> None:
    """A rocketmq-client-python 2.x consumer file that subscribes `topic` with `tags` and starts."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'from rocketmq.client import PushConsumer\n\nc = PushConsumer("{group}")\n'
        f'c.subscribe("{topic}", callback, "{tags}")\nc.start()\n'
    )


def test_inventory_simulates_every_scanned_group(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, tag in (("a.py", "tag1"), ("b.py", "tag2")):
        _python_consumer(tmp_path / name, "orders-group", "orders", tag)
    assert main(["simulate", "--inventory", str(tmp_path), "--runs", "4", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (row,) = data["groups"]
    assert row["group"] == "orders-group" and row["members"] == 2
    # C++-based clients filter with their own expression: each loses the other tag in its queues
    assert set(row["loss"]) == {"tag1", "tag2"} and all(0.3 < r < 0.7 for r in row["loss"].values())
    assert data["internal_errors"] == []


def test_inventory_self_check_agrees_on_a_consistent_group(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("a.py", "b.py"):
        _python_consumer(tmp_path / name, "orders-group", "orders", "tag1||tag2")
    assert main(["simulate", "--inventory", str(tmp_path), "--runs", "4", "--format", "json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["groups"][0]["loss"] == {} or all(r == 0 for r in data["groups"][0]["loss"].values())
    assert data["internal_errors"] == [] and "internal error" not in captured.err


def test_inventory_of_an_empty_tree_is_an_error(tmp_path: Path) -> None:
    assert main(["simulate", "--inventory", str(tmp_path)]) == 2


def test_inventory_keeps_samples_apart_as_check_judges_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two sample scripts in two folders share a group name but never run together: two rows, each
    without loss, and no self-check error (check judges them apart too)."""
    for folder, tag in (("grpc", "tag1"), ("remoting", "tag2")):
        _python_consumer(tmp_path / "examples" / folder / "consumer.py", "demo-group", "orders", tag)
    assert main(["simulate", "--inventory", str(tmp_path), "--runs", "4", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(r["group"], r["sample"], r["members"], r["loss"]) for r in data["groups"]] == [
        ("demo-group", "examples/grpc", 1, {}),
        ("demo-group", "examples/remoting", 1, {}),
    ]
    assert data["internal_errors"] == []
    assert main(["simulate", "--inventory", str(tmp_path), "--runs", "4"]) == 0
    assert "demo-group (1 consumers, sample examples/grpc): no predicted loss" in capsys.readouterr().out


def test_inventory_text_shows_paths_as_check_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The impact line cites the member that receives nothing relative to the working directory (as
    `check` shows it); JSON keeps it relative to the scanned root."""
    root = tmp_path / "shop"
    java = root / "billing/src/main/java/acme/Billing.java"
    java.parent.mkdir(parents=True)
    java.write_text(
        "package acme;\nimport org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;\n"
        "public class Billing {\n    public static void main(String[] a) throws Exception {\n"
        '        DefaultMQPushConsumer c = new DefaultMQPushConsumer("g");\n'
        '        c.subscribe("T", "created||refunded");\n        c.start();\n    }\n}\n'
    )
    for name in ("a.py", "b.py"):  # the shape of examples/org GID_ORDER_EVENTS: two Python members, one Java
        _python_consumer(root / "orders" / name, "g", "T", "created||paid")
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "--inventory", "shop", "--runs", "20"]) == 0
    text = capsys.readouterr().out
    assert main(["simulate", "--inventory", "shop", "--runs", "20", "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)["groups"][0]["summary"]
    cited = "billing/src/main/java/acme/Billing.java:5"
    assert f"consumer {cited} receives nothing" in summary, summary
    assert f"consumer shop/{cited} receives nothing" in text, text
