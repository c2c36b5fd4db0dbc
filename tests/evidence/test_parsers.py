"""Line and table parsers against the exact RocketMQ formats (seeds 000/004 and the source)."""

from __future__ import annotations

from subguard.evidence import parse_line
from subguard.evidence.formats import CLIENT_LOG, CONSUMER_CONNECTION, CONSUMER_PROGRESS, CONSUMER_STATUS, detect
from subguard.evidence.logline import split_header
from subguard.evidence.mqadmin import parse_mqadmin

SUB = (
    "SubscriptionData [classFilterMode=false, topic=T, subString={s}, tagsSet=[{t}], codeSet=[1], "
    "subVersion={v}, expressionType=TAG]"
)


def test_seed004_offset_lines() -> None:
    small = parse_line(
        "2019-01-18 19:24:01 INFO PullMessageThread_49 - the request offset too small. group=digg-group, "
        "topic=digg-topic, requestOffset=156798, brokerMinOffset=172289, clientIp=/10.1.2.3:54437"
    )
    moved = parse_line(
        "2019-01-18 19:24:01 WARN PullMessageThread_49 - PULL_OFFSET_MOVED:correction offset. topic=digg-topic, "
        "groupId=digg-group, requestOffset=156798, newOffset=172289, suggestBrokerId=0"
    )
    assert small is not None and moved is not None
    assert (small["kind"], small["group"], small["request_offset"], small["broker_offset"], small["client"]) == (
        "offset_too_small",
        "digg-group",
        156798,
        172289,
        "10.1.2.3:54437",
    )
    assert (moved["kind"], moved["group"], moved["topic"], moved["broker_offset"]) == (
        "offset_moved",
        "digg-group",
        "digg-topic",
        172289,
    )
    assert moved["ts"] == small["ts"]


def test_no_queue_data_is_an_offset_move() -> None:
    """PullMessageProcessor's other PULL_OFFSET_MOVED path (NO_MATCHED_LOGIC_QUEUE / NO_MESSAGE_IN_QUEUE)."""
    row = parse_line(
        "2024-05-02 08:00:03 INFO PullMessageThread_3 - the broker store no queue data, fix the request offset "
        "8812 to 0, Topic: price-topic QueueId: 2 Consumer Group: price-cache"
    )
    assert row is not None
    assert (row["kind"], row["group"], row["topic"], row["request_offset"], row["broker_offset"], row["queue_id"]) == (
        "offset_moved",
        "price-cache",
        "price-topic",
        8812,
        0,
        2,
    )


def test_subscription_changed_old_new() -> None:
    line = (
        "2024-03-01 10:00:20 INFO ClientManageThread_3 - subscription changed, group: g1 OLD: "
        + SUB.format(s="tag1 || tag2", t="tag2, tag1", v=1)
        + " NEW: "
        + SUB.format(s="tag3", t="tag3", v=2)
    )
    row = parse_line(line)
    assert row is not None
    assert (row["kind"], row["group"], row["topic"]) == ("sub_changed", "g1", "T")
    assert (row["old_expression"], row["old_tags"], row["old_sub_version"]) == ("tag1 || tag2", "tag1||tag2", 1)
    assert (row["expression"], row["tags"], row["sub_version"], row["expression_type"]) == ("tag3", "tag3", 2, "TAG")


def test_remove_and_add_topic_and_code24() -> None:
    removed = parse_line(
        "2024-03-01 10:00:30 WARN ClientManageThread_5 - subscription changed, group: g remove topic Audit "
        + SUB.format(s="*", t="", v=5)
    )
    added = parse_line(
        "2024-03-01 10:00:31 INFO ClientManageThread_5 - subscription changed, add new topic, group: g "
        + SUB.format(s="*", t="", v=6)
    )
    missing = parse_line(
        "2024-03-01 10:00:32 WARN PullMessageThread_1 - the consumer's subscription not exist, group: g, topic:Audit"
    )
    assert removed and removed["kind"] == "topic_removed" and removed["topic"] == "Audit"
    assert added and added["kind"] == "sub_added" and added["sub_version"] == 6
    assert missing and (missing["kind"], missing["code"], missing["topic"]) == ("sub_not_exist", 24, "Audit")


