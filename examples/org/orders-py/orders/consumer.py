"""Order-event consumer (rocketmq-client-python 2.x)."""

from rocketmq.client import ConsumeStatus, PushConsumer

from orders.topics import ORDER_GROUP, ORDER_TOPIC


def handle(msg):
    print(msg.id, msg.tags)
    return ConsumeStatus.CONSUME_SUCCESS


def main():
    consumer = PushConsumer(ORDER_GROUP)
    consumer.set_name_server_address("namesrv.prod:9876")
    consumer.subscribe(ORDER_TOPIC, handle, "created||paid")
    consumer.start()


def audit_trail():
    trail = PushConsumer("GID_ORDER_AUDIT")
    trail.set_name_server_address("namesrv.prod:9876")
    trail.subscribe("TOPIC_ORDER_AUDIT", handle, "created")
    trail.subscribe("TOPIC_ORDER_AUDIT", handle, "created||cancelled")
    trail.subscribe("TOPIC_PAYMENT", handle, "paid||")
    trail.start()
