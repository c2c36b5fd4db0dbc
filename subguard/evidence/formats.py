"""Which kind of evidence a file holds, from its name and its first lines."""

from __future__ import annotations

from collections.abc import Sequence

BROKER_LOG = "broker-log"
CLIENT_LOG = "client-log"
CONSUMER_CONNECTION = "mqadmin-consumerConnection"
CONSUMER_STATUS = "mqadmin-consumerStatus"
CONSUMER_PROGRESS = "mqadmin-consumerProgress"
UNKNOWN = "unknown"

MQADMIN_FORMATS = frozenset({CONSUMER_CONNECTION, CONSUMER_STATUS, CONSUMER_PROGRESS})
_CLIENT_MARKS = (
    "RocketmqClient",
    "NettyClientPublicExecutor",
    "#",
    "RebalanceService",
    "MQClientFactoryScheduledThread",
)
_BROKER_MARKS = ("ClientManageThread", "PullMessageThread", "BrokerControllerScheduledThread", "ConsumerManage")


def detect(name: str, head: Sequence[str]) -> str:
    """Format of a file called `name` (base name, `.gz` ignored) whose first lines are `head`."""
    text = "\n".join(head)
    if "#ClientId" in text and "#ClientAddr" in text:
        return CONSUMER_CONNECTION
    if "#ConsumerRunningInfoFile" in text or "#Consumer Properties#" in text:
        return CONSUMER_STATUS
    if "#Broker Offset" in text or ("#Group" in text and "#Diff Total" in text):
        return CONSUMER_PROGRESS
    lower = name.lower()
    if "client" in lower:
        return CLIENT_LOG
    if "broker" in lower:
        return BROKER_LOG
    client = sum(text.count(m) for m in _CLIENT_MARKS if m != "#") + text.count("] [")
    broker = sum(text.count(m) for m in _BROKER_MARKS)
    if client or broker:
        return CLIENT_LOG if client > broker else BROKER_LOG
    if any(line[:1].isdigit() and " - " in line for line in head):
        return BROKER_LOG
    return UNKNOWN
