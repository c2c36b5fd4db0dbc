"""Python extractor over the fixture repos in tests/fixtures/python (real files, real libcst)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from subguard.core.config import Config
from subguard.core.inventory import sort_consumers, subscription_rows
from subguard.core.model import ClientFamily, Consumer, FileStatus, Resolution
from subguard.extract.python.extractor import EXTRACTOR
from subguard.scan.extraction import ScanResult, scan_repo

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "python"


@cache
def scan(repo: str) -> ScanResult:
    return scan_repo(FIXTURES / repo, Config(), repo=repo, extractors=[EXTRACTOR])


def rows(repo: str) -> list[dict[str, object]]:
    return subscription_rows(sort_consumers(scan(repo).consumers))


def consumer(repo: str, consumer_id: str) -> Consumer:
    found = [c for c in scan(repo).consumers if c.consumer_id == consumer_id]
    assert len(found) == 1, [c.consumer_id for c in scan(repo).consumers]
    return found[0]


N4, O4, G5 = "python-native-4x", "python-rocketmq-0.4", "python-grpc-5x"
CL, BC, CC, OR = "CLUSTERING", "BROADCASTING", "CONCURRENTLY", "ORDERLY"

# repo, path, line, column, group, topic, expression, type, model, client, consume mode
CASES = [
    (
        "shop",
        "billing/grpc_consumer.py",
        13,
        9,
        "GID_billing",
        "invoices",
        "amount > 100 AND currency = 'EUR'",
        "SQL92",
        CL,
        G5,
        CC,
    ),
    ("shop", "billing/grpc_consumer.py", 14, 9, "GID_billing", "credit_notes", "issued||voided", "TAG", CL, G5, CC),
    ("shop", "billing/grpc_consumer.py", 17, 18, "GID_billing", "disputes", "opened", "TAG", CL, G5, CC),
    ("shop", "billing/grpc_consumer.py", 18, 18, "GID_billing", "chargebacks", "*", "TAG", CL, G5, CC),
    ("shop", "billing/grpc_consumer.py", 28, 13, "GID_ledger", "ledger", "*", "TAG", CL, G5, CC),
    ("shop", "billing/grpc_consumer.py", 38, 23, "GID_kw", "settlements", "a||b", "TAG", CL, G5, CC),
    ("shop", "billing/legacy.py", 5, 83, "GID_legacy", "audit", "x > 1", "SQL92", CL, G5, CC),
    ("shop", "billing/more5.py", 6, 14, "GID_more5", "sql_int", "a = 1", "SQL92", CL, G5, CC),
    ("shop", "billing/more5.py", 7, 14, "GID_more5", "none_filter", "*", "TAG", CL, G5, CC),
    ("shop", "billing/more5.py", 8, 14, "GID_more5", "plain_string", "p1||p2", "TAG", CL, G5, CC),
    ("shop", "misc/aliases.py", 11, 19, "GID_metrics", "metrics", "cpu", "TAG", BC, N4, CC),
    ("shop", "misc/aliases.py", 18, 24, "GID_env", None, "gid_tag", "TAG", CL, N4, CC),
    ("shop", "misc/aliases.py", 24, 19, None, "dyn_topic", " ", "TAG", CL, N4, CC),
    ("shop", "misc/more.py", 17, 21, "GID_with", "with_topic", "w1", "TAG", CL, N4, CC),
    ("shop", "misc/more.py", 24, 17, "GID_second", "reassigned_topic", "*", "TAG", CL, N4, CC),
    ("shop", "misc/more.py", 26, 17, "GID_third", "third_topic", "t3", "TAG", CL, N4, CC),
    ("shop", "misc/more.py", 31, 23, "GID_joined", "joined_topic", "J", "TAG", BC, N4, CC),
    ("shop", "misc/more.py", 34, 23, "GID_renamed", "renamed_topic", "r1||r2||r1", "TAG", CL, N4, OR),
    ("shop", "misc/more.py", 39, 17, None, None, None, "TAG", CL, N4, CC),
    ("shop", "misc/star.py", 4, 16, "GID_star", "star_topic", "TagA||TagB", "TAG", CL, N4, CC),
    ("shop", "misc/star.py", 5, 22, "GID_star", "other_topic", "*", "TAG", CL, N4, CC),
    ("shop", "misc/sub/deep.py", 6, 16, "GID_deep", "deep_topic", "d1 ||d2", "TAG", CL, N4, CC),
    ("shop", "orders/consumer.py", 15, 20, "GID_orders", "dev_orders", "created || paid", "TAG", CL, N4, CC),
    ("shop", "orders/consumer.py", 16, 20, "GID_orders", "payments", "paid", "TAG", CL, N4, CC),
    ("shop", "orders/consumer.py", 17, 20, "GID_orders", "refunds", "*", "TAG", CL, N4, CC),
    ("shop", "orders/consumer.py", 23, 27, "GID_orders_audit", "dev_orders", "*", "TAG", BC, N4, CC),
    ("shop", "orders/factory.py", 13, 21, None, "inventory", "*", "TAG", CL, N4, CC),
    ("shop", "orders/late_binding.py", 11, 22, "GID_dev_shared", "refunds_v2", "refund", "TAG", CL, N4, CC),
    ("shop", "orders/late_binding.py", 12, 22, "GID_dev_shared", "stock_changes", "in||out", "TAG", CL, N4, CC),
    ("shop", "orders/late_binding.py", 22, 27, "GID_auditor", "billing_invoices", "Aa||BB", "TAG", CL, N4, CC),
    ("shop", "orders/main.py", 5, 40, "GID_reports", "reports", "daily||weekly", "TAG", CL, N4, CC),
    ("shop", "orders/main.py", 6, 56, "GID_orders_alerts", "alerts", "*", "TAG", CL, N4, CC),
    ("shop", "orders/main.py", 10, 38, "GID_late", "late", "*", "TAG", CL, N4, CC),
    ("shop", "orders/main.py", 11, 20, "GID_late", "late_retry", "retry", "TAG", CL, N4, CC),
    ("shop", "orders/worker.py", 17, 33, "GID_shipping", "dev_tracking", "shipped||delivered", "TAG", CL, N4, OR),
    ("legacy04", "app/pull.py", 9, 24, "GID_pull", "TopicTest", "TagA||TagB", "TAG", CL, O4, CC),
    ("legacy04", "app/pull.py", 11, 24, "GID_pull", "second_topic", "*", "TAG", CL, O4, CC),
    ("legacy04", "app/pull.py", 22, 26, "GID_push04_a", "push_topic", "x||y", "TAG", CL, O4, CC),
    ("undecided", "consumer.py", 5, 13, "GID_undecided", "t1", "B", "TAG", CL, N4, CC),
    ("undecided", "consumer.py", 6, 13, "GID_undecided", "t2", "*", "TAG", CL, N4, CC),
]


@pytest.mark.parametrize("repo,path,line,column,group,topic,expression,etype,model,client,mode", CASES)
def test_subscription_table(
    repo: str,
    path: str,
    line: int,
    column: int,
    group: str | None,
    topic: str | None,
    expression: str | None,
    etype: str,
    model: str,
    client: str,
    mode: str,
) -> None:
    matches = [r for r in rows(repo) if r["path"] == path and r["line"] == line]
    assert len(matches) == 1, f"{path}:{line} -> {[(r['path'], r['line']) for r in rows(repo)]}"
    row = matches[0]
    assert (row["group"], row["topic"], row["expression"], row["expression_type"]) == (group, topic, expression, etype)
    assert (row["message_model"], row["client"], row["consume_mode"], row["column"]) == (model, client, mode, column)


def test_every_row_is_in_the_table() -> None:
    listed = {(c[0], c[1], c[2]) for c in CASES}
    found = {(repo, r["path"], r["line"]) for repo in ("shop", "legacy04", "undecided") for r in rows(repo)}
    assert found == listed


def test_tags_follow_broker_parse() -> None:
    by_topic = {r["topic"]: r for r in rows("shop") if r["consumer_id"] != "orders/consumer.py::start_audit:audit"}
    assert by_topic["dev_orders"]["tags"] == ["created", "paid"]
    assert by_topic["renamed_topic"]["tags"] == ["r1", "r2"]  # duplicates dropped, order kept
    assert by_topic["deep_topic"]["tags"] == ["d1", "d2"]
    assert by_topic["dyn_topic"]["tags"] == []  # " " delivers nothing: no tag
    assert by_topic["invoices"]["tags"] == []  # SQL92


def test_resolution_kinds_and_details() -> None:
    c = consumer("shop", "orders/consumer.py::consumer")
    assert c.group.resolution is Resolution.IMPORTED_CONSTANT and c.group.detail == "orders.config.GROUP_ORDERS"
    first = c.subscriptions[0]
    assert first.topic.resolution is Resolution.ENV_DEFAULT and first.topic.detail == "APP_ENV"
    assert first.expression.resolution is Resolution.IMPORTED_CONSTANT
    assert c.subscriptions[2].expression.resolution is Resolution.DEFAULT
    assert c.name_server is not None and c.name_server.value == "10.0.0.1:9876;10.0.0.2:9876"
    assert c.name_server.resolution is Resolution.ENV_DEFAULT and c.name_server.detail == "NAMESRV_ADDR"
    env = consumer("shop", "misc/aliases.py::from_env:consumer")
    assert env.group.resolution is Resolution.ENV_DEFAULT and env.group.detail == "METRICS_GROUP"
    assert env.subscriptions[0].topic.value is None
    assert "METRICS_TOPIC" in env.subscriptions[0].topic.detail
    assert env.subscriptions[0].expression.resolution is Resolution.CONSTANT
    metrics = consumer("shop", "misc/aliases.py::aliased")
    assert metrics.group.resolution is Resolution.CONSTANT and metrics.group.detail == "PREFIX"
    assert metrics.message_model.resolution is Resolution.LITERAL
    assert metrics.consume_mode.value == "CONCURRENTLY" and metrics.consume_mode.resolution is Resolution.LITERAL


def test_dynamic_values_say_why() -> None:
    dyn = consumer("shop", "misc/aliases.py::dynamic:dyn")
    assert dyn.group.resolution is Resolution.DYNAMIC
    assert dyn.group.detail == "parameter 'group_name' of function dynamic"
    unknowns = consumer("shop", "misc/more.py::unknowns:u")
    assert unknowns.group.detail == "environment variable NO_DEFAULT_GROUP without a default"
    sub = unknowns.subscriptions[0]
    assert sub.topic.detail.startswith("conditional expression")
    assert "FLAKY" in sub.expression.detail and "2 times" in sub.expression.detail


def test_duplicate_subscribe_goes_to_overridden() -> None:
    c = consumer("undecided", "consumer.py::c")
    assert [(s.topic.value, s.expression.value) for s in c.subscriptions] == [("t1", "B"), ("t2", "*")]
    assert [(s.topic.value, s.expression.value, s.location.line) for s in c.overridden] == [("t1", "A", 4)]
    metrics = consumer("shop", "misc/aliases.py::aliased")
    assert [s.expression.value for s in metrics.overridden] == ["cpu||mem"]


def test_pull_consumer_keeps_each_pull() -> None:
    c = consumer("legacy04", "app/pull.py::puller")
    assert c.client is ClientFamily.PYTHON_ROCKETMQ_04
    assert [s.topic.value for s in c.subscriptions] == ["TopicTest", "second_topic"]
    assert c.overridden == ()


def test_family_detection_and_note() -> None:
    undecided = consumer("undecided", "consumer.py::c")
    assert undecided.client is ClientFamily.PYTHON_NATIVE_4X
    assert any("rocketmq-client-python" in n and "0.4" in n for n in undecided.notes)
    # requirements.txt names rocketmq-client-python: decided, no note
    star = consumer("shop", "misc/star.py::star")
    assert star.client is ClientFamily.PYTHON_NATIVE_4X and not any("assumed" in n for n in star.notes)
    pusher = [c for c in scan("legacy04").consumers if c.consumer_id.startswith("app/pull.py::Pusher.c")]
    assert len(pusher) == 1 and pusher[0].client is ClientFamily.PYTHON_ROCKETMQ_04


def test_class_based_consumer_across_methods() -> None:
    c = consumer("shop", "orders/worker.py::ShippingWorker.consumer")
    assert c.location.line == 13 and c.location.path == "orders/worker.py"
    assert c.consume_mode.value == "ORDERLY"
    assert c.message_model.value == "CLUSTERING" and c.message_model.resolution is Resolution.LITERAL
    assert c.group.resolution is Resolution.ENV_DEFAULT and c.group.detail == "SHIPPING_GROUP"


def test_factory_gives_one_consumer_per_call_site() -> None:
    made = sorted(
        c.consumer_id for c in scan("shop").consumers if c.consumer_id.startswith("orders/factory.py::make_consumer")
    )
    assert made == [
        "orders/factory.py::make_consumer:c@orders/main.py::<module>#1",
        "orders/factory.py::make_consumer:c@orders/main.py::<module>#2",
        "orders/factory.py::make_consumer:c@orders/main.py::extra#1",
    ]
    late = consumer("shop", made[2])
    assert late.location.path == "orders/main.py" and late.location.line == 10
    assert [s.topic.value for s in late.subscriptions] == ["late", "late_retry"]
    alerts = consumer("shop", made[1])
    assert alerts.group.resolution is Resolution.IMPORTED_CONSTANT
    assert any("factory make_consumer" in n for n in alerts.notes)


def test_grpc_client_configuration() -> None:
    c = consumer("shop", "billing/grpc_consumer.py::simple")
    assert c.name_server is not None and c.name_server.value == "proxy.mq.internal:8081"
    assert c.namespace is not None and c.namespace.value == "billing-prod"
    assert c.namespace.resolution is Resolution.IMPORTED_CONSTANT
    assert c.message_model.resolution is Resolution.DEFAULT
    more = consumer("shop", "billing/more5.py::sc")
    assert more.namespace is not None and more.namespace.value == "ns-more"
    assert any("plain string" in n for n in more.notes)


def test_instance_name_and_ids_are_line_free() -> None:
    audit = consumer("shop", "orders/consumer.py::start_audit:audit")
    assert audit.instance_name is not None and audit.instance_name.value == "audit-1"
    assert audit.location.line == 21
    ids = [c.consumer_id for repo in ("shop", "legacy04", "undecided") for c in scan(repo).consumers]
    assert len(ids) == len(set(ids))
    assert "misc/more.py::reassigned:c#1" in ids and "misc/more.py::reassigned:c#2" in ids


def test_files_loaded_for_resolution_are_parsed_records() -> None:
    files = {f.path: f for f in scan("shop").files}
    assert files["orders/config.py"].status is FileStatus.PARSED
    assert files["orders/config.py"].reason == "loaded to resolve imported constants"
    assert files["orders/main.py"].reason == "loaded to find factory call sites"
    assert files["misc/consts.py"].status is FileStatus.PARSED
    assert files["orders/__init__.py"].status is FileStatus.SKIPPED
