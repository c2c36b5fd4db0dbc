"""A member whose subscribe call subguard cannot see: its topics are unknown, not an empty set."""
from rocketmq.client import PushConsumer


def handle(msg):
    return None


# ok: SG101
# ruleid: SG902
consumer = PushConsumer("GID_SHARED")
consumer.start()