def test_code25_wordings() -> None:
    broker = parse_line(
        "2024-03-01 10:00:10 WARN PullMessageThread_7 - The broker's subscription is not latest, group: g tag1"
    )
    v52 = parse_line(
        "2024-03-01 10:00:01.120 WARN  [4242] [NettyClientPublicExecutor_3] [c.i.c.DefaultMQPushConsumerImpl#onException:439]"
        " - the subscription is not latest, group=g, messageQueue=MessageQueue [topic=T, brokerName=broker-a, queueId=3]"
    )
    soft = parse_line(
        "16:51:43.778 [NettyClientPublicExecutor_2] WARN  RocketmqClient - consumer:g execute the pull request, "
        "code:25, message:the consumer's subscription not latest, (might be ok if at rebalancing)"
    )
    trace = parse_line(
        "org.apache.rocketmq.client.exception.MQBrokerException: CODE: 25  DESC: the consumer's subscription not latest"
    )
    assert broker and (broker["side"], broker["group"], broker["expression"]) == ("broker", "g", "tag1")
    assert v52 and (v52["side"], v52["group"], v52["topic"], v52["queue_id"]) == ("client", "g", "T", 3)
    assert soft and soft["group"] == "g" and soft["ts"] == 16 * 3600 + 51 * 60 + 43.778
    assert trace and trace["kind"] == "not_latest" and trace["ts"] is None and trace["group"] == ""


def test_irrelevant_and_garbled_lines() -> None:
    assert (
        parse_line("2024-03-01 10:00:10 INFO BrokerControllerScheduledThread1 - dispatch behind commit log 0 bytes")
        is None
    )
    assert parse_line("\x00\x01 binary") is None
    assert parse_line("") is None
    assert split_header("2024-13-45 99:00:00 INFO t - subscription") == (None, "subscription")


def test_connected_and_expired() -> None:
    conn = parse_line(
        "2024-03-01 10:00:00 INFO ClientManageThread_1 - new consumer connected, group: g CONSUME_PASSIVELY BROADCASTING "
        "channel: ClientChannelInfo [channel=[id: 0x1a, L:/10.0.0.5:10911 - R:/10.0.1.7:54437], clientId=10.0.1.7@DEFAULT, "
        "language=JAVA, version=399, lastUpdateTimestamp=1]"
    )
    gone = parse_line(
        "2024-03-01 10:02:00 WARN ClientManageService_1 - SCAN: remove expired channel from ConsumerManager consumerTable. "
        "channel=10.0.1.8:40122, consumerGroup=g"
    )
    assert conn and (conn["kind"], conn["client"], conn["message_model"]) == (
        "connected",
        "10.0.1.7@DEFAULT",
        "BROADCASTING",
    )
    assert gone and (gone["kind"], gone["group"], gone["client"]) == ("channel_expired", "g", "10.0.1.8:40122")
    for spelling in ("unregister", "ungister"):  # the older brokers' spelling too
        removed = parse_line(
            f"2024-03-01 10:03:00 INFO NettyEventExecutor - {spelling} consumer ok, no any connection, "
            "and remove consumer group, g"
        )
        assert removed and (removed["kind"], removed["group"]) == ("group_removed", "g")


def test_mqadmin_consumer_connection() -> None:
    text = """$ sh mqadmin consumerConnection -n ns:9876 -g my-group
#ClientId                            #ClientAddr            #Language  #Version
10.0.1.7@4711#1                      10.0.1.7:54437         JAVA       V4_9_4

Below is subscription:
#Topic               #SubExpression
TopicA               tag1 || tag2
a-topic-name-longer-than-twenty tag9

ConsumeType: CONSUME_PASSIVELY
MessageModel: BROADCASTING
ConsumeFromWhere: CONSUME_FROM_LAST_OFFSET
"""
    lines = text.splitlines()
    assert detect("x.txt", lines) == CONSUMER_CONNECTION
    got = [
        (e.kind, e.group, e.topic, e.expression, e.client, e.message_model) for e in parse_mqadmin(enumerate(lines, 1))
    ]
    assert got == [
        ("live_client", "my-group", "", None, "10.0.1.7@4711#1", ""),
        ("live_subscription", "my-group", "TopicA", "tag1 || tag2", "", ""),
        ("live_subscription", "my-group", "a-topic-name-longer-than-twenty", "tag9", "", ""),
        ("group_info", "my-group", "", None, "", "BROADCASTING"),
    ]


def test_mqadmin_status_and_progress_detection() -> None:
    assert detect("s.txt", ["#Consumer Properties#", "consumerGroup : g"]) == CONSUMER_STATUS
    assert detect("p.txt", ["#Group  #Count  #Version  #Type  #Model  #TPS  #Diff Total"]) == CONSUMER_PROGRESS
    assert detect("rocketmq_client.log", ["2024-01-01 00:00:00,000 INFO RocketmqClient - x"]) == CLIENT_LOG
    rows = [
        "#Topic                   #Broker Name  #QID  #Broker Offset  #Consumer Offset  #Client IP  #Diff  #Inflight  #LastTime",
        "T                        broker-a      3     100             40                10.0.0.1    60     0          N/A",
    ]
    (event,) = parse_mqadmin(enumerate(rows, 1), "g")
    assert (event.kind, event.group, event.queue_id, event.broker_offset, event.request_offset, event.client) == (
        "queue_progress",
        "g",
        3,
        100,
        40,
        "10.0.0.1",
    )
