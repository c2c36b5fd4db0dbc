from rocketmq.client import PushConsumer


def handle(msg):
    return None


consumer = PushConsumer("GID_SHARED")
# ok: SG101
consumer.subscribe("TopicA", handle, expression="*")
consumer.start()
