from rocketmq.client import PushConsumer


def handle(msg):
    return None


# ruleid: SG602
consumer = PushConsumer("GID_ORDERS_V2")
consumer.subscribe("TopicOrders", handle, expression="created||paid")
consumer.start()

# ok: SG602
audit = PushConsumer("GID_AUDIT")
audit.subscribe("TopicOrders", handle, expression="*")
audit.start()
