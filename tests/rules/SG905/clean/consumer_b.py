"""Two members of one group that agree: the consistency rules pass it and the simulator predicts no loss."""
from rocketmq.client import PushConsumer


def handle(msg):
    return None


consumer = PushConsumer("GID_AGREE")
# ok: SG905
consumer.subscribe("TopicOrders", handle, expression="created || paid")
consumer.start()
