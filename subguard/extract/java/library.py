"""Constants of the RocketMQ client jars that name groups and topics (`MixAll.*`, `TopicValidator.*`).

Code that writes `MixAll.DEFAULT_CONSUMER_GROUP` or `TopicValidator.RMQ_SYS_TRACE_TOPIC` reads a value
from a jar, not from the scanned repository. Values read from apache/rocketmq at commit 8fc57f1
(rocketmq-all 5.3.x); the same values since 4.x for every entry here (TopicValidator since 4.7.0).
Only used when the class cannot be found in the scanned tree (the RocketMQ repository itself
resolves its own sources).
"""

from __future__ import annotations

MIXALL = "common/src/main/java/org/apache/rocketmq/common/MixAll.java"
TOPIC_VALIDATOR = "common/src/main/java/org/apache/rocketmq/common/topic/TopicValidator.java"

# simple class name -> (packages it is imported from, source file, {constant: value})
LIBRARY_CONSTANTS: dict[str, tuple[tuple[str, ...], str, dict[str, str]]] = {
    "MixAll": (
        ("org.apache.rocketmq.common",),
        MIXALL,
        {
            "DEFAULT_PRODUCER_GROUP": "DEFAULT_PRODUCER",
            "DEFAULT_CONSUMER_GROUP": "DEFAULT_CONSUMER",
            "TOOLS_CONSUMER_GROUP": "TOOLS_CONSUMER",
            "SCHEDULE_CONSUMER_GROUP": "SCHEDULE_CONSUMER",
            "FILTERSRV_CONSUMER_GROUP": "FILTERSRV_CONSUMER",
            "MONITOR_CONSUMER_GROUP": "__MONITOR_CONSUMER",
            "CLIENT_INNER_PRODUCER_GROUP": "CLIENT_INNER_PRODUCER",
            "SELF_TEST_PRODUCER_GROUP": "SELF_TEST_P_GROUP",
            "SELF_TEST_CONSUMER_GROUP": "SELF_TEST_C_GROUP",
            "ONS_HTTP_PROXY_GROUP": "CID_ONS-HTTP-PROXY",
            "CID_ONSAPI_PERMISSION_GROUP": "CID_ONSAPI_PERMISSION",
            "CID_ONSAPI_OWNER_GROUP": "CID_ONSAPI_OWNER",
            "CID_ONSAPI_PULL_GROUP": "CID_ONSAPI_PULL",
            "CID_RMQ_SYS_PREFIX": "CID_RMQ_SYS_",
            "RETRY_GROUP_TOPIC_PREFIX": "%RETRY%",
            "DLQ_GROUP_TOPIC_PREFIX": "%DLQ%",
            "REPLY_TOPIC_POSTFIX": "REPLY_TOPIC",
            "LMQ_PREFIX": "%LMQ%",
        },
    ),
    "TopicValidator": (
        ("org.apache.rocketmq.common.topic",),
        TOPIC_VALIDATOR,
        {
            "AUTO_CREATE_TOPIC_KEY_TOPIC": "TBW102",
            "RMQ_SYS_SCHEDULE_TOPIC": "SCHEDULE_TOPIC_XXXX",
            "RMQ_SYS_BENCHMARK_TOPIC": "BenchmarkTest",
            "RMQ_SYS_TRANS_HALF_TOPIC": "RMQ_SYS_TRANS_HALF_TOPIC",
            "RMQ_SYS_TRACE_TOPIC": "RMQ_SYS_TRACE_TOPIC",
            "RMQ_SYS_TRANS_OP_HALF_TOPIC": "RMQ_SYS_TRANS_OP_HALF_TOPIC",
            "RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC": "TRANS_CHECK_MAX_TIME_TOPIC",
            "RMQ_SYS_SELF_TEST_TOPIC": "SELF_TEST_TOPIC",
            "RMQ_SYS_OFFSET_MOVED_EVENT": "OFFSET_MOVED_EVENT",
            "RMQ_SYS_ROCKSDB_OFFSET_TOPIC": "CHECKPOINT_TOPIC",
            "SYSTEM_TOPIC_PREFIX": "rmq_sys_",
            "SYNC_BROKER_MEMBER_GROUP_PREFIX": "rmq_sys_SYNC_BROKER_MEMBER_",
        },
    ),
}


def library_constant(
    owner: str, name: str, imports: tuple[str, ...], wildcards: tuple[str, ...]
) -> tuple[str, str] | None:
    """(value, "Class.NAME from <source file>") for a RocketMQ library constant, else None. `owner` is the
    class as written (simple or qualified); a simple name must be imported from the library package
    (explicitly or by wildcard)."""
    simple = owner.rsplit(".", 1)[-1]
    entry = LIBRARY_CONSTANTS.get(simple)
    if entry is None or name not in entry[2]:
        return None
    packages, source, values = entry
    if "." in owner:
        ok = owner.rsplit(".", 1)[0] in packages
    else:
        ok = any(f"{p}.{simple}" in imports for p in packages) or any(p in wildcards for p in packages)
    return (values[name], f"{simple}.{name} (RocketMQ library constant, {source})") if ok else None
